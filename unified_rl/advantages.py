"""Advantages: GAE for PPO (eq 18's A_t) and group-relative advantages for GRPO (eq 21's A-hat).

- GAE: Schulman et al. 2015, arXiv 1506.02438. delta_t = r_t + gamma V_{t+1} - V_t, with V = 0
  after the last response token; A_t = sum_l (gamma lam)^l delta_{t+l}; returns = A + V.
- Outcome supervision (DeepSeekMath 4.1.2): A-hat_{i,t} = (r_i - mean(r)) / (std(r) + eps), the
  same for every token of o_i; std is the sample std (torch.std's default).
- Process supervision (DeepSeekMath 4.1.3): each step's reward is normalised with the mean and std
  of all step rewards in the group; a token's advantage is the sum of the normalised rewards of the
  steps that end at or after it.
- Later baselines: r - mean(r) without the std (Dr. GRPO, arXiv 2503.20783); the leave-one-out
  r_i - mean_{j != i} r_j (RLOO, arXiv 2402.14740); returns-to-go normalised over the whole batch
  (REINFORCE++, arXiv 2501.03262).
- As TRL and verl configure them: the centred reward divided by the group's std, the batch's or
  nothing (`scaled`, TRL's scale_rewards); GPG's alpha (r - mean) (arXiv 2504.02546); OPO's
  length-weighted baseline (arXiv 2505.23585); Pass@k training's best-of-group advantage (arXiv
  2503.19595); GDPO's reward-decoupled normalisation (arXiv 2601.05242).
"""

import torch

from . import _checks


def _normalise(x, valid, eps, across=None):
    """(x - mean) / (std + eps) over the entries where `valid`; rows are groups. 0 where all are equal.

    Computed in float64 on x / max|x| (the result is unchanged by the scale, eps scaled with it), so
    a group of equal rewards gives exactly 0 (a float32 mean of 0.7s is not 0.7) and +-1e20 neither
    overflows its square nor rounds to 0. Returned in x's floating dtype. across: the rows are one
    rank's share of a batch and `across.sum/max/min` reduce over every rank's (distributed.across).
    """
    dtype = x.dtype if x.is_floating_point() else torch.get_default_dtype()
    on = valid.bool()
    x, valid = x.double(), on.double()
    hi = torch.where(on, x, -torch.inf).amax(-1, keepdim=True)  # (n_groups, 1)
    lo = torch.where(on, x, torch.inf).amin(-1, keepdim=True)
    if across is not None:
        hi, lo = across.max(hi), across.min(lo)
    # A group whose rewards are all equal carries no signal: advantage 0, exactly, never 0/0 = NaN.
    equal = hi == lo
    scale = torch.maximum(hi.abs(), lo.abs()).where(~equal, torch.ones_like(hi))
    y = x / scale * valid
    n, total = valid.sum(-1, keepdim=True), y.sum(-1, keepdim=True)
    if across is not None:
        n, total = across.sum(n), across.sum(total)
    mean = total / n
    squares = (((y - mean) * valid) ** 2).sum(-1, keepdim=True)
    if across is not None:
        squares = across.sum(squares)
    var = squares / (n - 1).clamp(min=1)  # sample variance
    out = (y - mean) / (var.sqrt() + eps / scale)
    return torch.where(equal, torch.zeros_like(out), out).mul(valid).to(dtype)


def group_relative(rewards, group_size, eps=1e-6):
    """(r - group mean) / (group std + eps) per sequence, groups laid out group-major. (B,) -> (B,)

    >>> group_relative(torch.tensor([1., 0., 0., 1.]), group_size=2)
    tensor([ 0.7071, -0.7071, -0.7071,  0.7071])
    """
    rewards = _checks.as_tensor(_checks.not_bool(rewards, "rewards"), "rewards")
    if rewards.dim() != 1:
        raise ValueError(f"rewards must be (B,), got shape {tuple(rewards.shape)}")
    _checks.finite(rewards, "rewards")
    eps = _checks.scalar(eps, "eps", low=0.0)
    n_groups = _checks.groups(rewards.shape[0], group_size)
    r = rewards.view(n_groups, group_size)  # (n_groups, G)
    return _normalise(r, torch.ones_like(r), eps).view(-1)


