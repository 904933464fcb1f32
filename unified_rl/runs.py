"""A run folder: what a run leaves on disk, never half-written, read back without executing anything.

    OUT/
      checkpoint/     the policy and its tokenizer (loads with from_pretrained)
      state.pt        the rest of the run: pi_ref, the extra loss (PPO's critic), the optimizer, the
                      RNG states (Python, NumPy, torch), the data source's and reward's state, the step
      metrics.jsonl   one row per step so far
      summary.json    method, preset, seed, init, steps (planned), steps_done (what the weights have),
                      settings, and what each figure was measured on
      .unified_rl-run the marker: this is a run folder (its format and the package version)
      MANIFEST        every path above, the paths a save replaces and an overwrite may remove
      COMPLETE        written last; a folder without it is not a finished save

Any other file in OUT is the user's: kept by every save and resume, and a reason for --overwrite to
refuse (run_folder.py says which folders are refused outright). A save writes the new files into
OUT/.unified_rl-save, marks that COMPLETE, removes OUT/COMPLETE, moves the manifest's files into
place one by one (os.replace) and moves COMPLETE in last. A kill at any moment leaves the old
complete run, or a finished staging copy that `recover` moves in: it only ever touches its own
folder, never a sibling. state.pt is read with `torch.load(weights_only=True)`: a crafted file
cannot run code, it is refused.
"""

import json
import math
import os
import random
import shutil

import numpy as np
import torch

from . import __version__, distributed, fsdp, lora
from .models import save_checkpoint
from .run_folder import (COMPLETE, LOCK, MANIFEST, MARK, STAGE, check_contents, check_path, hold,  # noqa: F401
                         manifest, mark_text)
from .run_folder import probe  # noqa: F401 (tests probe through here)
from .run_folder import tempfile  # noqa: F401

STATE, MARKER = "state.pt", COMPLETE
OLD, NEW = ".old-manifest", ".new-manifest"
"""In the staging folder, never moved: the manifest of the run it replaces (to remove what the new
one lacks) and a copy of its own (MANIFEST itself moves in with the rest)."""
STATE_KEYS = ("step", "ref", "optimizer", "extra", "source", "reward", "rng")
SUMMARY_KEYS = ("method", "preset", "seed", "init", "steps", "version")


def is_complete(out):
    return os.path.isfile(os.path.join(out, MARKER))


def recover(out):
    """Finish a save that a kill interrupted after its staging copy was complete, or drop a staging
    copy that was not; touches nothing outside `out`."""
    if not os.path.isdir(out) or os.path.islink(out) or not os.path.lexists(os.path.join(out, STAGE)):
        return
    with hold(out, wait=True):
        stage = os.path.join(out, STAGE)
        if os.path.isfile(os.path.join(stage, MARKER)):
            _commit(out)
        else:
            shutil.rmtree(stage, ignore_errors=True)


def check_out(out, overwrite=False, resume=False):
    """Refuse, before any training, an output the flags do not allow (see run_folder.py); check
    `out` can be written. Creates nothing but a probe it removes at once."""
    check_path(out)
    check_contents(out, overwrite=overwrite, resume=resume)
    probe(out)


def _write_json(path, obj, **kw):
    with open(path, "w") as f:
        json.dump(obj, f, allow_nan=False, **kw)


def save_run(run, replace=True):
    """Write `run` to run.out atomically, keeping every file the run did not write; returns False
    (writing nothing) if `replace` is False and a complete run is already there (e.g. another process
    filled a cache entry first). In a distributed run every rank calls it (the state of every rank,
    FSDP2's shards, are gathered) and rank 0 alone writes."""
    captured = run.state.capture() if run.state is not None else None
    weights = fsdp.full_state_dict(run.lab.policy) if fsdp.sharded(run.lab.policy) else None
    if not distributed.is_main():
        return True
    out = os.path.abspath(run.out)
    with hold(out, wait=not replace):
        recover(out)
        if not replace and is_complete(out):
            return False
        stage = os.path.join(out, STAGE)
        shutil.rmtree(stage, ignore_errors=True)
        try:
            _stage(run, stage, manifest(out) or [], captured, weights)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)  # the old run is untouched
            raise
        _commit(out)
    return True


