"""GSPO's sequence ratio (verl's `gspo`): one importance ratio per response, clipped at the sequence level.

    s_i = (pi_theta(o_i) / pi_old(o_i))^(1/|o_i|) = exp(mean_t log r_{i,t});   f_i = min(s_i A_i, clip(s_i) A_i)

d s_i / dlogp_{i,t} = s_i / |o_i|, so the GC piece is s_i A_i on every token of o_i, or 0 on all of them where
the clip binds. Sequence ratios sit near 1, so its clip range is narrow (the paper's 3e-4 and 4e-4).
GSPO: Zheng et al., arXiv 2507.18071.
"""

from dataclasses import dataclass

import torch

from ..registry import POLICY_TERMS
from .vanilla import clip_range, clipped


@dataclass(frozen=True)
class Settings:
    """GSPO's clip of the sequence ratio (the paper's values)."""

    gspo_clip_eps: float = 3e-4
    """lower clip of the sequence ratio s_i (the paper's 3e-4)"""
    gspo_clip_eps_high: float = 4e-4
    """upper clip of s_i (the paper's 4e-4)"""


def _gc(v, adv, keep):
    low, high = clip_range(v.setting("gspo_clip_eps"), v.setting("gspo_clip_eps_high"))
    return clipped(adv, v.ratio("sequence"), v.mask, low, high, None, keep)


def objective(v, adv):
    """min(s_i A, clip(s_i) A) on every token of o_i, s_i with its gradient."""
    s = torch.exp(((v.logp - v.logp_old) * v.mask).sum(-1, keepdim=True) / v.mask.sum(-1, keepdim=True).clamp(min=1))
    low, high = v.setting("gspo_clip_eps"), v.setting("gspo_clip_eps_high")
    return torch.min(s * adv, torch.clamp(s, 1 - low, 1 + high) * adv) * torch.ones_like(v.mask)


def _derive(n):
    from ...derivations.policy_gradient import REGISTRY
    return REGISTRY["gspo"](n)


POLICY_TERMS.add("gspo", gc=_gc, objective=objective, settings=Settings, reads_old=True,
                 summary="one clipped importance ratio per sequence, exp(mean_t log r), on every token",
                 cite="GSPO, Zheng et al., arXiv 2507.18071", ships_in=("TRL", "verl"), derivation=_derive)
