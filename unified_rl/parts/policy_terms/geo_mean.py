"""GMPO (verl's `geo_mean`): the geometric mean of the token ratios, each clipped in log space.

    J_i = A_i exp(mean_t c_{i,t}),  c = sgn(A) min(sgn(A) log r, sgn(A) clip(log r, -eps_low, eps_high))

Each log-ratio is clipped on the side A's sign makes pessimistic, as PPO's min does. GC piece = A_i rho_i on the
tokens whose log-ratio is not clipped, 0 on the others, rho_i = exp(mean_t c). It is a per-sequence objective:
the per-token f is J_i on every token of o_i (the mean over tokens leaves it), so a token mask keep scales the
whole row's GC by the row's mean of keep.
GMPO: Zhao et al., arXiv 2507.20673.
"""

from dataclasses import dataclass

import sympy as sp
import torch

from ...derivations.core import Derivation, EPS_HIGH, EPS_LOW, _one, _ragged_gc, clip
from ...text import Text
from ..registry import POLICY_TERMS
from .vanilla import clip_range


@dataclass(frozen=True)
class Settings:
    """GMPO's clip, in log space (the paper's range (e^-0.4, e^0.4))."""

    gmpo_clip_eps: float = 0.4
    """log r >= -0.4 where A < 0"""
    gmpo_clip_eps_high: float = 0.4
    """log r <= 0.4 where A > 0"""


def _gc(v, adv, keep):
    low, high = clip_range(v.setting("gmpo_clip_eps"), v.setting("gmpo_clip_eps_high"))
    lr = v.log_ratio()  # (B, T)
    a = v.seq_mean(adv)  # (B, 1) the sequence's A
    sign = torch.sign(a)
    c = sign * torch.minimum(sign * lr, sign * lr.clamp(-low, high))
    rho = torch.exp(v.seq_mean(c))  # (B, 1)
    moves = ((a > 0) & (lr <= high)) | ((a < 0) & (lr >= -low))
    # J_i sits on every token: sum_t keep_t J_i pushes each token by the row's mean of keep, not by its own
    return torch.where(moves, a * rho, torch.zeros_like(lr)).expand_as(v.mask) * v.seq_mean(keep)


def objective(v, adv):
    """A_i (prod_t clip(r_t))^(1/|o_i|) on every token of o_i."""
    low, high = v.setting("gmpo_clip_eps"), v.setting("gmpo_clip_eps_high")
    n = v.mask.sum(-1).clamp(min=1)  # a row the loss left out (truncated) has none
    a = (adv * v.mask).sum(-1) / n  # (B,)
    sign = torch.sign(a)[:, None]
    lr = v.logp - v.logp_old
    c = sign * torch.min(sign * lr, sign * torch.clamp(lr, -low, high))
    return (a * torch.exp((c * v.mask).sum(-1) / n))[:, None] * torch.ones_like(v.mask)


def derive_gmpo(n):
    """One response: A exp(mean_t c_t), each log-ratio clipped on A's pessimistic side; the cases put the first token
    above, inside or below the clip and the others inside."""
    l, lo = _one(n, "ell", "ell^old")
    A = sp.Symbol("A", real=True)
    lr = [x - y for x, y in zip(l, lo)]
    c = [sp.sign(A) * sp.Min(sp.sign(A) * x, sp.sign(A) * clip(x, -EPS_LOW, EPS_HIGH)) for x in lr]
    J = A * sp.exp(sum(c) / n)
    c_hand = [sp.Piecewise((EPS_HIGH, (A > 0) & (x > EPS_HIGH)), (-EPS_LOW, (A < 0) & (x < -EPS_LOW)), (x, True))
              for x in lr]
    rho = sp.exp(sum(c_hand) / n)
    hand = tuple(sp.Piecewise((0, ((A > 0) & (x > EPS_HIGH)) | ((A < 0) & (x < -EPS_LOW))), (A * rho, True))
                 for x in lr)
    a, u, d = sp.symbols("a u d", positive=True)
    where = {"log r > eps_high": EPS_HIGH + d, "-eps_low < log r < eps_high": -EPS_LOW + (EPS_LOW + EPS_HIGH) * u / (1 + u),
             "log r < -eps_low": -EPS_LOW - d}
    inside = where["-eps_low < log r < eps_high"]
    cases = tuple((Text("{sign}, {ratio}", sign=sn, ratio=rn),  # the first token in the region, the others inside
                   {A: sv, **{x: y + (v if t == 0 else inside) for t, (x, y) in enumerate(zip(l, lo))}})
                  for sn, sv in (("A > 0", a), ("A < 0", -a)) for rn, v in where.items())
    notes = (Text("The sequence's weight is the geometric mean of its token ratios, each clipped in log space on "
                  "the side A's sign makes pessimistic; d/d ell_t of exp(mean_t c) is rho / |o|, so the GC is A rho "
                  "on the tokens whose log-ratio is inside the clip and 0 on the others."),)
    symbols = {"adv": A, "logp": l, "logp_old": lo, "clip_eps": EPS_LOW, "clip_eps_high": EPS_HIGH}
    return Derivation("gmpo", "arXiv 2507.20673", J, _ragged_gc(J, (l,)), hand, None, symbols, cases=cases, notes=notes)


POLICY_TERMS.add("geo_mean", gc=_gc, objective=objective, settings=Settings, reads_old=True,
                 summary="the geometric mean of token ratios clipped in log space, per sequence",
                 cite="GMPO, Zhao et al., arXiv 2507.20673", aliases=("gmpo",), ships_in=("verl",),
                 derivation=derive_gmpo, derivations={"gmpo": derive_gmpo})