def _finite(run):
    """ValueError naming the first metric or summary entry that JSON cannot hold (inf, nan)."""
    for i, row in enumerate(run.metrics):
        bad = [k for k, v in row.items() if isinstance(v, float) and not math.isfinite(v)]
        if bad:
            raise ValueError(f"step {i + 1}'s metrics are not finite ({', '.join(bad)}): the run diverged; "
                             "nothing was saved over the last save")
    try:
        json.dumps(run.summary, allow_nan=False)
    except ValueError:
        raise ValueError("the run's summary holds a value that is not finite; nothing was saved") from None


def _finite_weights(run, weights):
    """ValueError naming the first weight tensor holding NaN or inf: such a run is never saved as complete."""
    named = weights.items() if weights is not None else run.lab.policy.named_parameters()
    for name, p in named:
        if p.is_floating_point() and not bool(torch.isfinite(p).all()):
            raise ValueError(f"the policy's weights are not finite ({name} holds NaN or inf): the run diverged; "
                             "nothing was saved over the last save")


def _stage(run, stage, old, captured, weights):
    _finite(run)
    _finite_weights(run, weights)
    os.makedirs(stage)
    save = lora.save_adapter if hasattr(run.lab.policy, "peft_config") else save_checkpoint
    save(run.lab.policy, run.lab.tokenizer, os.path.join(stage, "checkpoint"), weights)
    if captured is not None:
        torch.save(captured, os.path.join(stage, STATE))
    with open(os.path.join(stage, "metrics.jsonl"), "w") as f:
        f.writelines(json.dumps(row, allow_nan=False) + "\n" for row in run.metrics)
    _write_json(os.path.join(stage, "summary.json"), {**run.summary, "steps_done": len(run.metrics)}, indent=2)
    with open(os.path.join(stage, MARK), "w") as f:
        f.write(mark_text())
    written = [os.path.relpath(os.path.join(d, x), stage).replace(os.sep, "/")
               for d, _, fs in os.walk(stage) for x in fs]
    with open(os.path.join(stage, OLD), "w") as f:
        f.writelines(p + "\n" for p in old)
    for name in (MANIFEST, NEW):
        with open(os.path.join(stage, name), "w") as f:
            f.writelines(p + "\n" for p in sorted(written) + [MANIFEST, MARKER])
    with open(os.path.join(stage, MARKER), "w") as f:
        f.write(f"{len(run.metrics)} steps\n")


def _commit(out):
    """Move a complete staging copy's files into `out`, COMPLETE last; safe to repeat after a kill."""
    stage = os.path.join(out, STAGE)
    with open(os.path.join(stage, NEW)) as f:
        new = [line.rstrip("\n") for line in f if line.strip()]
    with open(os.path.join(stage, OLD)) as f:
        old = [line.rstrip("\n") for line in f if line.strip()]
    if os.path.lexists(os.path.join(out, MARKER)):
        os.unlink(os.path.join(out, MARKER))  # from here on the folder is a save in progress
    for rel in [MARK] + [p for p in new if p not in (MARK, MARKER)]:  # the marker first: a run folder
        src, dst = os.path.join(stage, rel), os.path.join(out, rel)
        if os.path.lexists(src):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            os.replace(src, dst)
    for rel in sorted(set(old) - set(new), reverse=True):  # the old run's paths the new one lacks
        path = os.path.join(out, rel)
        if os.path.isfile(path) and not os.path.islink(path):
            os.unlink(path)
    _prune(out, old)
    os.replace(os.path.join(stage, MARKER), os.path.join(out, MARKER))
    shutil.rmtree(stage, ignore_errors=True)


def _prune(out, paths):
    """Remove the folders of `paths` left empty (never one holding anything)."""
    for d in sorted({os.path.dirname(p) for p in paths if "/" in p}, key=len, reverse=True):
        try:
            os.rmdir(os.path.join(out, d))
        except OSError:
            pass


