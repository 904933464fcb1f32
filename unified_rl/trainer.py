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

from transformers.utils import logging as hf_logging

from . import __version__, cache, distributed, fsdp, runs
from .lab import Lab, make_lab, seed_everything  # noqa: F401 (public here, as before)
from .loop import Run, fit  # noqa: F401
from .methods import get_method
from .presets import get_preset
from .runs import save_run  # noqa: F401
from .text import Text
from .wiring import configure
from .worlds import pretrained_preset, run_record, world_of

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
AT_LEAST_ZERO, UNIT = ("clip_eps", "beta", "sampler_lag", "ref_sync_steps"), ("gamma", "lam", "gkd_lambda",
                                                                            "ref_sync_alpha")
WHOLE = ("steps", "epochs", "group_size", "prompts_per_step", "batch_size", "sampler_lag", "ref_sync_steps")


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
    for f in dataclasses.fields(section):  # a named choice (sampler_dtype, teacher_sees): one of its choices
        choices = f.metadata.get("choices")
        if choices and getattr(section, f.name) not in choices:
            raise ValueError(f"{name}.{f.name} must be one of {', '.join(choices)}, got {getattr(section, f.name)!r}")
    for k, v in dataclasses.asdict(section).items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        want, ok = _allowed(k)
        if not (math.isfinite(v) and ok(v)):
            raise ValueError(f"{name}.{k} must be {want}, got {v!r}")
        if k in WHOLE and v != int(v):
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
    """The preset of a run on a pretrained chat model (worlds.pretrained_preset): `model` and `task`
    replace the preset's; `llm` (a dict) changes LLMConfig fields."""
    return pretrained_preset(preset, model, task, llm)


@dataclasses.dataclass(frozen=True)
class Plan:
    """One call of `train`, resolved: what trains, in which world, for how long, and where it is saved."""

    method: object  # the Method
    preset: object  # the run's preset: the method's section with its defaults and the caller's overrides
    hp: object  # the method's hparams, or None
    steps: int
    seed: int
    init: object = None  # the checkpoint asked for; None: the world's start, else the method's own
    out: str = None  # the run folder, or None
    lab: object = None  # a caller's Lab to train in place, or None
    progress: bool = True
    eval_every: int = None
    save_every: int = None
    adoptable: bool = False  # a plain SFT run from scratch: the SFT cache may adopt it

    def summary(self):
        c = self.method.composition  # the parts a composed method is made of (a record, not read back)
        parts = None if c is None else c.record(self.hp) if hasattr(c, "record") else {  # a preference one's own
            "advantage": c.advantage, "policy": c.policy, "kl": c.kl, "kl_in": c.kl_in, "masks": list(c.masks),
            "terms": list(c.terms)}
        return {"method": self.method.name, "preset": self.preset.name, "steps": self.steps, "seed": self.seed,
                "version": __version__, "config": dataclasses.asdict(self.preset),
                "hparams": dataclasses.asdict(self.hp) if self.hp is not None else None, "parts": parts,
                **run_record(self.preset)}


