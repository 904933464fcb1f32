"""CUDA simulated on the CPU: tensors tagged as CUDA, ops that mix them with CPU tensors refused, host syncs counted.

`SimulatedCuda` is a TorchFunctionMode. A tensor is "on CUDA" when it is tagged: a factory call or `.to`
that names a CUDA device makes a CPU tensor and tags it, `tag` marks a model's weights, and every op
with a tagged input tags its outputs. Tagged tensors say they are on cuda:0 (`.device`, `.is_cuda`), so
code that branches on the device takes its CUDA branch. As on a GPU, an op that mixes a tagged tensor
with an untagged one of one or more dimensions raises (a CPU scalar may mix; indexing with CPU indices
and copies across devices are allowed). Each call that would copy a CUDA value to the host (`.item()`,
`bool()`, `.tolist()`, `.cpu()`, `nonzero`, ...) is recorded with the first frame outside torch, so a
count can say whose sync it is: the package's, transformers', or another's.
"""

import os
import sys

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten, tree_map

CUDA = torch.device("cuda", 0)
TAG = "_simulated_cuda"
# calls that copy a CUDA value to the host and so wait for every queued kernel
SYNCS = {"item", "tolist", "__bool__", "__int__", "__float__", "__index__", "cpu", "numpy", "nonzero",
         "masked_select", "unique", "equal", "allclose", "is_nonzero", "__repr__", "__format__"}
# calls that may mix devices on a GPU: indexing by CPU indices, copies, moves
MIXES = {"__getitem__", "__setitem__", "copy_", "to", "cpu", "cuda", "index_put_", "index_put", "__set__", "__deepcopy__",
         "_has_compatible_shallow_copy_type"}
TORCH = os.path.dirname(torch.__file__)
HERE = os.path.abspath(__file__)
PACKAGE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "unified_rl")


def tag(*tensors_or_modules):
    """Mark tensors (or a module's parameters and buffers) as living on cuda:0; returns the first argument."""
    for x in tensors_or_modules:
        items = list(x.parameters()) + list(x.buffers()) if isinstance(x, torch.nn.Module) else [x]
        for t in items:
            setattr(t, TAG, True)
    return tensors_or_modules[0]


def is_tagged(t):
    return torch.is_tensor(t) and getattr(t, TAG, False)


def _is_cuda(device):
    return device is not None and torch.device(device).type == "cuda"


def _name(func):
    return getattr(func, "__name__", "") or str(func)


def _owner(frame):
    """(whose, 'file:line') of the first frame outside torch and this module."""
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(TORCH) and path != HERE:
            who = "package" if path.startswith(PACKAGE) else \
                "transformers" if f"{os.sep}transformers{os.sep}" in path else "other"
            return who, f"{os.path.relpath(path, os.path.dirname(PACKAGE)) if who == 'package' else path}:{frame.f_lineno}"
        frame = frame.f_back
    return "other", "?"


class SimulatedCuda(TorchFunctionMode):
    """Within `with SimulatedCuda() as sim:`, tagged tensors act as CUDA tensors; sim.syncs lists the host syncs."""

    def __init__(self):
        super().__init__()
        self.syncs = []  # (whose, call, where)
        self.mixed = []  # (call, where) of each refused op

    def count(self, who):
        return sum(1 for w, _, _ in self.syncs if w == who)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = _name(func)
        owner = getattr(func, "__self__", None)
        if name == "__get__" and type(owner).__name__ == "getset_descriptor" and args and is_tagged(args[0]):
            if owner.__name__ == "device":
                return CUDA
            if owner.__name__ == "is_cuda":
                return True
            if owner.__name__ == "is_cpu":
                return False
        if name == "__set__" and type(owner).__name__ == "getset_descriptor" and owner.__name__ == "data" \
                and len(args) == 2 and is_tagged(args[1]):
            tag(args[0])  # Module.to("cuda") moves a parameter by setting its .data
        flat, _ = tree_flatten((args, kwargs))
        tensors = [t for t in flat if torch.is_tensor(t)]
        tagged = any(is_tagged(t) for t in tensors)
        if name in ("to", "cuda") and args and torch.is_tensor(args[0]):
            target = [a for a in list(args[1:]) + [kwargs.get("device")] if isinstance(a, (str, torch.device))]
            if name == "cuda" or (target and _is_cuda(target[0])):
                if "device" in kwargs:
                    kwargs["device"] = "cpu"
                out = args[0] if name == "cuda" else func(*[("cpu" if a is target[0] else a) for a in args], **kwargs)
                if out is args[0] and not is_tagged(out):  # a move to CUDA copies; a tensor there stays itself
                    out = out.clone()
                return tag(out)
            if target and torch.device(target[0]).type == "cpu" and is_tagged(args[0]):
                self._sync(name)
                return func(*args, **kwargs).clone()  # a copy: untagged, on the CPU
        to_cuda = _is_cuda(kwargs.get("device"))
        if to_cuda:
            kwargs["device"] = "cpu"
        if tagged and name in SYNCS:
            self._sync(name)
            out = func(*args, **kwargs)
            if name == "cpu":
                return out.clone()  # a copy on the host, untagged
            if name in ("nonzero", "masked_select", "unique"):  # a result on the GPU, its size read on the host
                tree_map(lambda t: tag(t) if torch.is_tensor(t) else t, out)
            return out
        if tagged and name == "__getitem__" and any(torch.is_tensor(t) and t.dtype == torch.bool
                                                    for t in tree_flatten(args[1:])[0]):
            self._sync("boolean indexing")
        if tagged and name not in MIXES:
            plain = [t for t in tensors if not is_tagged(t) and t.dim() > 0]
            if plain:
                where = _owner(sys._getframe(1))[1]
                self.mixed.append((name, where))
                raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                                   f"devices, cuda:0 and cpu! ({name} at {where}, simulated: CPU tensors of shapes "
                                   f"{[tuple(t.shape) for t in plain]})")
        out = func(*args, **kwargs)
        if tagged or to_cuda:
            tree_map(lambda t: tag(t) if torch.is_tensor(t) else t, out)
        return out

    def _sync(self, call):
        who, where = _owner(sys._getframe(2))
        self.syncs.append((who, call, where))