def load_state(out, recover_first=True):
    """The saved state of the run in `out`, with its metrics and summary; ValueError if unusable.
    recover_first=False: read only (a distributed run's other ranks, once rank 0 has recovered it)."""
    if recover_first:
        recover(out)
    path = os.path.join(out, STATE)
    if not os.path.isfile(path):
        raise ValueError(f"cannot resume: {out} holds no saved run state ({STATE}); "
                         "start it afresh with --overwrite")
    if not is_complete(out):
        raise ValueError(f"cannot resume: {out} holds no complete save ({MARKER} is missing)")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        with open(os.path.join(out, "metrics.jsonl")) as f:
            state["metrics"] = [json.loads(line) for line in f if line.strip()]
        with open(os.path.join(out, "summary.json")) as f:
            state["summary"] = json.load(f)
        _check_saved(state)
    except Exception as e:  # a crafted pickle lands here too: weights_only refuses to run it
        lines = str(e).strip().splitlines()
        raise ValueError(f"{out} is not a run this package saved, or it is damaged: {type(e).__name__}: "
                         f"{lines[0][:200] if lines else ''}") from None
    if state["summary"]["version"] != __version__:
        raise ValueError(f"{out} was saved by unified_rl {state['summary']['version']} and this is "
                         f"{__version__}: a resume would not compute what the run started; resume it "
                         "with that version, or start afresh with --overwrite")
    state["seconds"] = state["summary"].get("seconds", 0.0)
    return state


def _check_saved(state):
    """KeyError/TypeError/ValueError naming what a saved state lacks or contradicts."""
    if not isinstance(state, dict) or not isinstance(state.get("summary"), dict):
        raise TypeError("state.pt or summary.json is not a mapping")
    missing = [k for k in STATE_KEYS if k not in state] + [f"summary.json:{k}" for k in SUMMARY_KEYS
                                                            if k not in state["summary"]]
    if missing:
        raise KeyError(f"missing {', '.join(missing)}")
    if not all(isinstance(r, dict) for r in state["metrics"]):
        raise TypeError("metrics.jsonl holds a row that is not a mapping")
    if state["step"] != len(state["metrics"]):
        raise ValueError(f"state.pt is at step {state['step']} but metrics.jsonl holds "
                         f"{len(state['metrics'])} rows")


def rng_state():
    """Python's, NumPy's and torch's (CPU and CUDA) global RNG states, as weights_only-loadable values."""
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state = {"python": random.getstate(), "torch": torch.get_rng_state(),
             "numpy": [kind, torch.from_numpy(keys.astype(np.int64)), pos, has_gauss, cached]}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state):
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    kind, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _state_of(obj):
    return obj.get_state() if hasattr(obj, "get_state") else None


class ResumeState:
    """The live parts of a run a resume needs besides the policy: pi_ref, the optimizer, the data
    source, the reward, the extra loss, and the RNG states at the last finished step."""

    def __init__(self, opt, source, reward, extra, lab):
        self.opt, self.source, self.reward, self.extra, self.lab = opt, source, reward, extra, lab
        self.step, self.rng = 0, None

    def mark(self, step):
        """Step `step` is finished: what follows it starts from the RNG states of now."""
        self.step, self.rng = step, rng_state()

    def capture(self):
        """The state to save; in a distributed run, with every rank's RNG states (a collective)."""
        rng = self.rng if self.rng is not None else rng_state()
        state = {"step": self.step, "ref": fsdp.full_state_dict(self.lab.ref),
                 "optimizer": fsdp.optimizer_state(self.opt),
                 "extra": self.extra.state_dict() if self.extra is not None else None,
                 "source": _state_of(self.source), "reward": _state_of(self.reward), "rng": rng}
        if distributed.active():
            state["rng_ranks"] = distributed.gather(rng)
        return state

    def restore(self, state):
        """Put the saved state back; ValueError (one line) if it does not fit this run's model."""
        try:
            self._restore(state)
        except (RuntimeError, KeyError, TypeError, ValueError, IndexError) as e:
            first = (str(e).strip().splitlines() or [""])[0][:200]
            raise ValueError(f"the saved state.pt does not fit this run (another model size, or damaged): "
                             f"{type(e).__name__}: {first}") from None

    def _restore(self, state):
        fsdp.load_state_dict(self.lab.ref, state["ref"])
        fsdp.load_optimizer_state(self.opt, state["optimizer"])
        if self.extra is not None:
            self.extra.load_state_dict(state["extra"])
        if state["source"] is not None:
            self.source.set_state(state["source"])
        if state["reward"] is not None:
            self.reward.set_state(state["reward"])
        world = distributed.current()
        rng = state["rng_ranks"][world.rank] if world is not None and "rng_ranks" in state else state["rng"]
        set_rng_state(rng)
        self.step, self.rng = state["step"], rng
