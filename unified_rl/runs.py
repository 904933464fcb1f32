"""A run folder: what a run leaves on disk, never half-written, read back without executing anything.

    OUT/
      checkpoint/     the policy and its tokenizer (loads with from_pretrained)
      state.pt        the rest of the run: pi_ref, the extra loss (PPO's critic), the optimizer, the
                      RNG states (Python, NumPy, torch), the data source's and reward's state, the step
      metrics.jsonl   one row per step so far
      summary.json    method, preset, seed, init, steps, settings, and what each figure was measured on
      COMPLETE        written last; a folder without it is not a finished save

Every save writes a hidden sibling folder `.OUT.new-PID`, marks it COMPLETE, then renames it into
place (the old folder is moved to `.OUT.old-PID` first and deleted after). A kill at any moment
leaves the old complete run or the new one; `recover` finishes an interrupted swap. state.pt is
read with `torch.load(weights_only=True)`: a crafted file cannot run code, it is refused.
"""

import glob
import json
import os
import random
import shutil
import tempfile

import numpy as np
import torch

from .models import save_checkpoint

STATE, MARKER = "state.pt", "COMPLETE"


def is_complete(out):
    return os.path.isfile(os.path.join(out, MARKER))


def _siblings(out, kind):
    parent, name = os.path.split(os.path.abspath(out))
    return sorted(glob.glob(os.path.join(parent, f".{glob.escape(name)}.{kind}-*")))


def _alive(path):
    """Whether the process that named this temporary folder still runs."""
    try:
        os.kill(int(path.rsplit("-", 1)[1]), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def recover(out):
    """Finish or undo a save that a kill interrupted; leftovers of dead processes are removed."""
    if not os.path.exists(out):
        done = [p for p in _siblings(out, "new") + _siblings(out, "old") if is_complete(p)]
        if done:
            os.rename(done[0], out)  # "new" sorts before "old": the newer complete save wins
    for p in _siblings(out, "new") + _siblings(out, "old"):
        if not _alive(p) or os.getpid() == int(p.rsplit("-", 1)[1]):
            shutil.rmtree(p, ignore_errors=True)


def check_out(out, overwrite=False, resume=False):
    """Refuse to overwrite a run unless asked; check `out` can be written, before any training."""
    recover(out)
    if os.path.isfile(out):
        raise ValueError(f"{out} is a file; a run is saved into a folder")
    if os.path.isdir(out) and os.listdir(out) and not (overwrite or resume):
        raise ValueError(f"{out} already holds a run; pass --overwrite (overwrite=True) to replace it "
                         "or --resume (resume=True) to continue it")
    parent = os.path.dirname(os.path.abspath(out))
    try:
        os.makedirs(parent, exist_ok=True)
        os.rmdir(tempfile.mkdtemp(dir=parent, prefix=".probe-"))
    except OSError as e:
        raise ValueError(f"cannot write the run to {out}: {e.strerror or e}") from None


def save_run(run, replace=True):
    """Write `run` to run.out atomically; returns False (writing nothing) if `replace` is False and
    a complete run is already there (e.g. another process won a race to fill a cache entry)."""
    out = os.path.abspath(run.out)
    parent, name = os.path.split(out)
    os.makedirs(parent, exist_ok=True)
    tmp = os.path.join(parent, f".{name}.new-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        os.makedirs(tmp)
        save_checkpoint(run.lab.policy, run.lab.tokenizer, os.path.join(tmp, "checkpoint"))
        if run.state is not None:
            torch.save(run.state.capture(), os.path.join(tmp, STATE))
        with open(os.path.join(tmp, "metrics.jsonl"), "w") as f:
            f.writelines(json.dumps(row) + "\n" for row in run.metrics)
        with open(os.path.join(tmp, "summary.json"), "w") as f:
            json.dump(run.summary, f, indent=2)
        with open(os.path.join(tmp, MARKER), "w") as f:
            f.write(f"{len(run.metrics)} steps\n")
        return _swap(tmp, out, replace)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # gone after a rename; a loser's copy otherwise


def _swap(tmp, out, replace):
    if not os.path.exists(out):
        try:
            os.rename(tmp, out)
            return True
        except OSError:  # someone else's folder appeared meanwhile
            if not replace:
                return False
    elif not replace and is_complete(out):
        return False
    old = os.path.join(os.path.dirname(out), f".{os.path.basename(out)}.old-{os.getpid()}")
    shutil.rmtree(old, ignore_errors=True)
    os.rename(out, old)
    os.rename(tmp, out)
    shutil.rmtree(old, ignore_errors=True)
    return True


def load_state(out):
    """The saved state of the run in `out`, with its metrics and summary; ValueError if unusable."""
    recover(out)
    path = os.path.join(out, STATE)
    if not os.path.isfile(path):
        raise ValueError(f"cannot resume: {out} holds no saved run state ({STATE}); "
                         "start it afresh with --overwrite")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        with open(os.path.join(out, "metrics.jsonl")) as f:
            state["metrics"] = [json.loads(line) for line in f if line.strip()]
        with open(os.path.join(out, "summary.json")) as f:
            state["summary"] = json.load(f)
    except Exception as e:  # a crafted pickle lands here too: weights_only refuses to run it
        lines = str(e).strip().splitlines()
        raise ValueError(f"{out} is not a run this package saved, or it is damaged: {type(e).__name__}: "
                         f"{lines[0][:200] if lines else ''}") from None
    state["seconds"] = state["summary"].get("seconds", 0.0)
    return state


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


class Trainer:
    """The live parts of a run a resume needs besides the policy: pi_ref, the optimizer, the data
    source, the reward, the extra loss, and the RNG states at the last finished step."""

    def __init__(self, opt, source, reward, extra, lab):
        self.opt, self.source, self.reward, self.extra, self.lab = opt, source, reward, extra, lab
        self.step, self.rng = 0, None

    def mark(self, step):
        """Step `step` is finished: what follows it starts from the RNG states of now."""
        self.step, self.rng = step, rng_state()

    def capture(self):
        return {"step": self.step, "ref": self.lab.ref.state_dict(), "optimizer": self.opt.state_dict(),
                "extra": self.extra.state_dict() if self.extra is not None else None,
                "source": _state_of(self.source), "reward": _state_of(self.reward),
                "rng": self.rng if self.rng is not None else rng_state()}

    def restore(self, state):
        self.lab.ref.load_state_dict(state["ref"])
        self.opt.load_state_dict(state["optimizer"])
        if self.extra is not None:
            self.extra.load_state_dict(state["extra"])
        if state["source"] is not None:
            self.source.set_state(state["source"])
        if state["reward"] is not None:
            self.reward.set_state(state["reward"])
        set_rng_state(state["rng"])
        self.step, self.rng = state["step"], state["rng"]
