"""How an exercise answer is compared with the expected one, and described in words when it differs.

Values (numbers, tensors, tuples of them) are compared by `compare`; gradients by `gradients` and
`compare_gradients`: the checker backpropagates a loss through the learner's function and through the
reference, from inputs that require grad, and compares what reaches each input.
"""

import copy

import numpy as np
import torch

from .i18n import t


def short_repr(x, limit=120):
    """repr(x), shortened; tensors and arrays by their values when small, else by their shape."""
    if torch.is_tensor(x) or isinstance(x, np.ndarray):
        values = x.detach().tolist() if torch.is_tensor(x) else x.tolist()
        kind = "tensor" if torch.is_tensor(x) else "array"
        r = f"{kind}({values if int(np.prod(tuple(x.shape))) <= 16 else f'<shape {tuple(x.shape)}>'})"
    elif isinstance(x, torch.nn.Module):  # a model among the inputs: its name, not its many-line repr
        r = f"<{type(x).__name__}, {sum(p.numel() for p in x.parameters()):,} parameters>"
    else:
        try:
            r = repr(x)
        except Exception:  # a learner's object whose repr fails
            r = f"<{type(x).__name__}>"
    return r if len(r) <= limit else r[: limit - 3] + "..."


def as_number(x):
    """(float, None) for one number (Python, numpy, or a one-element tensor/array), else (None, why)."""
    if isinstance(x, bool) or isinstance(x, np.bool_):
        return None, t("cmp.expected_number", got=repr(x))
    if torch.is_tensor(x) or isinstance(x, np.ndarray):
        if np.prod(tuple(x.shape)) != 1:
            return None, t("cmp.expected_one_number", what=t("cmp.a_tensor" if torch.is_tensor(x) else "cmp.an_array"),
                          shape=tuple(x.shape))
        x = x.detach().reshape(()).item() if torch.is_tensor(x) else x.reshape(()).item()
    try:
        return float(x), None
    except (TypeError, ValueError, OverflowError):
        return None, t("cmp.expected_number", got=short_repr(x))


def _index(flat_i, shape):
    """Unravel a flat index into a tuple, for messages."""
    idx = []
    for n in reversed(shape):
        idx.append(flat_i % n)
        flat_i //= n
    return tuple(reversed(idx))


def _close(g, w, *, atol, rtol, what):
    """None if two tensors of the same shape match, else where and by how much they differ."""
    bad_nan = (g.isnan() & ~w.isnan()).flatten()
    if bad_nan.any():
        i = _index(int(bad_nan.nonzero()[0]), g.shape)
        return t("cmp.nan_at", what=what, index=i)
    close = torch.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    if not close.all():
        i = int((~close).flatten().nonzero()[0])
        idx = _index(i, g.shape)
        err = (g - w).abs().nan_to_num(0).max().item()
        at = t("cmp.at_index", index=idx) if idx else ""
        return t("cmp.differs", what=what, got=g.flatten()[i].item(), at=at, want=w.flatten()[i].item(), err=err)
    return None


def compare(got, want, *, atol, rtol, what=None):
    """None if got matches want (tensors, numbers, tuples, other values), else what differs, in words."""
    what = t("cmp.the_result") if what is None else what
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return t("cmp.tuple_of", what=what, n=len(want), got=short_repr(got, 60))
        for i, (g, w) in enumerate(zip(got, want)):
            msg = compare(g, w, atol=atol, rtol=rtol, what=t("cmp.value_i", i=i))
            if msg:
                return msg
        return None
    if torch.is_tensor(want) or isinstance(want, (int, float)) and not isinstance(want, bool):
        if torch.is_tensor(want) and not torch.is_tensor(got):
            return t("cmp.should_be_tensor", what=what, type=type(got).__name__)
        try:
            g = torch.as_tensor(got).detach().double()
        except (TypeError, ValueError, RuntimeError):
            return t("cmp.should_be_number", what=what, got=short_repr(got, 60))
        w = torch.as_tensor(want).detach().double()
        if g.shape != w.shape:
            return t("cmp.shape", what=what, got=tuple(g.shape), want=tuple(w.shape))
        return _close(g, w, atol=atol, rtol=rtol, what=what)
    try:
        same = bool(got == want)
    except Exception:  # e.g. an array compared with a string: no single truth value
        same = False
    return None if same else t("cmp.something_else", what=what, got=short_repr(got, 60))


def gradients(loss, inputs):
    """{name: d loss / d input} for each tensor in `inputs` ({name: tensor}); zeros where none flows."""
    names = list(inputs)
    got = torch.autograd.grad(loss, [inputs[n] for n in names], allow_unused=True)
    return {n: torch.zeros_like(inputs[n]) if g is None else g for n, g in zip(names, got)}


def compare_gradients(got, want, *, atol, rtol):
    """None if two {name: gradient} dicts match, else which input's gradient differs, in words."""
    for name, w in want.items():
        g = got[name].detach().double()
        if not w.any() and g.any():
            return t("cmp.grad_leak", name=name)
        msg = _close(got[name].detach().double(), w.detach().double(), atol=atol, rtol=rtol,
                     what=t("cmp.grad_wrt", name=name))
        if msg:
            return msg
    return None


def _clone(kwargs, grad=()):
    """A fresh copy of the inputs; those named in `grad` (and those that did) require grad. Lists and dicts
    are copied too (an answer that sorts or empties one is then seen changing it); a model is passed as it
    is (the checker reads its state before and after instead: `gradcheck`)."""
    def one(k, v):
        if torch.is_tensor(v):
            return v.detach().clone().requires_grad_(v.requires_grad or k in grad)
        return copy.deepcopy(v) if isinstance(v, (list, dict, set)) else v
    return {k: one(k, v) for k, v in kwargs.items()}


def _flat(x):
    return [t for v in x for t in _flat(v)] if isinstance(x, (tuple, list)) else [x]


def _describe(kwargs):
    return ", ".join(f"{k}={short_repr(v, 60)}" for k, v in kwargs.items())
