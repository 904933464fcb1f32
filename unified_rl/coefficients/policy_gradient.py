"""Gradient coefficients of the policy-gradient family after DeepSeekMath: Dr. GRPO, DAPO, GSPO,
CISPO, RLOO, REINFORCE++ and ReMax, and loss aggregation as one explicit choice.

Same contract as `paper`: GC(q, o, t) = B |o_i| dJ/dlogp_{i,t} for a batch of B responses, so that
`paradigm.surrogate_loss` (which divides each response by |o_i|) has exactly grad J; every function
is pure, returns a detached (B, T) tensor, 0 off the mask. Each is proven against its objective
(objectives/policy_gradient.py) in tests/test_policy_family.py and derived in derivations/policy_gradient.py.

Aggregation is how per-token terms f_{i,t} become one number. Its GC factor per row is:
    seq-mean-token-mean   (1/B) sum_i (1/|o_i|) sum_t f      -> 1              (DeepSeekMath, GSPO)
    token-mean            per group, sum_i sum_t f / sum_i |o_i|  -> G |o_i| / sum_{j in g} |o_j|  (DAPO, CISPO)
    batch-token-mean      sum_i sum_t f / sum_i |o_i| over the batch -> B |o_i| / sum_j |o_j|  (TRL's dapo,
                          cispo, vespo and bnpo on one micro-batch; verl's token-mean)
    constant              (1/B) sum_i sum_t f / L            -> |o_i| / L      (Dr. GRPO; L = 1: a token sum,
                          verl's seq-mean-token-sum)
"""

import torch

from .. import _checks, advantages
from .paper import _mask

AGGREGATIONS = ("seq-mean-token-mean", "token-mean", "batch-token-mean", "constant")


def _lengths(mask):
    return mask.sum(-1, keepdim=True)  # (B, 1) |o_i|


def _token_mean(mask, group_size, max_len, across=None):
    B = mask.shape[0]
    G = B if group_size is None else group_size
    n = _lengths(mask)  # (B, 1)
    if group_size is None and across is not None:  # the batch is every rank's rows: B and its tokens summed
        total = across.sum(torch.stack([torch.tensor(float(B), dtype=n.dtype, device=n.device), n.sum()]))
        return total[0] * n / total[1].clamp(min=1)
    per_group = n.view(-1, G).sum(-1, keepdim=True).repeat_interleave(G, 0)  # (B, 1) tokens of i's group
    return G * n / per_group.clamp(min=1)  # a group of rows that all left the loss (masked) counts 0


def _constant(mask, group_size, max_len, across=None):
    if max_len is None:
        raise ValueError("the constant normaliser needs max_len (L, e.g. the generation budget; 1 gives a token sum)")
    max_len = _checks.scalar(max_len, "max_len", low=0.0)
    if max_len == 0:
        raise ValueError("max_len must be > 0")
    return _lengths(mask) / max_len


_WEIGHTS = {"seq-mean-token-mean": lambda mask, group_size, max_len, across=None: (_lengths(mask) > 0).to(mask.dtype),
            "token-mean": lambda mask, group_size, max_len, across=None: _token_mean(mask, group_size, max_len),
            "batch-token-mean": lambda mask, group_size, max_len, across=None: _token_mean(mask, None, max_len, across),
            "constant": _constant}


def aggregation_weight(mask, aggregation="seq-mean-token-mean", *, group_size=None, max_len=None, across=None):
    """The factor each row's GC carries under `aggregation` (module docstring). (B, T) -> (B, 1)

    group_size: token-mean normalises within each group (None: over the whole batch, which is
    batch-token-mean). max_len: the constant L of the constant normaliser. A row may have no tokens
    here (a row left out of the loss, coefficients.options): its factor is 0. across: the rows are one
    rank's share (distributed.across); batch-token-mean's B and token count are then every rank's.
    >>> m = torch.tensor([[1., 1., 1., 1.], [1., 1., 0., 0.]])
    >>> aggregation_weight(m, "token-mean").flatten()      # 2 * 4/6 and 2 * 2/6
    tensor([1.3333, 0.6667])
    """
    mask = _checks.as_tensor(mask, "mask").detach()
    if mask.dim() != 2 or not ((mask == 0) | (mask == 1)).all():
        raise ValueError(f"mask must be a (B, T) tensor of 0 and 1, got shape {tuple(mask.shape)}")
    if aggregation not in _WEIGHTS:
        raise ValueError(f"unknown aggregation {aggregation!r}; choose one of {', '.join(AGGREGATIONS)}")
    if group_size is not None:
        _checks.groups(mask.shape[0], group_size)
    return _WEIGHTS[aggregation](mask, group_size, max_len, across)