def _groups_of(rewards, group_size):
    """Checked (n_groups, G) float64 view of (B,) rewards."""
    rewards = _checks.as_tensor(_checks.not_bool(rewards, "rewards"), "rewards")
    if rewards.dim() != 1:
        raise ValueError(f"rewards must be (B,), got shape {tuple(rewards.shape)}")
    _checks.finite(rewards, "rewards")
    n_groups = _checks.groups(rewards.shape[0], group_size)
    dtype = rewards.dtype if rewards.is_floating_point() else torch.get_default_dtype()
    return rewards.double().view(n_groups, group_size), dtype


def group_centred(rewards, group_size):
    """r - group mean, no std (Dr. GRPO's advantage); exactly 0 in an all-equal group. (B,) -> (B,)

    >>> group_centred(torch.tensor([1., 0., 0., 0.]), group_size=4)
    tensor([ 0.7500, -0.2500, -0.2500, -0.2500])
    """
    r, dtype = _groups_of(rewards, group_size)
    out = r - r.mean(-1, keepdim=True)  # float64: a group of equal float32 rewards gives exactly 0
    equal = r.amax(-1, keepdim=True) == r.amin(-1, keepdim=True)
    return torch.where(equal, torch.zeros_like(out), out).view(-1).to(dtype)


def leave_one_out(rewards, group_size):
    """r_i - mean of the other G-1 rewards of its group (RLOO); = G/(G-1) (r_i - mean). (B,) -> (B,)

    >>> leave_one_out(torch.tensor([1., 0., 0., 0.]), group_size=4)
    tensor([ 1.0000, -0.3333, -0.3333, -0.3333])
    """
    if isinstance(group_size, int) and not isinstance(group_size, bool) and group_size < 2:
        raise ValueError(f"a leave-one-out baseline needs group_size >= 2, got {group_size}")
    r, dtype = _groups_of(rewards, group_size)
    others = (r.sum(-1, keepdim=True) - r) / (group_size - 1)  # (n_groups, G)
    out = r - others
    equal = r.amax(-1, keepdim=True) == r.amin(-1, keepdim=True)
    return torch.where(equal, torch.zeros_like(out), out).view(-1).to(dtype)


def returns_to_go(token_rewards, mask):
    """sum_{t' >= t} r_t' over each response's tokens (gamma = 1), 0 off the mask. (B, T) -> (B, T)"""
    mask = _checks.response_mask(mask)
    token_rewards = _checks.per_token(token_rewards, "token_rewards", mask) * mask
    return token_rewards.flip(-1).cumsum(-1).flip(-1) * mask


def batch_normalised(adv, mask, eps=1e-6, across=None):
    """(A - mean) / (std + eps) over every response token of the batch (REINFORCE++). (B, T) -> (B, T)

    across: these rows are one rank's share, and the statistics are the whole batch's over every rank.
    """
    mask = _checks.response_mask(mask)
    adv = _checks.per_token(adv, "adv", mask)
    eps = _checks.scalar(eps, "eps", low=0.0)
    return _normalise(adv.reshape(1, -1), mask.reshape(1, -1), eps, across).view(adv.shape)


def group_relative_process(step_rewards, step_mask, group_size, eps=1e-6, mask=None):
    """Process supervision: per-step rewards (at each step's last token) -> per-token advantages. (B, T)

    step_rewards: (B, T), the reward of a step on the token that ends it, 0 elsewhere.
    step_mask:    (B, T), 1 on each step's last token.
    mask:         optional (B, T) response mask; the advantage is set to 0 off it (the prompt).
    """
    step_mask = _checks.as_tensor(step_mask, "step_mask")
    step_rewards = _checks.as_tensor(_checks.not_bool(step_rewards, "step_rewards"), "step_rewards",
                                     dtype=step_mask.dtype if step_mask.is_floating_point() else None)
    if step_rewards.shape != step_mask.shape or step_mask.dim() != 2:
        raise ValueError(f"step_rewards {tuple(step_rewards.shape)} and step_mask {tuple(step_mask.shape)} must be the same (B, T)")
    _checks.finite(step_rewards, "step_rewards")
    B, T = step_mask.shape
    n_groups = _checks.groups(B, group_size)
    valid = step_mask.reshape(n_groups, group_size * T)
    if (valid.sum(-1) == 0).any():
        raise ValueError("a group has no rewarded steps (step_mask is all zero)")
    norm = _normalise(step_rewards.reshape(n_groups, group_size * T), valid, eps).view(B, T)
    # sum over steps ending at or after t: a reversed cumulative sum along the tokens
    adv = norm.flip(-1).cumsum(-1).flip(-1)  # (B, T)
    if mask is not None:
        mask = _checks.as_tensor(mask, "mask", dtype=adv.dtype)
        if mask.shape != adv.shape:
            raise ValueError(f"mask has shape {tuple(mask.shape)} but step_mask has {tuple(adv.shape)}")
        adv = adv * mask
    return adv


