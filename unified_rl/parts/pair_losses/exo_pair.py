"""exo_pair (TRL's loss_type; EXO): the reverse KL of the pair's softmax to a smoothed target.

    l = q log(q / (1 - eps)) + (1 - q) log((1 - q) / eps),  q = sigma(u), u = beta (s+ - s-)
    a+ = beta sigma'(u) (log((1 - eps)/eps) - u),  a- = -a+

The margin is pulled to u = logit(1 - eps) and pushed back past it. EXO, Ji et al., arXiv 2402.00856 eq 16
(two responses); eps is TRL's label_smoothing, which must lie in (0, 1).
"""

from dataclasses import dataclass, field

import math

import sympy as sp
import torch
import torch.nn.functional as F

from ...derivations.core import BETA, sigmoid as ssig
from ...text import Text
from ..registry import PAIR_LOSSES
from ._common import EPS_LS, NONNEGATIVE, derive_loss, dsig


@dataclass(frozen=True)
class Settings:
    beta: float = field(default=0.1, metadata=NONNEGATIVE)
    """beta: the scale of the margin u = beta (s+ - s-)"""
    label_smoothing: float = field(default=1e-3, metadata=NONNEGATIVE)
    """eps: exo_pair's target (1 - eps, eps), robust's flip probability, AOT's smoothing (TRL's label_smoothing;
    1e-3 is EXO's value: TRL's default 0 is refused by exo_pair and makes robust and AOT the plain sigmoid)"""


def exo_a(s1, s2, beta, eps):
    """(a+, a-) of EXO's pair loss: +-beta sigma'(u) (log((1 - eps)/eps) - u).

    >>> exo_a(torch.tensor([0.]), torch.tensor([0.]), 1.0, 0.5)   # eps = 1/2: the target is u = 0, reached
    (tensor([0.]), tensor([-0.]))
    """
    u = beta * (s1 - s2)
    a = beta * dsig(u) * (math.log((1 - eps) / eps) - u)  # 0 at u = logit(1 - eps), reversed past it
    return a, -a


def _gc(v):
    return exo_a(v.s1, v.s2, v.setting("beta"), v.setting("label_smoothing"))


def _objective(v):
    """KL(softmax over the pair || (1 - eps, eps)) per pair."""
    u, eps = v.setting("beta") * (v.s1 - v.s2), v.setting("label_smoothing")
    q_w, q_l = torch.sigmoid(u), torch.sigmoid(-u)
    return q_w * (F.logsigmoid(u) - math.log(1 - eps)) + q_l * (F.logsigmoid(-u) - math.log(eps))


def _check(get, name):
    eps = get("label_smoothing")
    if eps is not None and not 0 < eps < 1:
        raise ValueError(f"exo_pair needs label_smoothing in (0, 1) (its target (1 - eps, eps)), got {eps} "
                         f"({name('label_smoothing')})")


def _sympy(s_c, s_r, u, r_c, r_r):
    log = sp.log
    return (ssig(u) * (log(ssig(u)) - log(1 - EPS_LS)) + ssig(-u) * (log(ssig(-u)) - log(EPS_LS)),
            BETA * ssig(u) * ssig(-u) * (log((1 - EPS_LS) / EPS_LS) - u), None)


def _claims(c):
    return ((Text("the GC is 0 where u = log((1 - epsilon)/epsilon): the margin is pulled to that target"),
             c.a_c.subs(c.at(c.u - sp.log((1 - EPS_LS) / EPS_LS)))),)


def derive_exo_pair(n, norm="sum"):
    """TRL's exo_pair on one pair."""
    return derive_loss("exo_pair", n, norm, _sympy, _claims, symbols=(("label_smoothing", EPS_LS),))


PAIR_LOSSES.add("exo_pair", gc=_gc, objective=_objective, settings=Settings, check=_check,
                derivation=derive_exo_pair, derivations={"dpo_exo_pair": derive_exo_pair},
                summary="the pair's softmax pulled to (1 - eps, eps): a target margin logit(1 - eps), pushed back past it",
                cite="EXO, Ji et al., arXiv 2402.00856 eq 16", ships_in=("TRL",))
