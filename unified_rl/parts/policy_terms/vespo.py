"""VESPO (TRL's `vespo`): a stop-gradient Gamma weight phi(W) of the sequence's ratio on A log pi.

    f_{i,t} = sg(phi(W_i)) A log pi_theta(o_{i,t}),  phi(W) = e^lambda W^k e^(-lambda W),  W_i = prod_t r_{i,t}

(k, lambda) by A >= 0 or A < 0; phi(1) = 1, so on-policy it is A; never a hard 0. GC piece = phi(W_i) A.
VESPO: arXiv 2602.10693.
"""

from dataclasses import dataclass

import torch

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
    """(B, 1) phi(W) = exp(lambda + k log W - lambda W), W = exp(sum_t log r) clamped to [1e-8, e^20] (the
    log-ratios to [-20, 20] first), (k, lambda) by the row's A >= 0 or A < 0; phi(1) = 1."""
    log_w = (log_ratio.clamp(-20.0, 20.0) * mask).sum(-1, keepdim=True)
    log_w = log_w.clamp(torch.log(torch.tensor(1e-8, dtype=mask.dtype)).item(), 20.0)  # (B, 1)
    a = adv[torch.arange(adv.shape[0]), mask.argmax(-1)][:, None]  # (B, 1) the row's advantage
    k = torch.where(a >= 0, torch.full_like(a, k_pos), torch.full_like(a, k_neg))
    lam = torch.where(a >= 0, torch.full_like(a, lambda_pos), torch.full_like(a, lambda_neg)).clamp(min=1e-4)
    return torch.exp(lam + k * log_w - lam * torch.exp(log_w))


def _args(v):
    return tuple(v.setting(f"vespo_{k}") for k in ("k_pos", "lambda_pos", "k_neg", "lambda_neg"))


def _gc(v, adv, keep):
    return phi(adv, v.log_ratio(), v.mask, *_args(v)) * adv * keep


def objective(v, adv):
    """sg(phi(W)) A log pi, W = prod_t r written out."""
    k_pos, lambda_pos, k_neg, lambda_neg = _args(v)
    log_w = ((v.logp - v.logp_old).clamp(-20, 20) * v.mask).sum(-1, keepdim=True)
    log_w = log_w.clamp(float(torch.log(torch.tensor(1e-8))), 20)
    a = (adv * v.mask).sum(-1, keepdim=True) / v.mask.sum(-1, keepdim=True)  # (B, 1)
    k = torch.where(a >= 0, torch.full_like(a, k_pos), torch.full_like(a, k_neg))
    lam = torch.where(a >= 0, torch.full_like(a, lambda_pos), torch.full_like(a, lambda_neg))
    w = (torch.exp(lam) * torch.exp(log_w) ** k * torch.exp(-lam * torch.exp(log_w))).detach()  # sg(phi)
    return w * adv * v.logp


def _derive(n):
    from ...derivations.ratio_shapes import REGISTRY
    return REGISTRY["vespo"](n)


POLICY_TERMS.add("vespo", gc=_gc, objective=objective, settings=Settings, reads_old=True,
                 summary="a stop-gradient Gamma weight of the sequence's ratio on A log pi",
                 cite="VESPO, arXiv 2602.10693", ships_in=("TRL",), derivation=_derive)
