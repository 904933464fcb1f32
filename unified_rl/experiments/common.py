"""What the §5.2 experiments share: budgets per preset, the SFT model they start from, RL labs on a
chosen question pool, Pass@K / Maj@K curves, seed statistics, timing, and writing results.

Every experiment runs each seed through the whole pipeline (its own SFT model, its own RL runs), so
the spread it reports is the spread a reader would see by re-running it, not only sampling noise.
"""

import datetime
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, fields, replace

import numpy as np

from .. import __version__
from ..cache import cache_dir, code_version, sft_checkpoint
from ..evaluation import greedy_accuracy, pass_maj, sample_answers
from ..presets import get_preset
from ..text import Text
from ..trainer import make_lab


def pick_budget(budgets, preset, overrides):
    """The experiment's budget for `preset` (by name; unknown names get the cpu one), with overrides."""
    preset = get_preset(preset)
    base = budgets.get(preset.name, budgets["cpu"])
    names = {f.name for f in fields(base)}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise ValueError(f"unknown budget field(s) {unknown}; choose from {sorted(names)}")
    return preset, replace(base, **overrides)


def check_run_args(out, seeds):
    """Validate the arguments every experiment takes."""
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"seeds must be a whole number >= 1, got {seeds!r}")
    if not isinstance(out, (str, os.PathLike)) or not str(out):
        raise ValueError(f"out must be a folder path, got {out!r}")


def powers_of_two(n):
    """1, 2, 4, ... up to n: the K values of Figure 7."""
    if n < 1:
        raise ValueError(f"need at least one sample per question, got {n}")
    return [2**i for i in range(int(math.log2(n)) + 1)]


def sft_preset(preset, sft_steps):
    """The preset whose SFT checkpoint the experiment starts from (`sft_steps` None: the preset's own)."""
    return preset if sft_steps is None else preset.with_(sft={"steps": sft_steps})


def sft_model(preset, seed, progress=False):
    """Path of the cached SFT checkpoint of `preset` for `seed` (trained on first use)."""
    return sft_checkpoint(preset, seed=seed, progress=progress)


def lab_on(preset, seed, init, rl_problems=None):
    """A lab starting from checkpoint `init` whose RL pool is `rl_problems` (default: the preset's)."""
    lab = make_lab(preset, seed, init)
    if rl_problems is not None:
        if not rl_problems:
            raise ValueError("the RL question pool is empty")
        lab.rl_problems = list(rl_problems)
    return lab


def check_fits(preset, task):
    """Raise a clear ValueError if `task`'s longest prompt + response exceeds the model's positions."""
    from ..sampling import RESPONSE_SLACK
    from ..task import make_problem

    biggest = make_problem([10**task.digits - 1] * task.n_operands, task)
    need = 1 + len(biggest.prompt) + len(biggest.solution) + 1 + RESPONSE_SLACK  # BOS ... EOS + slack
    if need > preset.model.n_positions:
        raise ValueError(f"{task} needs {need} positions but the {preset.name} model has "
                         f"{preset.model.n_positions}; use a preset with a larger model.n_positions")


def pass_maj_curve(policy, tokenizer, problems, samples, temperature=0.7):
    """Pass@K and Maj@K lists for K = 1, 2, 4, ..., samples (exact estimators), and "hits": the number
    of right samples of each question."""
    ks = powers_of_two(samples)
    answers, correct = sample_answers(policy, tokenizer, problems, samples, temperature)
    pm = pass_maj(answers, correct, ks)
    out = {key: [pm[key][str(k)] for k in ks] for key in ("pass_at_k", "maj_at_k")}
    out["hits"] = [sum(a == c for a in row) for row, c in zip(answers, correct)]
    return out


PHASES = {"on": False}
"""Whether the long phases below say on stderr what they do (`reproduce` without --quiet turns it on)."""


def phase(text):
    if PHASES["on"]:
        print(text, file=sys.stderr, flush=True)


