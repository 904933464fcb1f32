"""The objectives J of GPG and OPO, REINFORCE with their papers' baselines, written from the rewards.

The advantages are computed here as the papers state them (not through `advantages`); autograd of
each J is the oracle for coefficients/baselines.py. Maximised.
"""

import torch

from .. import _checks
from .policy_gradient import _aggregate


def _groups(rewards, group_size, mask):
    r = _checks.per_sequence(rewards, "rewards", mask.shape[0]).double()
    return r.view(_checks.groups(mask.shape[0], group_size), group_size)


def gpg(logp, rewards, group_size, mask, count="nonzero-advantage", aggregation="batch-token-mean", max_len=None):
    """GPG (arXiv 2504.02546): J = agg(A log pi), A = B / (samples counted) * (r - group mean).

    count: "nonzero-advantage" (B - M, M the samples of all-equal groups) or "nonzero-reward" (verl)."""
    mask = _checks.response_mask(mask)
    logp = _checks.per_token(logp, "logp", mask)
    r = _groups(rewards, group_size, mask)
    centred = r - r.mean(-1, keepdim=True)
    counted = (centred.abs() > 0) if count == "nonzero-advantage" else (r != 0)
    A = r.numel() / max(int(counted.sum()), 1) * centred
    return _aggregate(A.view(-1, 1).to(mask.dtype) * logp, mask, aggregation, group_size, max_len)


def opo(logp, rewards, group_size, mask, aggregation="constant", max_len=1.0, *, logp_old=None, clip_eps=None):
    """OPO (arXiv 2505.23585): J = agg((r - b) log pi), b = sum_j |o_j| r_j / sum_j |o_j| in each group;
    with logp_old, PPO's clipped form min(rho A, clip(rho) A)."""
    mask = _checks.response_mask(mask)
    logp = _checks.per_token(logp, "logp", mask)
    r = _groups(rewards, group_size, mask)
    n = mask.sum(-1).double().view_as(r)
    A = (r - (n * r).sum(-1, keepdim=True) / n.sum(-1, keepdim=True)).view(-1, 1).to(mask.dtype)  # (B, 1)
    if logp_old is None:
        terms = A * logp
    else:
        rho = torch.exp(logp - _checks.per_token(logp_old, "logp_old", mask))
        terms = torch.min(rho * A, torch.clamp(rho, 1 - clip_eps, 1 + clip_eps) * A)
    return _aggregate(terms, mask, aggregation, group_size, max_len)
