"""sigmoid (TRL's default loss_type) and sigmoid_norm: DPO's log sigmoid of the margin of the scores.

    l = -log sigma(u),  u = beta (s+ - s-)           a+ = beta sigma(-u),  a- = -a+

DPO, Rafailov et al., arXiv 2305.18290 eq 7, on summed log-ratios (TRL's sigmoid); DeepSeekMath's eq 12-14 on
per-token means (TRL's sigmoid_norm, which fixes the mean norm whatever the norm setting says). The push fades
as the margin grows and never reverses. TRL's sigmoid also reads label_smoothing (cDPO); here it reads none,
and trl_preference maps it with TRL's default 0 (robust is the smoothed loss with the bias removed).
"""

from dataclasses import dataclass, field

import sympy as sp
import torch
import torch.nn.functional as F

from ...derivations.core import BETA, sigmoid as ssig
from ..registry import PAIR_LOSSES
from ._common import NONNEGATIVE, derive_loss


@dataclass(frozen=True)
class Settings:
    beta: float = field(default=0.1, metadata=NONNEGATIVE)
    """beta: the scale of the margin (TRL's default 0.1)"""


def sigmoid_a(s1, s2, beta):
    """(a+, a-) of l = -log sigma(beta (s+ - s-)): +-beta sigma(-u).

    >>> sigmoid_a(torch.tensor([0.]), torch.tensor([0.]), 0.5)   # equal scores: beta / 2 each way
    (tensor([0.2500]), tensor([-0.2500]))
    """
    a = beta * torch.sigmoid(-(beta * (s1 - s2)))
    return a, -a


def _gc(v):
    return sigmoid_a(v.s1, v.s2, v.setting("beta"))


def _objective(v):
    """-log sigma(beta (s+ - s-)) per pair (logsigmoid: finite for any margin)."""
    return -F.logsigmoid(v.setting("beta") * (v.s1 - v.s2))


def _sympy(s_c, s_r, u, r_c, r_r):
    return -sp.log(ssig(u)), BETA * ssig(-u), None


def derive_sigmoid(n, norm="sum"):
    """TRL's sigmoid: DPO's eq 7 on summed log-ratios (or on means, norm="mean")."""
    return derive_loss("sigmoid", n, norm, _sympy)


def derive_sigmoid_norm(n, norm="mean"):
    """TRL's sigmoid_norm: the same loss on per-token means, whatever `norm` says."""
    return derive_loss("sigmoid", n, "mean", _sympy)


PAIR_LOSSES.add("sigmoid", gc=_gc, objective=_objective, settings=Settings, derivation=derive_sigmoid,
                derivations={"dpo_sigmoid": derive_sigmoid},
                summary="-log sigma(beta (s+ - s-)): DPO's loss; the push fades as the margin grows, never reverses",
                cite="DPO, Rafailov et al., arXiv 2305.18290 eq 7; DeepSeekMath eq 12-14", ships_in=("paper", "TRL"))
PAIR_LOSSES.add("sigmoid_norm", gc=_gc, objective=_objective, settings=Settings, derivation=derive_sigmoid_norm,
                derivations={"dpo_sigmoid_norm": derive_sigmoid_norm}, norm="mean",
                summary="sigmoid on per-token mean scores whatever the norm setting: DeepSeekMath's eq 12",
                cite="DeepSeekMath eq 12-14, arXiv 2402.03300; TRL DPOTrainer loss_type='sigmoid_norm'",
                ships_in=("paper", "TRL"))
