"""The objectives J of the policy-gradient family after DeepSeekMath, written as the papers print them.

No gradient coefficient appears here: advantages are computed from the rewards as each paper states
them (not through `advantages`), aggregation is written as the sum and the normaliser each paper
prints, and stop-gradients are `.detach()`. The tests check that autograd of each J equals the
gradient of `paradigm.surrogate_loss` with the GC of coefficients/policy_gradient.py. All are maximised.
"""

import torch

from .. import _checks, kl

_AGG = ("seq-mean-token-mean", "token-mean", "batch-token-mean", "constant")


def _aggregate(terms, mask, aggregation, group_size=None, max_len=None):
    """One number from per-token terms f_{i,t} (coefficients/policy_gradient.py lists the choices).

    A row or group without tokens (left out of the loss) adds 0 and still counts in the mean over rows.
    """
    if aggregation not in _AGG:
        raise ValueError(f"unknown aggregation {aggregation!r}; choose one of {', '.join(_AGG)}")
    B = mask.shape[0]
    if aggregation == "seq-mean-token-mean":  # (1/B) sum_i (1/|o_i|) sum_t f
        return ((terms * mask).sum(-1) / mask.sum(-1).clamp(min=1)).mean()
    if aggregation in ("token-mean", "batch-token-mean"):  # mean over groups of sum_g f / sum_g |o_i|
        G = B if group_size is None or aggregation == "batch-token-mean" else group_size
        per_group = (terms * mask).reshape(B // G, -1).sum(-1) / mask.reshape(B // G, -1).sum(-1).clamp(min=1)
        return per_group.mean()
    if max_len is None:
        raise ValueError("the constant normaliser needs max_len")
    return (terms * mask).sum() / (B * _checks.scalar(max_len, "max_len", low=0.0))  # (1/B) sum_i sum_t f / L


def _rewards(rewards, group_size, mask):
    """Checked (n_groups, G) float64 rewards."""
    r = _checks.per_sequence(rewards, "rewards", mask.shape[0]).double()
    return r.view(_checks.groups(mask.shape[0], group_size), group_size)


def _hat(rewards, group_size, mask, eps):
    """GRPO's A-hat = (R - mean) / (std + eps) per group (sample std), 0 in an all-equal group; (B, T)."""
    r = _rewards(rewards, group_size, mask)
    std = r.std(-1, keepdim=True) if group_size > 1 else torch.zeros_like(r[:, :1])
    a = torch.where(std > 0, (r - r.mean(-1, keepdim=True)) / (std + eps), torch.zeros_like(r))
    return a.view(-1, 1).to(mask.dtype).expand_as(mask)


def _min_clip(ratio, adv, low, high):
    """min(r A, clip(r, 1 - low, 1 + high) A), eq 3 of DeepSeekMath with the two ends decoupled."""
    return torch.min(ratio * adv, torch.clamp(ratio, 1 - low, 1 + high) * adv)


def _setup(logp, mask):
    mask = _checks.response_mask(mask)
    return _checks.per_token(logp, "logp", mask), mask


def dr_grpo(logp, logp_old, logp_ref, rewards, group_size, mask, beta, clip_eps, max_len,
            aggregation="constant"):
    """Dr. GRPO (arXiv 2503.20783, Figure 1): 1/G sum_i sum_t [min(r A, clip(r) A) - beta k3] / L, A = R - mean(R).

    The paper prints the token sum (L = 1); TRL's loss_type="dr_grpo" divides it by max_completion_length.
    """
    logp, mask = _setup(logp, mask)
    r = _rewards(rewards, group_size, mask)
    adv = (r - r.mean(-1, keepdim=True)).view(-1, 1).to(mask.dtype).expand_as(mask)  # no std
    ratio = torch.exp(logp - _checks.per_token(logp_old, "logp_old", mask))
    terms = _min_clip(ratio, adv, clip_eps, clip_eps) - beta * kl.k3(logp, _checks.per_token(logp_ref, "logp_ref", mask))
    return _aggregate(terms, mask, aggregation, group_size, max_len)


def dapo(logp, logp_old, rewards, group_size, mask, clip_eps=0.2, clip_eps_high=0.28, eps=1e-6,
         aggregation="token-mean", max_len=None):
    """DAPO (arXiv 2503.14476, §3): 1/sum_i |o_i| sum_i sum_t min(r A, clip(r, 1-eps_low, 1+eps_high) A)."""
    logp, mask = _setup(logp, mask)
    ratio = torch.exp(logp - _checks.per_token(logp_old, "logp_old", mask))
    terms = _min_clip(ratio, _hat(rewards, group_size, mask, eps), clip_eps, clip_eps_high)
    return _aggregate(terms, mask, aggregation, group_size, max_len)


def gspo(logp, logp_old, rewards, group_size, mask, clip_eps=3e-4, clip_eps_high=4e-4, eps=1e-6,
         aggregation="seq-mean-token-mean", max_len=None):
    """GSPO (arXiv 2507.18071): 1/G sum_i min(s_i A_i, clip(s_i) A_i), s_i = (pi(o_i)/pi_old(o_i))^(1/|o_i|)."""
    logp, mask = _setup(logp, mask)
    log_ratio = (logp - _checks.per_token(logp_old, "logp_old", mask)) * mask
    s = torch.exp(log_ratio.sum(-1) / mask.sum(-1))  # (B,) with grad: the sequence's own ratio
    per_seq = _min_clip(s[:, None].expand_as(mask), _hat(rewards, group_size, mask, eps), clip_eps,
                        clip_eps_high)  # (B, T), the same on every token of a response
    return _aggregate(per_seq, mask, aggregation, group_size, max_len)


def cispo(logp, logp_old, rewards, group_size, mask, clip_eps_high, clip_eps=None, eps=1e-6,
          aggregation="token-mean", max_len=None, scale_rewards="group"):
    """CISPO (arXiv 2506.13585, §3.1): 1/sum_i |o_i| sum_i sum_t sg(clip(r, 1-eps_low, 1+eps_high)) A log pi.

    scale_rewards: A = (r - group mean) over the group's std + eps, the batch's, or 1 (TRL's option)."""
    logp, mask = _setup(logp, mask)
    ratio = torch.exp(logp - _checks.per_token(logp_old, "logp_old", mask))
    low = -float("inf") if clip_eps is None else 1 - clip_eps
    weight = torch.clamp(ratio, low, 1 + clip_eps_high).detach()  # sg(.): the weight is not differentiated
    if scale_rewards == "group":
        A = _hat(rewards, group_size, mask, eps)
    else:
        r = _rewards(rewards, group_size, mask)
        A = r - r.mean(-1, keepdim=True)
        if scale_rewards == "batch":
            A = A / (r.flatten().std() + eps)
        A = A.view(-1, 1).to(mask.dtype).expand_as(mask)
    return _aggregate(weight * A * logp, mask, aggregation, group_size, max_len)


def rloo(logp, rewards, group_size, mask, aggregation="constant", max_len=1.0, *, logp_old=None, clip_eps=None):
    """RLOO (arXiv 2402.14740, §3): 1/k sum_i (R_i - 1/(k-1) sum_{j != i} R_j) log pi(o_i | q).

    log pi(o_i | q) = sum_t logp: the token sum (max_len = 1). With logp_old, PPO's clipped form.
    """
    logp, mask = _setup(logp, mask)
    r = _rewards(rewards, group_size, mask)
    others = torch.stack([torch.cat([r[:, :i], r[:, i + 1:]], 1).mean(-1) for i in range(group_size)], 1)
    adv = (r - others).view(-1, 1).to(mask.dtype).expand_as(mask)  # (B, T)
    if logp_old is None:
        terms = adv * logp  # REINFORCE, as printed
    else:
        terms = _min_clip(torch.exp(logp - _checks.per_token(logp_old, "logp_old", mask)), adv, clip_eps, clip_eps)
    return _aggregate(terms, mask, aggregation, group_size, max_len)


def reinforce_pp(logp, logp_old, logp_ref, rewards, mask, beta, clip_eps, group_size=1, eps=1e-6,
                 aggregation="seq-mean-token-mean", *, kl_logp=None, kl_in="return", baseline="group"):
    """REINFORCE++ (arXiv 2501.03262): PPO's clipped objective on A_t = R - beta sum_{i >= t} KL(i),
    KL(i) = log(pi_old / pi_ref), normalised over the batch's tokens (group mean subtracted if G > 1 and
    baseline="group"). kl_in="loss": A without the KL, and J - beta k3 per token instead.

    kl_logp: the sampler's log-probs the KL is measured with (default logp_old).
    """
    logp, mask = _setup(logp, mask)
    r = _rewards(rewards, group_size, mask)
    if group_size > 1 and baseline == "group":
        r = r - r.mean(-1, keepdim=True)
    old = _checks.per_token(logp_old, "logp_old", mask)
    ref = _checks.per_token(logp_ref, "logp_ref", mask)
    sampler = old if kl_logp is None else _checks.per_token(kl_logp, "kl_logp", mask)
    kl_t = ((sampler - ref) * mask).double()  # (B, T) k1 of the sampler
    later = torch.stack([kl_t[:, t:].sum(-1) for t in range(mask.shape[1])], 1)  # sum_{i >= t} KL(i)
    A = r.view(-1, 1) - (beta if kl_in == "return" else 0.0) * later  # (B, T)
    on = mask.bool()
    A = ((A - A[on].mean()) / (A[on].std() + eps)).to(mask.dtype)  # normalised over the whole batch
    terms = _min_clip(torch.exp(logp - old), A, clip_eps, clip_eps)
    if kl_in == "loss":
        terms = terms - beta * kl.k3(logp, ref)
    return _aggregate(terms, mask, aggregation)


def remax(logp, rewards, mask, aggregation="constant", max_len=1.0, *, logp_old=None, clip_eps=None):
    """ReMax (arXiv 2310.10505): E[(R(o) - R(o_greedy)) log pi(o | q)]; rows are (sampled, greedy) pairs.

    With logp_old, PPO's clipped form on the sampled rows.
    """
    logp, mask = _setup(logp, mask)
    r = _rewards(rewards, 2, mask)  # (n, 2)
    sampled = slice(0, None, 2)
    adv = (r[:, 0] - r[:, 1]).to(mask.dtype)[:, None].expand_as(mask[sampled])  # (n, T)
    if logp_old is None:
        terms = adv * logp[sampled]  # REINFORCE, as printed
    else:
        ratio = torch.exp(logp[sampled] - _checks.per_token(logp_old, "logp_old", mask)[sampled])
        terms = _min_clip(ratio, adv, clip_eps, clip_eps)
    return _aggregate(terms, mask[sampled], aggregation, None, max_len)


def kl_penalty(logp, logp_ref, mask, beta, estimator="k3", *, logp_old=None):
    """-beta * mean_i (1/|o_i|) sum_t k; k in k1, k2, k3, or r * k3 with r = pi/pi_old ("k3-ratio")."""
    logp, mask = _setup(logp, mask)
    logp_ref = _checks.per_token(logp_ref, "logp_ref", mask)
    ratio = torch.exp(logp - (logp.detach() if logp_old is None else logp_old))  # 1, with a gradient
    k = {"k1": lambda: kl.k1(logp, logp_ref), "k2": lambda: kl.k2(logp, logp_ref),
         "k3": lambda: kl.k3(logp, logp_ref), "k3-ratio": lambda: ratio * kl.k3(logp, logp_ref)}
    if estimator not in k:
        raise ValueError(f"unknown KL estimator {estimator!r}; choose one of {', '.join(k)}")
    return -beta * _aggregate(k[estimator](), mask, "seq-mean-token-mean")
