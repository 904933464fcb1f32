"""apo_zero and apo_down (TRL's loss_types; APO): each response anchored to pi_ref's likelihood.

    apo_zero:  l = 1 - sigma(r+) + sigma(r-)          a+ = beta sigma'(r+),  a- = -beta sigma'(r-)
    apo_down:  l = sigma(r+) + 1 - sigma(u)           a+ = beta (sigma'(u) - sigma'(r+)),  a- = -beta sigma'(u)

r = beta s, u = beta (s+ - s-), sigma'(z) = sigma(z) sigma(-z). apo_zero raises the chosen and lowers the
rejected response, each on its own; apo_down lowers the chosen one and the rejected one more (for pairs whose
chosen answer is worse than the model's). APO, D'Oosterlinck et al., arXiv 2408.06266 eq 7 (zero), 8 (down).
"""

from dataclasses import dataclass, field

import sympy as sp
import torch

from ...derivations.core import BETA, sigmoid as ssig
from ...text import Text
from ..registry import PAIR_LOSSES
from ._common import NONNEGATIVE, derive_loss, dsig


@dataclass(frozen=True)
class Settings:
    beta: float = field(default=0.1, metadata=NONNEGATIVE)
    """beta: each score's scale r = beta s (and the margin's, u = beta (s+ - s-))"""


def apo_zero_a(s1, s2, beta):
    """(a+, a-) of APO-zero: beta sigma'(beta s+) and -beta sigma'(beta s-).

    >>> apo_zero_a(torch.tensor([0.]), torch.tensor([0.]), 4.0)   # sigma'(0) = 1/4
    (tensor([1.]), tensor([-1.]))
    """
    return beta * dsig(beta * s1), -beta * dsig(beta * s2)


def apo_down_a(s1, s2, beta):
    """(a+, a-) of APO-down: beta (sigma'(u) - sigma'(beta s+)) and -beta sigma'(u).

    >>> apo_down_a(torch.tensor([0.]), torch.tensor([0.]), 4.0)
    (tensor([0.]), tensor([-1.]))
    """
    u = beta * (s1 - s2)
    return beta * (dsig(u) - dsig(beta * s1)), -beta * dsig(u)


def _zero_gc(v):
    return apo_zero_a(v.s1, v.s2, v.setting("beta"))


def _down_gc(v):
    return apo_down_a(v.s1, v.s2, v.setting("beta"))


def _zero_objective(v):
    """Raise the chosen, lower the rejected, each against pi_ref."""
    beta = v.setting("beta")
    return 1 - torch.sigmoid(beta * v.s1) + torch.sigmoid(beta * v.s2)


def _down_objective(v):
    """Lower the chosen, the rejected more."""
    beta = v.setting("beta")
    return torch.sigmoid(beta * v.s1) + 1 - torch.sigmoid(beta * (v.s1 - v.s2))


def _sdsig(z):
    return ssig(z) * ssig(-z)


def _zero_claims(c):
    return ((Text("the chosen GC does not depend on the rejected response: no pair coupling"),
             sp.diff(c.a_c, c.lr[0])),)


def derive_apo_zero(n, norm="sum"):
    """TRL's apo_zero on one pair."""
    return derive_loss("apo_zero", n, norm, lambda s_c, s_r, u, r_c, r_r: (
        1 - ssig(r_c) + ssig(r_r), BETA * _sdsig(r_c), -BETA * _sdsig(r_r)), _zero_claims)


def derive_apo_down(n, norm="sum"):
    """TRL's apo_down on one pair."""
    return derive_loss("apo_down", n, norm, lambda s_c, s_r, u, r_c, r_r: (
        ssig(r_c) + 1 - ssig(u), BETA * (_sdsig(u) - _sdsig(r_c)), -BETA * _sdsig(u)))


PAIR_LOSSES.add("apo_zero", gc=_zero_gc, objective=_zero_objective, settings=Settings, derivation=derive_apo_zero,
                derivations={"dpo_apo_zero": derive_apo_zero},
                summary="raise the chosen and lower the rejected response, each against pi_ref on its own",
                cite="APO, D'Oosterlinck et al., arXiv 2408.06266 eq 7", ships_in=("TRL",))
PAIR_LOSSES.add("apo_down", gc=_down_gc, objective=_down_objective, settings=Settings, derivation=derive_apo_down,
                derivations={"dpo_apo_down": derive_apo_down},
                summary="lower the chosen response and the rejected one more: for chosen answers worse than the model's",
                cite="APO, D'Oosterlinck et al., arXiv 2408.06266 eq 8", ships_in=("TRL",))
