"""Gradient coefficients of the methods that reshape PPO's clipped ratio: SAPO, VESPO, GMPO, Clip-Cov, KL-Cov.

Same contract as `policy_gradient`: GC = B |o_i| dJ/dlogp_{i,t}, detached, (B, T), 0 off the mask, times
the aggregation's row factor w_i. With r = pi_theta / pi_old per token and A the advantage:

| method   | in J per token (or sequence)                           | GC / w_i                                  |
|----------|--------------------------------------------------------|-------------------------------------------|
| SAPO     | g_tau(r) A, g_tau(r) = 4/tau sigma(tau (r - 1))        | 4 sigma (1 - sigma) r A: a soft clip       |
| VESPO    | sg(phi(W)) A log pi, phi(W) = e^lambda W^k e^(-lambda W), W = prod_t r | phi(W_i) A_i              |
| GMPO     | A_i exp(mean_t clip(log r)), clipped by the sign of A  | A_i rho_i on unclipped tokens, else 0      |
| Clip-Cov | PPO's min(r A, clip(r) A), 0 on chosen tokens          | PPO's GC, 0 on a few high-covariance tokens |
| KL-Cov   | r A, minus coef |log r| on the top-covariance tokens   | r A - coef sign(log r) there               |

Each is proven against objectives/ratio_shapes.py (tests/test_peer_methods.py) and derived in
derivations/ratio_shapes.py.
"""

import hashlib

import torch

from .. import _checks
from .paper import _mask
from .policy_gradient import _clip_range, _out, _ratio_term, aggregation_weight


def _adv(adv, mask):
    return _checks.per_token(adv, "adv", mask).detach()  # (B, T)


def _log_ratio(logp, logp_old, mask):
    return _checks.per_token(logp, "logp", mask).detach() - _checks.per_token(logp_old, "logp_old", mask)


def _w(mask, aggregation, group_size, max_len, across=None):
    return aggregation_weight(mask, aggregation, group_size=group_size, max_len=max_len, across=across)  # (B, 1)


def sapo(adv, logp, logp_old, mask, tau_pos=1.0, tau_neg=1.05, *, aggregation="seq-mean-token-mean",
         group_size=None, max_len=None, across=None):
    """SAPO (arXiv 2511.20347): the hard clip replaced by the gate 4/tau sigma(tau (r - 1)), tau by A's sign.

    GC = w 4 sigma (1 - sigma) r A: A at r = 1, fading smoothly as r leaves 1 (faster for larger tau).
    >>> m = torch.ones(1, 2); a = torch.tensor([[1., -1.]]); lp = torch.tensor([[0., 0.]])
    >>> sapo(a, lp, lp, m)   # on-policy: the gate's slope at 1 is 1
    tensor([[ 1., -1.]])
    """
    mask = _mask(mask)
    tau_pos = _checks.scalar(tau_pos, "tau_pos", low=0.0)
    tau_neg = _checks.scalar(tau_neg, "tau_neg", low=0.0)
    if tau_pos == 0 or tau_neg == 0:
        raise ValueError("SAPO's temperatures must be > 0")
    adv = _adv(adv, mask)
    ratio = torch.exp(_log_ratio(logp, logp_old, mask))  # (B, T)
    tau = torch.where(adv > 0, torch.full_like(adv, tau_pos), torch.full_like(adv, tau_neg))
    s = torch.sigmoid(tau * (ratio - 1))
    return _out(_w(mask, aggregation, group_size, max_len, across) * 4 * s * (1 - s) * ratio * adv, mask)


def vespo_weight(adv, logp, logp_old, mask, k_pos=2.0, lambda_pos=3.0, k_neg=3.0, lambda_neg=2.0):
    """(B, 1) phi(W) = exp(lambda + k log W - lambda W), W = exp(sum_t log r) clamped to [1e-8, e^20] (the
    log-ratios to [-20, 20] first), (k, lambda) by A >= 0 or A < 0 (VESPO, arXiv 2602.10693); phi(1) = 1."""
    log_w = (_log_ratio(logp, logp_old, mask).clamp(-20.0, 20.0) * mask).sum(-1, keepdim=True)
    log_w = log_w.clamp(torch.log(torch.tensor(1e-8, dtype=mask.dtype)).item(), 20.0)  # (B, 1)
    a = adv[torch.arange(adv.shape[0]), mask.argmax(-1)][:, None]  # (B, 1) the row's advantage
    k = torch.where(a >= 0, torch.full_like(a, k_pos), torch.full_like(a, k_neg))
    lam = torch.where(a >= 0, torch.full_like(a, lambda_pos), torch.full_like(a, lambda_neg)).clamp(min=1e-4)
    return torch.exp(lam + k * log_w - lam * torch.exp(log_w))


