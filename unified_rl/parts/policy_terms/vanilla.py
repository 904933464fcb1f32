"""PPO's clipped ratio (verl's `vanilla`), with clip-higher, the dual clip and the sequence ratio.

    f_{i,t} = min(min(rho, delta) A, clip(rho, 1 - eps_low, 1 + eps_high) A)

rho is the token ratio pi_theta / pi_old, or the sequence's s_i = exp(mean_t log ratio) on every token
(importance_sampling_level="sequence", GSPO's). eps_low is RLConfig.clip_eps; eps_high = clip_eps_high (DAPO's
clip-higher, arXiv 2503.14476; None: eps_low); delta caps rho in the unclipped term (the dual clip, arXiv
1912.09729; INTELLECT-2, arXiv 2505.07291; TRL's delta, verl's clip_ratio_c). Its GC piece (eq 5's GC before
the aggregation's factor): rho A where the term that moves is the smaller one, 0 where a clip binds (or, at the
sequence level, the row's mean of that over its tokens: d s_i / dlogp_{i,t} = s_i / |o_i|). On-policy (rho = 1)
it is A: DeepSeekMath's eq 18 and 21 take it there. PPO: Schulman et al., arXiv 1707.06347, eq 7.

Derivations (sympy, derivations.REGISTRY): grpo_two_sided (the part's: clip-higher and delta, every sign and
region), dapo (grpo x vanilla with clip-higher x group-token-mean, the method that made clip-higher known).
"""

from dataclasses import dataclass, field
from typing import Optional

import sympy as sp
import torch

from ... import _checks
from ...derivations.core import (Derivation, EPS_HIGH, EPS_LOW, _asym_cases, _asym_clipped, _flat, _one, _ragged,
                                 _ragged_gc, clip)
from ...text import Text
from ..aggregations import sympy_J, sympy_weights
from ..registry import POLICY_TERMS

LEVELS = ("token", "sequence")  # TRL's importance_sampling_level


@dataclass(frozen=True)
class Settings:
    """The clip's options as TRL's GRPOConfig and verl name them; the defaults are PPO's."""

    clip_eps_high: Optional[float] = field(default=None, metadata={"choices": (None, 0.28)})
    """upper clip: the ratio's push stops above 1 + clip_eps_high (None: RLConfig.clip_eps); TRL's epsilon_high,
    verl's clip_ratio_high"""
    delta: Optional[float] = field(default=None, metadata={"choices": (None, 1.05)})
    """two-sided clip: a token with A < 0 and ratio > delta gets GC 0 (INTELLECT-2, arXiv 2505.07291; TRL's
    delta, verl's dual-clip clip_ratio_c); None: off"""
    importance_sampling_level: str = field(default="token", metadata={"choices": LEVELS})
    """the ratio: per token, or per sequence, exp(mean_t log ratio) on every token (GSPO); TRL's name"""


def clip_range(clip_eps, clip_eps_high=None):
    """(eps_low, eps_high), checked; eps_high None is eps_low."""
    low = _checks.scalar(clip_eps, "clip_eps", low=0.0)
    high = low if clip_eps_high is None else _checks.scalar(clip_eps_high, "clip_eps_high", low=0.0)
    return low, high


def clipped(adv, ratio, mask, low, high, delta=None, keep=None):
    """(B, T) d/dlogp of keep * min(min(rho, delta) A, clip(rho, 1-low, 1+high) A), per token.

    rho is (B, T) (token level) or (B, 1) (sequence level: each token's GC is its row's mean over the kept tokens).
    >>> m = torch.ones(2, 1); a = torch.tensor([[1.], [-1.]]); r = torch.tensor([[2.], [2.]])
    >>> clipped(a, r, m, 0.2, 0.2, delta=1.5)   # A > 0 clipped above; A < 0 cut by delta
    tensor([[0.],
            [0.]])
    """
    keep = mask if keep is None else keep
    first = (ratio if delta is None else ratio.clamp(max=delta)) * adv  # (B, T)
    second = ratio.clamp(1 - low, 1 + high) * adv
    moves_first = ratio * adv if delta is None else torch.where(ratio < delta, ratio * adv, torch.zeros_like(adv))
    inside = (ratio >= 1 - low) & (ratio <= 1 + high)
    moves_second = torch.where(inside, ratio * adv, torch.zeros_like(adv))
    g = torch.where(first <= second, moves_first, moves_second) * keep  # (B, T)
    if ratio.shape[-1] == 1 and mask.shape[-1] != 1:  # sequence level
        g = ((g * mask).sum(-1, keepdim=True) / mask.sum(-1, keepdim=True).clamp(min=1)).expand_as(mask)
    return g


def _settings(v):
    low, high = clip_range(v.cfg.clip_eps, v.setting("clip_eps_high"))
    delta = v.setting("delta")
    return low, high, None if delta is None else _checks.scalar(delta, "delta", low=0.0)


def _gc(v, adv, keep):
    low, high, delta = _settings(v)
    return clipped(adv, v.ratio(v.setting("importance_sampling_level", "token")), v.mask, low, high, delta, keep)