def gae(rewards, values, mask, gamma, lam):
    """Generalized advantage estimation over the response tokens. Returns (adv, returns), each (B, T).

    rewards, values: (B, T) per token (the trainer puts the outcome reward on the last token, and the
    per-token KL penalty everywhere, as in DeepSeekMath eq 2's PPO set-up).
    >>> gae(torch.tensor([[0., 1.]]), torch.zeros(1, 2), torch.ones(1, 2), gamma=1.0, lam=1.0)[0]
    tensor([[1., 1.]])
    """
    mask = _checks.response_mask(mask)
    rewards = _checks.per_token(rewards, "rewards", mask)
    values = _checks.per_token(values, "values", mask)
    gamma = _checks.scalar(gamma, "gamma", low=0.0, high=1.0)  # a discount; > 1 lets returns explode
    lam = _checks.scalar(lam, "lam", low=0.0, high=1.0)  # GAE's bias-variance knob, a weight in [0, 1]
    values = values.detach() * mask
    adv = torch.zeros_like(rewards)
    next_adv = torch.zeros_like(rewards[:, 0])
    next_value = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(mask.shape[1])):
        on_next = mask[:, t + 1] if t + 1 < mask.shape[1] else torch.zeros_like(mask[:, 0])
        delta = rewards[:, t] + gamma * next_value * on_next - values[:, t]  # V = 0 after the response
        next_adv = (delta + gamma * lam * next_adv * on_next) * mask[:, t]
        adv[:, t] = next_adv
        next_value = values[:, t]
    adv = adv.detach()
    return adv, (adv + values) * mask


SCALES = ("group", "batch", "none")  # TRL's scale_rewards


def scaled(rewards, group_size, scale="group", eps=1e-6, across=None):
    """r - group mean, divided by (its group's std + eps) ("group": GRPO), by (the whole batch's reward
    std + eps) ("batch": PPO Lite, arXiv 2508.08221) or by nothing ("none": Dr. GRPO). (B,) -> (B,)
    across: the rows are one rank's share; the batch's std is then every rank's (distributed.across).

    >>> scaled(torch.tensor([1., 0., 1., 1.]), group_size=2, scale="batch")  # batch std 0.5
    tensor([ 1.0000, -1.0000,  0.0000,  0.0000])
    """
    if scale not in SCALES:
        raise ValueError(f"unknown scale_rewards {scale!r}; choose one of {', '.join(SCALES)}")
    if scale == "group":
        return group_relative(rewards, group_size, eps)
    centred = group_centred(rewards, group_size)
    if scale == "none":
        return centred
    eps = _checks.scalar(eps, "eps", low=0.0)
    r, dtype = _groups_of(rewards, group_size)
    x = r.flatten()
    if across is not None:  # the batch's rewards, in one process's order
        x, _ = across.gather(x)
    std = x.std() if x.numel() > 1 else torch.zeros((), dtype=x.dtype)  # sample std of every reward
    return (centred.double() / (std + eps)).to(dtype)


def gpg(rewards, group_size, count="nonzero-advantage", across=None):
    """GPG (arXiv 2504.02546): alpha (r - group mean), no std, alpha = B / (the samples that count).

    count="nonzero-advantage": the samples whose advantage is not 0, B - M with M the samples of groups
    whose rewards are all equal (the paper's correction for the zero-gradient groups);
    count="nonzero-reward": the samples whose reward is not 0 (verl's compute_gpg_outcome_advantage).
    across: the rows are one rank's share; B and the count are then every rank's.
    >>> gpg(torch.tensor([1., 0., 1., 1.]), group_size=2)  # one group of signal: alpha = 4/2
    tensor([ 1., -1.,  0.,  0.])
    """
    centred = group_centred(rewards, group_size)
    r, dtype = _groups_of(rewards, group_size)
    counted = {"nonzero-advantage": centred, "nonzero-reward": r.flatten()}
    if count not in counted:
        raise ValueError(f"unknown GPG count {count!r}; choose one of {', '.join(counted)}")
    n = torch.tensor([float(r.numel()), float(torch.count_nonzero(counted[count]))], dtype=torch.float64)
    if across is not None:
        n = across.sum(n)
    alpha = float(n[0]) / max(float(n[1]), 1.0)
    return (alpha * centred.double()).to(dtype)


