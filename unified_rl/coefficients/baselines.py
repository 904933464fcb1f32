"""Gradient coefficients of the REINFORCE methods that differ by their baseline: GPG and OPO.

Same contract as `policy_gradient` (GC = B |o_i| dJ/dlogp_{i,t}, detached, (B, T), 0 off the mask, times
the aggregation's row factor w_i). Their advantages are in `advantages` (gpg, length_weighted); Pass@k
training's and GDPO's advantages go through GRPO's clipped GC (`options.grpo_options(adv=...)`).

| method | J                                                      | GC / w_i                        |
|--------|--------------------------------------------------------|---------------------------------|
| GPG    | A log pi, A = alpha (r - mean), no ratio, no clip      | A, on- and off-policy           |
| OPO    | (r - b) log pi(o|q), b = sum |o_j| r_j / sum |o_j|      | r - b (PPO-clipped when reused) |
"""

import torch  # noqa: F401 (doctests)

from .. import advantages
from .paper import _mask
from .policy_gradient import _clip_range, _out, _per_token, _ratio_term, aggregation_weight


def gpg(rewards, group_size, mask, *, count="nonzero-advantage", aggregation="batch-token-mean", max_len=None,
        across=None):
    """GPG (Chu et al., arXiv 2504.02546): REINFORCE on alpha (r - group mean), no ratio, no clip, no KL.

    J = sum_i sum_t A_i log pi / sum_i |o_i| (verl's token-mean); its GC is w A_i whatever pi_old is.
    >>> gpg(torch.tensor([1., 0.]), 2, torch.tensor([[1., 1.], [1., 0.]]), aggregation="seq-mean-token-mean")
    tensor([[ 0.5000,  0.5000],
            [-0.5000,  0.0000]])
    """
    mask = _mask(mask)
    a = advantages.gpg(rewards, group_size, count, across)
    if a.shape[0] != mask.shape[0]:
        raise ValueError(f"rewards has {a.shape[0]} entries but mask has {mask.shape[0]} rows")
    w = aggregation_weight(mask, aggregation, group_size=group_size, max_len=max_len, across=across)  # (B, 1)
    return _out(w * _per_token(a, mask), mask)


def opo(rewards, group_size, mask, *, logp=None, logp_old=None, clip_eps=None, aggregation="constant",
        max_len=1.0, across=None):
    """OPO (Hao et al., arXiv 2505.23585): REINFORCE with the length-weighted mean reward as baseline.

    b = sum_j |o_j| r_j / sum_j |o_j| over the group is the baseline of least gradient variance when each
    response's score function grows with its length; J = (r - b) sum_t log pi (a token sum, L = 1).
    OPO trains exactly on-policy; given logp_old and clip_eps, PPO's clipped form when a batch is reused.
    >>> opo(torch.tensor([1., 0.]), 2, torch.tensor([[1., 1., 1.], [1., 0., 0.]]))  # b = 3/4
    tensor([[ 0.7500,  0.7500,  0.7500],
            [-0.7500,  0.0000,  0.0000]])
    """
    mask = _mask(mask)
    a = advantages.length_weighted(rewards, mask.sum(-1), group_size)
    if (logp_old is None) != (clip_eps is None):
        raise ValueError("the clipped OPO coefficient needs logp, logp_old and clip_eps together")
    low, high = _clip_range(0.0 if clip_eps is None else clip_eps, None)
    term = _ratio_term(_per_token(a, mask), logp, logp_old, mask, low, high)  # (B, T)
    return _out(aggregation_weight(mask, aggregation, group_size=group_size, max_len=max_len, across=across) * term,
                mask)
