"""`train`: the one entry point the notebooks, the CLI and the experiments share.

It resolves what a run needs (the method, its settings, where it starts, a run folder to resume)
and hands it to the loop (loop.py), which knows no algorithm. It holds no method name: what differs
between methods is read from the Method (paradigm.py). It never changes what the caller passed:
given a lab, the run trains that lab's policy, under its own copy of the lab's other fields.
"""

import contextlib
import dataclasses
import json
import math
import os
import re
import sys

import torch
from transformers.utils import logging as hf_logging

from . import __version__, cache, distributed, fsdp, runs
from .lab import Lab, make_lab, seed_everything  # noqa: F401 (public here, as before)
from .loop import Run, fit  # noqa: F401
from .methods import get_method
from .presets import get_preset
from .runs import save_run  # noqa: F401
from .wiring import configure
from .words import task_from_spec

hf_logging.disable_progress_bar()  # saving/loading a 100K-parameter model needs no progress bar

START_CHECKPOINT = {"scratch": lambda preset, seed, progress: None, "sft": cache.sft_checkpoint}
"""The checkpoint each Method.init choice starts from unless `init` says otherwise (None: a fresh model)."""


def max_steps_cap():
    """$UNIFIED_RL_MAX_STEPS as a number, or None (unset or blank); ValueError unless it is ASCII
    decimal digits (surrounding whitespace aside): no sign, no underscore, no other script's digits."""
    text = os.environ.get("UNIFIED_RL_MAX_STEPS", "").strip()
    if not text:
        return None
    if not re.fullmatch(r"[0-9]+", text):
        raise ValueError(f"UNIFIED_RL_MAX_STEPS must be a whole number >= 0 (ASCII digits only), got {text!r}")
    return int(text)


POSITIVE = ("steps", "lr", "epochs", "group_size", "prompts_per_step", "temperature", "batch_size",
            "frozen_samples", "dpo_beta", "value_lr")
AT_LEAST_ZERO, UNIT = ("clip_eps", "beta"), ("gamma", "lam")


def _allowed(key):
    """(what a setting must be, a test of it) for RLConfig/SFTConfig's numeric fields."""
    if key == "steps":
        return ">= 0", lambda v: v >= 0
    if key in POSITIVE:
        return "> 0", lambda v: v > 0
    if key in AT_LEAST_ZERO:
        return ">= 0", lambda v: v >= 0
    if key in UNIT:
        return "in [0, 1]", lambda v: 0 <= v <= 1
    return "finite", lambda v: True


def check_section(section, name):
    """ValueError naming the first setting of `section` (an RLConfig or SFTConfig) out of its range."""
    for k, v in dataclasses.asdict(section).items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        want, ok = _allowed(k)
        if not (math.isfinite(v) and ok(v)):
            raise ValueError(f"{name}.{k} must be {want}, got {v!r}")
        if k in ("steps", "epochs", "group_size", "prompts_per_step", "batch_size") and v != int(v):
            raise ValueError(f"{name}.{k} must be a whole number, got {v!r}")


def _check_resume(saved, method, seed, preset, hp, steps, init):
    """A resumed run continues with the settings it was started with, or not at all."""
    if init is not None:
        raise ValueError("--init is not used by --resume (the run continues from its own checkpoint); "
                         "leave it out")
    now, was = _flat(dataclasses.asdict(preset)), _flat(saved.get("config") or {})
    now.update(_flat(dataclasses.asdict(hp) if hp is not None else {}, "hparams."))
    was.update(_flat(saved.get("hparams") or {}, "hparams."))
    diff = [k for k, v in (("method", method), ("seed", seed)) if saved.get(k) != v]
    diff += [k for k in sorted(set(now) | set(was)) if now.get(k) != was.get(k)]
    if diff:
        raise ValueError(f"the run in this folder was started as {saved.get('method')}, preset "
                         f"{saved.get('preset')}, seed {saved.get('seed')}; {', '.join(diff)} differ now: "
                         "resume it with the settings it started with")
    was, now = (saved.get("distributed") or {}).get("world_size"), distributed.summary()
    now = now and now["world_size"]
    if was != now:
        started = f"on {was} ranks (torchrun)" if was else "in one process, without torchrun"
        raise ValueError(f"the run in this folder was trained {started}; resume it the same way "
                         "(its random streams and saved RNG states are per rank)")
    done = saved.get("steps_done", 0)
    if steps < done:
        raise ValueError(f"the run in this folder has done {done} steps; --steps {steps} is fewer: "
                         "give at least that many")