def _ratio_term(adv, logp, logp_old, mask, clip_low, clip_high):
    """d/dlogp of min(r A, clip(r, 1-low, 1+high) A): r A, or 0 where the clip is active.

    Without logp_old (on-policy, r = 1) it is A: the clip never binds on the first update.
    """
    if logp_old is None:
        return adv
    ratio = torch.exp(_checks.per_token(logp, "logp", mask).detach()
                      - _checks.per_token(logp_old, "logp_old", mask))  # (B, T)
    clipped = ((adv > 0) & (ratio > 1 + clip_high)) | ((adv < 0) & (ratio < 1 - clip_low))
    return torch.where(clipped, torch.zeros_like(adv), ratio * adv)


def _clip_range(clip_eps, clip_eps_high):
    low = _checks.scalar(clip_eps, "clip_eps", low=0.0)
    high = low if clip_eps_high is None else _checks.scalar(clip_eps_high, "clip_eps_high", low=0.0)
    return low, high


def _out(coef, mask):
    """Detached, exactly 0 off the mask (not -0.0: the doctests print what a learner sees)."""
    return torch.where(mask.bool(), coef, torch.zeros_like(coef)).detach()


def _per_token(seq, mask):
    """(B,) per-response values on every response token. -> (B, T)"""
    return seq.to(mask.dtype)[:, None] * mask


def _seq_adv(rewards, mask, fn, *args):
    adv = fn(rewards, *args)
    if adv.shape[0] != mask.shape[0]:
        raise ValueError(f"rewards has {adv.shape[0]} entries but mask has {mask.shape[0]} rows")
    return _per_token(adv, mask)


def dr_grpo(rewards, group_size, logp, logp_ref, mask, beta, max_len, *, logp_old=None, clip_eps=None,
            aggregation="constant", across=None):
    """Dr. GRPO (arXiv 2503.20783, Figure 1): GRPO without the std and without 1/|o_i|.

    J = E[1/G sum_i sum_t min(r A_i, clip(r) A_i) - beta k3] / L, A_i = R_i - mean(R) (no std); the
    paper prints the token sum, implementations divide it by a constant L (TRL's loss_type="dr_grpo":
    max_completion_length). As eq 5 divides by |o_i|, the GC carries |o_i| / L:
    GC = |o_i|/L * (A_i + beta (pi_ref/pi - 1)) on-policy.
    >>> m = torch.tensor([[1., 1., 1., 1.], [1., 1., 0., 0.]]); z = torch.zeros(2, 4)
    >>> dr_grpo(torch.tensor([0., 1.]), 2, z, z, m, beta=0.0, max_len=4)   # -0.5 * 4/4, +0.5 * 2/4
    tensor([[-0.5000, -0.5000, -0.5000, -0.5000],
            [ 0.2500,  0.2500,  0.0000,  0.0000]])
    """
    mask = _mask(mask)
    beta = _checks.scalar(beta, "beta", low=0.0)
    adv = _seq_adv(rewards, mask, advantages.group_centred, group_size)  # (B, T)
    if (logp_old is None) != (clip_eps is None):
        raise ValueError("the clipped Dr. GRPO coefficient needs logp_old and clip_eps together")
    low, high = _clip_range(0.0 if clip_eps is None else clip_eps, None)
    term = _ratio_term(adv, logp, logp_old, mask, low, high)
    logp = _checks.per_token(logp, "logp", mask).detach()
    logp_ref = _checks.per_token(logp_ref, "logp_ref", mask).detach()
    term = term + beta * torch.expm1(logp_ref - logp)  # the k3 penalty's GC, as in eq 21
    return _out(aggregation_weight(mask, aggregation, group_size=group_size, max_len=max_len, across=across) * term, mask)


