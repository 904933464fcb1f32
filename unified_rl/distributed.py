"""Data-parallel runs on torch.distributed: the few places where the ranks of one run meet.

Launched by torchrun (RANK, WORLD_SIZE and LOCAL_RANK in the environment), `train()` and the CLI run
the same loop on every rank, nanoGPT's way: `init` joins the process group (gloo on the CPU, NCCL on
`cuda:LOCAL_RANK`), rank 0 alone holds and writes the run folder. Every rank draws the same question
list and keeps its share of whole groups (`share`); each group is sampled from its own random stream
(`stream`, seeded by the run's seed, the draw and the group), so no sample depends on the rank that
drew it. Whatever is global over the batch is a sum over the ranks (`total`, `across`): the row and
token counts that normalise a loss, REINFORCE++'s batch statistics, KTO's z0, the metrics. Each rank
scales its loss to its part of the whole batch's, and the gradients are averaged once per update.

Outside torchrun nothing here is active and a run is exactly what it was; `world_of_one()` runs the
distributed code path in one process (the reference a 2-rank run is compared with).
References: nanoGPT's train.py (DDP); verl's agg_loss and TRL's gathered token count (global normalisers).
"""

import atexit
import contextlib
import datetime
import hashlib
import os
import re
from dataclasses import dataclass

import torch
import torch.distributed as dist

TIMEOUT_S = 600
"""Seconds a collective waits for the other ranks before failing (UNIFIED_RL_DIST_TIMEOUT changes it)."""


class PeerLost(RuntimeError):
    """A collective failed: another rank stopped (its own message says why) or stalled past the timeout."""


class ElsewhereError(ValueError):
    """Rank 0 refused the run (a bad --out, a resume that does not fit) and said why; this rank stops quietly."""


