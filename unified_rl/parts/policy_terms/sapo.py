"""SAPO (verl's `sapo`): the hard clip replaced by a smooth gate of the ratio, its temperature by A's sign.

    f_{i,t} = g_tau(r) A,  g_tau(r) = 4/tau sigma(tau (r - 1))      GC piece = 4 sigma (1 - sigma) r A

A at r = 1 (the gate's slope there is 1), fading smoothly as r leaves 1, faster for a larger tau.
SAPO: Gao et al., arXiv 2511.20347.
"""

from dataclasses import dataclass

import sympy as sp
import torch

from ... import _checks
from ...derivations.core import Derivation, _one, _ragged_gc, sigmoid
from ...text import Text
from ..registry import POLICY_TERMS


@dataclass(frozen=True)
class Settings:
    """SAPO's temperatures (TRL's defaults)."""

    sapo_tau_pos: float = 1.0
    """the gate's temperature where A > 0 (TRL's sapo_temperature_pos)"""
    sapo_tau_neg: float = 1.05
    """where A <= 0: a larger tau fades the push faster as r leaves 1 (TRL's sapo_temperature_neg)"""


def _taus(v, adv):
    pos = _checks.scalar(v.setting("sapo_tau_pos"), "tau_pos", low=0.0)
    neg = _checks.scalar(v.setting("sapo_tau_neg"), "tau_neg", low=0.0)
    if pos == 0 or neg == 0:
        raise ValueError("SAPO's temperatures must be > 0")
    return torch.where(adv > 0, torch.full_like(adv, pos), torch.full_like(adv, neg))


def _gc(v, adv, keep):
    ratio = v.ratio("token")
    s = torch.sigmoid(_taus(v, adv) * (ratio - 1))
    return 4 * s * (1 - s) * ratio * adv * keep


def objective(v, adv):
    """4/tau sigmoid(tau (r - 1)) A per token, r with its gradient."""
    tau = torch.where(adv > 0, torch.full_like(adv, v.setting("sapo_tau_pos")),
                      torch.full_like(adv, v.setting("sapo_tau_neg")))
    return torch.sigmoid(tau * (torch.exp(v.logp - v.logp_old) - 1)) * 4 / tau * adv


TAU = sp.Symbol("tau", positive=True)


def derive_sapo(n):
    """One response: the gate 4/tau sigmoid(tau (r - 1)) A per token; its GC is A at r = 1."""
    l, lo = _one(n, "ell", "ell^old")
    A = sp.Symbol("A", real=True)
    r = [sp.exp(x - y) for x, y in zip(l, lo)]
    J = sum(4 / TAU * sigmoid(TAU * (ri - 1)) * A for ri in r) / n
    hand = tuple(4 * sigmoid(TAU * (ri - 1)) * (1 - sigmoid(TAU * (ri - 1))) * ri * A for ri in r)
    claims = tuple((Text("at pi_old = pi_theta token {t}'s GC is A", t=t + 1), (h - A).subs(dict(zip(lo, l))))
                   for t, h in enumerate(hand))
    notes = (Text("The gate 4/tau sigmoid(tau (r - 1)) has slope 1 at r = 1 and flattens as r leaves 1, so the GC "
                  "4 sigma (1 - sigma) r A fades smoothly where PPO's clip would cut it to 0; tau is tau_pos where "
                  "A > 0 and tau_neg otherwise."),)
    return Derivation("sapo", "arXiv 2511.20347", J, _ragged_gc(J, (l,)), hand, None,
                      {"adv": A, "logp": l, "logp_old": lo, "tau": TAU}, claims, notes=notes)


POLICY_TERMS.add("sapo", gc=_gc, objective=objective, settings=Settings, reads_old=True,
                 summary="a smooth sigmoid gate of the ratio instead of the hard clip",
                 cite="SAPO, Gao et al., arXiv 2511.20347", ships_in=("TRL", "verl"), derivation=derive_sapo,
                 derivations={"sapo": derive_sapo})
