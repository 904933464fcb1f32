"""The objectives J of DeepSeekMath's six methods (appendix A.1, eq 6-19), differentiable: the oracle.

These are written as the paper prints them, with no reference to gradient coefficients; the tests
check that autograd of each equals the gradient of `paradigm.surrogate_loss` with the method's GC.
All are to be maximised and average over the batch (per response 1/|o| sum_t, then mean over i).
"""

import torch
import torch.nn.functional as F

from .. import _checks, advantages, kl


def _per_response_mean(x, mask):
    """mean_i (1/|o_i|) sum_t x_it. (B, T) -> scalar"""
    return ((x * mask).sum(-1) / mask.sum(-1)).mean()


def sft(logp, mask):
    """Eq 6: J = E[(1/|o|) sum_t log pi_theta(o_t | q, o_<t)] over the SFT dataset."""
    mask = _checks.response_mask(mask)
    return _per_response_mean(_checks.per_token(logp, "logp", mask), mask)


def rft(logp, correct, mask):
    """Eq 8: J = E[(1/|o|) sum_t I(o) log pi_theta(o_t | ...)] over samples of the SFT model."""
    mask = _checks.response_mask(mask)
    correct = _checks.per_sequence(correct, "correct", mask.shape[0]).to(mask.dtype)
    return _per_response_mean(correct[:, None] * _checks.per_token(logp, "logp", mask), mask)


online_rft = rft  # eq 11: the same objective, evaluated on samples of the current policy


def dpo(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected, beta):
    """Eq 12: J = E[log sigmoid(beta x+ - beta x-)], x the length-normalised log-ratio to pi_ref."""
    mc, mr = _checks.response_mask(mask_chosen, "mask_chosen"), _checks.response_mask(mask_rejected, "mask_rejected")
    if mc.shape[0] != mr.shape[0]:
        raise ValueError(f"{mc.shape[0]} chosen responses but {mr.shape[0]} rejected ones: DPO needs pairs")
    beta = _checks.scalar(beta, "beta", low=0.0)
    x_c = ((_checks.per_token(logp_chosen, "logp_chosen", mc) - _checks.per_token(logp_ref_chosen, "logp_ref_chosen", mc))
           * mc).sum(-1) / mc.sum(-1)  # (B,)
    x_r = ((_checks.per_token(logp_rejected, "logp_rejected", mr) - _checks.per_token(logp_ref_rejected, "logp_ref_rejected", mr))
           * mr).sum(-1) / mr.sum(-1)  # (B,)
    return F.logsigmoid(beta * x_c - beta * x_r).mean()  # logsigmoid: finite for huge margins


def _clipped_surrogate(logp, logp_old, adv, mask, clip_eps):
    """min(r A, clip(r, 1-eps, 1+eps) A) per token; without clip_eps, r A (eq 16)."""
    ratio = torch.exp(logp - _checks.per_token(logp_old, "logp_old", mask))  # (B, T)
    if clip_eps is None:
        return ratio * adv
    clip_eps = _checks.scalar(clip_eps, "clip_eps", low=0.0)
    return torch.min(ratio * adv, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * adv)


def ppo(logp, logp_old, adv, mask, clip_eps):
    """Eq 15: J = E[(1/|o|) sum_t min(r_t A_t, clip(r_t, 1-eps, 1+eps) A_t)], r_t = pi_theta / pi_old."""
    mask = _checks.response_mask(mask)
    logp = _checks.per_token(logp, "logp", mask)
    adv = _checks.per_token(adv, "adv", mask)
    return _per_response_mean(_clipped_surrogate(logp, logp_old, adv, mask, clip_eps), mask)


def grpo(logp, logp_old, logp_ref, rewards, group_size, mask, beta, clip_eps, eps=1e-6, *, adv=None):
    """Eq 19 (with eq 3's clip): J = E[1/G sum_i (1/|o_i|) sum_t (min(r A-hat, clip(r) A-hat) - beta k3)].

    A-hat is group-relative from `rewards` (outcome supervision) or given as `adv` (B, T) (process).
    """
    mask = _checks.response_mask(mask)
    logp = _checks.per_token(logp, "logp", mask)
    beta = _checks.scalar(beta, "beta", low=0.0)
    if adv is None:
        adv = advantages.group_relative(rewards, group_size, eps)[:, None].to(mask.dtype).expand_as(mask)
        if adv.shape != mask.shape:
            raise ValueError(f"rewards has {adv.shape[0]} entries but mask has {mask.shape[0]} rows")
    else:
        _checks.groups(mask.shape[0], group_size)
        adv = _checks.per_token(adv, "adv", mask)
    penalty = kl.k3(logp, _checks.per_token(logp_ref, "logp_ref", mask))  # (B, T)
    return _per_response_mean(_clipped_surrogate(logp, logp_old, adv, mask, clip_eps) - beta * penalty, mask)
