"""GRPO's options as TRL's GRPOConfig (1.16) and verl expose them, each one change to the GC.

TRL's loss for loss_type in grpo, bnpo, dr_grpo, dapo, luspo is, per token of the rows it keeps,
    f_{i,t} = keep_{i,t} min(min(rho, delta) A_i, clip(rho, 1 - eps_low, 1 + eps_high) A_i) - beta kl_{i,t}
aggregated by the loss type (`aggregation_weight`). GC = B |o_i| dJ/dlogp_{i,t} (eq 5), so each option is:

| option (TRL's name)             | in the GC                                                              |
|---------------------------------|------------------------------------------------------------------------|
| scale_rewards                   | A_i = r - group mean over the group's std, the batch's, or nothing     |
| epsilon_high (clip_eps_high)    | the upper clip bound (DAPO's clip-higher)                              |
| delta                           | A < 0 and rho > delta: 0 (INTELLECT-2's two-sided clip, arXiv 2505.07291; verl's dual-clip clip_ratio_c, arXiv 1912.09729) |
| importance_sampling_level       | rho = r_{i,t}, or the sequence's s_i = exp(mean_t log r) on every token (GSPO) |
| loss_type                       | the row factor w_i: seq-mean-token-mean (grpo), batch-token-mean (dapo; bnpo on one micro-batch), constant L (dr_grpo: max_completion_length; luspo: 1) |
| use_bias_correction_kl          | the KL term of r k3 instead of k3 (kl.gc; DeepSeek-V3.2, arXiv 2512.02556) |
| mask_truncated_completions      | 0 on rows the sampler cut at their budget; they leave every normaliser (DAPO §3.4) |
| top_entropy_quantile rho_H      | 0 below the (1 - rho_H) quantile of the tokens' entropies (arXiv 2506.01939) |
| off_policy_mask_threshold delta | 0 on a row with A < 0 whose mean log(pi_old / pi_theta) > delta (DeepSeek-V3.2, eq 9) |

Two conventions differ from TRL and are said where they act: the entropies ranked are the sampler's
(pi_old in the lab; TRL recomputes pi_theta's at each update, so the two agree on a batch's first
update), and A's eps is 1e-6 unless set (TRL's is 1e-4). Every function is pure and returns detached
(B, T) tensors, 0 off the mask; objectives/options.py writes the same J without them.
"""

import torch

from .. import _checks, advantages
from ..kl.estimators import k3
from .paper import _mask
from .policy_gradient import _out, aggregation_weight

LEVELS = ("token", "sequence")  # TRL's importance_sampling_level


def kept_rows(mask, truncated=None):
    """The mask of the rows the loss keeps: `truncated` (B,) bool rows set to 0 (mask_truncated_completions)."""
    mask = _mask(mask)
    if truncated is None:
        return mask
    truncated = torch.as_tensor(truncated, dtype=torch.bool, device=mask.device)
    if truncated.shape != (mask.shape[0],):
        raise ValueError(f"truncated must be ({mask.shape[0]},) booleans, got shape {tuple(truncated.shape)}")
    return mask * (~truncated).to(mask.dtype)[:, None]


def entropy_mask(entropy, mask, quantile, across=None):
    """1 on the tokens whose entropy is at least the (1 - quantile) quantile of the masked tokens' (TRL's
    top_entropy_quantile, arXiv 2506.01939: the paper keeps the top 20 %); quantile 1 keeps every token.

    >>> entropy_mask(torch.tensor([[0.1, 0.5, 0.9, 0.3]]), torch.ones(1, 4), 0.5)
    tensor([[0., 1., 1., 0.]])
    """
    quantile = _checks.scalar(quantile, "top_entropy_quantile", low=0.0, high=1.0)
    if quantile == 1.0:
        return mask.clone()
    if entropy is None:
        raise ValueError("top_entropy_quantile < 1 needs the entropy of each token (a sampled Rollout's entropy)")
    entropy = _checks.per_token(entropy, "entropy", mask).detach()
    on = mask.bool()
    values = entropy[on]
    if across is not None:  # the quantile of every rank's tokens (TRL gathers them across processes too)
        values, _ = across.gather(values)
    if values.numel() == 0:
        return torch.zeros_like(mask)
    threshold = torch.quantile(values, 1 - quantile)
    return ((entropy >= threshold) & on).to(mask.dtype)


def off_policy_rows(adv, logp, logp_old, mask, threshold):
    """1 where the loss keeps a token: A >= 0, or its row's mean_t log(pi_old / pi_theta) <= threshold
    (DeepSeek-V3.2's off-policy sequence mask, arXiv 2512.02556 eq 9); threshold None keeps every token.

    >>> m = torch.ones(2, 2); old = torch.zeros(2, 2); lp = torch.full((2, 2), -1.0)   # KL 1 on each row
    >>> off_policy_rows(torch.tensor([[1.] * 2, [-1.] * 2]), lp, old, m, 0.5)
    tensor([[1., 1.],
            [0., 0.]])
    """
    if threshold is None:
        return torch.ones_like(mask)
    threshold = _checks.scalar(threshold, "off_policy_mask_threshold", low=0.0)
    kl = _sequence(logp_old - logp.detach(), mask)  # (B, 1)
    return ((adv >= 0) | (kl <= threshold)).to(mask.dtype)


