"""RLOO's leave-one-out baseline (verl's `rloo`): A_i = r_i - mean of the other G - 1 rewards of its group.

= G/(G-1) (r_i - mean r): REINFORCE with an unbiased baseline that does not depend on the sample it scores.
RLOO: Ahmadian et al., arXiv 2402.14740, §3 (its reward carries a KL penalty: the composition's `kl_in="reward"`).
"""

import torch

from ... import advantages
from ..registry import ADVANTAGES
from ._common import groups, on_tokens, scores


def objective(v):
    """(B, 1) r_i - (1/(G-1)) sum_{j != i} r_j, written out."""
    g = groups(scores(v), v)
    G = v.group_size
    others = torch.stack([torch.cat([g[:, :i], g[:, i + 1:]], 1).mean(-1) for i in range(G)], 1)
    return (g - others).view(-1, 1).to(v.mask.dtype)


def _derive(n):
    from ...derivations.policy_gradient import REGISTRY
    return REGISTRY["rloo"](n)


ADVANTAGES.add("rloo", gc=lambda v: on_tokens(advantages.leave_one_out(scores(v), v.group_size), v),
               objective=objective, summary="r minus the mean of the other samples of its group",
               cite="RLOO, Ahmadian et al., arXiv 2402.14740 §3", ships_in=("TRL", "verl"), derivation=_derive)