def evaluate_policy(policy, tokenizer, problems, k_problems, samples, temperature=0.7):
    """Greedy accuracy on all `problems`, Pass@K / Maj@K curves on the first `k_problems`."""
    phase(f"evaluating: greedy on {len(problems)} questions, then sampling {samples} answers to each of "
          f"{min(k_problems, len(problems))} for Pass@K / Maj@K")
    out = {"greedy": greedy_accuracy(policy, tokenizer, problems)}
    out.update(pass_maj_curve(policy, tokenizer, problems[:k_problems], samples, temperature))
    return out


def stats(values):
    """Mean, sample std (0 for one seed), min and max of per-seed numbers."""
    v = np.asarray(values, dtype=float)
    return {"mean": float(v.mean()), "std": float(v.std(ddof=1)) if len(v) > 1 else 0.0,
            "min": float(v.min()), "max": float(v.max())}


def mean_curves(per_seed, skip=("hits",)):
    """Mean and std over seeds of every list- or number-valued entry of per-seed dicts (but `skip`)."""
    mean, std = {}, {}
    for key, first in per_seed[0].items():
        if key in skip:
            continue
        if isinstance(first, (int, float)) or (isinstance(first, list) and first
                                               and isinstance(first[0], (int, float))):
            a = np.asarray([s[key] for s in per_seed], dtype=float)
            mean[key] = a.mean(0).tolist()
            std[key] = (a.std(0, ddof=1) if len(a) > 1 else np.zeros_like(a[0])).tolist()
    return mean, std


def fmt(s, digits=3):
    """'0.612 +/- 0.021' from stats() (the spread is the sample std over seeds)."""
    return f"{s['mean']:.{digits}f} +/- {s['std']:.{digits}f}"


class Clock:
    """Wall-clock and process CPU seconds since creation (on a shared CPU the two differ a lot)."""

    def __init__(self):
        self.wall0, self.cpu0 = time.time(), time.process_time()

    def read(self):
        return {"wall_s": round(time.time() - self.wall0, 1), "cpu_s": round(time.process_time() - self.cpu0, 1)}


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


@dataclass
class Progress:
    """One line per finished unit of work (a seed, an arm), unless quiet."""

    on: bool = True

    def __call__(self, text):
        if self.on:
            print(text, flush=True)


@dataclass
class Experiment:
    """One run of an experiment: what every `run()` shares, held once (`begin`, `seed_labs`, `finish`)."""

    name: str  # e.g. "noisy-reward": OUT/NAME.json
    preset: object
    budget: object  # the experiment's budget dataclass for this preset, overrides applied
    overridden: bool  # a budget override makes it not the full run the notebooks may load
    seeds: int
    out: str
    progress: bool
    say: Progress
    clock: Clock

    @property
    def sft(self):
        """The preset of the SFT model every seed starts from (the budget's sft_steps, if it has one)."""
        return sft_preset(self.preset, getattr(self.budget, "sft_steps", None))

    def seed_labs(self, preset=None):
        """(seed, the seed's SFT checkpoint, a lab on it) for each seed, the checkpoint trained on first use."""
        preset = self.sft if preset is None else preset
        for seed in range(self.seeds):
            init = sft_model(preset, seed, self.progress)
            yield seed, init, lab_on(preset, seed, init)

    def finish(self, result, plot):
        """Write OUT/NAME.json and .png (and the notebooks' cached copy of a full run); the result."""
        write_result(self.name, self.out, result, plot, cache_key=None if self.overridden else self.preset.name)
        return result


def begin(name, budgets, preset, out, seeds, progress, overrides):
    """Check the arguments every experiment takes and pick its budget: an Experiment."""
    check_run_args(out, seeds)
    preset, b = pick_budget(budgets, preset, overrides)
    return Experiment(name, preset, b, bool(overrides), seeds, out, progress, Progress(progress), Clock())
