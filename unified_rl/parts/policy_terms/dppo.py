"""DPPO's two trust regions (verl's `dppo_tv`, `dppo_kl`): a mask on how far each token's probability moved.

    f_{i,t} = sg(min(r, C)) valid_{i,t} A log pi_theta(o_{i,t})        GC piece = min(r, C) valid A

PPO's clip reads the ratio r = pi_theta / pi_old, which swings wildly for rare tokens and barely moves for likely
ones. DPPO (Divergence PPO) bounds a divergence of the token's two-outcome distribution {p, 1 - p} instead, p =
pi_theta(o_t), q = pi_old(o_t), and drops (GC 0) a token that left it in the direction A pushes:

| part    | valid where A > 0                     | valid where A <= 0                     |
|---------|---------------------------------------|----------------------------------------|
| dppo_tv | p - q <= delta_high                   | p - q >= -delta_low                    |
| dppo_kl | kl(q, p) <= delta_high or p <= q      | kl(q, p) <= delta_low or p >= q        |

kl(q, p) = q log(q / p) + (1 - q) log((1 - q + 1e-8) / (1 - p + 1e-8)) (verl's 1e-8). Kept tokens carry the ratio
truncated at C as a stop-gradient weight (truncated importance sampling instead of a dual clip, §5.4); C None is no
truncation, the GC A r of prime-rl's and SkyRL's DPPO terms (the ratio with its gradient), which equals this one.
The reference distribution is pi_old here, as in verl (its old_log_prob, the sampler's in its bypass mode); SkyRL
and prime-rl take the sampler's log-probs (the paper's §5.2): in the lab the two are the same.
The mask is computed from the current p without gradient, as verl detaches it. verl's r = exp(log-ratio clamped to
[-20, 20]): the clamp binds only beyond a 4.8e8 ratio, and is left out here.
Qi et al., "Rethinking the Trust Region in LLM Reinforcement Learning", arXiv 2602.04879; verl core_algos.py
compute_policy_loss_dppo_tv / _dppo_kl (commit 1dda039b); prime-rl loss.py default_loss_fn; SkyRL dppo_policy_loss.
"""

from dataclasses import dataclass, field
from typing import Optional

import sympy as sp
import torch

from ... import _checks
from ...derivations.core import Derivation, _one
from ...text import Text
from ..registry import POLICY_TERMS

KL_EPS = 1e-8  # verl's guard in log((1 - q) / (1 - p))


@dataclass(frozen=True)
class TvSettings:
    dppo_tv_delta_low: float = 0.15
    """a token with A <= 0 whose probability fell by more than it gets GC 0 (verl's clip_ratio_low; 0.15 in verl's
    DPPO example, prime-rl's dppo_mask_low 0.2)"""
    dppo_tv_delta_high: float = 0.15
    """a token with A > 0 whose probability rose by more than it gets GC 0 (verl's clip_ratio_high)"""
    dppo_tv_ratio_cap: Optional[float] = field(default=None, metadata={"choices": (None, 1.1)})
    """C of the weight min(r, C) (verl's clip_ratio_c, 10000 in its DPPO example); None: none (prime-rl)"""


@dataclass(frozen=True)
class KlSettings:
    dppo_kl_delta_low: float = 0.05
    """a token with A <= 0 whose binary KL exceeds it, its probability fallen, gets GC 0 (verl's clip_ratio_low;
    0.05 in verl's DPPO example)"""
    dppo_kl_delta_high: float = 0.05
    """a token with A > 0 whose binary KL exceeds it, its probability risen, gets GC 0 (verl's clip_ratio_high)"""
    dppo_kl_ratio_cap: Optional[float] = field(default=None, metadata={"choices": (None, 1.1)})
    """C of the weight min(r, C) (verl's clip_ratio_c); None: none"""


def binary_kl(q, p, eps=KL_EPS):
    """KL({q, 1 - q} || {p, 1 - p}) from the two probabilities of the sampled token (verl's eps inside the second log).

    >>> binary_kl(torch.tensor([0.5]), torch.tensor([0.5]))
    tensor([0.])
    """
    return q * (torch.log(q) - torch.log(p)) + (1 - q) * torch.log((1 - q + eps) / (1 - p + eps))