@dataclass
class World:
    """This process's place in a data-parallel run."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0
    process_group: bool = False  # False: a world of one process, with no torch.distributed group
    whole: bool = False  # the current batch: every rank holds all of it (True) or its own share (False)


_WORLD = None


def current():
    """The World of this run, or None outside a distributed run."""
    return _WORLD


def active() -> bool:
    return _WORLD is not None


def is_main() -> bool:
    """Whether this process writes (rank 0, or a run that is not distributed)."""
    return _WORLD is None or _WORLD.rank == 0


def _timeout():
    text = os.environ.get("UNIFIED_RL_DIST_TIMEOUT", "").strip()
    if text and not text.isdigit():
        raise ValueError(f"UNIFIED_RL_DIST_TIMEOUT must be a whole number of seconds, got {text!r}")
    return int(text) if text else TIMEOUT_S


def init():
    """Join the process group torchrun describes (a no-op outside torchrun, or when joined already)."""
    global _WORLD
    if _WORLD is not None or "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        return _WORLD
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.set_device(local)
    if not dist.is_initialized():
        dist.init_process_group("nccl" if cuda else "gloo", timeout=datetime.timedelta(seconds=_timeout()))
        atexit.register(_finish)
    _WORLD = World(rank, size, local, process_group=True)
    return _WORLD


def _finish():
    if dist.is_initialized():
        dist.destroy_process_group()


def device():
    """cuda:LOCAL_RANK in a distributed run on GPUs, else None (the lab's own choice)."""
    if _WORLD is not None and _WORLD.process_group and torch.cuda.is_available():
        return torch.device("cuda", _WORLD.local_rank)
    return None


@contextlib.contextmanager
def world_of_one():
    """Run the distributed code path in this process alone: a 1-rank run of what torchrun runs on N."""
    global _WORLD
    saved, _WORLD = _WORLD, World()
    try:
        yield _WORLD
    finally:
        _WORLD = saved


@contextlib.contextmanager
def suspended():
    """This process alone, as outside torchrun (the SFT cache is built so: ranks wait on its file lock)."""
    global _WORLD
    saved, _WORLD = _WORLD, None
    try:
        yield
    finally:
        _WORLD = saved


def _many():
    return _WORLD is not None and _WORLD.size > 1


def _guard(fn, *args, **kwargs):
    """Run a collective; a failure becomes one PeerLost line instead of a backend traceback."""
    try:
        return fn(*args, **kwargs)
    except RuntimeError as e:  # dist.DistBackendError included
        first = (str(e).strip().splitlines() or [""])[0]
        first = re.sub(r"^\[[^\]]*\]\s*", "", first).split(". ")[0][:160]  # gloo's "[file.cc:553] " and advice
        raise PeerLost(f"rank {_WORLD.rank}: another rank stopped or stalled ({first}); "
                       "its own message says why") from None


def share(n):
    """This rank's indices of n items: contiguous, sizes differing by at most one (numpy's array_split)."""
    if _WORLD is None:
        return range(n)
    base, extra = divmod(n, _WORLD.size)
    start = _WORLD.rank * base + min(_WORLD.rank, extra)
    return range(start, start + base + (_WORLD.rank < extra))


def stream(seed, *keys):
    """A torch.Generator seeded by (seed, *keys): the same numbers on whichever rank asks."""
    digest = hashlib.sha256(":".join(map(str, (seed, *keys))).encode()).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") >> 1)


def stream_seed(seed, *keys):
    """An int seed of (seed, *keys), for Python's random.Random."""
    return int.from_bytes(hashlib.sha256(":".join(map(str, (seed, *keys))).encode()).digest()[:8], "little")


def gather(obj):
    """[every rank's obj], in rank order ([obj] outside a run of several ranks)."""
    if not _many():
        return [obj]
    out = [None] * _WORLD.size
    _guard(dist.all_gather_object, out, obj)
    return out


def from_main(fn):
    """fn() on rank 0, its result sent to every rank; a ValueError there stops every rank (rank 0 says why)."""
    if not _many():
        return fn()
    box = [None]
    if _WORLD.rank == 0:
        try:
            box[0] = ("ok", fn())
        except ValueError as e:
            box[0] = ("error", str(e))
            _guard(dist.broadcast_object_list, box, src=0)
            raise
    _guard(dist.broadcast_object_list, box, src=0)
    kind, value = box[0]
    if kind == "error":
        raise ElsewhereError(value)
    return value


def barrier():
    if _many():
        _guard(dist.barrier)


def hold_batch(batch):
    """Note how the ranks hold this step's batch (Rollout.ranks): a share each, or all of it on every rank."""
    if _WORLD is None:
        return
    if batch.ranks not in ("share", "all"):
        raise ValueError("this data source does not split its batch between ranks: draw through "
                         "data._Source.draw / mine (docs/ARCHITECTURE.md, 'Beyond one process')")
    _WORLD.whole = batch.ranks == "all"


def split() -> bool:
    """Whether this step's batch is split: several ranks, each holding a share of it."""
    return _many() and not _WORLD.whole


def total(x):
    """x summed over the ranks that each hold a share of the batch (x itself otherwise): a global count."""
    return sum_over_ranks(x) if split() else x


def sum_over_ranks(x):
    """x (a tensor or a number) summed over every rank (x itself outside a run of several ranks)."""
    if not _many():
        return x
    if torch.is_tensor(x):
        out = x.detach().clone()
        _guard(dist.all_reduce, out)
        return out
    out = torch.tensor(float(x), dtype=torch.float64)
    _guard(dist.all_reduce, out)
    return type(x)(out.item())


class _Across:
    """Reductions over every rank's share of a batch, for the core's batch statistics (`across=`)."""

    @staticmethod
    def _reduce(x, op):
        out = x.detach().clone()
        _guard(dist.all_reduce, out, op=op)
        return out

    def sum(self, x):
        return self._reduce(x, dist.ReduceOp.SUM)

    def max(self, x):
        return self._reduce(x, dist.ReduceOp.MAX)

    def min(self, x):
        return self._reduce(x, dist.ReduceOp.MIN)


def across():
    """An object whose sum/max/min reduce over the ranks' shares, or None where the batch is not split."""
    return _Across() if split() else None


def part(n_rows):
    """This rank's rows over the whole batch's: the weight of its row-mean in the batch's row-mean."""
    return n_rows / total(n_rows) if split() else 1.0


def scaled(loss):
    """The loss a rank backpropagates: its part of the batch's loss, times the ranks the gradients are averaged over."""
    return loss * _WORLD.size if split() else loss


def same_start(*modules):
    """Every rank starts from rank 0's weights (parameters and buffers)."""
    if not _many():
        return
    for module in modules:
        for t in list(module.parameters()) + list(module.buffers()):
            if not getattr(t, "_is_dtensor", False) and not hasattr(t, "full_tensor"):
                _guard(dist.broadcast, t.data, src=0)


def average_gradients(params):
    """Average the gradients of `params` over the ranks: one flat all-reduce per dtype (DDP's reduction).

    A parameter without a gradient on this rank counts as zeros, so every rank reduces the same list.
    Parameters FSDP2 shards (DTensors) are skipped: their gradients were reduced in the backward pass.
    """
    if not _many():
        return
    params = [p for p in params if p.requires_grad and not hasattr(p, "full_tensor")]
    for dtype in sorted({p.dtype for p in params}, key=str):
        group = [p for p in params if p.dtype == dtype]
        flat = torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1) for p in group])
        _guard(dist.all_reduce, flat)
        flat /= _WORLD.size
        offset = 0
        for p in group:
            n = p.numel()
            p.grad = flat[offset:offset + n].view_as(p).clone()
            offset += n


def greatest(n):
    """The largest n over the ranks (every rank runs as many micro-batches under FSDP2)."""
    if not _many():
        return n
    t = torch.tensor(n, dtype=torch.float64)
    _guard(dist.all_reduce, t, op=dist.ReduceOp.MAX)
    return int(t.item())


def summary(fsdp=False):
    """What a run folder records of its ranks (None outside a distributed run)."""
    if _WORLD is None:
        return None
    return {"world_size": _WORLD.size, "fsdp": fsdp, "backend": dist.get_backend() if _WORLD.process_group else None}
