"""VESPO (TRL's `vespo`): a stop-gradient Gamma weight phi(W) of the sequence's ratio on A log pi.

    f_{i,t} = sg(phi(W_i)) A log pi_theta(o_{i,t}),  phi(W) = e^lambda W^k e^(-lambda W),  W_i = prod_t r_{i,t}

(k, lambda) by A >= 0 or A < 0, token by token (one sign per response where A is the response's, as in GRPO's);
phi(1) = 1, so on-policy it is A; never a hard 0. GC piece = phi(W_i) A. VESPO: arXiv 2602.10693.
"""

from dataclasses import dataclass

import sympy as sp
import torch

from ...derivations.core import Derivation, _one, _ragged_gc
from ...text import Text
from ..registry import POLICY_TERMS


@dataclass(frozen=True)
class Settings:
    """VESPO's Gamma weight (TRL's defaults)."""

    vespo_k_pos: float = 2.0
    """phi's power where A >= 0: how fast W < 1 is down-weighted"""
    vespo_lambda_pos: float = 3.0
    """phi's decay where A >= 0: how fast W > 1 is down-weighted"""
    vespo_k_neg: float = 3.0
    """phi's power where A < 0"""
    vespo_lambda_neg: float = 2.0
    """phi's decay where A < 0"""


def phi(adv, log_ratio, mask, k_pos=2.0, lambda_pos=3.0, k_neg=3.0, lambda_neg=2.0):
    """(B, T) phi(W) = exp(lambda + k log W - lambda W), W = exp(sum_t log r) clamped to [1e-8, e^20] (the
    log-ratios to [-20, 20] first), (k, lambda) by each token's A >= 0 or A < 0; phi(1) = 1."""
    log_w = (log_ratio.clamp(-20.0, 20.0) * mask).sum(-1, keepdim=True)
    log_w = log_w.clamp(torch.log(torch.tensor(1e-8, dtype=mask.dtype)).item(), 20.0)  # (B, 1)
    k = torch.where(adv >= 0, torch.full_like(adv, k_pos), torch.full_like(adv, k_neg))
    lam = torch.where(adv >= 0, torch.full_like(adv, lambda_pos), torch.full_like(adv, lambda_neg)).clamp(min=1e-4)
    return torch.exp(lam + k * log_w - lam * torch.exp(log_w))


def _args(v):
    return tuple(v.setting(f"vespo_{k}") for k in ("k_pos", "lambda_pos", "k_neg", "lambda_neg"))


def _gc(v, adv, keep):
    return phi(adv, v.log_ratio(), v.mask, *_args(v)) * adv * keep


def objective(v, adv):
    """sg(phi(W)) A log pi, W = prod_t r written out."""
    k_pos, lambda_pos = v.setting("vespo_k_pos"), v.setting("vespo_lambda_pos")
    k_neg, lambda_neg = v.setting("vespo_k_neg"), v.setting("vespo_lambda_neg")
    log_w = ((v.logp - v.logp_old).clamp(-20, 20) * v.mask).sum(-1, keepdim=True)
    log_w = log_w.clamp(float(torch.log(torch.tensor(1e-8))), 20)
    k = torch.where(adv >= 0, torch.full_like(adv, k_pos), torch.full_like(adv, k_neg))  # by each token's A
    lam = torch.where(adv >= 0, torch.full_like(adv, lambda_pos), torch.full_like(adv, lambda_neg))
    w = (torch.exp(lam) * torch.exp(log_w) ** k * torch.exp(-lam * torch.exp(log_w))).detach()  # sg(phi)
    return w * adv * v.logp


K, LAM = sp.Symbol("k", positive=True), sp.Symbol("lambda", positive=True)


def derive_vespo(n):
    """One response: sg(phi(W)) A ell per token (batch-token-mean), W the product of its ratios; sg via ell-bar."""
    l, lo, bar = _one(n, "ell", "ell^old", "ellbar")
    A = sp.Symbol("A", real=True)
    W = sp.exp(sum(b - y for b, y in zip(bar, lo)))  # sg: the sequence's product of ratios
    phi = sp.exp(LAM) * W ** K * sp.exp(-LAM * W)
    J = phi * A * sum(l) / n  # batch-token-mean of one response
    gc = tuple(g.subs(dict(zip(bar, l))) for g in _ragged_gc(J, (l,)))
    W_l = sp.exp(sum(x - y for x, y in zip(l, lo)))
    hand = tuple(sp.exp(LAM) * W_l ** K * sp.exp(-LAM * W_l) * A for _ in l)
    claims = ((Text("phi(1) = 1: at pi_old = pi_theta the GC is A"), (hand[0] - A).subs(dict(zip(lo, l)))),)
    notes = (Text("phi(W) = e^lambda W^k e^(-lambda W) weighs A log pi without being differentiated: the GC is "
                  "phi(W_i) A_i on every token, largest at W = k / lambda and never a hard 0."),)
    return Derivation("vespo", "arXiv 2602.10693", J, gc, hand, None,
                      {"adv": A, "logp": l, "logp_old": lo, "k": K, "lambda": LAM}, claims, notes=notes)


POLICY_TERMS.add("vespo", gc=_gc, objective=objective, settings=Settings, reads_old=True,
                 summary="a stop-gradient Gamma weight of the sequence's ratio on A log pi",
                 cite="VESPO, arXiv 2602.10693", ships_in=("TRL",), derivation=derive_vespo,
                 derivations={"vespo": derive_vespo})
