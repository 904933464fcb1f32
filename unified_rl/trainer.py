"""`train`: the one entry point the notebooks, the CLI and the experiments share.

It resolves what a run needs (the method, its settings, where it starts, a run folder to resume)
and hands it to the loop (loop.py), which knows no algorithm. It holds no method name: what differs
between methods is read from the Method (paradigm.py). It never changes what the caller passed:
given a lab, the run trains that lab's policy, under its own copy of the lab's other fields.
"""

import dataclasses
import json
import os

from transformers.utils import logging as hf_logging

from . import __version__, cache, runs
from .lab import Lab, make_lab, seed_everything  # noqa: F401 (public here, as before)
from .loop import Run, fit  # noqa: F401
from .methods import get_method
from .presets import get_preset
from .runs import save_run  # noqa: F401
from .wiring import configure

hf_logging.disable_progress_bar()  # saving/loading a 100K-parameter model needs no progress bar

START_CHECKPOINT = {"scratch": lambda preset, seed, progress: None, "sft": cache.sft_checkpoint}
"""The checkpoint each Method.init choice starts from unless `init` says otherwise (None: a fresh model)."""


def max_steps_cap():
    """$UNIFIED_RL_MAX_STEPS as a number, or None; ValueError if it is not a whole number >= 0."""
    text = os.environ.get("UNIFIED_RL_MAX_STEPS", "").strip()
    if not text:
        return None
    try:
        cap = int(text)
    except ValueError:
        cap = -1
    if cap < 0:
        raise ValueError(f"UNIFIED_RL_MAX_STEPS must be a whole number >= 0, got {text!r}")
    return cap


def _check_resume(saved, method, seed, preset):
    """A resumed run continues with the settings it was started with, or not at all."""
    now, was = _flat(dataclasses.asdict(preset)), _flat(saved.get("config") or {})
    diff = [k for k, v in (("method", method), ("seed", seed)) if saved.get(k) != v]
    diff += [k for k in sorted(set(now) | set(was)) if now.get(k) != was.get(k)]
    if diff:
        raise ValueError(f"the run in this folder was started as {saved.get('method')}, preset "
                         f"{saved.get('preset')}, seed {saved.get('seed')}; {', '.join(diff)} differ now: "
                         "resume it with the settings it started with")


def _flat(config, prefix=""):
    """{"rl.lr": 1e-4, ...}: nested settings as dotted names, JSON-normalised."""
    out = {}
    for k, v in json.loads(json.dumps(config)).items():
        out.update(_flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out


def train(method="grpo", preset="auto", steps=None, seed=0, init=None, out=None, progress=True,
          lab=None, eval_every=None, resume=False, overwrite=False, save_every=None, _cap=True,
          **overrides):
    """Train `method` and return a Run. The notebooks and `python -m unified_rl train` share this path.

    init: a checkpoint to start from; by default the method's own (Method.init): SFT from scratch,
    every other method from the cached SFT checkpoint of the same preset. overrides change fields
    of the method's preset section (RLConfig, or SFTConfig for sft) or of its own hparams, e.g.
    train("grpo", beta=0.0, group_size=4). lab: train this lab's policy in place (its other fields
    are left as they are). out: a run folder, saved every `save_every` steps and at the end; an
    existing run there is kept unless overwrite=True, or continued with resume=True.
    $UNIFIED_RL_MAX_STEPS, if set, caps `steps` (the browser tests run every notebook this way);
    the cached SFT model is never capped.
    """
    m = get_method(method)
    if resume and (lab is not None or not out):
        raise ValueError("resume=True continues the run saved in `out`: give out, and no lab")
    run_preset, hp = configure(m, get_preset(preset if lab is None else lab.preset), overrides)
    steps = steps if steps is not None else getattr(run_preset, m.section).steps
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be a whole number >= 0, got {steps!r}")
    cap = max_steps_cap() if _cap else None
    steps = min(steps, cap) if cap is not None else steps
    state = None
    if out:
        runs.check_out(out, overwrite=overwrite, resume=resume)
        if resume:
            state = runs.load_state(out)
            _check_resume(state["summary"], m.name, seed, run_preset)
    summary = {"method": m.name, "preset": run_preset.name, "steps": steps, "seed": seed,
               "version": __version__, "config": dataclasses.asdict(run_preset),
               "hparams": dataclasses.asdict(hp) if hp is not None else None}
    if lab is None:
        cached = state is None and init is None and m.init == "sft"
        if state is not None:
            init, start = state["summary"]["init"], os.path.join(out, "checkpoint")
        else:
            init = init if init is not None else START_CHECKPOINT[m.init](run_preset, seed, progress)
            start = init
        seed_everything(seed)  # after the SFT cache, which may have trained in this process
        lab = _lab_from(run_preset, seed, start, cached)
    else:
        seed_everything(seed)
        lab = dataclasses.replace(lab, preset=run_preset)  # the caller's Lab stays as it was
    summary.update({"init": str(init) if init else None, "device": str(lab.device),
                    "eval_problems": min(run_preset.eval_problems, len(lab.test_problems))})
    return fit(m, lab, hp, steps, summary, eval_every=eval_every, progress=progress, out=out,
               save_every=save_every, resume=state)


def _lab_from(preset, seed, init, from_cache):
    """make_lab, naming the cache folder to delete when the cached SFT model cannot be read."""
    try:
        return make_lab(preset, seed, init)
    except ValueError as e:
        if not from_cache:
            raise
        raise ValueError(f"{e} (a broken SFT cache entry: delete {os.path.dirname(init)} to rebuild it)") from None
