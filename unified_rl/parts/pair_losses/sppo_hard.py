"""sppo_hard (TRL's loss_type; SPPO with hard probabilities): each score regressed onto a target of its own.

    l = (s+ - 1/(2 beta))^2 + (s- + 1/(2 beta))^2         a+ = 1/beta - 2 s+,  a- = -(1/beta + 2 s-)

P(winner) = 1 and P(loser) = 0 in SPPO's eq 4.7: the chosen score is pulled to 1/(2 beta), the rejected to
-1/(2 beta), each on its own. SPPO, Wu et al., arXiv 2405.00675.
"""

from dataclasses import dataclass, field

import torch

from ...derivations.core import BETA
from ...text import Text
from ..registry import PAIR_LOSSES
from ._common import NONNEGATIVE, derive_loss


@dataclass(frozen=True)
class Settings:
    beta: float = field(default=0.1, metadata=NONNEGATIVE)
    """beta: the scores' targets are +-1/(2 beta)"""


def sppo_a(s1, s2, beta):
    """(a+, a-) of SPPO's hard loss: 1/beta - 2 s+ and -(1/beta + 2 s-).

    >>> sppo_a(torch.tensor([1.]), torch.tensor([-1.]), 0.5)   # both on their targets +-1/(2 beta)
    (tensor([0.]), tensor([-0.]))
    """
    return 1 / beta - 2 * s1, -(1 / beta + 2 * s2)


def _gc(v):
    return sppo_a(v.s1, v.s2, v.setting("beta"))


def _objective(v):
    beta = v.setting("beta")
    return (v.s1 - 1 / (2 * beta)) ** 2 + (v.s2 + 1 / (2 * beta)) ** 2


def _check(get, name):
    beta = get("beta")
    if beta is not None and beta <= 0:
        raise ValueError(f"sppo_hard needs beta > 0: its targets are +-1/(2 beta) ({name('beta')} = {beta})")


def _claims(c):
    return ((Text("the chosen GC is 0 at s+ = 1/(2 beta) ..."), c.a_c.subs(c.at(c.s_c - 1 / (2 * BETA)))),
            (Text("... and the rejected GC at s- = -1/(2 beta): each response has a target of its own"),
             c.a_r.subs(c.at(c.s_r + 1 / (2 * BETA), c.lr[0]))))


def derive_sppo_hard(n, norm="sum"):
    """TRL's sppo_hard on one pair."""
    return derive_loss("sppo_hard", n, norm, lambda s_c, s_r, u, r_c, r_r: (
        (s_c - 1 / (2 * BETA)) ** 2 + (s_r + 1 / (2 * BETA)) ** 2, 1 / BETA - 2 * s_c, -(1 / BETA + 2 * s_r)), _claims)


PAIR_LOSSES.add("sppo_hard", gc=_gc, objective=_objective, settings=Settings, check=_check,
                derivation=derive_sppo_hard, derivations={"dpo_sppo_hard": derive_sppo_hard},
                summary="each score regressed onto its own target, +1/(2 beta) chosen and -1/(2 beta) rejected",
                cite="SPPO, Wu et al., arXiv 2405.00675 eq 4.7 (hard probabilities)", ships_in=("TRL",))
