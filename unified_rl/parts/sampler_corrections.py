"""Samplers that are not the learner: the ratio rho_s = pi_old / pi_sampler as a weight or a mask on each token.

A fast sampler (vLLM, another precision, a stale copy of the weights) scores its tokens with pi_sampler; the learner
recomputes them at the batch's start, pi_old (`View.logp_old` against `View.sampler_logp`). eq 5's expectation is
over the learner's distribution, so each token's GC is reweighted by rho_s, a number fixed before the update:

| name | keep_{i,t}                                   | settings                                         | ships in |
|------|----------------------------------------------|--------------------------------------------------|----------|
| tis  | min(max(rho_s, floor), cap)                  | sampler_correction_level, _cap, _floor           | TRL *_truncate, verl rollout_is, NeMo-RL tis |
| mis  | 1 where low <= rho_s <= high, else 0          | sampler_mask_level, sampler_mask_low, _high      | verl rollout_rs, NeMo-RL |

rho_s is per token, or one per response: `sequence` exp(sum_t log rho_s) (the product, TRL's and verl's), or
`geometric` exp(mean_t log rho_s) (NeMo-RL's seq-mask-tis). The two compose: with `sampler_correction_cap=None`
tis is the plain weight rho_s, and masks=("tis", "mis") is TRL's token_mask / sequence_mask (rho_s kept inside the
band, 0 outside) and IcePop's M(k) = k on [alpha, beta] (Ring-1T, arXiv 2510.18855, alpha 0.5, beta 5); with
tis at the token level and mis at the geometric level it is NeMo-RL's seq-mask-tis. As TRL multiplies its per-token
policy loss by the weight (grpo_trainer.py, `importance_sampling_ratio`), keep multiplies the policy term's GC and
not the KL term's. In the lab pi_sampler = pi_old, so both are 1 there until a sampler differs.
TIS: Yao et al., "Your Efficient RL Framework Secretly Brings You Off-Policy RL Training" (2025); TRL 1.16
GRPOConfig vllm_importance_sampling_mode / _clip_max / _clip_min.
"""

from dataclasses import dataclass, field
from typing import Optional

import sympy as sp
import torch

from .. import _checks
from ..derivations.core import Derivation, _one
from ..text import Text
from .registry import MASKS

LEVELS = ("token", "sequence")
MASK_LEVELS = ("token", "sequence", "geometric")


@dataclass(frozen=True)
class TisSettings:
    sampler_correction_level: str = field(default="token", metadata={"choices": LEVELS})
    """rho_s = pi_old / pi_sampler per token, or one per response: exp(sum_t log rho_s) (TRL's sequence_truncate)"""
    sampler_correction_cap: Optional[float] = field(default=2.0, metadata={"choices": (2.0, 1.05, None)})
    """C of the weight min(rho_s, C) (Yao et al.'s 2; TRL's vllm_importance_sampling_clip_max, 3 by default);
    None: the plain weight rho_s"""
    sampler_correction_floor: Optional[float] = field(default=None, metadata={"choices": (None, 0.95)})
    """a lower bound of the weight, max(rho_s, floor) (TRL's vllm_importance_sampling_clip_min); None: none"""


@dataclass(frozen=True)
class MisSettings:
    sampler_mask_level: str = field(default="token", metadata={"choices": MASK_LEVELS})
    """the ratio the band tests: rho_s per token (IcePop), the response's product (TRL's sequence_mask) or its
    geometric mean exp(mean_t log rho_s) (NeMo-RL's seq-mask-tis)"""
    sampler_mask_low: Optional[float] = field(default=0.5, metadata={"choices": (0.5, 0.97, None)})
    """a token whose tested ratio is below it gets GC 0 (IcePop's alpha 0.5); None: no lower bound"""
    sampler_mask_high: Optional[float] = field(default=5.0, metadata={"choices": (5.0, 1.03, None)})
    """a token whose tested ratio is above it gets GC 0 (IcePop's beta 5); None: no upper bound"""


