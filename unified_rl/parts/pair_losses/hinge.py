"""hinge (TRL's loss_type): SLiC's hinge on the margin of the scores.

    l = max(0, 1 - u),  u = beta (s+ - s-)           a+ = beta [u < 1],  a- = -a+

A pair whose margin passes 1/beta is left alone; below it the push is beta whatever the margin.
SLiC, Zhao et al., arXiv 2305.10425, as RSO (arXiv 2309.06657) uses it with DPO's log-ratios.
"""

from dataclasses import dataclass, field

import sympy as sp
import torch

from ...derivations.core import BETA
from ...text import Text
from ..registry import PAIR_LOSSES
from ._common import NONNEGATIVE, derive_loss


@dataclass(frozen=True)
class Settings:
    beta: float = field(default=0.1, metadata=NONNEGATIVE)
    """beta: the margin is u = beta (s+ - s-), the hinge at u = 1 (TRL's default 0.1)"""


def hinge_a(s1, s2, beta):
    """(a+, a-) of l = max(0, 1 - beta (s+ - s-)): +-beta while u < 1, else 0.

    >>> hinge_a(torch.tensor([0., 5.]), torch.tensor([0., 0.]), 0.5)   # u = 0 < 1, u = 2.5 > 1
    (tensor([0.5000, 0.0000]), tensor([-0.5000, -0.0000]))
    """
    u = beta * (s1 - s2)
    a = beta * (u < 1).to(u.dtype)
    return a, -a


def _gc(v):
    return hinge_a(v.s1, v.s2, v.setting("beta"))


def _objective(v):
    """max(0, 1 - u) per pair."""
    return torch.relu(1 - v.setting("beta") * (v.s1 - v.s2))


def _claims(c):
    return ((Text("the GC is beta while u < 1 ..."), c.a_c.subs(c.at(c.u - 1 + c.gap)) - BETA),
            (Text("... and 0 once u > 1: past the margin 1/beta the pair is left alone"),
             c.a_c.subs(c.at(c.u - 1 - c.gap))))


def derive_hinge(n, norm="sum"):
    """TRL's hinge on one pair."""
    return derive_loss("hinge", n, norm, lambda s_c, s_r, u, r_c, r_r: (sp.Max(0, 1 - u), BETA * sp.Heaviside(1 - u),
                                                                         None), _claims)


PAIR_LOSSES.add("hinge", gc=_gc, objective=_objective, settings=Settings, derivation=derive_hinge,
                derivations={"dpo_hinge": derive_hinge},
                summary="max(0, 1 - beta (s+ - s-)): push by beta until the margin passes 1/beta, then not at all",
                cite="SLiC, Zhao et al., arXiv 2305.10425; RSO, arXiv 2309.06657", ships_in=("TRL",))
