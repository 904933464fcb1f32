"""How the ranks of a run exchange values: torch.distributed's process group, or threads of one process.

`distributed.World.comm` is one of these; both offer the same collectives (all_reduce of a tensor in
place, all_gather_object, broadcast of a tensor or an object), so the package's code meets the
other ranks the same way whether they are torchrun's processes or ranks simulated as threads
(`distributed.simulate`: the course's lesson and the fast tests).
"""

import threading

import torch
import torch.distributed as dist


class ProcessGroup:
    """torch.distributed's default process group (torchrun's ranks)."""

    OPS = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}

    def __init__(self, rank, size):
        self.rank, self.size = rank, size
        self.cuda = dist.get_backend() == "nccl"  # NCCL reduces CUDA tensors only

    def all_reduce(self, t, op="sum"):
        if self.cuda and t.device.type != "cuda":  # a count made on the host: reduced on this rank's GPU
            on_gpu = t.cuda()
            dist.all_reduce(on_gpu, op=self.OPS[op])
            t.copy_(on_gpu)
            return
        dist.all_reduce(t, op=self.OPS[op])

    def all_gather_object(self, obj):
        out = [None] * self.size
        dist.all_gather_object(out, obj)
        return out

    def broadcast(self, t, src=0):
        if self.cuda and t.device.type != "cuda":
            on_gpu = t.cuda()
            dist.broadcast(on_gpu, src=src)
            t.copy_(on_gpu)
            return
        dist.broadcast(t, src=src)

    def broadcast_object(self, obj, src=0):
        box = [obj]
        dist.broadcast_object_list(box, src=src)
        return box[0]


class Threads:
    """The same collectives between threads of one process: ranks simulated without processes."""

    REDUCE = {"sum": lambda a, b: a + b, "max": torch.maximum, "min": torch.minimum}

    def __init__(self, rank, shared):
        self.rank, self.size, self.shared = rank, shared["size"], shared

    @staticmethod
    def shared(size, timeout):
        """What the threads of one simulated run share: a slot per rank and a barrier."""
        return {"size": size, "slots": [None] * size, "barrier": threading.Barrier(size, timeout=timeout)}

    def _exchange(self, value):
        slots, barrier = self.shared["slots"], self.shared["barrier"]
        slots[self.rank] = value
        barrier.wait()
        out = list(slots)
        barrier.wait()  # no rank posts its next value before every rank has read this one
        return out

    def all_reduce(self, t, op="sum"):
        parts = self._exchange(t.detach().clone())
        out = parts[0]
        for p in parts[1:]:
            out = self.REDUCE[op](out, p)
        t.copy_(out)

    def all_gather_object(self, obj):
        return self._exchange(obj)

    def broadcast(self, t, src=0):
        t.copy_(self._exchange(t.detach().clone())[src])

    def broadcast_object(self, obj, src=0):
        return self._exchange(obj)[src]
