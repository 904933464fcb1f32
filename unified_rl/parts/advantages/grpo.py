"""GRPO's group-relative advantage (verl's `grpo`): A_i = (r_i - group mean) / (the group's std + eps).

DeepSeekMath §4.1.2 (outcome supervision), eq 21's A-hat: the same for every token of o_i; the std is the sample
std; an all-equal group has A = 0 (no signal), never NaN. TRL's scale_rewards picks the denominator: the group's
std (GRPO), the whole batch's (PPO Lite, arXiv 2508.08221) or none (Dr. GRPO, arXiv 2503.20783: A = r - mean;
verl's norm_adv_by_std_in_grpo=False).
"""

from dataclasses import dataclass, field

import torch

from ... import advantages
from ...derivations.paper import REGISTRY as PAPER
from ..registry import ADVANTAGES
from ._common import groups, on_tokens, scores, written_scores

SCALES = advantages.SCALES  # TRL's scale_rewards: group, batch, none


@dataclass(frozen=True)
class Settings:
    """A-hat's scale and eps (TRL's names)."""

    scale_rewards: str = field(default="group", metadata={"choices": SCALES})
    """A = (r - group mean) / (std + adv_eps) with the group's std (eq 21), the batch's (PPO Lite, arXiv
    2508.08221) or none (Dr. GRPO); TRL's scale_rewards"""
    adv_eps: float = 1e-6
    """eps of A's denominator (TRL's is fixed at 1e-4, verl's epsilon is 1e-6)"""


def _gc(v):
    return on_tokens(advantages.scaled(scores(v), v.group_size, v.setting("scale_rewards", "group"),
                                       v.setting("adv_eps", 1e-6), v.across), v)


def objective(v):
    """(B, 1) r - group mean, over (group std + eps), (batch std + eps) or 1; 0 in an all-equal group."""
    r = written_scores(v)
    g = groups(r, v)
    scale, eps = v.setting("scale_rewards", "group"), v.setting("adv_eps", 1e-6)
    centred = g - g.mean(-1, keepdim=True)
    equal = g.amax(-1, keepdim=True) == g.amin(-1, keepdim=True)
    if scale == "group":
        std = g.std(-1, keepdim=True) if v.group_size > 1 else torch.zeros_like(g[:, :1])
        centred = centred / (std + eps)
    elif scale == "batch":
        centred = centred / ((r.std() if r.numel() > 1 else 0.0) + eps)
    elif scale != "none":
        raise ValueError(f"unknown scale_rewards {scale!r}")
    return torch.where(equal, torch.zeros_like(centred), centred).view(-1, 1).to(v.mask.dtype)


ADVANTAGES.add("grpo", gc=_gc, objective=objective, settings=Settings,
               summary="r minus its group's mean, over the group's std (or the batch's, or none: Dr. GRPO)",
               cite="DeepSeekMath §4.1.2, eq 21, arXiv 2402.03300; Dr. GRPO arXiv 2503.20783",
               ships_in=("paper", "TRL", "verl"), derivation=PAPER["grpo"])