def train(method="grpo", preset="auto", steps=None, seed=0, init=None, out=None, progress=True,
          lab=None, eval_every=None, resume=False, overwrite=False, save_every=None, _cap=True,
          model=None, task=None, llm=None, **overrides):
    """Train `method` and return a Run. The notebooks and `python -m unified_rl train` share this path.

    What trains: `method`, with `overrides` changing fields of its preset section (RLConfig, or
    SFTConfig for sft) or of its own hparams, e.g. train("grpo", beta=0.0, group_size=4).
    Where: `preset`'s world (worlds.py); model / task / llm make it a pretrained chat model's
    (`llm_preset`), where every method starts from that model (no SFT cache); lab: train this lab's
    policy in place (its other fields are left as they are). From: `init`, a checkpoint; by default
    the world's start, else the method's own (Method.init: SFT from scratch, every other method from
    the cached SFT checkpoint of the same preset). How long: `steps` (the preset's by default);
    $UNIFIED_RL_MAX_STEPS, if set, caps it (the browser tests run every notebook this way), saying so
    on stderr; the cached SFT model is never capped. Saved: `out`, a run folder, saved every
    `save_every` steps and at the end; an existing run there is kept unless overwrite=True, or
    continued with resume=True; the folder is held for the whole call (a second writer is refused)
    and every file in it the run did not write is kept (runs.py, run_folder.py).
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
    world_of(run_preset).check(lab.device if lab is not None else None)
    if lab is None:  # e.g. a LoRA rank the model cannot hold: refused before anything is made
        world_of(run_preset).check_fits(init)
    steps = steps if steps is not None else getattr(run_preset, m.section).steps
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be a whole number >= 0, got {steps!r}")
    cap = max_steps_cap() if _cap else None
    if lab is None:
        ready_before_ranks(m, run_preset, seed, init, resume, progress)
    distributed.init()  # under torchrun: join the ranks (distributed.py); a no-op otherwise
    if cap is not None and cap < steps:
        if distributed.is_main():
            print(Text("UNIFIED_RL_MAX_STEPS={cap} caps this {method} run at {cap} of {steps} steps", cap=cap,
                       method=m.name, steps=steps), file=sys.stderr)
        steps = cap
    plan = Plan(m, run_preset, hp, steps, seed, init=init, out=out, lab=lab, progress=progress,
                eval_every=eval_every, save_every=save_every,
                adoptable=m.name == "sft" and lab is None and init is None and eval_every is None and not resume)
    if out is None:
        return _train(plan)
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
        return _train(plan, state)


def ready_before_ranks(method, preset, seed=0, init=None, resume=False, progress=True):
    """Build what a run starts from (the SFT cache entry, a pretrained alias's converted weights)
    before this process joins torchrun's ranks: transformers writes a model on torch.distributed's
    rank 0 only, and a rank waiting in a collective for a build could time out. Every rank asks; the
    build's file lock lets one build while the others wait, and then read it."""
    if resume or distributed.active() or distributed.launch_env() is None:  # only a torchrun rank not yet joined
        return
    m, world = get_method(method), world_of(preset)
    start = init if init is not None else world.start
    if start is not None:
        world.ready(start)
    elif m.init == "sft":
        START_CHECKPOINT["sft"](world.preset, seed, progress)


def _start(plan, state):
    """(what the summary calls the run's start, the checkpoint its lab loads, whether that is the SFT cache)."""
    if state is not None:  # a resume continues from its own checkpoint
        return state["summary"]["init"], os.path.join(plan.out, "checkpoint"), False
    world = world_of(plan.preset)
    init = plan.init if plan.init is not None else world.start  # a pretrained model is its own start
    if init is not None:
        return init, init, False
    init = START_CHECKPOINT[plan.method.init](plan.preset, plan.seed, plan.progress)
    return init, init, init is not None


def _train(plan, state=None):
    summary = plan.summary()
    if plan.lab is None:
        init, start, cached = _start(plan, state)
        seed_everything(plan.seed)  # after the SFT cache, which may have trained in this process
        lab = _lab_from(plan.preset, plan.seed, start, cached)
    else:
        init = plan.init
        seed_everything(plan.seed)
        lab = dataclasses.replace(plan.lab, preset=plan.preset)  # the caller's Lab stays as it was
    summary.update({"init": str(init) if init else None, "device": str(lab.device),
                    "eval_problems": min(plan.preset.eval_problems, len(lab.test_problems))})
    if distributed.active():
        summary["distributed"] = distributed.summary(fsdp.sharded(lab.policy))
    run = fit(plan.method, lab, plan.hp, plan.steps, summary, eval_every=plan.eval_every, progress=plan.progress,
              out=plan.out, save_every=plan.save_every, resume=state)
    if plan.adoptable and not distributed.active():  # a distributed SFT run is equal to the cache's only to round-off
        cache.adopt(run, plan.preset, plan.seed)  # the user's own SFT run is the cached model: no rebuild
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