def vespo(adv, logp, logp_old, mask, k_pos=2.0, lambda_pos=3.0, k_neg=3.0, lambda_neg=2.0, *,
          aggregation="batch-token-mean", group_size=None, max_len=None, across=None):
    """VESPO (arXiv 2602.10693): a stop-gradient Gamma weight phi(W_i) of the sequence ratio on A log pi.

    GC = w phi(W_i) A: never a hard 0; phi(1) = 1, so on-policy it is A.
    >>> m = torch.ones(2, 1); a = torch.tensor([[1.], [-1.]]); lp = torch.zeros(2, 1)
    >>> vespo(a, lp, lp, m, aggregation="seq-mean-token-mean")
    tensor([[ 1.],
            [-1.]])
    """
    mask = _mask(mask)
    adv = _adv(adv, mask)
    phi = vespo_weight(adv, logp, logp_old, mask, k_pos, lambda_pos, k_neg, lambda_neg)
    return _out(_w(mask, aggregation, group_size, max_len, across) * phi * adv, mask)


def gmpo(adv, logp, logp_old, mask, clip_eps=0.4, clip_eps_high=None):
    """GMPO (arXiv 2507.20673, verl's geo_mean): J = mean_i A_i exp(mean_t c_{i,t}), c the log-ratio
    clipped to [-eps_low, eps_high] on the side A's sign makes pessimistic (as PPO's min does).

    GC = A_i rho_i on the tokens whose log-ratio is not clipped, 0 on the others, rho_i = exp(mean_t c).
    >>> m = torch.ones(1, 2); a = torch.ones(1, 2); old = torch.zeros(1, 2)
    >>> gmpo(a, torch.tensor([[0.2, 0.6]]), old, m)   # the second token is clipped at 0.4
    tensor([[1.3499, 0.0000]])
    """
    mask = _mask(mask)
    low, high = _clip_range(clip_eps, clip_eps_high)
    adv = _adv(adv, mask)
    lr = _log_ratio(logp, logp_old, mask)  # (B, T)
    a = ((adv * mask).sum(-1, keepdim=True) / mask.sum(-1, keepdim=True))  # (B, 1) the sequence's A
    sign = torch.sign(a)
    c = sign * torch.minimum(sign * lr, sign * lr.clamp(-low, high))  # (B, T)
    rho = torch.exp((c * mask).sum(-1, keepdim=True) / mask.sum(-1, keepdim=True))  # (B, 1)
    moves = ((a > 0) & (lr <= high)) | ((a < 0) & (lr >= -low))
    return _out(torch.where(moves, a * rho, torch.zeros_like(lr)).expand_as(mask), mask)


def _global(values, across):
    """(the batch's values in one process's order, this rank's offset in them): the values themselves alone."""
    return (values, 0) if across is None else across.gather(values)


def covariance(adv, logp, mask, across=None):
    """(B, T) (A - mean A)(log pi - mean log pi) per token, means over the batch's masked tokens (arXiv 2505.22617)."""
    on = mask.bool()
    lp = logp.detach()
    sums = torch.stack([adv[on].sum(), lp[on].sum(), on.sum().to(adv.dtype)])
    if across is not None:
        sums = across.sum(sums)
    return (adv - sums[0] / sums[2]) * (lp - sums[1] / sums[2])


def draw_seed(*tensors):
    """A seed read from tensors' float64 bytes (the first 8 of their sha256): Clip-Cov's draw, repeatable
    from the batch (methods pass the rewards and the response lengths), so its coefficient and objective agree."""
    h = hashlib.sha256()
    for x in tensors:
        h.update(x.detach().double().cpu().contiguous().numpy().tobytes())
    return int.from_bytes(h.digest()[:8], "little") % (2 ** 63)


def _chosen(picked_global, start, mask):
    """(B, T) 1 on this rank's tokens among `picked_global`, indices into the batch's masked tokens."""
    valid = mask.bool().flatten().nonzero().flatten()  # this rank's masked tokens, row-major
    local = picked_global[(picked_global >= start) & (picked_global < start + len(valid))] - start
    out = torch.zeros(mask.numel(), dtype=mask.dtype, device=mask.device)
    out[valid[local.to(valid.device)]] = 1
    return out.view_as(mask)


