"""How an exercise answer is compared with the expected one, and described in words when it differs."""

import torch


def short_repr(x, limit=120):
    """repr(x), shortened; tensors printed with 4 digits."""
    if torch.is_tensor(x):
        with torch.no_grad():
            r = f"tensor({x.tolist() if x.numel() <= 16 else f'<shape {tuple(x.shape)}>'})"
    else:
        r = repr(x)
    return r if len(r) <= limit else r[: limit - 3] + "..."


def _index(flat_i, shape):
    """Unravel a flat index into a tuple, for messages."""
    idx = []
    for n in reversed(shape):
        idx.append(flat_i % n)
        flat_i //= n
    return tuple(reversed(idx))


def compare(got, want, *, atol, rtol, what="the result"):
    """None if got matches want (tensors, numbers, tuples, other values), else what differs, in words."""
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return f"{what} should be a tuple of {len(want)} values, got {short_repr(got, 60)}"
        for i, (g, w) in enumerate(zip(got, want)):
            msg = compare(g, w, atol=atol, rtol=rtol, what=f"value {i} of the result")
            if msg:
                return msg
        return None
    if torch.is_tensor(want) or isinstance(want, (int, float)) and not isinstance(want, bool):
        if torch.is_tensor(want) and not torch.is_tensor(got):
            return f"{what} should be a tensor, got {type(got).__name__}"
        try:
            g = torch.as_tensor(got).detach().double()
        except (TypeError, ValueError, RuntimeError):
            return f"{what} should be a number, got {short_repr(got, 60)}"
        w = torch.as_tensor(want).detach().double()
        if g.shape != w.shape:
            return f"{what} has shape {tuple(g.shape)}, expected {tuple(w.shape)}"
        bad_nan = (g.isnan() & ~w.isnan()).flatten()
        if bad_nan.any():
            i = _index(int(bad_nan.nonzero()[0]), g.shape)
            return f"{what} is NaN at index {i} where a finite value was expected"
        close = torch.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        if not close.all():
            i = int((~close).flatten().nonzero()[0])
            idx = _index(i, g.shape)
            err = (g - w).abs().nan_to_num(0).max().item()
            at = f" at index {idx}" if idx else ""
            return (f"{what} is {g.flatten()[i].item():.6g}{at}, expected {w.flatten()[i].item():.6g} "
                    f"(largest difference {err:.3g})")
        return None
    return None if got == want else f"{what} is {short_repr(got, 60)}, expected something else"


def _clone(kwargs):
    return {k: v.detach().clone().requires_grad_(v.requires_grad) if torch.is_tensor(v) else v
            for k, v in kwargs.items()}


def _flat(x):
    return [t for v in x for t in _flat(v)] if isinstance(x, (tuple, list)) else [x]


def _describe(kwargs):
    return ", ".join(f"{k}={short_repr(v, 60)}" for k, v in kwargs.items())