def valid(adv, logp, logp_old, low, high, divergence="tv"):
    """(B, T) 1 where the token stays in DPPO's trust region for the direction A pushes it, else 0.

    >>> valid(torch.tensor([[1., -1.]]), torch.log(torch.tensor([[0.9, 0.1]])), torch.log(torch.tensor([[0.5, 0.5]])),
    ...       0.2, 0.2)   # p rose by 0.4 where A > 0, fell by 0.4 where A < 0: both out
    tensor([[0., 0.]])
    """
    p, q = torch.exp(logp), torch.exp(logp_old)
    if divergence == "tv":
        up, down = p - q <= high, p - q >= -low
    elif divergence == "kl":
        kl = binary_kl(q, p)
        up, down = (kl <= high) | (p <= q), (kl <= low) | (p >= q)
    else:
        raise ValueError(f"unknown DPPO divergence {divergence!r}; choose tv or kl")
    return torch.where(adv > 0, up, down).to(logp.dtype)


def dppo(adv, logp, logp_old, low, high, cap=None, divergence="tv"):
    """(B, T) the GC piece min(r, C) valid A, r = pi_theta / pi_old.

    >>> lp, old = torch.log(torch.tensor([[0.03, 0.6]])), torch.log(torch.tensor([[0.01, 0.4]]))
    >>> dppo(torch.ones(1, 2), lp, old, 0.15, 0.15)   # a rare token tripled (kept: it moved 0.02); 0.4 -> 0.6 dropped
    tensor([[3., 0.]])
    """
    r = torch.exp(logp - logp_old)
    w = r if cap is None else r.clamp(max=cap)
    return w * valid(adv, logp, logp_old, low, high, divergence) * adv


def _gc_of(divergence):
    def gc(v, adv, keep):
        name = f"dppo_{divergence}"
        low = _checks.scalar(v.setting(f"{name}_delta_low"), f"{name}_delta_low", low=0.0)
        high = _checks.scalar(v.setting(f"{name}_delta_high"), f"{name}_delta_high", low=0.0)
        cap = v.setting(f"{name}_ratio_cap")
        cap = None if cap is None else _checks.scalar(cap, f"{name}_ratio_cap", low=0.0)
        return dppo(adv, v.logp, v.logp_old, low, high, cap, divergence) * keep
    return gc


def _weight(v, name):
    cap = v.setting(f"{name}_ratio_cap")
    r = torch.exp(v.logp - v.logp_old)
    return (r if cap is None else torch.clamp(r, max=cap)).detach()


def objective_tv(v, adv):
    """sg(min(r, C)) A log pi on the tokens whose probability moved less than delta against A's push."""
    moved = (torch.exp(v.logp) - torch.exp(v.logp_old)).detach()
    ok = torch.where(adv > 0, moved <= v.setting("dppo_tv_delta_high"), moved >= -v.setting("dppo_tv_delta_low"))
    return _weight(v, "dppo_tv") * ok.to(v.mask.dtype) * adv * v.logp


def objective_kl(v, adv):
    """sg(min(r, C)) A log pi on the tokens whose binary KL to pi_old stays under delta (or moved A's way back)."""
    p, q = torch.exp(v.logp).detach(), torch.exp(v.logp_old)
    kl = q * (v.logp_old - v.logp.detach()) + (1 - q) * torch.log((1 - q + 1e-8) / (1 - p + 1e-8))
    ok = torch.where(adv > 0, (kl <= v.setting("dppo_kl_delta_high")) | (p <= q),
                     (kl <= v.setting("dppo_kl_delta_low")) | (p >= q))
    return _weight(v, "dppo_kl") * ok.to(v.mask.dtype) * adv * v.logp


def _region(divergence, x, y, high):
    """sympy's 1/0 of the trust region at ell = x, ell^old = y for A > 0."""
    p, q = sp.exp(x), sp.exp(y)
    if divergence == "tv":
        return sp.Piecewise((1, p - q <= high), (0, True))
    kl = q * (y - x) + (1 - q) * sp.log((1 - q + sp.Float(KL_EPS)) / (1 - p + sp.Float(KL_EPS)))
    return sp.Piecewise((1, (kl <= high) | (p <= q)), (0, True))


