"""discopop (TRL's loss_type; DiscoPOP): a blend of the logistic and exponential losses of the margin.

    l = -log sigma(u) (1 - m) + e^{-u} m,  m = sigma(u / tau), u = beta (s+ - s-)
    a+ = beta ((1 - m) sigma(-u) + m e^{-u} - (m (1 - m) / tau) (log sigma(u) + e^{-u})),  a- = -a+

The blend's weight m is itself a function of the margin, hence the last term. DiscoPOP, Chris Lu et al.,
arXiv 2406.08414 eq 5 (its log-ratio modulated loss); tau is TRL's discopop_tau.
"""

from dataclasses import dataclass, field

import sympy as sp
import torch
import torch.nn.functional as F

from ...derivations.core import BETA, sigmoid as ssig
from ..registry import PAIR_LOSSES
from ._common import NONNEGATIVE, TAU_D, derive_loss


@dataclass(frozen=True)
class Settings:
    beta: float = field(default=0.1, metadata=NONNEGATIVE)
    """beta: the scale of the margin u = beta (s+ - s-)"""
    discopop_tau: float = field(default=0.05, metadata={"low": 0.0, "above": 0.0})
    """tau: the temperature of the blend's weight sigma(u / tau) (TRL's discopop_tau, 0.05)"""


def discopop_a(s1, s2, beta, tau):
    """(a+, a-) of DiscoPOP's loss; e^-u m computed as exp(-u + log m), so no inf * 0 at large margins.

    >>> discopop_a(torch.tensor([0.]), torch.tensor([0.]), 1.0, 1.0)   # u = 0: 1/4 + 1/2 - (1/4)(log 1/2 + 1)
    (tensor([0.6733]), tensor([-0.6733]))
    """
    u = beta * (s1 - s2)
    m = torch.sigmoid(u / tau)  # (B,) the blend's weight, itself a function of u
    log_m, log_1m = F.logsigmoid(u / tau), F.logsigmoid(-u / tau)
    dm_blend = m * (1 - m) * F.logsigmoid(u) + torch.exp(log_m + log_1m - u)  # (B,) m' tau (log sig(u) + e^-u)
    a = beta * (torch.sigmoid(-u) * (1 - m) + torch.exp(log_m - u) - dm_blend / tau)
    return a, -a


def _gc(v):
    return discopop_a(v.s1, v.s2, v.setting("beta"), v.setting("discopop_tau"))


def _objective(v):
    u, tau = v.setting("beta") * (v.s1 - v.s2), v.setting("discopop_tau")
    m = torch.sigmoid(u / tau)
    return -F.logsigmoid(u) * (1 - m) + torch.exp(F.logsigmoid(u / tau) - u)  # e^-u m, with no inf * 0


def _sympy(s_c, s_r, u, r_c, r_r):
    dsig = ssig(u / TAU_D) * ssig(-u / TAU_D)
    return (-sp.log(ssig(u)) * (1 - ssig(u / TAU_D)) + sp.exp(-u) * ssig(u / TAU_D),
            BETA * (ssig(-u) * (1 - ssig(u / TAU_D)) + sp.exp(-u) * ssig(u / TAU_D)
                    - dsig / TAU_D * (sp.log(ssig(u)) + sp.exp(-u))), None)


def derive_discopop(n, norm="sum"):
    """TRL's discopop on one pair."""
    return derive_loss("discopop", n, norm, _sympy, symbols=(("discopop_tau", TAU_D),))


PAIR_LOSSES.add("discopop", gc=_gc, objective=_objective, settings=Settings, derivation=derive_discopop,
                derivations={"dpo_discopop": derive_discopop},
                summary="a blend of the logistic and exponential losses of the margin, weighted by sigma(u / tau)",
                cite="DiscoPOP, Lu et al., arXiv 2406.08414 eq 5", ships_in=("TRL",))
