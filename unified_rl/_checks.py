"""Input checks shared by the core: each failure is a ValueError that names the problem."""

import numpy as np
import torch


def as_tensor(x, name, dtype=None):
    """x as a tensor (lists and numpy arrays accepted)."""
    if not torch.is_tensor(x):
        try:
            x = torch.as_tensor(x, dtype=dtype or torch.get_default_dtype())
        except Exception as e:  # pragma: no cover - torch's own message is appended
            raise ValueError(f"{name} must be a tensor or array of numbers ({e})") from None
    return x


def not_bool(x, name):
    """Raise if x is boolean: rewards and indicators are numbers (torch cannot subtract or average bools)."""
    if torch.is_tensor(x):
        is_bool = x.dtype == torch.bool
    else:
        try:
            is_bool = np.asarray(x).dtype == np.bool_
        except Exception:  # not array-like: as_tensor names the problem
            is_bool = False
    if is_bool:
        raise ValueError(f"{name} is boolean; pass numbers, e.g. {name}.float() (1.0 for True, 0.0 for False)")
    return x


def finite(x, name):
    """Raise if x holds NaN or inf."""
    if x.is_floating_point() and not torch.isfinite(x).all():
        raise ValueError(f"{name} contains non-finite values (NaN or inf)")
    return x


def per_token(x, name, mask):
    """Check a (B, T) per-token tensor against the mask's shape."""
    x = as_tensor(not_bool(x, name), name, dtype=mask.dtype if mask.is_floating_point() else None)
    if x.shape != mask.shape:
        raise ValueError(f"{name} has shape {tuple(x.shape)} but mask has shape {tuple(mask.shape)}")
    return finite(x, name)


def response_mask(mask, name="mask"):
    """Check a (B, T) 0/1 mask in which every row has at least one response token."""
    mask = as_tensor(mask, name)
    if mask.dim() != 2:
        raise ValueError(f"{name} must be (B, T), got shape {tuple(mask.shape)}")
    if mask.shape[0] == 0:
        raise ValueError(f"{name} is an empty batch")
    if not ((mask == 0) | (mask == 1)).all():
        raise ValueError(f"{name} must contain only 0 and 1")
    empty = (mask.sum(-1) == 0).nonzero().flatten().tolist()
    if empty:
        raise ValueError(f"{name}: response {empty[0]} has no tokens (|o| = 0); every response needs at least one")
    return mask


def per_sequence(x, name, batch):
    """Check a (B,) per-sequence tensor."""
    x = as_tensor(not_bool(x, name), name)
    if x.shape != (batch,):
        raise ValueError(f"{name} must have shape ({batch},), got {tuple(x.shape)}")
    return finite(x, name)


def groups(batch, group_size):
    """Number of groups; the batch must be whole groups (group-major layout)."""
    if not isinstance(group_size, int) or isinstance(group_size, bool) or group_size < 1:
        raise ValueError(f"group_size must be a positive int, got {group_size!r}")
    if batch % group_size:
        raise ValueError(f"batch of {batch} is not a whole number of groups of {group_size}")
    return batch // group_size


def scalar(x, name, low=None, high=None):
    """Check a finite float hyper-parameter (beta, clip_eps, gamma, ...), optionally in [low, high]."""
    if isinstance(x, bool):
        raise ValueError(f"{name} must be a number, got {x!r}")
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {x!r}") from None
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError(f"{name} must be finite, got {x}")
    if high is not None and low is not None and not low <= x <= high:
        raise ValueError(f"{name} must be in [{low}, {high}], got {x}")
    if low is not None and x < low:
        raise ValueError(f"{name} must be >= {low}, got {x}")
    if high is not None and x > high:
        raise ValueError(f"{name} must be <= {high}, got {x}")
    return x