def length_weighted(rewards, lengths, group_size):
    """OPO (arXiv 2505.23585): r_i - sum_j |o_j| r_j / sum_j |o_j| within each group. (B,), (B,) -> (B,)

    >>> length_weighted(torch.tensor([1., 0.]), torch.tensor([3., 1.]), group_size=2)  # baseline 3/4
    tensor([ 0.2500, -0.7500])
    """
    r, dtype = _groups_of(rewards, group_size)
    n = _checks.as_tensor(lengths, "lengths").double()
    if n.shape != (r.numel(),) or not (n > 0).all():
        raise ValueError(f"lengths must be {r.numel()} positive numbers, got shape {tuple(n.shape)}")
    n = n.view_as(r)
    base = (n * r).sum(-1, keepdim=True) / n.sum(-1, keepdim=True)  # (n_groups, 1)
    out = r - base
    equal = r.amax(-1, keepdim=True) == r.amin(-1, keepdim=True)
    return torch.where(equal, torch.zeros_like(out), out).view(-1).to(dtype)


def best_of_group(rewards, group_size, eps=1e-6, std=True):
    """Pass@k training (arXiv 2503.19595, as verl's grpo_passk): only each group's best sample gets an
    advantage, r_max - r_second (over the group's std + eps if `std`); every other sample 0. (B,) -> (B,)

    The best is the first of the group's highest rewards; tied at the top, the advantage is 0.
    >>> best_of_group(torch.tensor([0., 1., 0., 0.]), group_size=4, std=False)
    tensor([0., 1., 0., 0.])
    """
    if isinstance(group_size, int) and not isinstance(group_size, bool) and group_size < 2:
        raise ValueError(f"a best-of-group advantage needs group_size >= 2, got {group_size}")
    r, dtype = _groups_of(rewards, group_size)
    eps = _checks.scalar(eps, "eps", low=0.0)
    top2 = r.topk(2, dim=-1).values  # (n_groups, 2)
    gap = top2[:, :1] - top2[:, 1:]  # (n_groups, 1)
    if std:
        gap = gap / (r.std(-1, keepdim=True) + eps)
    best = r.argmax(-1, keepdim=True)  # the first maximum
    out = torch.zeros_like(r).scatter(-1, best, gap)
    return out.view(-1).to(dtype)


def decoupled(rewards, group_size, eps=1e-6, weights=None, across=None):
    """GDPO (arXiv 2601.05242): each reward column normalised within its group, summed with `weights`,
    then the sum normalised over the whole batch (every rank's with `across`). (B, K) -> (B,); (B,) is one
    reward (K = 1).

    >>> decoupled(torch.tensor([[1., 0.], [0., 0.], [1., 1.], [1., 0.]]), group_size=2)
    tensor([ 0.8660, -0.8660,  0.8660, -0.8660])
    """
    r = _checks.as_tensor(_checks.not_bool(rewards, "rewards"), "rewards")
    r = r[:, None] if r.dim() == 1 else r  # one reward: K = 1
    if r.dim() != 2:
        raise ValueError(f"GDPO's rewards are (B, K), one column per reward function, got shape {tuple(r.shape)}")
    _checks.finite(r, "rewards")
    w = (torch.ones(r.shape[1]) if weights is None else _checks.as_tensor(weights, "weights")).to(r.device, torch.float64)
    if w.shape != (r.shape[1],):
        raise ValueError(f"{r.shape[1]} reward columns but {w.numel()} weights")
    per_column = torch.stack([group_relative(r[:, k], group_size, eps).double() for k in range(r.shape[1])], -1)
    total = (per_column * w).sum(-1)  # (B,)
    dtype = r.dtype if r.is_floating_point() else torch.get_default_dtype()
    return _normalise(total.view(1, -1), torch.ones_like(total.view(1, -1)), eps, across).view(-1).to(dtype)
