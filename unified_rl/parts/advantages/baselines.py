"""Baselines of REINFORCE from later papers: GPG's scaled mean, OPO's length-weighted mean, Pass@k training's best.

| name        | A_i                                                   | source                                      |
|-------------|-------------------------------------------------------|---------------------------------------------|
| gpg         | alpha (r_i - group mean), alpha = B / (samples that count) | GPG, arXiv 2504.02546 (verl `gpg`)      |
| opo         | r_i - sum_j |o_j| r_j / sum_j |o_j| in the group      | OPO, arXiv 2505.23585 (verl `opo`)          |
| grpo_passk  | r_max - r_second on the group's first best, else 0 (over std + eps) | Pass@k training, arXiv 2503.19595 (verl `grpo_passk`) |
"""

from dataclasses import dataclass, field

import torch

from ... import advantages
from ..registry import ADVANTAGES
from ._common import groups, on_tokens, scores


@dataclass(frozen=True)
class GPGSettings:
    gpg_count: str = field(default="nonzero-advantage", metadata={"choices": ("nonzero-advantage", "nonzero-reward")})
    """alpha = B / the samples whose advantage is not 0 (the paper's B / (B - M)), or whose reward is not 0 (verl)"""


@dataclass(frozen=True)
class PassKSettings:
    passk_std: bool = True
    """divide r_max - r_second by the group's std + adv_eps (verl's norm_adv_by_std_in_grpo)"""
    adv_eps: float = 1e-6
    """eps of that denominator (verl's epsilon)"""


def _gpg_objective(v):
    r = groups(scores(v), v)
    centred = r - r.mean(-1, keepdim=True)
    counted = (centred.abs() > 0) if v.setting("gpg_count") == "nonzero-advantage" else (r != 0)
    return (r.numel() / max(int(counted.sum()), 1) * centred).view(-1, 1).to(v.mask.dtype)


def _opo_objective(v):
    r = groups(scores(v), v)
    n = v.full.sum(-1).double().view_as(r)
    return (r - (n * r).sum(-1, keepdim=True) / n.sum(-1, keepdim=True)).view(-1, 1).to(v.mask.dtype)


def _passk_objective(v):
    r = groups(scores(v), v)
    top = r.sort(-1, descending=True).values
    gap = top[:, :1] - top[:, 1:2]
    if v.setting("passk_std"):
        gap = gap / (r.std(-1, keepdim=True) + v.setting("adv_eps"))
    first_best = torch.zeros_like(r)
    first_best[torch.arange(r.shape[0]), r.argmax(-1)] = 1
    return (first_best * gap).view(-1, 1).to(v.mask.dtype)


def _derive(name):
    def derive(n):
        from ...derivations.baselines import REGISTRY
        return REGISTRY[name](n)
    return derive


ADVANTAGES.add("gpg", gc=lambda v: on_tokens(advantages.gpg(scores(v), v.group_size, v.setting("gpg_count"), v.across), v),
               objective=_gpg_objective, settings=GPGSettings, summary="alpha (r - group mean): no std",
               cite="GPG, Chu et al., arXiv 2504.02546", ships_in=("verl",), derivation=_derive("gpg"))
ADVANTAGES.add("opo", gc=lambda v: on_tokens(advantages.length_weighted(scores(v), v.full.sum(-1), v.group_size), v),
               objective=_opo_objective, summary="r minus the length-weighted mean reward of its group",
               cite="OPO, Hao et al., arXiv 2505.23585", ships_in=("verl",), derivation=_derive("opo"))
ADVANTAGES.add("grpo_passk",
               gc=lambda v: on_tokens(advantages.best_of_group(scores(v), v.group_size, v.setting("adv_eps"),
                                                               std=v.setting("passk_std")), v),
               objective=_passk_objective, settings=PassKSettings,
               summary="only each group's best answer gets an advantage, r_max - r_second",
               cite="Pass@k training, Chen et al., arXiv 2503.19595", aliases=("passk",), ships_in=("verl",),
               derivation=_derive("grpo_passk"))