def sampler_ratio(logp_old, sampler_logp, mask, level="token"):
    """rho_s = pi_old / pi_sampler: (B, T) per token; (B, 1) per response, the product ("sequence") or the
    geometric mean ("geometric") over the masked tokens.

    >>> old = torch.log(torch.tensor([[0.5, 0.2]])); s = torch.log(torch.tensor([[0.25, 0.4]]))
    >>> sampler_ratio(old, s, torch.ones(1, 2)), sampler_ratio(old, s, torch.ones(1, 2), "sequence")
    (tensor([[2.0000, 0.5000]]), tensor([[1.0000]]))
    """
    x = (logp_old - sampler_logp) * mask
    if level == "token":
        return torch.exp(x)
    if level == "sequence":
        return torch.exp(x.sum(-1, keepdim=True))
    if level == "geometric":
        return torch.exp(x.sum(-1, keepdim=True) / mask.sum(-1, keepdim=True).clamp(min=1))
    raise ValueError(f"unknown sampler ratio level {level!r}; choose one of {', '.join(MASK_LEVELS)}")


def truncated(rho, cap=None, floor=None):
    """min(max(rho, floor), cap), either bound None: none (TIS's weight).

    >>> truncated(torch.tensor([0.5, 1.5, 4.0]), cap=2.0)
    tensor([0.5000, 1.5000, 2.0000])
    """
    return rho if cap is None and floor is None else rho.clamp(min=floor, max=cap)


def in_band(rho, low=None, high=None):
    """1 where low <= rho <= high (a bound None: none), 0 elsewhere.

    >>> in_band(torch.tensor([0.4, 1.0, 6.0]), 0.5, 5.0)
    tensor([0., 1., 0.])
    """
    keep = torch.ones_like(rho, dtype=torch.bool)
    if low is not None:
        keep &= rho >= low
    if high is not None:
        keep &= rho <= high
    return keep.to(rho.dtype)


def _bound(v, name, low=0.0):
    x = v.setting(name)
    return None if x is None else _checks.scalar(x, name, low=low)


def _level(v, name, choices):
    level = v.setting(name, "token")
    if level not in choices:
        raise ValueError(f"unknown {name} {level!r}; choose one of {', '.join(choices)}")
    return level


def _tis(v, adv):
    rho = sampler_ratio(v.logp_old, v.sampler_logp, v.mask, _level(v, "sampler_correction_level", LEVELS))
    cap, floor = _bound(v, "sampler_correction_cap"), _bound(v, "sampler_correction_floor")
    if cap is not None and floor is not None and floor > cap:
        raise ValueError(f"sampler_correction_floor {floor} is above sampler_correction_cap {cap}")
    return truncated(rho, cap, floor).expand_as(v.mask)


def _tis_objective(v, adv):
    """min(max(pi_old / pi_sampler, floor), cap), of each token or of the response's product, written out."""
    log_rho = (v.logp_old - v.sampler_logp) * v.mask
    if v.setting("sampler_correction_level", "token") == "sequence":
        log_rho = log_rho.sum(-1, keepdim=True)
    w = torch.exp(log_rho)
    cap, floor = v.setting("sampler_correction_cap"), v.setting("sampler_correction_floor")
    w = torch.clamp(w, min=floor) if floor is not None else w
    w = torch.clamp(w, max=cap) if cap is not None else w
    return w * torch.ones_like(v.mask)


def _mis(v, adv):
    rho = sampler_ratio(v.logp_old, v.sampler_logp, v.mask, _level(v, "sampler_mask_level", MASK_LEVELS))
    return in_band(rho, _bound(v, "sampler_mask_low"), _bound(v, "sampler_mask_high")).expand_as(v.mask)


