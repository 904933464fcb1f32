"""Running a §5.2 experiment: its budget for the preset, the arguments every experiment takes, the SFT
model each seed starts from, RL labs on a chosen question pool, timing and progress lines, and
`Experiment`, what every `run()` shares (`begin`, `seed_labs`, `finish`).

Every experiment runs each seed through the whole pipeline (its own SFT model, its own RL runs), so
the spread it reports is the spread a reader would see by re-running it, not only sampling noise.
"""

import os
import sys
import time
from dataclasses import dataclass, fields, replace

from ..cache import sft_checkpoint
from ..presets import get_preset
from ..trainer import make_lab
from .records import write_result


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


PHASES = {"on": False}
"""Whether the long phases below say on stderr what they do (`reproduce` without --quiet turns it on)."""


def phase(text):
    if PHASES["on"]:
        print(text, file=sys.stderr, flush=True)


class Clock:
    """Wall-clock and process CPU seconds since creation (on a shared CPU the two differ a lot)."""

    def __init__(self):
        self.wall0, self.cpu0 = time.time(), time.process_time()

    def read(self):
        return {"wall_s": round(time.time() - self.wall0, 1), "cpu_s": round(time.process_time() - self.cpu0, 1)}


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