def dapo(rewards, group_size, logp, logp_old, mask, clip_eps=0.2, clip_eps_high=0.28, eps=1e-6, *,
         aggregation="token-mean", max_len=None, across=None):
    """DAPO (arXiv 2503.14476, §3): clip-higher and a token-mean over each group, no KL term.

    J = E[1/sum_i |o_i| sum_i sum_t min(r A, clip(r, 1-eps_low, 1+eps_high) A)], A = GRPO's A-hat.
    GC = G |o_i| / sum_j |o_j| * (r A, or 0 where the clip binds); eps_high > eps_low lets a rare
    token's probability grow further before its push stops (the paper uses 0.2 and 0.28).
    >>> m = torch.tensor([[1., 1., 1.], [1., 0., 0.]]); z = torch.zeros(2, 3)
    >>> dapo(torch.tensor([1., 0.]), 2, z, z, m)   # A = +-0.7071, weights 2*3/4 and 2*1/4
    tensor([[ 1.0607,  1.0607,  1.0607],
            [-0.3536,  0.0000,  0.0000]])
    """
    mask = _mask(mask)
    low, high = _clip_range(clip_eps, clip_eps_high)
    adv = _seq_adv(rewards, mask, advantages.group_relative, group_size, eps)  # (B, T)
    term = _ratio_term(adv, logp, logp_old, mask, low, high)
    return _out(aggregation_weight(mask, aggregation, group_size=group_size, max_len=max_len, across=across) * term, mask)


def gspo(rewards, group_size, logp, logp_old, mask, clip_eps=3e-4, clip_eps_high=4e-4, eps=1e-6, *,
         aggregation="seq-mean-token-mean", max_len=None, across=None):
    """GSPO (arXiv 2507.18071): one importance ratio per sequence, clipped at the sequence level.

    s_i = (pi_theta(o_i) / pi_old(o_i))^(1/|o_i|) = exp(mean_t (logp - logp_old));
    J = E[1/G sum_i min(s_i A_i, clip(s_i, 1-eps_low, 1+eps_high) A_i)]. d s_i / d logp_{i,t} =
    s_i / |o_i|, so GC = s_i A_i on every token of o_i, or 0 on all of them where the clip binds.
    >>> m = torch.ones(2, 2); lp = torch.tensor([[0., 0.], [0.2, 0.]]); old = torch.zeros(2, 2)
    >>> gspo(torch.tensor([1., 0.]), 2, lp, old, m, clip_eps=0.2)  # s = 1 and e^0.1, both unclipped
    tensor([[ 0.7071,  0.7071],
            [-0.7815, -0.7815]])
    """
    mask = _mask(mask)
    low, high = _clip_range(clip_eps, clip_eps_high)
    adv = advantages.group_relative(rewards, group_size, eps).to(mask.dtype)  # (B,)
    if adv.shape[0] != mask.shape[0]:
        raise ValueError(f"rewards has {adv.shape[0]} entries but mask has {mask.shape[0]} rows")
    log_ratio = (_checks.per_token(logp, "logp", mask).detach() - _checks.per_token(logp_old, "logp_old", mask)) * mask
    s = torch.exp(log_ratio.sum(-1) / mask.sum(-1))  # (B,) the sequence's geometric-mean ratio
    clipped = ((adv > 0) & (s > 1 + high)) | ((adv < 0) & (s < 1 - low))
    term = _per_token(torch.where(clipped, torch.zeros_like(s), s * adv), mask)  # (B, T)
    return _out(aggregation_weight(mask, aggregation, group_size=group_size, max_len=max_len, across=across) * term, mask)


