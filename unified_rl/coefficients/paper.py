"""The gradient coefficients of DeepSeekMath's six methods (appendix A.1, eq 7-21).

GC is |o| times the derivative of the method's objective J with respect to log pi_theta(o_t | ...):
plug it into `paradigm.surrogate_loss` and the gradient is exactly grad J (tests/test_oracle.py).
Every function is pure, returns a detached (B, T) tensor that is 0 off the mask, and names the
equation it implements. Conventions and shapes: docs/ARCHITECTURE.md ("The core contract").
"""

import torch

from .. import _checks, advantages


def _mask(mask):
    return _checks.response_mask(mask).detach()


def _seq_mean(x, mask):
    """(1/|o|) sum_t x_t over the response tokens. (B, T) -> (B,)"""
    return (x * mask).sum(-1) / mask.sum(-1)


def sft(mask):
    """Eq 7: GC = 1 on every token of the human-written response.

    >>> sft(torch.tensor([[0., 1., 1.]]))
    tensor([[0., 1., 1.]])
    """
    return _mask(mask).clone()


def rft(correct, mask):
    """Eq 10: GC = I(o), 1 when the sampled answer is correct, else 0 (the sample is dropped).

    >>> rft(torch.tensor([1., 0.]), torch.ones(2, 2))
    tensor([[1., 1.],
            [0., 0.]])
    """
    mask = _mask(mask)
    correct = _checks.per_sequence(correct, "correct", mask.shape[0]).to(mask.dtype)
    if not ((correct == 0) | (correct == 1)).all():
        raise ValueError("correct must contain only 0 and 1 (the indicator I(o))")
    return correct.detach()[:, None] * mask  # (B, T), detached like every GC


def online_rft(correct, mask):
    """Eq 11: the same GC as RFT, I(o); only the data source differs (samples of the current policy)."""
    return rft(correct, mask)


def dpo(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected, beta):
    """Eq 14, exact: +c on chosen tokens, -c on rejected ones, c = beta * sigmoid(beta x- - beta x+).

    x = (1/|o|) sum_t log(pi_theta / pi_ref) is the length-normalised log-ratio of eq 12.
    The printed eq 14 omits the leading beta (it drops the chain rule's inner factor) and writes the
    sigmoid's argument per token; differentiating eq 12 gives the sequence-level form used here.
    Returns (coef_chosen, coef_rejected), each (B, T).

    >>> m = torch.ones(1, 2); z = torch.zeros(1, 2)
    >>> dpo(z, z, m, z, z, m, beta=0.1)[0]     # equal log-ratios: c = 0.1 * sigmoid(0)
    tensor([[0.0500, 0.0500]])
    """
    mc, mr = _mask(mask_chosen), _mask(mask_rejected)
    if mc.shape[0] != mr.shape[0]:
        raise ValueError(f"{mc.shape[0]} chosen responses but {mr.shape[0]} rejected ones: DPO needs pairs")
    beta = _checks.scalar(beta, "beta", low=0.0)
    x_c = _seq_mean(_checks.per_token(logp_chosen, "logp_chosen", mc).detach()
                    - _checks.per_token(logp_ref_chosen, "logp_ref_chosen", mc), mc)  # (B,)
    x_r = _seq_mean(_checks.per_token(logp_rejected, "logp_rejected", mr).detach()
                    - _checks.per_token(logp_ref_rejected, "logp_ref_rejected", mr), mr)  # (B,)
    c = beta * torch.sigmoid(beta * x_r - beta * x_c)  # (B,), finite for any finite margin
    return c[:, None] * mc, -c[:, None] * mr


def _clipped(adv, logp, logp_old, clip_eps, mask):
    """d/dlogp of min(r A, clip(r, 1-eps, 1+eps) A): r*A where the unclipped term is active, else 0."""
    ratio = torch.exp(_checks.per_token(logp, "logp", mask).detach()
                      - _checks.per_token(logp_old, "logp_old", mask))  # (B, T)
    clip_eps = _checks.scalar(clip_eps, "clip_eps", low=0.0)
    clipped = ((adv > 0) & (ratio > 1 + clip_eps)) | ((adv < 0) & (ratio < 1 - clip_eps))
    return torch.where(clipped, torch.zeros_like(adv), ratio * adv)


def ppo(adv, mask, *, logp=None, logp_old=None, clip_eps=None):
    """Eq 18: GC = A_t (from GAE), taken on-policy (pi_old = pi_theta) as the paper does.

    Given logp, logp_old and clip_eps it is the exact gradient of eq 15 off-policy as well:
    ratio * A_t inside the clip range and 0 where the clip is active.
    >>> ppo(torch.tensor([[0.5, -1.0]]), torch.ones(1, 2))
    tensor([[ 0.5000, -1.0000]])
    """
    mask = _mask(mask)
    adv = _checks.per_token(adv, "adv", mask).detach()
    if logp is not None or logp_old is not None or clip_eps is not None:
        if logp is None or logp_old is None or clip_eps is None:
            raise ValueError("the clipped PPO coefficient needs logp, logp_old and clip_eps together")
        adv = _clipped(adv, logp, logp_old, clip_eps, mask)
    return adv * mask


def grpo(rewards, group_size, logp, logp_ref, mask, beta, eps=1e-6, *, adv=None, logp_old=None, clip_eps=None):
    """Eq 21: GC = A-hat_{i,t} + beta * (pi_ref / pi_theta - 1).

    A-hat is the group-relative advantage of the rewards (outcome supervision); pass `adv` (B, T)
    instead for process supervision. The second term is the gradient of the k3 KL penalty of eq 19.
    With logp_old and clip_eps the advantage term becomes ratio * A-hat inside the clip range, 0 out.
    >>> m = torch.ones(2, 1); z = torch.zeros(2, 1)
    >>> grpo(torch.tensor([1., 0.]), 2, z, z, m, beta=0.04)
    tensor([[ 0.7071],
            [-0.7071]])
    """
    mask = _mask(mask)
    beta = _checks.scalar(beta, "beta", low=0.0)
    if adv is None:
        if rewards is None:
            raise ValueError("grpo needs rewards (outcome supervision) or adv (process supervision)")
        a = advantages.group_relative(rewards, group_size, eps)
        if a.shape[0] != mask.shape[0]:
            raise ValueError(f"rewards has {a.shape[0]} entries but mask has {mask.shape[0]} rows")
        adv = a[:, None].to(mask.dtype).expand_as(mask)  # (B, T)
    else:
        _checks.groups(mask.shape[0], group_size)
        adv = _checks.per_token(adv, "adv", mask)
    adv = adv.detach()
    if logp_old is not None or clip_eps is not None:
        if logp_old is None or clip_eps is None:
            raise ValueError("the clipped GRPO coefficient needs logp_old and clip_eps together")
        adv = _clipped(adv, logp, logp_old, clip_eps, mask)
    logp = _checks.per_token(logp, "logp", mask).detach()
    logp_ref = _checks.per_token(logp_ref, "logp_ref", mask).detach()
    kl_term = beta * torch.expm1(logp_ref - logp)  # beta * (pi_ref / pi - 1)
    return (adv + kl_term) * mask