def clip_cov_tokens(adv, logp, logp_old, mask, low, high, ratio=2e-4, lb=1.0, ub=5.0, seed=0, across=None):
    """(B, T) 1 on the tokens Clip-Cov detaches: among the unclipped tokens whose covariance lies in (lb, ub),
    max(1, int(ratio N)) drawn at random (N: the batch's tokens): a torch.randperm of the candidates
    (in the order of the batch's masked tokens, row-major) with a generator seeded by `seed`."""
    on = mask.bool()
    cov = covariance(adv, logp, mask, across)
    r = torch.exp(logp.detach() - logp_old)
    clipped = (-adv * r.clamp(1 - low, 1 + high)) > (-adv * r)  # where PPO's clip binds
    flags, start = _global(((cov > lb) & (cov < ub) & ~clipped)[on].double(), across)
    candidates = flags.nonzero().flatten()
    n = max(int(ratio * len(flags)), 1)
    g = torch.Generator().manual_seed(seed)
    picked = candidates[torch.randperm(len(candidates), generator=g)[:n].to(candidates.device)]
    return _chosen(picked, start, mask)


def clip_cov(adv, logp, logp_old, mask, clip_eps=0.2, clip_eps_high=None, ratio=2e-4, lb=1.0, ub=5.0, *,
             seed=0, aggregation="batch-token-mean", group_size=None, max_len=None, across=None):
    """Clip-Cov (Cui et al., arXiv 2505.22617, §4): PPO's clipped GC, set to 0 on a few unclipped tokens of
    high covariance between advantage and log-prob, the tokens that drive the entropy down.

    >>> m = torch.ones(1, 2); a = torch.tensor([[1., 1.]]); lp = torch.tensor([[-1., -3.]])
    >>> clip_cov(a, lp, lp, m, ratio=0.5, lb=-1.0, ub=1.0, aggregation="seq-mean-token-mean")  # cov 0, 0
    tensor([[0., 1.]])
    """
    mask = _mask(mask)
    low, high = _clip_range(clip_eps, clip_eps_high)
    adv = _adv(adv, mask)
    logp = _checks.per_token(logp, "logp", mask)
    logp_old = _checks.per_token(logp_old, "logp_old", mask).detach()
    cut = clip_cov_tokens(adv, logp, logp_old, mask, low, high, ratio, lb, ub, seed, across)
    term = _ratio_term(adv, logp, logp_old, mask, low, high) * (1 - cut)
    return _out(_w(mask, aggregation, group_size, max_len, across) * term, mask)


def kl_cov_tokens(adv, logp, mask, ratio=2e-4, across=None):
    """(B, T) 1 on the max(1, int(ratio N)) tokens of largest covariance (KL-Cov, arXiv 2505.22617)."""
    values, start = _global(covariance(adv, logp, mask, across)[mask.bool()], across)
    n = max(int(ratio * len(values)), 1)
    return _chosen(values.topk(n).indices, start, mask)


def kl_cov(adv, logp, logp_old, mask, ratio=2e-4, coef=1.0, *, aggregation="batch-token-mean", group_size=None,
           max_len=None, across=None):
    """KL-Cov (arXiv 2505.22617, §4): r A with no clip, and a penalty coef |log r| on the tokens of largest
    covariance: GC = w (r A - coef sign(log r)) there, w r A elsewhere (on-policy: A, log r = 0).

    >>> m = torch.ones(1, 3); a = torch.tensor([[2., 0., -1.]]); old = torch.tensor([[0., 0., 0.3]])
    >>> kl_cov(a, torch.tensor([[-0.1, 0.2, 0.]]), old, m, ratio=0.34, aggregation="seq-mean-token-mean")
    tensor([[1.8097, 0.0000, 0.2592]])
    """
    mask = _mask(mask)
    coef = _checks.scalar(coef, "coef", low=0.0)
    adv = _adv(adv, mask)
    lr = _log_ratio(logp, logp_old, mask)
    chosen = kl_cov_tokens(adv, logp, mask, ratio, across)
    term = torch.exp(lr) * adv - coef * chosen * torch.sign(lr)
    return _out(_w(mask, aggregation, group_size, max_len, across) * term, mask)
