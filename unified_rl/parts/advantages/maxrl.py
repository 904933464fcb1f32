"""MaxRL's advantage (SkyRL's `maxrl`, prime-rl's `max_rl`): the group's mean reward divides instead of its std.

    A_i = (r_i - r_bar) / (r_bar + eps),   r_bar the mean reward of i's group

With 0/1 rewards r_bar is the group's success rate p, and a right answer gets (1 - p) / p: a question the policy
rarely solves weighs 1/p times more, the weighting of maximum likelihood on the right answers (log p) instead of
RL's expected reward (p). A group with all rewards equal, or none right, has A = 0.
MaxRL: Tajwar et al., "Maximum Likelihood Reinforcement Learning", arXiv 2602.02710.
"""

from dataclasses import dataclass

import torch

from ..registry import ADVANTAGES
from ._common import groups, on_tokens, scores, written_scores


@dataclass(frozen=True)
class Settings:
    maxrl_eps: float = 1e-6
    """eps of the denominator r_bar + eps (a group with no right answer has A = 0 anyway)"""


def maxrl(rewards, group_size, eps=1e-6):
    """(B,) (r - group mean) / (group mean + eps); 0 in a group whose rewards are all equal.

    >>> maxrl(torch.tensor([1., 0., 0., 0.]), 4)   # p = 1/4: the right answer gets 3, a wrong one -1
    tensor([ 3.0000, -1.0000, -1.0000, -1.0000], dtype=torch.float64)
    """
    r = torch.as_tensor(rewards).double().view(-1, group_size)
    mean = r.mean(-1, keepdim=True)
    equal = r.amax(-1, keepdim=True) == r.amin(-1, keepdim=True)
    return torch.where(equal, torch.zeros_like(r), (r - mean) / (mean + eps)).view(-1)


def _gc(v):
    return on_tokens(maxrl(scores(v), v.group_size, v.setting("maxrl_eps", 1e-6)), v)


def objective(v):
    """(B, 1) each reward's distance from its group's success rate, over that rate, written out."""
    g = groups(written_scores(v), v)
    p = g.sum(-1, keepdim=True) / v.group_size
    a = (g - p) / (p + v.setting("maxrl_eps", 1e-6))
    same = (g == g[:, :1]).all(-1, keepdim=True)
    return (a * ~same).view(-1, 1).to(v.mask.dtype)


def derive(n):
    """MaxRL's advantage in a REINFORCE objective: one group of three responses, rewards R_1..3."""
    import sympy as sp

    from ...derivations.core import Derivation
    from ...derivations.core import _flat, _ragged, _ragged_gc as gc_of
    from ...text import Text
    lengths = (n, n + 1, n)
    l, R, eps = _ragged("ell", lengths), sp.symbols("R_1:4", real=True), sp.Symbol("epsilon", positive=True)
    mean = sum(R) / 3
    A = [(r - mean) / (mean + eps) for r in R]
    J = sum(a * sum(row) / len(row) for a, row in zip(A, l)) / 3
    hand = tuple(a for a, row in zip(A, l) for _ in row)
    claims = ((Text("with one right answer in three, it gets (1 - p) / p = 2 (eps = 0)"),
               (A[0] - 2).subs({R[0]: 1, R[1]: 0, R[2]: 0, eps: 0})),)
    notes = (Text("MaxRL divides the centred reward by the group's mean (its success rate p): a hard question's "
                  "right answer weighs 1/p, the gradient of log p rather than of p."),)
    return Derivation("maxrl", "arXiv 2602.02710", J, gc_of(J, l), hand, None, {"rewards": R, "logp": _flat(l), "maxrl_eps": eps},
                      claims, notes=notes, scale="B\\,|o_i|")


ADVANTAGES.add("maxrl", gc=_gc, objective=objective, settings=Settings, derivation=derive,
               summary="r minus its group's mean, over that mean: 1/p weighting of the right answers",
               cite="MaxRL, Tajwar et al., arXiv 2602.02710", aliases=("max_rl",), ships_in=("prime-rl", "SkyRL", "TRL"))
