"""A result's record: where it came from (commit, versions, machine, command), writing it as NAME.json and
NAME.png, and reading it back: a full run of this code from the cache, else the run shipped with the
package (`results/`), its sentences rebuilt as Text in the reader's language."""

import datetime
import json
import os
import platform
import shlex
import subprocess
import sys

from .. import __version__
from ..cache import cache_dir, code_version
from ..presets import get_preset
from ..text import Text


def _commit():
    """(commit, whether the package's files differ from it), or (None, None) outside a git checkout."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=here, capture_output=True,
                               text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None, None
    if head.returncode:
        return None, None
    return head.stdout.strip(), bool(dirty.stdout.strip())


def _command():
    """The command line that ran this process, as one would type it."""
    argv = list(sys.argv)
    if argv and argv[0].endswith(os.path.join("unified_rl", "__main__.py")):
        argv = ["python", "-m", "unified_rl"] + argv[1:]
    return " ".join(shlex.quote(a) for a in argv)


def cpu_kernels():
    """The vector instructions torch's CPU kernels use here (e.g. AVX2, AVX512): two machines that
    differ in it round floating-point sums differently, so long runs drift apart in the last digits."""
    import torch

    return torch.backends.cpu.get_cpu_capability()


def provenance():
    """Where a result came from: commit, versions, date, machine and the exact command."""
    import torch
    import transformers

    commit, dirty = _commit()
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    return {"commit": commit, "uncommitted_changes": dirty, "package": __version__, "code": code_version(),
            "torch": torch.__version__, "transformers": transformers.__version__,
            "python": platform.python_version(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, {device}, "
                       f"{torch.get_num_threads()} torch threads, CPU kernels {cpu_kernels()}",
            "command": _command()}


SHIPPED_SEEDS = 3
"""The seeds of the shipped results: only a run with as many (or more) may replace them in the notebooks."""


def _full(result):
    seeds = result.get("seeds")
    return isinstance(seeds, int) and not isinstance(seeds, bool) and seeds >= SHIPPED_SEEDS


def check_result_free(name, out, overwrite=False):
    """ValueError, before an experiment runs, if OUT/NAME.json exists and `overwrite` is not given."""
    path = os.path.join(out, f"{name}.json")
    if os.path.lexists(path) and not overwrite:
        raise ValueError(f"{path} exists; pass --overwrite to replace it, or choose another --out")
    if os.path.lexists(out) and not os.path.isdir(out):
        raise ValueError(f"{out} is not a folder; the result is written into a folder")


def write_result(name, out, result, plot, cache_key=None):
    """OUT/NAME.json (with its provenance) and OUT/NAME.png drawn by plot(result); with cache_key and
    at least the shipped number of seeds, a copy of the JSON in the cache for the notebooks, under the code
    version that made it (a run of fewer seeds never becomes the result they show). Without
    matplotlib (a core-only install) the figure is skipped with a message; the JSON is the result."""
    result.setdefault("provenance", provenance())
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"{name}.json"), "w") as f:
        json.dump(result, f, indent=2, allow_nan=False)
    if cache_key and not _full(result):
        print(f"{name}: a {result.get('seeds')}-seed run is written to {out} only; the notebooks keep "
              f"showing the {SHIPPED_SEEDS}-seed result", file=sys.stderr)
    elif cache_key:
        path = cached_result_path(name, cache_key)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(result, f, indent=2, allow_nan=False)
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"{name}.png not drawn: matplotlib is not installed (pip install 'unified_rl[course]')",
              file=sys.stderr)
        return
    fig = plot(result)
    fig.savefig(os.path.join(out, f"{name}.png"), dpi=120, bbox_inches="tight")
    plt.close(fig)


def cached_result_path(name, cache_key):
    """Where a full run of this code version leaves its result (another version's is never read)."""
    return os.path.join(cache_dir(), "results", f"{name}-{cache_key}-{code_version()}.json")


def load_cached(name, preset="auto"):
    """The result a full CLI run of experiment `name` by this code left in the cache for `preset`, or
    None (also, with a message, when the file is damaged)."""
    preset = get_preset(preset)
    path = cached_result_path(name, preset.name)
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            result = json.load(f)
        if not isinstance(result, dict):
            raise ValueError("not a result")
        if not _full(result):
            return None  # fewer seeds than the shipped result: never preferred to it
    except (ValueError, UnicodeDecodeError) as e:
        print(f"the cached result {path} is damaged ({type(e).__name__}); showing the shipped result "
              "instead (delete that file, or re-run the experiment)", file=sys.stderr)
        return None
    result["loaded_from"] = path
    return _revived(name, result)


SHIPPED = os.path.join(os.path.dirname(__file__), "results")
"""Full CLI runs (cpu preset, 3 seeds) stored with the package, so the notebooks can show them."""


def load_shipped(name):
    """The full cpu-preset run of experiment `name` that ships with the course (3 seeds)."""
    path = os.path.join(SHIPPED, f"{name}-cpu.json")
    if not os.path.exists(path):
        known = sorted(f[: -len("-cpu.json")] for f in os.listdir(SHIPPED) if f.endswith("-cpu.json"))
        raise ValueError(f"no shipped result for {name!r}; there are: {', '.join(known)}")
    with open(path) as f:
        result = json.load(f)
    result["loaded_from"] = Text("the full run shipped with the course ({path})",
                                 path="unified_rl/experiments/results")
    return _revived(name, result)


REVIVED = {"figure7": "figure7", "real-model": "real_model"}  # experiments whose module's `revive(result)` rebuilds a loaded result's sentences as Text


def _revived(name, result):
    """`result` (from JSON: plain str) with its sentences rebuilt from its numbers as `Text`, shown in the
    current language; each only where it is reproduced exactly (an older wording stays as stored)."""
    if name not in REVIVED:
        return result
    import importlib  # here: figure7 imports this module
    return importlib.import_module(f"{__package__}.{REVIVED[name]}").revive(result)


def load_full(name, preset="auto"):
    """Your own full run of `name` if the cache has one for `preset`, else the shipped cpu-preset run."""
    return load_cached(name, preset) or load_shipped(name)