def _flat(config, prefix=""):
    """{"rl.lr": 1e-4, ...}: nested settings as dotted names, JSON-normalised."""
    out = {}
    for k, v in json.loads(json.dumps(config)).items():
        out.update(_flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out


def llm_preset(preset="auto", model=None, task=None, llm=None):
    """The preset of a run on a pretrained chat model: `model` (alias, folder, hub name) and `task`
    (words, words:DIGITS, gsm8k:FILE) replace the preset's; `llm` (a dict) changes LLMConfig fields.
    With a model and preset "auto": llm-gpu where CUDA is, else llm-cpu."""
    if preset == "auto" and (model is not None or task is not None):
        preset = "llm-gpu" if torch.cuda.is_available() else "llm-cpu"
    p = get_preset(preset)
    if p.llm is None:
        raise ValueError(f"preset {p.name!r} trains the lab's own model; use llm-cpu or llm-gpu for "
                         "--model / --task")
    if task is not None:
        p = p.with_(task=task_from_spec(task) if isinstance(task, str) else task)
    changes = dict(llm or {})
    if model is not None:
        changes["model"] = os.fspath(model)
    return p.with_(llm=changes) if changes else p


def train(method="grpo", preset="auto", steps=None, seed=0, init=None, out=None, progress=True,
          lab=None, eval_every=None, resume=False, overwrite=False, save_every=None, _cap=True,
          model=None, task=None, llm=None, **overrides):
    """Train `method` and return a Run. The notebooks and `python -m unified_rl train` share this path.

    init: a checkpoint to start from; by default the method's own (Method.init): SFT from scratch,
    every other method from the cached SFT checkpoint of the same preset. overrides change fields
    of the method's preset section (RLConfig, or SFTConfig for sft) or of its own hparams, e.g.
    train("grpo", beta=0.0, group_size=4). lab: train this lab's policy in place (its other fields
    are left as they are). out: a run folder, saved every `save_every` steps and at the end; an
    existing run there is kept unless overwrite=True, or continued with resume=True; the folder
    is held for the whole call (a second writer is refused) and every file in it the run did not
    write is kept (runs.py, run_folder.py). $UNIFIED_RL_MAX_STEPS, if set, caps `steps` (the
    browser tests run every notebook this way), saying so on stderr; the cached SFT model is never
    capped. model / task / llm: a pretrained chat model (`llm_preset`);
    every method then starts from that model (no SFT cache).
    """
    m = get_method(method)
    if model is not None or task is not None or llm:
        if lab is not None:
            raise ValueError("model/task/llm build the run's lab; give them or a lab, not both")
        preset = llm_preset(preset, model, task, llm)
    if resume and (lab is not None or not out):
        raise ValueError("resume=True continues the run saved in `out`: give out, and no lab")
    run_preset, hp = configure(m, get_preset(preset if lab is None else lab.preset), overrides)
    check_section(getattr(run_preset, m.section), m.section)
    steps = steps if steps is not None else getattr(run_preset, m.section).steps
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be a whole number >= 0, got {steps!r}")
    cap = max_steps_cap() if _cap else None
    if lab is None:
        ready_before_ranks(m, run_preset, seed, init, resume, progress)
    distributed.init()  # under torchrun: join the ranks (distributed.py); a no-op otherwise
    if cap is not None and cap < steps:
        if distributed.is_main():
            print(f"UNIFIED_RL_MAX_STEPS={cap} caps this {m.name} run at {cap} of {steps} steps", file=sys.stderr)
        steps = cap
    adoptable = m.name == "sft" and lab is None and init is None and eval_every is None and not resume
    if out is None:
        return _train(m, run_preset, hp, steps, seed, init, None, progress, lab, eval_every, None, save_every, False)
    with contextlib.ExitStack() as held:
        def claim():  # rank 0 alone (or the only process) checks, holds and recovers the folder
            runs.check_out(out, overwrite=overwrite, resume=resume)  # before creating anything
            held.enter_context(runs.hold(out))  # one writer: a second process is refused here, at once
            runs.recover(out)
            runs.check_out(out, overwrite=overwrite, resume=resume)  # again, now that no one else writes

        distributed.from_main(claim)  # the other ranks wait for it; if it refuses, they stop
        state = None
        if resume:
            state = runs.load_state(out, recover_first=distributed.is_main())
            distributed.from_main(lambda: _check_resume(state["summary"], m.name, seed, run_preset, hp, steps,
                                                        init))
        return _train(m, run_preset, hp, steps, seed, init, out, progress, lab, eval_every, state, save_every,
                      adoptable)


def ready_before_ranks(method, preset, seed=0, init=None, resume=False, progress=True):
    """Build what a run starts from (the SFT cache entry, a pretrained alias's converted weights)
    before this process joins torchrun's ranks: transformers writes a model on torch.distributed's
    rank 0 only, and a rank waiting in a collective for a build could time out. Every rank asks; the
    build's file lock lets one build while the others wait, and then read it."""
    if resume or "RANK" not in os.environ or distributed.active():  # only a torchrun rank not yet joined
        return
    m, preset = get_method(method), get_preset(preset)
    if preset.llm is not None:
        from .llm import pretrained_folder
        pretrained_folder(init if init is not None else preset.llm.model)
    elif init is None and m.init == "sft":
        START_CHECKPOINT["sft"](preset, seed, progress)


def _train(m, run_preset, hp, steps, seed, init, out, progress, lab, eval_every, state, save_every, adoptable):
    summary = {"method": m.name, "preset": run_preset.name, "steps": steps, "seed": seed,
               "version": __version__, "config": dataclasses.asdict(run_preset),
               "hparams": dataclasses.asdict(hp) if hp is not None else None}
    if lab is None:
        cached = state is None and init is None and m.init == "sft" and run_preset.llm is None
        if state is not None:
            init, start = state["summary"]["init"], os.path.join(out, "checkpoint")
        else:
            if init is None and run_preset.llm is not None:  # a pretrained model is its own start
                init = run_preset.llm.model
            init = init if init is not None else START_CHECKPOINT[m.init](run_preset, seed, progress)
            start = init
        seed_everything(seed)  # after the SFT cache, which may have trained in this process
        lab = _lab_from(run_preset, seed, start, cached)
    else:
        seed_everything(seed)
        lab = dataclasses.replace(lab, preset=run_preset)  # the caller's Lab stays as it was
    summary.update({"init": str(init) if init else None, "device": str(lab.device),
                    "eval_problems": min(run_preset.eval_problems, len(lab.test_problems))})
    if distributed.active():
        summary["distributed"] = distributed.summary(fsdp.sharded(lab.policy))
    run = fit(m, lab, hp, steps, summary, eval_every=eval_every, progress=progress, out=out,
              save_every=save_every, resume=state)
    if adoptable and not distributed.active():  # a distributed SFT run is equal to the cache's only to round-off
        cache.adopt(run, run_preset, seed)  # the user's own SFT run is the cached model: no rebuild
    return run


MISMATCH = "ignore_mismatched_sizes"


def plain_load_error(e):
    """A load error in our words: transformers' size-mismatch message points at a report we hide."""
    text = str(e)
    if MISMATCH in text:
        text = text.split(": RuntimeError:")[0] + ": its config.json does not match the sizes of its weights " \
                                                  "(a damaged or edited checkpoint)"
    return ValueError(text)


@contextlib.contextmanager
def quiet_loads():
    """transformers' own load report (two dozen lines on a mismatched checkpoint) is not shown: the
    failure reaches the user as one ValueError."""
    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)


def _lab_from(preset, seed, init, from_cache):
    """make_lab, naming the cache folder to delete when the cached SFT model cannot be read."""
    try:
        with quiet_loads():
            return make_lab(preset, seed, init)
    except ValueError as e:
        if not from_cache:
            raise plain_load_error(e) from None
        raise ValueError(f"{plain_load_error(e)} (a broken SFT cache entry: delete {os.path.dirname(init)} "
                         "to rebuild it)") from None
