"""ReMax's greedy baseline (verl's `remax`): A = r(o) - r(o_greedy), the greedy answer to the same question.

Rows come in pairs (group_size 2): a sampled response, then the greedy one. The greedy row is only a baseline:
it leaves the loss (`rows` keeps the sampled rows), and the composition scales the sampled rows' GC by
B / B_sampled = 2, since eq 5 averages over every row of the batch. ReMax: Li et al., arXiv 2310.10505, Algorithm 1.
"""

import torch

from ... import _checks
from ..registry import ADVANTAGES


def _pairs(v):
    if v.scores is None:
        raise ValueError("remax needs rewards")
    r = _checks.per_sequence(v.scores, "rewards", v.full.shape[0])
    _checks.groups(v.full.shape[0], 2)
    return r.double().view(-1, 2)  # (n, 2): sampled, greedy


def _gc(v):
    p = _pairs(v)
    adv = torch.zeros_like(p)
    adv[:, 0] = p[:, 0] - p[:, 1]
    return (adv.view(-1).to(v.full.dtype)[:, None] * v.full).detach()


def sampled_rows(v):
    """(B,) True on the sampled rows, False on the greedy baselines."""
    return torch.arange(v.full.shape[0], device=v.full.device) % 2 == 0


def objective(v):
    r = torch.as_tensor(v.scores).double().view(-1, 2)
    return torch.stack([r[:, 0] - r[:, 1], torch.zeros_like(r[:, 0])], 1).view(-1, 1).to(v.mask.dtype)


def _derive(n):
    from ...derivations.policy_gradient import REGISTRY
    return REGISTRY["remax"](n)


ADVANTAGES.add("remax", gc=_gc, objective=objective, rows=sampled_rows,
               summary="r minus the reward of the greedy answer to the same question",
               cite="ReMax, Li et al., arXiv 2310.10505", ships_in=("verl",), derivation=_derive)