def _sequence(x, mask):
    """(B, 1) mean over each row's tokens (0 for a row with none)."""
    return (x * mask).sum(-1, keepdim=True) / mask.sum(-1, keepdim=True).clamp(min=1)


def ratio_of(logp, logp_old, mask, level="token"):
    """rho: the token ratio pi_theta / pi_old (B, T), or the sequence's s_i = exp(mean_t log ratio) (B, 1)."""
    if level not in LEVELS:
        raise ValueError(f"unknown importance_sampling_level {level!r}; choose one of {', '.join(LEVELS)}")
    log_ratio = _checks.per_token(logp, "logp", mask).detach() - _checks.per_token(logp_old, "logp_old", mask)
    return torch.exp(log_ratio if level == "token" else _sequence(log_ratio, mask))


def policy_term(adv, ratio, mask, low, high, delta=None, keep=None):
    """d/dlogp of keep * min(min(rho, delta) A, clip(rho, 1-low, 1+high) A), per token, before the row factor.

    rho is (B, T) (token level) or (B, 1) (sequence level: d s_i/dlogp_{i,t} = s_i/|o_i|, so the GC of
    every token of a row is the row's mean of rho A over its kept tokens, or 0 where clipped).
    >>> m = torch.ones(2, 1); a = torch.tensor([[1.], [-1.]]); r = torch.tensor([[2.], [2.]])
    >>> policy_term(a, r, m, 0.2, 0.2, delta=1.5)   # A > 0 clipped above; A < 0 cut by delta
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
        g = _sequence(g, mask).expand_as(mask)
    return g


def kl_term(logp, logp_ref, mask, beta, ratio=None):
    """The GC of -beta k3 (eq 21), or of -beta rho k3 (use_bias_correction_kl) with rho the token ratio
    (B, T): beta rho x, x = log(pi_ref/pi); or the sequence ratio (B, 1): beta s (e^x - 1 - mean_t k3)."""
    x = _checks.per_token(logp_ref, "logp_ref", mask).detach() - logp.detach()  # (B, T) log pi_ref / pi
    if ratio is None:
        return beta * torch.expm1(x)
    if ratio.shape[-1] == 1 and mask.shape[-1] != 1:
        return beta * ratio * (torch.expm1(x) - _sequence(k3(logp.detach(), logp_ref.detach()), mask))
    return beta * ratio * x


def grpo_options(rewards, group_size, logp, logp_ref, mask, beta, *, logp_old=None, clip_eps=0.2,
                 clip_eps_high=None, delta=None, scale_rewards="group", eps=1e-6, level="token",
                 aggregation="seq-mean-token-mean", max_len=None, kl_ratio=False, truncated=None, entropy=None,
                 top_entropy_quantile=1.0, off_policy_mask_threshold=None, adv=None, across=None):
    """Eq 21 with the options of TRL's GRPOConfig and verl, each off by default (then exactly `grpo`).

    The options: the table in this module's docstring.
    rewards (B,) or adv (B, T) (process supervision); logp_old None: on-policy (rho = 1); truncated (B,)
    bool and entropy (B, T): what the sampler recorded (sampling.Rollout). clip_eps_high None: = clip_eps.
    across: the rows are one rank's share (distributed.across): the batch's statistics are every rank's.
    >>> m = torch.ones(2, 2); z = torch.zeros(2, 2)
    >>> grpo_options(torch.tensor([1., 0.]), 2, z, z, m, 0.0, scale_rewards="none")  # A = r - mean
    tensor([[ 0.5000,  0.5000],
            [-0.5000, -0.5000]])
    """
    mask = _mask(mask)
    beta = _checks.scalar(beta, "beta", low=0.0)
    low = _checks.scalar(clip_eps, "clip_eps", low=0.0)
    high = low if clip_eps_high is None else _checks.scalar(clip_eps_high, "clip_eps_high", low=0.0)
    if delta is not None:
        delta = _checks.scalar(delta, "delta", low=0.0)
    if adv is None:
        a = advantages.scaled(rewards, group_size, scale_rewards, eps, across)
        if a.shape[0] != mask.shape[0]:
            raise ValueError(f"rewards has {a.shape[0]} entries but mask has {mask.shape[0]} rows")
        adv = a[:, None].to(mask.dtype).expand_as(mask)  # (B, T)
    else:
        _checks.groups(mask.shape[0], group_size)
        adv = _checks.per_token(adv, "adv", mask)
    adv = adv.detach()
    logp = _checks.per_token(logp, "logp", mask).detach()
    logp_old = logp if logp_old is None else _checks.per_token(logp_old, "logp_old", mask).detach()
    kept = kept_rows(mask, truncated)  # (B, T) the tokens every normaliser counts
    keep = entropy_mask(entropy, kept, top_entropy_quantile, across) * off_policy_rows(
        adv, logp, logp_old, kept, off_policy_mask_threshold)
    ratio = ratio_of(logp, logp_old, kept, level)  # (B, T) or (B, 1)
    term = policy_term(adv, ratio, kept, low, high, delta, keep)
    if logp_ref is not None:  # a method without pi_ref (beta = 0) has no KL term
        term = term + kl_term(logp, logp_ref, kept, beta, ratio if kl_ratio else None)
    elif beta > 0:
        raise ValueError("beta > 0 needs logp_ref (the KL penalty's reference log-probs)")
    w = aggregation_weight(kept, aggregation, group_size=group_size, max_len=max_len, across=across)  # (B, 1)
    return _out(w * term * kept, mask)
