"""Shared fixtures: float64 for exact gradient comparisons in the core tests; the lab's tokenizer and a
ragged rollout for the model tests."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch
from hypothesis import settings

from unified_rl.sampling import rollout_from_texts
from unified_rl.task import TaskConfig, make_problem
from unified_rl.tokenizer import build_tokenizer


@pytest.fixture
def f64():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


@pytest.fixture(scope="session")
def source_wheel(tmp_path_factory):
    """A wheel built from a copy of the repository's sources (what pip would install), once per session."""
    repo, tmp = Path(__file__).resolve().parents[1], tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(repo / name, src / name)
    shutil.copytree(repo / "unified_rl", src / "unified_rl", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(repo / "labextension", src / "labextension", ignore=shutil.ignore_patterns("node_modules"))
    code = "import sys; from setuptools import build_meta as b; print(b.build_wheel(sys.argv[1]))"
    r = subprocess.run([sys.executable, "-c", code, str(tmp / "dist")], cwd=src, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    (wheel,) = (tmp / "dist").glob("*.whl")
    return wheel


@pytest.fixture(scope="session")
def tok():
    """The lab's character tokenizer (built in code, nothing downloaded)."""
    return build_tokenizer()


@pytest.fixture(scope="module")
def batch(tok):
    """A rollout whose prompts have different lengths (left padding) and responses too."""
    probs = [make_problem((3, 4), TaskConfig(1)), make_problem((123, 456), TaskConfig(3)),
             make_problem((1, 2, 3), TaskConfig(1, 3))]
    return rollout_from_texts(tok, probs, [p.solution for p in probs])


# Property tests draw the same examples on every run and keep no example database between runs: a fresh clone's
# `make test` meets what this machine met (HYPOTHESIS_PROFILE=explore draws new examples, to hunt for bugs).
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

_EARLY, _SAVED = None, {}  # the folder pytest_configure made for the caches written while tests are imported
IMPORT_TIME_CACHES = {"MPLCONFIGDIR": "matplotlib", "IPYTHONDIR": "ipython", "XDG_CACHE_HOME": "xdg-cache",
                      "XDG_CONFIG_HOME": "xdg-config", "HF_HOME": "huggingface", "JUPYTER_RUNTIME_DIR": "jupyter"}


def pytest_configure(config):
    """Matplotlib and IPython pick their folders when first imported, which test collection does
    before any fixture runs: point them into a temporary folder before that."""
    global _EARLY, _SAVED
    _EARLY = tempfile.mkdtemp(prefix="unified-rl-tests-")
    _SAVED = {var: os.environ.get(var) for var in IMPORT_TIME_CACHES}
    for var, sub in IMPORT_TIME_CACHES.items():
        os.environ[var] = os.path.join(_EARLY, sub)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Name the package text still waiting for its Chinese (unified_rl/course/to_translate.py), on every run."""
    from unified_rl.course import to_translate
    lines = to_translate.report()
    if lines:
        terminalreporter.section("the Chinese edition", sep="-")
        for line in lines:
            terminalreporter.write_line(line)


def pytest_unconfigure(config):
    if _EARLY is None:
        return
    for var, value in _SAVED.items():
        if value is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = value
    # only the folders pytest_configure made; IPython's stays (under the system's temporary folder):
    # an IPython shell the tests started writes its history there from its own exit handler, later
    for var, sub in IMPORT_TIME_CACHES.items():
        if var != "IPYTHONDIR":
            shutil.rmtree(os.path.join(_EARLY, sub), ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def private_home_caches(tmp_path_factory):
    """Nothing the suite writes lands in the user's home: the SFT cache points into this session's
    temporary folder (the libraries' caches were moved by pytest_configure). Under pytest-xdist the
    workers of one run share it (the cache lets one process build an entry while the others wait),
    so each SFT model is trained once per run, not once per worker. `make test` gives the book's build
    and this suite one temporary cache, UNIFIED_RL_TEST_CACHE (its folder, removed when both are done), so the
    models both need (the cpu preset's SFT, SmolLM2's converted weights) are built once, not once each."""
    shared = os.environ.get("UNIFIED_RL_TEST_CACHE", "").strip()
    if shared:
        base = Path(shared)
        if not base.is_dir():
            raise pytest.UsageError(f"UNIFIED_RL_TEST_CACHE={shared} is not a folder (make test makes one)")
    elif os.environ.get("PYTEST_XDIST_WORKER"):
        base = tmp_path_factory.getbasetemp().parent / "cache"  # the run's folder, above each worker's
        base.mkdir(exist_ok=True)
    else:
        base = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UNIFIED_RL_CACHE", str(base))
        yield base


@pytest.fixture
def all_cores():
    """Every core for one test on a real 10^8-parameter model (make test runs one torch thread per process,
    which suits the lab's tiny models); the thread count is restored after it. Under pytest-xdist the
    cores are the worker's share: threads fighting over busy cores run several times slower."""
    before = torch.get_num_threads()
    share = (os.cpu_count() or 1) // max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    torch.set_num_threads(max(1, min(share, 4)))
    yield
    torch.set_num_threads(before)


# The files that take longest under `make test`, longest first (roughly, in seconds on 2 busy cores, from
# the --durations of fresh clones: nbgrader's workflow ~390, the JupyterLab checks ~200, the hostile CLI ~180, SmolLM2's
# oracle ~80, gpu_check's dry run ~70, the install checks ~65). make test hands pytest-xdist whole files
# (--dist loadfile --no-loadscope-reorder: without that flag pytest-xdist sends the files with the most
# tests first, and the few long JupyterLab tests last), so these go out first and the short ones fill in.
LONGEST_FILES = ("test_nbgrader.py", "browser/test_explorers.py", "test_hostile_cli.py", "test_llm_oracle.py",
                 "test_gpu_check.py", "test_install.py", "test_bench_llm.py", "test_train.py", "test_cli.py")


def _file_rank(item):
    path = item.nodeid.split("::")[0].removeprefix("tests/")
    return LONGEST_FILES.index(path) if path in LONGEST_FILES else len(LONGEST_FILES)


def pytest_collection_modifyitems(config, items):
    """The long tests first (the longest files, then slow and browser tests): with pytest-xdist the cores
    then finish together, instead of one worker starting a minutes-long test while the other has nothing
    left. Order is otherwise kept."""
    items.sort(key=lambda item: (_file_rank(item),
                                 0 if item.get_closest_marker("slow") or "browser" in item.nodeid.split("/") else 1))
