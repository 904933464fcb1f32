"""The objectives J of SAPO, VESPO, GMPO, Clip-Cov and KL-Cov, written as their papers (and verl/TRL) print them.

No gradient coefficient appears: stop-gradients are `.detach()`, clips are `torch.clamp` and `torch.min`,
and the tokens Clip-Cov and KL-Cov single out are chosen here from the covariance the paper defines.
Autograd of each J is the oracle for coefficients/ratio_shapes.py. All are maximised.
"""

import torch

from .. import _checks
from .policy_gradient import _aggregate


def _setup(logp, logp_old, adv, mask):
    mask = _checks.response_mask(mask)
    logp = _checks.per_token(logp, "logp", mask)
    return logp, _checks.per_token(logp_old, "logp_old", mask), _checks.per_token(adv, "adv", mask), mask


def sapo(logp, logp_old, adv, mask, tau_pos=1.0, tau_neg=1.05, aggregation="seq-mean-token-mean",
         group_size=None, max_len=None):
    """SAPO (arXiv 2511.20347): J = agg(f(r) A), f(r) = 4/tau sigmoid(tau (r - 1)), tau = tau_pos if A > 0 else tau_neg."""
    logp, old, adv, mask = _setup(logp, logp_old, adv, mask)
    tau = torch.where(adv > 0, torch.full_like(adv, tau_pos), torch.full_like(adv, tau_neg))
    gate = torch.sigmoid(tau * (torch.exp(logp - old) - 1)) * 4 / tau
    return _aggregate(gate * adv, mask, aggregation, group_size, max_len)


def vespo(logp, logp_old, adv, mask, k_pos=2.0, lambda_pos=3.0, k_neg=3.0, lambda_neg=2.0,
          aggregation="batch-token-mean", group_size=None, max_len=None):
    """VESPO (arXiv 2602.10693): J = agg(sg(phi(W)) A log pi), phi(W) = e^lambda W^k e^(-lambda W), W = prod_t r."""
    logp, old, adv, mask = _setup(logp, logp_old, adv, mask)
    log_w = ((logp - old).clamp(-20, 20) * mask).sum(-1, keepdim=True).clamp(float(torch.log(torch.tensor(1e-8))), 20)
    a = (adv * mask).sum(-1, keepdim=True) / mask.sum(-1, keepdim=True)  # (B, 1)
    k = torch.where(a >= 0, torch.full_like(a, k_pos), torch.full_like(a, k_neg))
    lam = torch.where(a >= 0, torch.full_like(a, lambda_pos), torch.full_like(a, lambda_neg))
    phi = (torch.exp(lam) * torch.exp(log_w) ** k * torch.exp(-lam * torch.exp(log_w))).detach()  # sg(phi)
    return _aggregate(phi * adv * logp, mask, aggregation, group_size, max_len)


def gmpo(logp, logp_old, adv, mask, clip_eps=0.4, clip_eps_high=None):
    """GMPO (arXiv 2507.20673): J = mean_i A_i (prod_t clip(r_t))^(1/|o_i|), each log r clipped to
    [-eps_low, eps_high] only where that lowers A's objective (sgn(A) min(sgn(A) log r, sgn(A) clip))."""
    logp, old, adv, mask = _setup(logp, logp_old, adv, mask)
    high = clip_eps if clip_eps_high is None else clip_eps_high
    n = mask.sum(-1)
    a = (adv * mask).sum(-1) / n  # (B,) the sequence's advantage
    sign = torch.sign(a)[:, None]
    lr = logp - old
    c = sign * torch.min(sign * lr, sign * torch.clamp(lr, -clip_eps, high))
    return (a * torch.exp((c * mask).sum(-1) / n)).mean()


def _covariance(adv, logp, mask):
    on = mask.bool()
    n = on.sum().to(adv.dtype)
    return (adv - adv[on].sum() / n) * (logp.detach() - logp.detach()[on].sum() / n)


def clip_cov(logp, logp_old, adv, mask, clip_eps=0.2, clip_eps_high=None, ratio=2e-4, lb=1.0, ub=5.0,
             seed=0, aggregation="batch-token-mean", group_size=None, max_len=None):
    """Clip-Cov (arXiv 2505.22617, §4): J = agg(corr min(r A, clip(r) A)), corr = 0 on max(1, int(ratio N))
    tokens drawn at random among the unclipped ones whose covariance (A - mean A)(log pi - mean log pi) is
    in (lb, ub). The draw: a torch.randperm of the candidates (row-major) with a generator seeded by `seed`."""
    logp, old, adv, mask = _setup(logp, logp_old, adv, mask)
    high = clip_eps if clip_eps_high is None else clip_eps_high
    r = torch.exp(logp - old)
    plain, clipped = r * adv, torch.clamp(r, 1 - clip_eps, 1 + high) * adv
    cov = _covariance(adv, logp, mask)
    candidates = ((cov > lb) & (cov < ub) & mask.bool() & ~(clipped.detach() < plain.detach())).flatten().nonzero().flatten()
    g = torch.Generator().manual_seed(seed)
    n = max(int(ratio * mask.sum().item()), 1)
    corr = torch.ones(mask.numel(), dtype=mask.dtype)
    corr[candidates[torch.randperm(len(candidates), generator=g)[:n]]] = 0
    return _aggregate(corr.view_as(mask) * torch.min(plain, clipped), mask, aggregation, group_size, max_len)


def kl_cov(logp, logp_old, adv, mask, ratio=2e-4, coef=1.0, aggregation="batch-token-mean", group_size=None,
           max_len=None):
    """KL-Cov (arXiv 2505.22617, §4): J = agg(r A - coef |log r| on the max(1, int(ratio N)) tokens of
    largest covariance), no clip."""
    logp, old, adv, mask = _setup(logp, logp_old, adv, mask)
    cov = _covariance(adv, logp, mask).masked_fill(~mask.bool(), -torch.inf)
    n = max(int(ratio * mask.sum().item()), 1)
    top = torch.zeros(mask.numel(), dtype=mask.dtype)
    top[cov.flatten().topk(n).indices] = 1
    terms = torch.exp(logp - old) * adv - coef * top.view_as(mask) * (logp - old).abs()
    return _aggregate(terms, mask, aggregation, group_size, max_len)
