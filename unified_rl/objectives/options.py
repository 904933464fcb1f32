"""GRPO's objective with the options of TRL's GRPOConfig (1.16), written as TRL's loss reads.

Per token of the rows kept (mask_truncated_completions drops the rows cut at their budget):
    f_{i,t} = e_{i,t} o_{i,t} min(min(rho, delta) A, clip(rho, 1 - eps_low, 1 + eps_high) A) - beta k
with rho the token ratio or the sequence's exp(mean_t log ratio) (importance_sampling_level), e the
entropy mask (top_entropy_quantile), o the off-policy sequence mask (off_policy_mask_threshold), k the
k3 estimator (times rho with use_bias_correction_kl); J aggregates f by the loss type. The advantage is
written out from the rewards here (scale_rewards), not taken from `advantages`. No coefficient appears:
autograd of this J is the oracle for coefficients/options.py. Maximised.
"""

import torch

from .. import _checks
from .policy_gradient import _aggregate


def _advantage(rewards, group_size, mask, scale, eps):
    """(B, 1) r - group mean, over (group std + eps), (batch std + eps) or 1; 0 in an all-equal group."""
    r = _checks.per_sequence(rewards, "rewards", mask.shape[0]).double()
    groups = r.view(_checks.groups(mask.shape[0], group_size), group_size)
    centred = groups - groups.mean(-1, keepdim=True)
    equal = groups.amax(-1, keepdim=True) == groups.amin(-1, keepdim=True)
    if scale == "group":
        std = groups.std(-1, keepdim=True) if group_size > 1 else torch.zeros_like(groups[:, :1])
        centred = centred / (std + eps)
    elif scale == "batch":
        centred = centred / ((r.std() if r.numel() > 1 else 0.0) + eps)
    elif scale != "none":
        raise ValueError(f"unknown scale_rewards {scale!r}")
    return torch.where(equal, torch.zeros_like(centred), centred).view(-1, 1).to(mask.dtype)


def grpo_options(logp, logp_old, logp_ref, rewards, group_size, mask, beta, clip_eps, *, clip_eps_high=None,
                 delta=None, scale_rewards="group", eps=1e-6, level="token", aggregation="seq-mean-token-mean",
                 max_len=None, kl_ratio=False, truncated=None, entropy=None, top_entropy_quantile=1.0,
                 off_policy_mask_threshold=None, adv=None):
    """J of GRPO with TRL's options (module docstring); adv (B, T) replaces the rewards' advantage."""
    mask = _checks.response_mask(mask)
    logp = _checks.per_token(logp, "logp", mask)
    old = _checks.per_token(logp_old, "logp_old", mask)
    if truncated is not None:  # the rows the sampler cut leave the loss and every normaliser
        mask = mask * (~torch.as_tensor(truncated, dtype=torch.bool)).to(mask.dtype)[:, None]
    A = _advantage(rewards, group_size, mask, scale_rewards, eps) if adv is None else adv  # (B, 1) or (B, T)
    log_ratio = logp - old
    if level == "sequence":
        rho = torch.exp((log_ratio * mask).sum(-1, keepdim=True) / mask.sum(-1, keepdim=True).clamp(min=1))
    elif level == "token":
        rho = torch.exp(log_ratio)
    else:
        raise ValueError(f"unknown importance_sampling_level {level!r}")
    high = clip_eps if clip_eps_high is None else clip_eps_high
    clipped = torch.clamp(rho, 1 - clip_eps, 1 + high) * A
    first = (rho if delta is None else torch.clamp(rho, max=delta)) * A
    terms = torch.min(first, clipped) * torch.ones_like(mask)  # (B, T) also at the sequence level
    if off_policy_mask_threshold is not None:
        kl_seq = ((old - logp.detach()) * mask).sum(-1, keepdim=True) / mask.sum(-1, keepdim=True).clamp(min=1)
        terms = terms * ((A >= 0) | (kl_seq <= off_policy_mask_threshold)).to(mask.dtype)
    if top_entropy_quantile < 1.0:
        on = mask.bool()
        threshold = torch.quantile(entropy[on], 1 - top_entropy_quantile)
        terms = terms * ((entropy >= threshold) & on).to(mask.dtype)
    if logp_ref is not None:  # no pi_ref: no KL term
        x = _checks.per_token(logp_ref, "logp_ref", mask) - logp
        k = torch.exp(x) - x - 1  # k3
        terms = terms - beta * (rho * k if kl_ratio else k)
    return _aggregate(terms, mask, aggregation, group_size, max_len)
