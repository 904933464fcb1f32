"""Data-parallel runs on torch.distributed: the few places where the ranks of one run meet.

Launched by torchrun (RANK, WORLD_SIZE and LOCAL_RANK in the environment), `train()` and the CLI run
the same loop on every rank, nanoGPT's way: `init` joins the process group (gloo on the CPU, NCCL on
`cuda:LOCAL_RANK`), rank 0 alone holds and writes the run folder. Every rank draws the same question
list and keeps its share of whole groups (`share`); each group is sampled from its own random stream
(`stream`, seeded by the run's seed, the draw and the group), so no sample depends on the rank that
drew it. Whatever is global over the batch is a sum over the ranks (`total`, `across`): the row and
token counts that normalise a loss, REINFORCE++'s batch statistics, KTO's z0, the metrics. Each rank
scales its loss to its part of the whole batch's, and the gradients are averaged once per update.

Outside torchrun nothing here is active and a run is exactly what it was. `world_of_one()` runs the
distributed code path in one process (the reference a 2-rank run is compared with); `simulate` runs
ranks as threads of one process (the course's lesson, fast tests).
References: nanoGPT's train.py (DDP); verl's agg_loss and TRL's gathered token count (global normalisers).
"""

import atexit
import contextlib
import datetime
import hashlib
import os
import re
import threading
import time
from dataclasses import dataclass

import torch
import torch.distributed as dist

from . import collectives
from .launch import environment as launch_env, joined_failed, wait_for_rank_0

TIMEOUT_S = 600
"""Seconds a rank waits for the others, to join (rank 0 reached, every rank joined) and in each collective,
before failing (UNIFIED_RL_DIST_TIMEOUT changes it)."""


class PeerLost(RuntimeError):
    """A collective failed: another rank stopped (its own message says why) or stalled past the timeout."""


class ElsewhereError(ValueError):
    """Rank 0 refused the run (a bad --out, a resume that does not fit) and said why; this rank stops quietly."""