def cispo(rewards, group_size, logp, logp_old, mask, clip_eps_high, clip_eps=None, eps=1e-6, *,
          aggregation="token-mean", max_len=None, scale_rewards="group", across=None):
    """CISPO (MiniMax-M1, arXiv 2506.13585, §3.1): a clipped, stop-gradient weight on every token.

    J = E[1/sum_i |o_i| sum_i sum_t sg(clip(r, 1-eps_low, 1+eps_high)) A_{i,t} log pi_theta(o_{i,t})],
    A = GRPO's A-hat. GC = G |o_i| / sum_j |o_j| * clip(r) A: the weight is clipped, the token never
    dropped (PPO's clip sets a token's GC to 0). clip_eps=None: no lower bound, as the paper runs it.
    scale_rewards: A-hat's scale (advantages.scaled; TRL's option).
    >>> m = torch.ones(2, 1); lp = torch.tensor([[1.], [0.]]); old = torch.zeros(2, 1)
    >>> cispo(torch.tensor([1., 0.]), 2, lp, old, m, clip_eps_high=0.2)  # r = e > 1.2: weight 1.2
    tensor([[ 0.8485],
            [-0.7071]])
    """
    mask = _mask(mask)
    high = _checks.scalar(clip_eps_high, "clip_eps_high", low=0.0)
    low = None if clip_eps is None else _checks.scalar(clip_eps, "clip_eps", low=0.0)
    adv = _seq_adv(rewards, mask, advantages.scaled, group_size, scale_rewards, eps, across)  # (B, T)
    ratio = torch.exp(_checks.per_token(logp, "logp", mask).detach() - _checks.per_token(logp_old, "logp_old", mask))
    weight = ratio.clamp(min=None if low is None else 1 - low, max=1 + high)  # (B, T), never 0
    return _out(aggregation_weight(mask, aggregation, group_size=group_size, max_len=max_len, across=across) * weight * adv, mask)


def rloo(rewards, group_size, mask, *, logp=None, logp_old=None, clip_eps=None, aggregation="constant",
         max_len=1.0, across=None):
    """RLOO (arXiv 2402.14740, §3): REINFORCE with the leave-one-out baseline, on whole sequences.

    J = E[1/k sum_i (R_i - 1/(k-1) sum_{j != i} R_j) log pi(o_i | q)], log pi(o_i | q) = sum_t logp:
    a token sum (constant normaliser, L = 1), so GC = |o_i| (R_i - mean_{j != i} R_j) =
    |o_i| k/(k-1) (R_i - mean(R)). With logp_old and clip_eps, the PPO-clipped form (for reuse).
    Deviation from the paper: its reward carries a KL penalty, R - beta log(pi/pi_ref); R here is the
    reward alone (no KL term anywhere in this GC).
    >>> rloo(torch.tensor([1., 0., 0.]), 3, torch.tensor([[1., 1.], [1., 0.], [1., 0.]]))
    tensor([[ 2.0000,  2.0000],
            [-0.5000,  0.0000],
            [-0.5000,  0.0000]])
    """
    mask = _mask(mask)
    adv = _seq_adv(rewards, mask, advantages.leave_one_out, group_size)  # (B, T)
    if (logp_old is None) != (clip_eps is None):
        raise ValueError("the clipped RLOO coefficient needs logp, logp_old and clip_eps together")
    low, high = _clip_range(0.0 if clip_eps is None else clip_eps, None)
    term = _ratio_term(adv, logp, logp_old, mask, low, high)
    return _out(aggregation_weight(mask, aggregation, group_size=group_size, max_len=max_len, across=across) * term, mask)


def reinforce_pp_advantage(rewards, logp_old, logp_ref, mask, beta, group_size=1, eps=1e-6, across=None, *,
                           baseline="group"):
    """REINFORCE++ (arXiv 2501.03262): A_t = R - beta sum_{t' >= t} log(pi_old/pi_ref), batch-normalised.

    The KL sits in the return (k1 per token, summed from t on; beta = 0: none there); with group_size > 1
    and baseline="group" the group's mean reward is subtracted first (the "with baseline" variant, verl's
    reinforce_plus_plus_baseline); baseline="none" keeps R (verl's reinforce_plus_plus). (B,) -> (B, T).
    across: the rows are one rank's share; the normalisation's statistics are the whole batch's.
    """
    mask = _mask(mask)
    beta = _checks.scalar(beta, "beta", low=0.0)
    if baseline not in ("group", "none"):
        raise ValueError(f"unknown REINFORCE++ baseline {baseline!r}; choose group or none")
    r = _checks.per_sequence(rewards, "rewards", mask.shape[0]).double()
    _checks.groups(mask.shape[0], group_size)
    if group_size > 1 and baseline == "group":
        r = r - r.view(-1, group_size).mean(-1).repeat_interleave(group_size)
    k1 = (_checks.per_token(logp_old, "logp_old", mask) - _checks.per_token(logp_ref, "logp_ref", mask)).double()
    adv = r[:, None] * mask.double() - beta * advantages.returns_to_go(k1 * mask.double(), mask.double())
    return advantages.batch_normalised(adv, mask.double(), eps, across).to(mask.dtype).detach()  # (B, T)