def _mis_objective(v, adv):
    """1 on the tokens whose ratio (token, product or geometric mean) lies in [low, high], written out."""
    d = (v.logp_old - v.sampler_logp) * v.mask
    level = v.setting("sampler_mask_level", "token")
    n = v.mask.sum(-1, keepdim=True).clamp(min=1)
    r = torch.exp({"token": d, "sequence": d.sum(-1, keepdim=True), "geometric": d.sum(-1, keepdim=True) / n}[level])
    low, high = v.setting("sampler_mask_low"), v.setting("sampler_mask_high")
    ok = (r >= (-float("inf") if low is None else low)) & (r <= (float("inf") if high is None else high))
    return ok.to(v.mask.dtype) * torch.ones_like(v.mask)


def derive_sampler_corrections(n):
    """PPO's unclipped term on one response, each token weighed by TIS's w_t or MIS's m_t (numbers of pi_old and
    pi_sampler): the weight multiplies the token's GC."""
    l, lo, ls = _one(n, "ell", "ell^old", "ell^s")
    A, c, low, h = sp.Symbol("A", real=True), sp.Symbol("C", positive=True), *sp.symbols("a h", positive=True)
    w = [sp.Min(sp.exp(y - s), c) for y, s in zip(lo, ls)]  # TIS: min(rho_s, C)
    m = [sp.Piecewise((1, (sp.exp(y - s) >= low) & (sp.exp(y - s) <= low + h)), (0, True)) for y, s in zip(lo, ls)]
    J = sum(wt * mt * A * sp.exp(x - y) for wt, mt, x, y in zip(w, m, l, lo)) / n
    gc = tuple(n * sp.diff(J, x) for x in l)
    hand = tuple(wt * mt * A * sp.exp(x - y) for wt, mt, x, y in zip(w, m, l, lo))
    same = dict(zip(ls, lo))  # the lab's sampler: pi_sampler = pi_old
    d = sp.Symbol("d", positive=True)
    claims = ((Text("with pi_sampler = pi_old and C >= 1 the weight is 1: the GC is A r"),
               hand[0].subs(same).subs({c: 1 + d, low: 1 / (1 + d), h: d}) - A * sp.exp(l[0] - lo[0])),
              (Text("a token whose rho_s is above the band's top gets GC 0"),
               hand[0].subs(ls[0], lo[0] - sp.log(low + h + d))))
    notes = (Text("rho_s = pi_old / pi_sampler is fixed before the update, so TIS's min(rho_s, C) and MIS's band "
                  "multiply the token's GC: GC = w_t m_t A r_t, the weight never differentiated."),)
    symbols = {"logp": l, "logp_old": lo, "sampler_logp": ls, "adv": A, "sampler_correction_cap": c}
    return Derivation("sampler_corrections", "TRL vllm_importance_sampling_mode; arXiv 2510.18855", J, gc, hand,
                      None, symbols, claims, notes=notes)


DERIVATIONS = {"sampler_corrections": derive_sampler_corrections}

MASKS.add("tis", gc=_tis, objective=_tis_objective, settings=TisSettings, derivation=derive_sampler_corrections,
          derivations=DERIVATIONS, aliases=("truncated-is",),
          summary="each token's GC times min(pi_old / pi_sampler, C): the sampler's tokens reweighted to the learner's",
          cite="Yao et al., 'Your Efficient RL Framework Secretly Brings You Off-Policy RL Training' (2025); TRL "
               "vllm_importance_sampling_mode token_truncate / sequence_truncate",
          ships_in=("TRL", "verl", "NeMo-RL"))
MASKS.add("mis", gc=_mis, objective=_mis_objective, settings=MisSettings, derivation=derive_sampler_corrections,
          aliases=("masked-is",),
          summary="GC 0 on the tokens whose pi_old / pi_sampler leaves a band [low, high] (IcePop with tis)",
          cite="IcePop, Ring-1T, arXiv 2510.18855; TRL vllm_importance_sampling_mode token_mask / sequence_mask; "
               "NeMo-RL seq-mask-tis", ships_in=("TRL", "verl", "NeMo-RL"))
