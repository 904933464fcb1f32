"""nca_pair (TRL's loss_type; NCA): each response's own score against 0, the chosen one's also pulled down.

    l = -log sigma(r+) - log sigma(-r+) / 2 - log sigma(-r-) / 2,  r = beta s
    a+ = beta (sigma(-r+) - sigma(r+) / 2),  a- = -beta sigma(r-) / 2

Not a function of the margin: each score meets a target of its own (the chosen one's at beta s+ = log 2).
NCA, Chen et al., arXiv 2402.05369 (its pairwise form as TRL's DPOTrainer has it).
"""

from dataclasses import dataclass, field

import sympy as sp
import torch
import torch.nn.functional as F

from ...derivations.core import BETA, sigmoid as ssig
from ...text import Text
from ..registry import PAIR_LOSSES
from ._common import NONNEGATIVE, derive_loss


@dataclass(frozen=True)
class Settings:
    beta: float = field(default=0.1, metadata=NONNEGATIVE)
    """beta: each score's scale r = beta s"""


def nca_a(s1, s2, beta):
    """(a+, a-) of NCA's pair loss: beta (sigma(-r+) - sigma(r+)/2) and -beta sigma(r-)/2.

    >>> nca_a(torch.tensor([0.]), torch.tensor([0.]), 2.0)
    (tensor([0.5000]), tensor([-0.5000]))
    """
    r1, r2 = beta * s1, beta * s2
    return beta * (torch.sigmoid(-r1) - torch.sigmoid(r1) / 2), -beta * torch.sigmoid(r2) / 2


def _gc(v):
    return nca_a(v.s1, v.s2, v.setting("beta"))


def _objective(v):
    beta = v.setting("beta")
    return -F.logsigmoid(beta * v.s1) - 0.5 * F.logsigmoid(-beta * v.s1) - 0.5 * F.logsigmoid(-beta * v.s2)


def _sympy(s_c, s_r, u, r_c, r_r):
    log = sp.log
    return (-log(ssig(r_c)) - log(ssig(-r_c)) / 2 - log(ssig(-r_r)) / 2,
            BETA * (ssig(-r_c) - ssig(r_c) / 2), -BETA * ssig(r_r) / 2)


def _claims(c):
    return ((Text("the chosen GC is 0 where beta s+ = log 2 and reverses past it"), c.a_c.subs(c.at(c.r_c - sp.log(2)))),)


def derive_nca_pair(n, norm="sum"):
    """TRL's nca_pair on one pair."""
    return derive_loss("nca_pair", n, norm, _sympy, _claims)


PAIR_LOSSES.add("nca_pair", gc=_gc, objective=_objective, settings=Settings, derivation=derive_nca_pair,
                derivations={"dpo_nca_pair": derive_nca_pair},
                summary="each score against 0 on its own: the chosen pulled to beta s+ = log 2, the rejected pushed down",
                cite="NCA, Chen et al., arXiv 2402.05369", ships_in=("TRL",))
