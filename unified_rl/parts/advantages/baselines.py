"""Baselines of REINFORCE from later papers: GPG's scaled mean, OPO's length-weighted mean, Pass@k training's best.

| name        | A_i                                                   | source                                      |
|-------------|-------------------------------------------------------|---------------------------------------------|
| gpg         | alpha (r_i - group mean), alpha = B / (samples that count) | GPG, arXiv 2504.02546 (verl `gpg`)      |
| opo         | r_i - sum_j |o_j| r_j / sum_j |o_j| in the group      | OPO, arXiv 2505.23585 (verl `opo`)          |
| grpo_passk  | r_max - r_second on the group's first best, else 0 (over std + eps) | Pass@k training, arXiv 2503.19595 (verl `grpo_passk`) |
"""

from dataclasses import dataclass, field

import sympy as sp
import torch

from ... import advantages
from ...derivations.core import Derivation, _flat, _ragged, _ragged_gc
from ...text import Text
from ..registry import ADVANTAGES
from ._common import groups, on_tokens, scores, written_scores


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
    r = groups(written_scores(v), v)
    centred = r - r.mean(-1, keepdim=True)
    counted = (centred.abs() > 0) if v.setting("gpg_count") == "nonzero-advantage" else (r != 0)
    return (r.numel() / max(int(counted.sum()), 1) * centred).view(-1, 1).to(v.mask.dtype)


def _opo_objective(v):
    r = groups(written_scores(v), v)
    n = v.full.sum(-1).double().view_as(r)
    return (r - (n * r).sum(-1, keepdim=True) / n.sum(-1, keepdim=True)).view(-1, 1).to(v.mask.dtype)


def _passk_objective(v):
    r = groups(written_scores(v), v)
    top = r.sort(-1, descending=True).values
    gap = top[:, :1] - top[:, 1:2]
    if v.setting("passk_std"):
        gap = gap / (r.std(-1, keepdim=True) + v.setting("adv_eps"))
    first_best = torch.zeros_like(r)
    first_best[torch.arange(r.shape[0]), r.argmax(-1)] = 1
    return (first_best * gap).view(-1, 1).to(v.mask.dtype)


# the derivations: each J is REINFORCE (or GRPO) on its advantage, so the GC is that advantage times the
# aggregation's row factor; they show where each advantage comes from. GC = B |o_i| dJ/d ell_{i,t}.

ALPHA = sp.Symbol("alpha", positive=True)


def derive_gpg(n):
    """REINFORCE on alpha (R - mean R) under verl's token-mean: no ratio."""
    lengths = (n, n + 1)
    l = _ragged("ell", lengths)
    R = sp.symbols("R_1:3", real=True)
    A = [ALPHA * (r - sum(R) / 2) for r in R]
    N = sum(lengths)
    J = sum(a * x for a, row in zip(A, l) for x in row) / N  # verl's token-mean, no ratio
    hand = tuple(sp.Rational(2 * len(row), N) * a for a, row in zip(A, l) for _ in row)
    notes = (Text("GPG is REINFORCE on alpha (R - mean R): no ratio, so the GC is the same at every update of a "
                  "batch; alpha = B / (the samples whose advantage is not 0) scales the batch up by the share "
                  "of groups that carry no signal."),)
    return Derivation("gpg", "arXiv 2504.02546", J, _ragged_gc(J, l), hand, None,
                      {"rewards": R, "logp": _flat(l), "alpha": ALPHA}, notes=notes, scale="B\\,|o_i|")


def derive_opo(n):
    """OPO's baseline, the length-weighted mean reward, is the one that minimises sum_i |o_i| (R_i - b)^2."""
    lengths = (n, n + 1)
    l = _ragged("ell", lengths)
    R = sp.symbols("R_1:3", real=True)
    b = sum(len(row) * r for row, r in zip(l, R)) / sum(lengths)
    J = sum((r - b) * sum(row) for r, row in zip(R, l)) / 2  # a token sum per response, mean over the group
    hand = tuple(len(row) * (r - b) for r, row in zip(R, l) for _ in row)
    x = sp.Symbol("b", real=True)
    spread = sum(len(row) * (r - x) ** 2 for r, row in zip(R, l))
    claims = ((Text("b minimises sum_i |o_i| (R_i - b)^2, the variance of the gradient when the score function's "
                    "squared norm grows with |o|"), sp.diff(spread, x).subs(x, b)),)
    notes = (Text("OPO's baseline is the mean reward weighted by length; on the token sum log pi(o | q) the GC is "
                  "|o_i| (R_i - b) on every token."),)
    return Derivation("opo", "arXiv 2505.23585", J, _ragged_gc(J, l), hand, None, {"rewards": R, "logp": _flat(l)},
                      claims, notes=notes, scale="B\\,|o_i|")


def derive_passk(n, group_size=3):
    """Pass@k training where R_1 > R_2 >= R_3: only the best answer is pushed, by (R_1 - R_2) / sigma."""
    lengths = tuple(n + (i == 1) for i in range(group_size))
    l = _ragged("ell", lengths)
    R = sp.symbols(f"R_1:{group_size + 1}", real=True)
    sigma = sp.Symbol("sigma", positive=True)
    best = (R[0] - R[1]) / sigma  # the case R_1 > R_2 >= R_3: response 1 is the best, R_2 the second
    A = [best] + [sp.Integer(0)] * (group_size - 1)
    J = sum(a * sum(row) / len(row) for a, row in zip(A, l)) / group_size  # GRPO's seq-mean-token-mean
    hand = tuple(a for a, row in zip(A, l) for _ in row)
    notes = (Text("Pass@k training gives the group's best answer (R_max - R_second) / sigma and every other answer "
                  "0: the GC pushes up only the answer that decides whether one of k samples is right, and never "
                  "pushes a wrong answer down."),)
    return Derivation("grpo_passk", "arXiv 2503.19595", J, _ragged_gc(J, l), hand, None,
                      {"rewards": R, "logp": _flat(l), "sigma": sigma}, notes=notes, scale="B\\,|o_i|")


ADVANTAGES.add("gpg", gc=lambda v: on_tokens(advantages.gpg(scores(v), v.group_size, v.setting("gpg_count"), v.across), v),
               objective=_gpg_objective, settings=GPGSettings, summary="alpha (r - group mean): no std",
               cite="GPG, Chu et al., arXiv 2504.02546", ships_in=("verl",), derivation=derive_gpg,
               derivations={"gpg": derive_gpg})
ADVANTAGES.add("opo", gc=lambda v: on_tokens(advantages.length_weighted(scores(v), v.full.sum(-1), v.group_size), v),
               objective=_opo_objective, summary="r minus the length-weighted mean reward of its group",
               cite="OPO, Hao et al., arXiv 2505.23585", ships_in=("verl",), derivation=derive_opo,
               derivations={"opo": derive_opo})
ADVANTAGES.add("grpo_passk",
               gc=lambda v: on_tokens(advantages.best_of_group(scores(v), v.group_size, v.setting("adv_eps"),
                                                               std=v.setting("passk_std")), v),
               objective=_passk_objective, settings=PassKSettings,
               summary="only each group's best answer gets an advantage, r_max - r_second",
               cite="Pass@k training, Chen et al., arXiv 2503.19595", aliases=("passk",), ships_in=("verl",),
               derivation=derive_passk, derivations={"grpo_passk": derive_passk})
