"""CISPO (verl's `cispo`): a clipped, stop-gradient importance weight on every token, none dropped.

    f_{i,t} = sg(clip(r, 1 - eps_low, 1 + eps_high)) A log pi_theta(o_{i,t})      GC piece = clip(r) A

PPO's clip sets a token's GC to 0 where it binds; CISPO keeps the token with its weight capped.
CISPO: MiniMax-M1, arXiv 2506.13585, §3.1.
"""

from dataclasses import dataclass, field
from typing import Optional

import torch

from ... import _checks
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


def _derive(n):
    from ...derivations.policy_gradient import REGISTRY
    return REGISTRY["cispo"](n)


POLICY_TERMS.add("cispo", gc=_gc, objective=objective, settings=Settings, reads_old=True,
                 summary="a clipped stop-gradient ratio weighs every token, none dropped",
                 cite="CISPO, MiniMax-M1, arXiv 2506.13585 §3.1", ships_in=("TRL", "verl"), derivation=_derive)