def objective(v, adv):
    """min(min(rho, delta) A, clip(rho) A) per token, rho with its gradient (PPO's eq 7, the dual clip)."""
    level = v.setting("importance_sampling_level", "token")
    log_ratio = v.logp - v.logp_old
    if level == "sequence":
        rho = torch.exp((log_ratio * v.mask).sum(-1, keepdim=True) / v.mask.sum(-1, keepdim=True).clamp(min=1))
    elif level == "token":
        rho = torch.exp(log_ratio)
    else:
        raise ValueError(f"unknown importance_sampling_level {level!r}")
    high = v.cfg.clip_eps if v.setting("clip_eps_high") is None else v.setting("clip_eps_high")
    delta = v.setting("delta")
    first = (rho if delta is None else torch.clamp(rho, max=delta)) * adv
    return torch.min(first, torch.clamp(rho, 1 - v.cfg.clip_eps, 1 + high) * adv) * torch.ones_like(v.mask)


# the derivations: the two-sided clip (the part's own), and DAPO's clip-higher under the group's token mean

DELTA_GAP = sp.Symbol("D", positive=True)  # delta = 1 + eps_high + D: above the clip range, as TRL recommends


def derive_two_sided(n):
    """min(min(r, delta) A, clip(r, 1 - eps_low, 1 + eps_high) A) on one response: every (sign, region) case."""
    l, lo = _one(n, "ell", "ell^old")
    A = sp.Symbol("A", real=True)
    delta = 1 + EPS_HIGH + DELTA_GAP
    r = [sp.exp(x - y) for x, y in zip(l, lo)]
    J = sum(sp.Min(sp.Min(ri, delta) * A, clip(ri, 1 - EPS_LOW, 1 + EPS_HIGH) * A) for ri in r) / n
    gc = _ragged_gc(J, (l,))
    stop = lambda ri: ((A > 0) & (ri > 1 + EPS_HIGH)) | ((A < 0) & (ri < 1 - EPS_LOW)) | ((A < 0) & (ri > delta))  # noqa: E731
    hand = tuple(sp.Piecewise((0, stop(ri)), (ri * A, True)) for ri in r)
    a, s, u, d = sp.symbols("a s u d", positive=True)
    lo_v = 1 / (1 + s)
    ratios = {"r > delta": delta + d, "1+eps_high < r < delta": 1 + EPS_HIGH + DELTA_GAP * u / (1 + u),
              "1-eps_low < r < 1+eps_high": 1 - lo_v + (lo_v + EPS_HIGH) * u / (1 + u),
              "r < 1-eps_low": (1 - lo_v) * u / (1 + u)}
    cases = tuple((Text("{sign}, {ratio}", sign=sign_name, ratio=r_name),
                   {EPS_LOW: lo_v, A: sign, **{x: y + sp.log(rv) for x, y in zip(l, lo)}})
                  for sign_name, sign in (("A > 0", a), ("A < 0", -a)) for r_name, rv in ratios.items())
    notes = (Text("Two-sided clipping (INTELLECT-2; TRL's delta, verl's dual-clip clip_ratio_c): min(r, delta) in "
                  "the unclipped term. Where A < 0 and r > delta the objective is delta A, a constant, so the "
                  "GC is 0: a token the update already made far likelier stops being pushed down."),)
    symbols = {"adv": A, "logp": l, "logp_old": lo, "clip_eps": EPS_LOW, "clip_eps_high": EPS_HIGH,
               "delta_gap": DELTA_GAP}
    return Derivation("grpo_two_sided", "arXiv 2505.07291; TRL delta", J, gc, hand, None, symbols, cases=cases,
                      notes=notes)


def derive_dapo(n):
    """DAPO (grpo x vanilla with clip-higher x group-token-mean): two responses of one group, n and n + 1 tokens."""
    lengths = (n, n + 1)
    l, lo = _ragged("ell", lengths), _ragged("ell^old", lengths)
    A = sp.symbols("Ahat_1:3", real=True)
    r = [[sp.exp(x - y) for x, y in zip(*rows)] for rows in zip(l, lo)]
    terms = [[sp.Min(ri * a, clip(ri, 1 - EPS_LOW, 1 + EPS_HIGH) * a) for ri in row] for row, a in zip(r, A)]
    J = sympy_J(terms, "group-token-mean")
    adv = [a for row, a in zip(l, A) for _ in row]
    hand = tuple(w * _asym_clipped(ri, a) for w, ri, a in zip(sympy_weights(l, "group-token-mean"), _flat(r), adv))
    notes = (Text("Token-mean over the group: the GC of o_i carries G |o_i| / sum_j |o_j|."),
             Text("Clip-higher: the push on a token with A > 0 stops at r > 1 + eps_high, on one with A < 0 at "
                  "r < 1 - eps_low; eps_high > eps_low leaves rising tokens more room."))
    symbols = {"adv": A, "logp": _flat(l), "logp_old": _flat(lo), "clip_eps": EPS_LOW, "clip_eps_high": EPS_HIGH}
    return Derivation("dapo", "arXiv 2503.14476, §3", J, _ragged_gc(J, l), hand, None, symbols,
                      cases=_asym_cases(_flat(l), _flat(lo), A), notes=notes, scale="B\\,|o_i|")


POLICY_TERMS.add("vanilla", gc=_gc, objective=objective, settings=Settings, reads_old=True,
                 summary="PPO's clipped ratio: rho A inside the clip range, 0 where it binds (clip-higher, dual clip, "
                         "sequence ratio as options)",
                 cite="PPO, Schulman et al., arXiv 1707.06347 eq 7; DeepSeekMath eq 15-21", aliases=("ppo", "clip"),
                 ships_in=("paper", "TRL", "verl"), derivation=derive_two_sided,
                 derivations={"grpo_two_sided": derive_two_sided, "dapo": derive_dapo})
