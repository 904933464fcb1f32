"""CISPO (verl's `cispo`): a clipped, stop-gradient importance weight on every token, none dropped.

    f_{i,t} = sg(clip(r, 1 - eps_low, 1 + eps_high)) A log pi_theta(o_{i,t})      GC piece = clip(r) A

PPO's clip sets a token's GC to 0 where it binds; CISPO keeps the token with its weight capped.
CISPO: MiniMax-M1, arXiv 2506.13585, §3.1.
"""

from dataclasses import dataclass, field
from typing import Optional

import sympy as sp
import torch

from ... import _checks
from ...derivations.core import Derivation, EPS_HIGH, EPS_LOW, _asym_cases, _flat, _ragged, _ragged_gc, clip
from ...text import Text
from ..aggregations import sympy_J, sympy_weights
from ..registry import POLICY_TERMS


@dataclass(frozen=True)
class Settings:
    """CISPO's bounds of the weight (the paper tunes only the upper one)."""

    cispo_clip_eps_high: float = 0.28
    """the weight is min(r, 1 + eps_high); 0.28 is this lab's choice (DAPO's eps_high). TRL's epsilon_high is
    the bound itself, 1 + this (ScaleRL's 5.0 is cispo_clip_eps_high = 4)"""
    cispo_clip_eps: Optional[float] = field(default=None, metadata={"choices": (None, 0.2)})
    """the weight's lower bound 1 - cispo_clip_eps (None: none, as the paper and TRL; verl clips at clip_ratio_low)"""


def weight(ratio, low, high):
    """clip(r, 1 - low, 1 + high), low None: no lower bound. (B, T)"""
    return ratio.clamp(min=None if low is None else 1 - low, max=1 + high)


def _gc(v, adv, keep):
    high = _checks.scalar(v.setting("cispo_clip_eps_high"), "cispo_clip_eps_high", low=0.0)
    low = v.setting("cispo_clip_eps")
    low = None if low is None else _checks.scalar(low, "cispo_clip_eps", low=0.0)
    return weight(v.ratio("token"), low, high) * adv * keep


def objective(v, adv):
    """sg(clip(r)) A log pi per token."""
    low = v.setting("cispo_clip_eps")
    r = torch.exp(v.logp - v.logp_old)
    w = torch.clamp(r, -float("inf") if low is None else 1 - low, 1 + v.setting("cispo_clip_eps_high")).detach()
    return w * adv * v.logp


def derive_cispo(n):
    """Two responses of one group (group-token-mean): sg(clip(r)) A ell per token, sg(ell) an ell-bar set to ell after
    differentiating."""
    lengths = (n, n + 1)
    l, lo, bar = _ragged("ell", lengths), _ragged("ell^old", lengths), _ragged("ellbar", lengths)
    A = sp.symbols("Ahat_1:3", real=True)
    w = [[clip(sp.exp(b - y), 1 - EPS_LOW, 1 + EPS_HIGH) for b, y in zip(*rows)] for rows in zip(bar, lo)]  # sg(r)
    J = sympy_J([[wi * a * x for wi, x in zip(*rows)] for rows, a in zip(zip(w, l), A)], "group-token-mean")
    gc = tuple(g.subs(dict(zip(_flat(bar), _flat(l)))) for g in _ragged_gc(J, l))  # sg: ell-bar = ell after d/d ell
    ratio = [sp.exp(x - y) for x, y in zip(_flat(l), _flat(lo))]
    adv = [a for row, a in zip(l, A) for _ in row]
    hand = tuple(wt * a * sp.Piecewise((1 + EPS_HIGH, r > 1 + EPS_HIGH), (1 - EPS_LOW, r < 1 - EPS_LOW), (r, True))
                 for wt, r, a in zip(sympy_weights(l, "group-token-mean"), ratio, adv))
    notes = (Text("The weight sg(clip(r)) is not differentiated: the GC is G |o_i| / sum_j |o_j| * clip(r) * A, "
                  "never 0 where A is not (PPO's and DAPO's clip set it to 0)."),)
    symbols = {"adv": A, "logp": _flat(l), "logp_old": _flat(lo), "clip_eps": EPS_LOW, "clip_eps_high": EPS_HIGH}
    return Derivation("cispo", "arXiv 2506.13585, §3.1", J, gc, hand, None, symbols,
                      cases=_asym_cases(_flat(l), _flat(lo), A), notes=notes, scale="B\\,|o_i|")


POLICY_TERMS.add("cispo", gc=_gc, objective=objective, settings=Settings, reads_old=True,
                 summary="a clipped stop-gradient ratio weighs every token, none dropped",
                 cite="CISPO, MiniMax-M1, arXiv 2506.13585 §3.1", ships_in=("TRL", "verl"), derivation=derive_cispo,
                 derivations={"cispo": derive_cispo})
