"""robust (TRL's loss_type; rDPO): DPO's loss made unbiased under labels flipped with probability eps.

    l = ((1 - eps) (-log sigma(u)) - eps (-log sigma(-u))) / (1 - 2 eps),  u = beta (s+ - s-)
    a+ = beta ((1 - eps) sigma(-u) + eps sigma(u)) / (1 - 2 eps),  a- = -a+

With eps = 0 it is sigmoid. Robust DPO, Chowdhury et al., arXiv 2403.00409; eps is TRL's label_smoothing,
a flip probability in [0, 0.5).
"""

from dataclasses import dataclass, field

import sympy as sp
import torch
import torch.nn.functional as F

from ...derivations.core import BETA, sigmoid as ssig
from ...text import Text
from ..registry import PAIR_LOSSES
from ._common import EPS_LS, NONNEGATIVE, derive_loss


@dataclass(frozen=True)
class Settings:
    beta: float = field(default=0.1, metadata=NONNEGATIVE)
    """beta: the scale of the margin u = beta (s+ - s-)"""
    label_smoothing: float = field(default=1e-3, metadata=NONNEGATIVE)
    """eps: the probability that a pair's labels are flipped (TRL's label_smoothing), in [0, 0.5)"""


def robust_a(s1, s2, beta, eps):
    """(a+, a-) of rDPO's loss: +-beta ((1 - eps) sigma(-u) + eps sigma(u)) / (1 - 2 eps).

    >>> robust_a(torch.tensor([0.]), torch.tensor([0.]), 1.0, 0.25)   # at u = 0: sigmoid's beta / 2 over 1 - 2 eps
    (tensor([1.]), tensor([-1.]))
    """
    u = beta * (s1 - s2)
    a = beta * ((1 - eps) * torch.sigmoid(-u) + eps * torch.sigmoid(u)) / (1 - 2 * eps)
    return a, -a


def _gc(v):
    return robust_a(v.s1, v.s2, v.setting("beta"), v.setting("label_smoothing"))


def _objective(v):
    u, eps = v.setting("beta") * (v.s1 - v.s2), v.setting("label_smoothing")
    return ((1 - eps) * -F.logsigmoid(u) - eps * -F.logsigmoid(-u)) / (1 - 2 * eps)


def _check(get, name):
    eps = get("label_smoothing")
    if eps is not None and not eps < 0.5:
        raise ValueError(f"robust needs label_smoothing in [0, 0.5) (a flip probability), got {eps} "
                         f"({name('label_smoothing')})")


def _sympy(s_c, s_r, u, r_c, r_r):
    log = sp.log
    return (((1 - EPS_LS) * -log(ssig(u)) - EPS_LS * -log(ssig(-u))) / (1 - 2 * EPS_LS),
            BETA * ((1 - EPS_LS) * ssig(-u) + EPS_LS * ssig(u)) / (1 - 2 * EPS_LS), None)


def _claims(c):
    return ((Text("with epsilon = 0 robust's GC is sigmoid's"), (c.a_c - BETA * ssig(-c.u)).subs(EPS_LS, 0)),)


def derive_robust(n, norm="sum"):
    """TRL's robust on one pair."""
    return derive_loss("robust", n, norm, _sympy, _claims, symbols=(("label_smoothing", EPS_LS),))


PAIR_LOSSES.add("robust", gc=_gc, objective=_objective, settings=Settings, check=_check, derivation=derive_robust,
                derivations={"dpo_robust": derive_robust},
                summary="DPO's loss unbiased under labels flipped with probability eps (sigmoid at eps = 0)",
                cite="Robust DPO, Chowdhury et al., arXiv 2403.00409", ships_in=("TRL",))
