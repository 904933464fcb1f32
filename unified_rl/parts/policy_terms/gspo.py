"""GSPO's sequence ratio (verl's `gspo`): one importance ratio per response, clipped at the sequence level.

    s_i = (pi_theta(o_i) / pi_old(o_i))^(1/|o_i|) = exp(mean_t log r_{i,t});   f_i = min(s_i A_i, clip(s_i) A_i)

d s_i / dlogp_{i,t} = s_i / |o_i|, so the GC piece is s_i A_i on every token of o_i, or 0 on all of them where
the clip binds. Sequence ratios sit near 1, so its clip range is narrow (the paper's 3e-4 and 4e-4).
GSPO: Zheng et al., arXiv 2507.18071.

Derivations (sympy, derivations.REGISTRY): gspo (the part's, seq-mean-token-mean), luspo (grpo x gspo x
seq-mean-token-sum: LUSPO, arXiv 2602.05261).
"""

from dataclasses import dataclass

import sympy as sp
import torch

from ...derivations.core import (Derivation, EPS_HIGH, EPS_LOW, _asym_cases, _asym_clipped, _flat, _offsets, _ragged,
                                 _ragged_gc, clip)
from ...text import Text
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


# the derivations: GSPO's sequence ratio (seq-mean-token-mean), and LUSPO's (the same term, seq-mean-token-sum)

def _sequence_ratios(l, lo):
    return [sp.exp(sum(x - y for x, y in zip(*rows)) / len(rows[0])) for rows in zip(l, lo)]


def derive_gspo(n):
    """Two responses of n and n + 1 tokens: every token of o_i gets s_i A_i, or 0 where the sequence clip binds."""
    lengths = (n, n + 1)
    l, lo = _ragged("ell", lengths), _ragged("ell^old", lengths)
    A = sp.symbols("Ahat_1:3", real=True)
    s = _sequence_ratios(l, lo)
    J = sum(sp.Min(si * a, clip(si, 1 - EPS_LOW, 1 + EPS_HIGH) * a) for si, a in zip(s, A)) / 2
    gc = _ragged_gc(J, l)
    hand = tuple(_asym_clipped(si, a) for row, si, a in zip(l, s, A) for _ in row)
    k, claims = 0, []
    for row in l:  # every token of a response has the same GC
        claims += [(Text("response token {t} has the GC of token {first}", t=k + t + 2, first=k + 1),
                    gc[k + t + 1] - gc[k]) for t in range(len(row) - 1)]
        k += len(row)
    notes = (Text("s_i = exp(mean_t (ell - ell^old)) has d s_i / d ell_{{i,t}} = s_i / |o_i|: with the |o_i| of eq 5 "
                  "the GC is s_i A_i on every token of o_i, or 0 on all of them where the sequence clip binds."),)
    symbols = {"adv": A, "logp": _flat(l), "logp_old": _flat(lo), "clip_eps": EPS_LOW, "clip_eps_high": EPS_HIGH}
    return Derivation("gspo", "arXiv 2507.18071, §4", J, gc, hand, None, symbols, tuple(claims),
                      _asym_cases(_flat(l), _flat(lo), A, offsets=_offsets(l)), notes, "B\\,|o_i|")


def derive_luspo(n):
    """LUSPO (grpo x gspo x seq-mean-token-sum): GSPO's term of each sequence times its length."""
    lengths = (n, n + 1)
    l, lo = _ragged("ell", lengths), _ragged("ell^old", lengths)
    A = sp.symbols("Ahat_1:3", real=True)
    s = _sequence_ratios(l, lo)
    J = sum(len(row) * sp.Min(si * a, clip(si, 1 - EPS_LOW, 1 + EPS_HIGH) * a) for row, si, a in zip(l, s, A)) / 2
    hand = tuple(len(row) * _asym_clipped(si, a) for row, si, a in zip(l, s, A) for _ in row)
    notes = (Text("GSPO's term of each sequence times its length |o_i| (a token sum of the constant per-token "
                  "term): the GC is |o_i| s_i A_i, so a long answer's tokens are pushed as hard as a short one's "
                  "in total, not per token."),)
    symbols = {"adv": A, "logp": _flat(l), "logp_old": _flat(lo), "clip_eps": EPS_LOW, "clip_eps_high": EPS_HIGH}
    return Derivation("luspo", "arXiv 2602.05261", J, _ragged_gc(J, l), hand, None, symbols,
                      cases=_asym_cases(_flat(l), _flat(lo), A, offsets=_offsets(l)), notes=notes, scale="B\\,|o_i|")


POLICY_TERMS.add("gspo", gc=_gc, objective=objective, settings=Settings, reads_old=True,
                 summary="one clipped importance ratio per sequence, exp(mean_t log r), on every token",
                 cite="GSPO, Zheng et al., arXiv 2507.18071", ships_in=("TRL", "verl"), derivation=derive_gspo,
                 derivations={"gspo": derive_gspo, "luspo": derive_luspo})