def derive_dppo(n, divergence="tv"):
    """DPPO on one response, A > 0: J = mean_t sg(min(r, C) valid) A ell_t, the weight held fixed by ell-bar."""
    l, lo, bar = _one(n, "ell", "ell^old", "ellbar")
    A, C, delta, d = sp.Symbol("A", positive=True), sp.Symbol("C", positive=True), *sp.symbols("delta d", positive=True)
    J = sum(sp.Min(sp.exp(b - y), C) * _region(divergence, b, y, delta) * A * x
            for b, y, x in zip(bar, lo, l)) / n
    back = dict(zip(bar, l))  # sg: differentiate in ell, then set ell-bar = ell
    gc = tuple((n * sp.diff(J, x)).subs(back) for x in l)
    hand = tuple(sp.Min(sp.exp(x - y), C) * _region(divergence, x, y, delta) * A for x, y in zip(l, lo))
    if divergence == "tv":
        out = {l[0]: sp.log(sp.exp(lo[0]) + delta + d)}  # p = q + delta + d
        said = Text("a token whose probability rose by more than delta gets GC 0 where A > 0")
    else:
        out = {l[0]: sp.log(sp.Rational(9, 10)), lo[0]: sp.log(sp.Rational(1, 2)), delta: sp.Rational(1, 20)}
        said = Text("a token that rose from 0.5 to 0.9 (binary KL 0.51 > delta = 0.05) gets GC 0 where A > 0")
    fell = {l[0]: lo[0] + sp.log(d / (1 + d))}  # p = q d / (1 + d) < q: A > 0 pushes it back up
    claims = ((said, hand[0].subs(out)),
              (Text("a token whose probability fell keeps its GC min(r, C) A where A > 0"),
               hand[0].subs(fell) - sp.Min(d / (1 + d), C) * A))
    if divergence == "tv":
        rare = hand[0].subs(l[0], sp.log(3 * sp.exp(lo[0]))).subs({lo[0]: sp.log(delta / 4), C: 4 + d})
        claims += ((Text("a rare token may triple (r = 3) and keep its GC 3 A: PPO's clip at 1 + eps would zero it"),
                    rare - 3 * A),)
    notes = (Text("The trust region bounds a divergence of the token's probability, not the ratio p / q: a token of "
                  "probability 0.01 may triple and keep its GC, one of probability 0.5 may not move far. The kept "
                  "tokens' weight min(r, C) is not differentiated, so the GC is min(r, C) A."),)
    name = f"dppo_{divergence}"
    return Derivation(name, f"arXiv 2602.04879; verl {name}", J, gc, hand, None,
                      {"adv": A, "logp": l, "logp_old": lo, f"{name}_delta_high": delta, f"{name}_ratio_cap": C},
                      claims, notes=notes)


def derive_dppo_kl(n):
    """DPPO-KL on one response, A > 0 (derive_dppo with the binary KL region)."""
    return derive_dppo(n, "kl")


_CITE = "DPPO, Qi et al., arXiv 2602.04879; verl {}"
POLICY_TERMS.add("dppo_tv", gc=_gc_of("tv"), objective=objective_tv, settings=TvSettings, reads_old=True,
                 derivation=derive_dppo, derivations={"dppo_tv": derive_dppo}, ships_in=("verl", "prime-rl", "SkyRL"),
                 summary="A r on the tokens whose probability moved less than delta against A's push: a TV trust region",
                 cite=_CITE.format("dppo_tv; prime-rl default_loss_fn"))
POLICY_TERMS.add("dppo_kl", gc=_gc_of("kl"), objective=objective_kl, settings=KlSettings, reads_old=True,
                 derivation=derive_dppo_kl, derivations={"dppo_kl": derive_dppo_kl}, ships_in=("verl", "SkyRL"),
                 summary="A r on the tokens whose binary KL to pi_old stays under delta: a KL trust region",
                 cite=_CITE.format("dppo_kl"))