def reinforce_pp(adv, mask, *, logp=None, logp_old=None, clip_eps=None, aggregation="seq-mean-token-mean",
                 max_len=None, logp_ref=None, beta=0.0, across=None):
    """REINFORCE++'s GC: its token advantage (reinforce_pp_advantage), PPO-clipped when reused.

    Given logp_ref, the KL sits in the loss instead of the return: + beta (pi_ref/pi - 1), the k3 penalty's
    GC (GRPO's eq 21; verl's use_kl_loss with low_var_kl), with an advantage computed with beta = 0.
    >>> reinforce_pp(torch.tensor([[1.0, -0.5]]), torch.ones(1, 2))
    tensor([[ 1.0000, -0.5000]])
    """
    mask = _mask(mask)
    adv = _checks.per_token(adv, "adv", mask).detach()
    if (logp_old is None) != (clip_eps is None):
        raise ValueError("the clipped REINFORCE++ coefficient needs logp, logp_old and clip_eps together")
    low, high = _clip_range(0.0 if clip_eps is None else clip_eps, None)
    term = _ratio_term(adv, logp, logp_old, mask, low, high)
    if logp_ref is not None:
        beta = _checks.scalar(beta, "beta", low=0.0)
        x = _checks.per_token(logp_ref, "logp_ref", mask).detach() - _checks.per_token(logp, "logp", mask).detach()
        term = term + beta * torch.expm1(x)
    return _out(aggregation_weight(mask, aggregation, max_len=max_len, across=across) * term, mask)


def remax(rewards, mask, *, logp=None, logp_old=None, clip_eps=None, aggregation="constant", max_len=1.0,
          across=None):
    """ReMax (arXiv 2310.10505, Algorithm 1): REINFORCE with the greedy response's reward as baseline.

    Rows come in pairs (group_size 2): a sampled response, then the greedy one for the same
    question. J = E[(R(o) - R(o_greedy)) log pi(o | q)]: GC = 2 |o| (R - R_greedy) on the sampled
    row (2: eq 5 averages over both rows of a pair), 0 on the greedy row, which is only a baseline.
    With logp_old and clip_eps, the PPO-clipped form (for reuse of a batch).
    >>> remax(torch.tensor([1., 0.]), torch.tensor([[1., 1.], [1., 0.]]))
    tensor([[4., 4.],
            [0., 0.]])
    """
    mask = _mask(mask)
    r = _checks.per_sequence(rewards, "rewards", mask.shape[0])
    _checks.groups(mask.shape[0], 2)
    if (logp_old is None) != (clip_eps is None):
        raise ValueError("the clipped ReMax coefficient needs logp, logp_old and clip_eps together")
    pairs = r.double().view(-1, 2)  # (n, 2): sampled, greedy
    adv = torch.zeros_like(pairs)
    adv[:, 0] = pairs[:, 0] - pairs[:, 1]
    weight = torch.zeros_like(pairs)
    weight[:, 0] = 2 * aggregation_weight(mask[0::2], aggregation, max_len=max_len, across=across).flatten().double()
    low, high = _clip_range(0.0 if clip_eps is None else clip_eps, None)
    term = _ratio_term(_per_token(adv.view(-1), mask), logp, logp_old, mask, low, high)  # (B, T)
    return _out(_per_token(weight.view(-1), mask) * term, mask)
