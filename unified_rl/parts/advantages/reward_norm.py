"""The mean type x std type of the reward's normalisation (ROLL's `reward_norm`, LitePPO's advantage).

    A_i = (r_i - mean) / (std + eps)     mean: i's group's, the batch's or 0;   std: i's group's, the batch's or none

GRPO is group x group; Dr. GRPO group x none; LitePPO (Liu et al., "Tricks or Traps? A Deep Dive into RL for LLM
Reasoning", arXiv 2508.08221) group x batch, its default here: the group mean keeps each question's baseline, the
batch std keeps a question the policy nearly always solves from being blown up by its tiny std. The stds are sample
stds (torch.std), eps is added to them, and no group is singled out: an all-equal group has A = 0 under the group
mean, but r - batch mean over eps under the batch mean and the group std (ROLL's arithmetic; ROLL's `running` type,
statistics kept across steps, is state of the run and not here).
ROLL roll/utils/functionals.py reward_norm (norm_mean_type, norm_std_type; commit 8eb27cc2).
"""

from dataclasses import dataclass, field

import sympy as sp
import torch

from ... import _checks
from ..registry import ADVANTAGES
from ._common import groups, on_tokens, scores, written_scores

TYPES = ("group", "batch", "none")


@dataclass(frozen=True)
class Settings:
    norm_mean_type: str = field(default="group", metadata={"choices": TYPES})
    """the mean subtracted: each group's, the batch's, or none (ROLL's norm_mean_type; None there is "none")"""
    norm_std_type: str = field(default="batch", metadata={"choices": TYPES})
    """the std divided by (plus norm_eps): each group's, the batch's, or none (ROLL's norm_std_type)"""
    norm_eps: float = 1e-6
    """eps added to the std (ROLL's 1e-6)"""


def reward_norm(rewards, group_size, mean="group", std="batch", eps=1e-6, across=None):
    """(B,) (r - mean) / (std + eps), each statistic the group's, the batch's (every rank's with `across`) or none.

    >>> reward_norm(torch.tensor([1., 0., 1., 1.]), 2)   # group mean, batch std 0.5
    tensor([ 1.0000, -1.0000,  0.0000,  0.0000], dtype=torch.float64)
    """
    if mean not in TYPES or std not in TYPES:
        raise ValueError(f"unknown norm_mean_type {mean!r} or norm_std_type {std!r}; choose one of {', '.join(TYPES)}")
    eps = _checks.scalar(eps, "norm_eps", low=0.0)
    r = torch.as_tensor(rewards).double()
    g = r.view(_checks.groups(r.shape[0], group_size), group_size)
    everyone = r if across is None else across.gather(r)[0]
    m = {"group": g.mean(-1, keepdim=True), "batch": everyone.mean(), "none": 0.0}[mean]
    a = g - m
    if std == "group":
        a = a / ((g.std(-1, keepdim=True) if group_size > 1 else torch.zeros_like(g[:, :1])) + eps)
    elif std == "batch":
        a = a / ((everyone.std() if everyone.numel() > 1 else 0.0) + eps)
    return a.reshape(-1)


def _gc(v):
    return on_tokens(reward_norm(scores(v), v.group_size, v.setting("norm_mean_type", "group"),
                                 v.setting("norm_std_type", "batch"), v.setting("norm_eps", 1e-6), v.across), v)


def objective(v):
    """(B, 1) each reward less the mean of its type, over the std of its type plus eps, written out."""
    r = written_scores(v)
    g = groups(r, v)
    mean_type, std_type, eps = v.setting("norm_mean_type"), v.setting("norm_std_type"), v.setting("norm_eps")
    if mean_type == "group":
        g = g - g.sum(-1, keepdim=True) / g.shape[-1]
    elif mean_type == "batch":
        g = g - r.sum() / r.numel()
    if std_type == "group":
        spread = torch.sqrt(((groups(r, v) - groups(r, v).mean(-1, keepdim=True)) ** 2).sum(-1, keepdim=True)
                            / max(v.group_size - 1, 1)) if v.group_size > 1 else torch.zeros_like(g[:, :1])
        g = g / (spread + eps)
    elif std_type == "batch":
        spread = torch.sqrt(((r - r.mean()) ** 2).sum() / max(r.numel() - 1, 1)) if r.numel() > 1 else 0.0
        g = g / (spread + eps)
    return g.reshape(-1, 1).to(v.mask.dtype)


def derive(n):
    """LitePPO's advantage (group mean, batch std) in a REINFORCE objective: two groups of two responses."""
    from ...derivations.core import Derivation
    from ...derivations.core import _flat, _ragged, _ragged_gc as gc_of
    from ...text import Text
    lengths = (n, n + 1, n, n + 1)
    l, R, eps = _ragged("ell", lengths), sp.symbols("R_1:5", real=True), sp.Symbol("epsilon", positive=True)
    bar = sum(R) / 4
    std = sp.sqrt(sum((r - bar) ** 2 for r in R) / 3)
    A = [(R[i] - (R[2 * (i // 2)] + R[2 * (i // 2) + 1]) / 2) / (std + eps) for i in range(4)]
    J = sum(a * sum(row) / len(row) for a, row in zip(A, l)) / 4
    hand = tuple(a for a, row in zip(A, l) for _ in row)
    claims = ((Text("a group whose two rewards are equal gets A = 0 under the group mean"),
               A[0].subs(R[1], R[0])),)
    notes = (Text("LitePPO subtracts each group's mean and divides by the batch's std: a question the policy "
                  "nearly always solves keeps a small advantage instead of one its tiny group std blows up."),)
    return Derivation("reward_norm", "ROLL reward_norm; arXiv 2508.08221", J, gc_of(J, l), hand, None,
                      {"rewards": R, "logp": _flat(l)}, claims, notes=notes, scale="B\\,|o_i|")


ADVANTAGES.add("reward_norm", gc=_gc, objective=objective, settings=Settings, derivation=derive,
               summary="r minus its group's or the batch's mean, over the group's or the batch's std (or none)",
               cite="ROLL reward_norm; LitePPO, Liu et al., arXiv 2508.08221", aliases=("lite_ppo",),
               ships_in=("ROLL",))
