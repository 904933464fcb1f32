"""The GC term of a KL penalty, for each estimator and for each place it can sit (loss or reward).

With x = logp_ref - logp per token (J. Schulman, "Approximating KL divergence",
http://joschu.net/blog/kl-approx.html; kl/estimators.py), a penalty -beta k added to J per token gives
GC += beta * d(-k)/dlogp:
    k1 = -x            as a loss: -beta            zero in expectation: E_pi[grad log pi] = 0
    k2 = x^2 / 2       as a loss: beta x           E = -beta grad KL(pi || pi_ref)  (reverse)
    k3 = e^x - 1 - x   as a loss: beta (e^x - 1)   E = -beta grad KL(pi_ref || pi)  (forward; eq 21)
    r k3, r = pi/pi_old (TRL's use_bias_correction_kl): beta r x   E = -beta grad KL(pi || pi_ref)
    k1 in the reward (REINFORCE++, PPO's eq 2): -beta sum_{t' >= t} k1_t'  E = -beta grad KL(pi || pi_ref)
"E" is the expectation over o ~ pi at pi_old = pi; kl/study.py computes each exactly on a tiny vocabulary.
"""

import torch

from .. import _checks, advantages


def _mask(mask):
    return _checks.response_mask(mask).detach()


def _k1_loss(x, ratio):
    return -torch.ones_like(x)  # d(-k1)/dlogp = d(logp_ref - logp)/dlogp


def _k2_loss(x, ratio):
    return x  # d(-x^2/2)/dlogp = -x * dx/dlogp = x


def _k3_loss(x, ratio):
    return torch.expm1(x)  # d(-(e^x - 1 - x))/dlogp = e^x - 1 (eq 21's KL term)


def _k3_ratio_loss(x, ratio):
    # d(-r k3)/dlogp = -r k3 - r (1 - e^x) = r x: the ratio's own derivative cancels k3's bias
    return ratio * x


ESTIMATORS = {"k1": _k1_loss, "k2": _k2_loss, "k3": _k3_loss, "k3-ratio": _k3_ratio_loss}


def kl_penalty(logp, logp_ref, mask, beta, estimator="k3", *, logp_old=None):
    """GC of J = -beta * mean_i (1/|o_i|) sum_t k(logp, logp_ref) (per response), k by `estimator`.

    "k3-ratio" is r * k3 with r = pi_theta / pi_old (logp_old: on-policy when None, r = 1).
    >>> m = torch.ones(1, 2); logp = torch.tensor([[-1.0, -2.0]]); ref = torch.tensor([[-1.5, -1.0]])
    >>> torch.cat([kl_penalty(logp, ref, m, 1.0, k) for k in ("k1", "k2", "k3")])  # x = -0.5, 1
    tensor([[-1.0000, -1.0000],
            [-0.5000,  1.0000],
            [-0.3935,  1.7183]])
    """
    mask = _mask(mask)
    if estimator not in ESTIMATORS:
        raise ValueError(f"unknown KL estimator {estimator!r}; choose one of {', '.join(ESTIMATORS)}")
    beta = _checks.scalar(beta, "beta", low=0.0)
    logp = _checks.per_token(logp, "logp", mask).detach()
    x = _checks.per_token(logp_ref, "logp_ref", mask).detach() - logp  # (B, T) log(pi_ref / pi)
    old = logp if logp_old is None else _checks.per_token(logp_old, "logp_old", mask).detach()
    term = beta * ESTIMATORS[estimator](x, torch.exp(logp - old))
    return torch.where(mask.bool(), term, torch.zeros_like(term))


def kl_in_reward(logp_old, logp_ref, mask, beta):
    """GC of k1 in the reward: -beta * sum_{t' >= t} log(pi_old / pi_ref)_t', the KL part of the return.

    The sampled responses' KL is a number attached to them, like the reward: held fixed, it reaches
    log pi only through the score function, which is what makes it unbiased for KL(pi || pi_ref).
    >>> kl_in_reward(torch.tensor([[-1.0, -2.0]]), torch.tensor([[-1.5, -1.0]]), torch.ones(1, 2), 1.0)
    tensor([[0.5000, 1.0000]])
    """
    mask = _mask(mask)
    beta = _checks.scalar(beta, "beta", low=0.0)
    k1 = _checks.per_token(logp_old, "logp_old", mask) - _checks.per_token(logp_ref, "logp_ref", mask)
    return (-beta * advantages.returns_to_go(k1.detach(), mask)).detach()
