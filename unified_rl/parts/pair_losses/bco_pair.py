"""bco_pair (TRL's loss_type): each response classified on its own score, the chosen up, the rejected down.

    l = -log sigma(r+) - log sigma(-r-),  r = beta s           a+ = beta sigma(-r+),  a- = -beta sigma(r-)

No coupling between the two responses of a pair. This is TRL 1.16's DPOTrainer loss: the BCO paper (arXiv
2404.04656) shifts each reward by delta, a running mean of the batch's rewards, -log sigma(r+ - delta) -
log sigma(-(r- - delta)); TRL's bco_pair leaves delta out, and so does this page.
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


def bco_a(s1, s2, beta):
    """(a+, a-) of TRL's bco_pair: beta sigma(-r+) and -beta sigma(r-).

    >>> bco_a(torch.tensor([0.]), torch.tensor([0.]), 1.0)
    (tensor([0.5000]), tensor([-0.5000]))
    """
    return beta * torch.sigmoid(-(beta * s1)), -beta * torch.sigmoid(beta * s2)


def _gc(v):
    return bco_a(v.s1, v.s2, v.setting("beta"))


def _objective(v):
    beta = v.setting("beta")
    return -F.logsigmoid(beta * v.s1) - F.logsigmoid(-beta * v.s2)


def _sympy(s_c, s_r, u, r_c, r_r):
    return -sp.log(ssig(r_c)) - sp.log(ssig(-r_r)), BETA * ssig(-r_c), -BETA * ssig(r_r)


def _claims(c):
    return ((Text("the chosen GC does not depend on the rejected response: no pair coupling"),
             sp.diff(c.a_c, c.lr[0])),)


def derive_bco_pair(n, norm="sum"):
    """TRL's bco_pair on one pair."""
    return derive_loss("bco_pair", n, norm, _sympy, _claims)


PAIR_LOSSES.add("bco_pair", gc=_gc, objective=_objective, settings=Settings, derivation=derive_bco_pair,
                derivations={"dpo_bco_pair": derive_bco_pair},
                summary="each response on its own: -log sigma(beta s+) - log sigma(-beta s-), no pair coupling",
                cite="BCO, Jung et al., arXiv 2404.04656 (TRL's pairwise form, without its running shift delta)",
                ships_in=("TRL",))