@dataclass
class World:
    """This process's (or simulated rank's) place in a data-parallel run."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0
    comm: object = None  # collectives.ProcessGroup (torchrun), .Threads (simulated ranks), None (a world of one)
    whole: bool = False  # the current batch: every rank holds all of it (True) or its own share (False)
    local_normalisers: bool = False
    """the course's negative control: each rank normalises by its own counts, as if every rank held as
    many rows and tokens (what a plain DDP port does); the loss then changes with the number of ranks"""


_WORLD = None  # torchrun's, for the whole process
_LOCAL = threading.local()  # a stack of overrides: world_of_one, suspended, a simulated rank


def current():
    """The World of this run, or None outside a distributed run."""
    stack = getattr(_LOCAL, "stack", None)
    return stack[-1] if stack else _WORLD


@contextlib.contextmanager
def _pushed(world):
    _LOCAL.stack = getattr(_LOCAL, "stack", []) + [world]
    try:
        yield world
    finally:
        _LOCAL.stack = _LOCAL.stack[:-1]


def world_of_one():
    """Run the distributed code path in this process alone: a 1-rank run of what torchrun runs on N."""
    return _pushed(World())


def suspended():
    """This process alone, as outside torchrun (the SFT cache is built so: ranks wait on its file lock)."""
    return _pushed(None)


def active() -> bool:
    return current() is not None


def is_main() -> bool:
    """Whether this process writes (rank 0, or a run that is not distributed)."""
    world = current()
    return world is None or world.rank == 0


def _timeout():
    text = os.environ.get("UNIFIED_RL_DIST_TIMEOUT", "").strip()
    if text and not text.isdigit():
        raise ValueError(f"UNIFIED_RL_DIST_TIMEOUT must be a whole number of seconds, got {text!r}")
    return int(text) if text else TIMEOUT_S


def init():
    """Join the process group torchrun describes (a no-op outside torchrun, or when joined already).
    An incomplete launch environment, or a rank 0 not reached within the timeout, is one ValueError line."""
    global _WORLD
    launch = launch_env() if _WORLD is None else None
    if launch is None:
        return _WORLD
    rank, size, local = launch
    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.set_device(local)
    if not dist.is_initialized():
        wait_for_rank_0(rank, size, _timeout())
        try:
            dist.init_process_group("nccl" if cuda else "gloo", timeout=datetime.timedelta(seconds=_timeout()))
        except RuntimeError as e:  # torch's DistNetworkError, DistStoreError: a rank missing or gone
            raise joined_failed(rank, size, _timeout(), e) from None
        atexit.register(_finish)
    _WORLD = World(rank, size, local, comm=collectives.ProcessGroup(rank, size))
    return _WORLD


def _finish():
    if dist.is_initialized():
        dist.destroy_process_group()


def saves_models() -> bool:
    """Whether transformers' save_pretrained writes a model in this process: once torch.distributed is
    initialised it writes on rank 0 only (and silently nothing elsewhere)."""
    return not dist.is_initialized() or dist.get_rank() == 0


def wait_for(done, what):
    """Poll done() until it holds (rank 0 is building `what`); ValueError after the collective timeout."""
    deadline = time.time() + _timeout()
    while not done():
        if time.time() > deadline:
            raise ValueError(f"waited {_timeout()} s for rank 0 to build {what}; build it before launching "
                             "(one process: the same command without torchrun) or share its folder")
        time.sleep(1.0)


def launched() -> bool:
    """Whether this process is a rank of a torchrun launch (a process group, not simulated ranks)."""
    world = current()
    return world is not None and isinstance(world.comm, collectives.ProcessGroup)


def device():
    """cuda:LOCAL_RANK in a torchrun launch on GPUs, else None (the lab's own choice)."""
    return torch.device("cuda", current().local_rank) if launched() and torch.cuda.is_available() else None


def simulate(fn, size=2, local_normalisers=False):
    """[fn() on each rank] with `size` ranks simulated as threads of this process (no torchrun).

    Every collective is an exchange between the threads, so `train()` inside fn runs as it runs on
    `size` processes. An exception on one rank stops the others (PeerLost) and is raised here.
    """
    shared = collectives.Threads.shared(size, _timeout())
    results, errors = [None] * size, [None] * size

    def rank_main(rank):
        world = World(rank, size, rank, comm=collectives.Threads(rank, shared), local_normalisers=local_normalisers)
        with _pushed(world):
            try:
                results[rank] = fn()
            except BaseException as e:  # noqa: BLE001 (re-raised below, in the caller's thread)
                errors[rank] = e
                shared["barrier"].abort()

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    errors = [e for e in errors if e is not None]
    if errors:  # the rank that failed, not those it left waiting
        raise next((e for e in errors if not isinstance(e, PeerLost)), errors[0])
    return results


def _many():
    world = current()
    return world is not None and world.size > 1


def _guard(fn, *args, **kwargs):
    """Run a collective; a failure becomes one PeerLost line instead of a backend traceback."""
    try:
        return fn(*args, **kwargs)
    except (RuntimeError, threading.BrokenBarrierError) as e:  # dist.DistBackendError included
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        first = re.sub(r"^\[[^\]]*\]\s*", "", first).split(". ")[0][:160]  # gloo's "[file.cc:553] " and advice
        raise PeerLost(f"rank {current().rank}: another rank stopped or stalled ({first}); "
                       "its own message says why") from None


def share(n):
    """This rank's indices of n items: contiguous, sizes differing by at most one (numpy's array_split)."""
    world = current()
    if world is None:
        return range(n)
    base, extra = divmod(n, world.size)
    start = world.rank * base + min(world.rank, extra)
    return range(start, start + base + (world.rank < extra))


def stream(seed, *keys):
    """A torch.Generator seeded by (seed, *keys): the same numbers on whichever rank asks."""
    return torch.Generator().manual_seed(stream_seed(seed, *keys) >> 1)


def stream_seed(seed, *keys):
    """A 64-bit seed of (seed, *keys), the same in every process (Python's hash() is not)."""
    return int.from_bytes(hashlib.sha256(":".join(map(str, (seed, *keys))).encode()).digest()[:8], "little")


def gather(obj):
    """[every rank's obj], in rank order ([obj] outside a run of several ranks)."""
    return _guard(current().comm.all_gather_object, obj) if _many() else [obj]


def from_main(fn):
    """fn() on rank 0, its result sent to every rank; a ValueError there stops every rank (rank 0 says why)."""
    if not _many():
        return fn()
    comm, box = current().comm, None
    if current().rank == 0:
        try:
            box = ("ok", fn())
        except ValueError as e:
            _guard(comm.broadcast_object, ("error", str(e)))
            raise
    kind, value = _guard(comm.broadcast_object, box)
    if kind == "error":
        raise ElsewhereError(value)
    return value


def barrier():
    if _many():
        _guard(current().comm.all_gather_object, None)


def hold_batch(batch):
    """Note how the ranks hold this step's batch (Rollout.ranks): a share each, or all of it on every rank."""
    world = current()
    if world is None:
        return
    if batch.ranks not in ("share", "all"):
        raise ValueError("this data source does not split its batch between ranks: draw through "
                         "data._Source.draw / mine (docs/ARCHITECTURE.md, 'Beyond one process')")
    world.whole = batch.ranks == "all"


def split() -> bool:
    """Whether this step's batch is split: several ranks, each holding a share of it."""
    return _many() and not current().whole


def total(x):
    """x summed over the ranks that each hold a share of the batch (x itself otherwise): a global count."""
    if split() and current().local_normalisers:
        return x * current().size  # the negative control: this rank's count, as if every rank had as many
    return sum_over_ranks(x) if split() else x


def sum_over_ranks(x, op="sum"):
    """x (a tensor or a number) reduced over every rank (x itself outside a run of several ranks)."""
    if not _many():
        return x
    out = x.detach().clone() if torch.is_tensor(x) else torch.tensor(float(x), dtype=torch.float64)
    _guard(current().comm.all_reduce, out, op)
    return out if torch.is_tensor(x) else type(x)(out.item())


class _Across:
    """Reductions over every rank's share of a batch, for the core's batch statistics (`across=`)."""

    def sum(self, x):
        return sum_over_ranks(x)

    def max(self, x):
        return sum_over_ranks(x, "max")

    def min(self, x):
        return sum_over_ranks(x, "min")

    def gather(self, x):
        """(every rank's 1-D x concatenated in rank order, where this rank's entries start): the batch's
        values in one process's order, for what a sum cannot give (a quantile, a top-k, a random draw)."""
        parts = gather(x.detach().cpu())
        return torch.cat(parts).to(x.device), sum(len(p) for p in parts[:current().rank])


def across():
    """An object whose sum/max/min (and gather) reduce over the ranks' shares, or None where the batch is not split."""
    return _Across() if split() and not current().local_normalisers else None


def part(n_rows):
    """This rank's rows over the whole batch's: the weight of its row-mean in the batch's row-mean."""
    return n_rows / total(n_rows) if split() else 1.0


def scaled(loss):
    """The loss a rank backpropagates: its part of the batch's loss, times the ranks the gradients are averaged over."""
    return loss * current().size if split() else loss


def greatest(n):
    """The largest n over the ranks (every rank runs as many micro-batches under FSDP2)."""
    return int(sum_over_ranks(float(n), "max"))


def same_start(*modules):
    """Every rank starts from rank 0's weights (parameters and buffers; FSDP2's shards are left alone)."""
    if not _many():
        return
    for module in modules:
        for t in list(module.parameters()) + list(module.buffers()):
            if not hasattr(t, "full_tensor"):
                _guard(current().comm.broadcast, t.data, 0)


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
        _guard(current().comm.all_reduce, flat)
        flat /= current().size
        offset = 0
        for p in group:
            p.grad = flat[offset:offset + p.numel()].view_as(p).clone()
            offset += p.numel()


def summary(fsdp=False):
    """What a run folder records of its ranks (None outside a distributed run)."""
    world = current()
    if world is None:
        return None
    return {"world_size": world.size, "fsdp": fsdp, "backend": dist.get_backend() if launched() else None}
