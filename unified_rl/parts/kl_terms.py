"""KL terms: a penalty -beta k per token toward the frozen pi_ref, in the loss or in the reward.

With x = log pi_ref / pi_theta per token (J. Schulman, "Approximating KL divergence",
http://joschu.net/blog/kl-approx.html), a penalty -beta k added to J per token gives GC += beta d(-k)/dlogp:

| name (verl's alias)  | k               | GC term in the loss            | expected gradient (kl/study.py)        |
|----------------------|-----------------|--------------------------------|----------------------------------------|
| k1 (kl)              | -x              | -beta                          | 0: E_pi[grad log pi] = 0                |
| k2 (mse)             | x^2 / 2         | beta x                         | -beta grad KL(pi || pi_ref)            |
| k3 (low_var_kl)      | e^x - 1 - x     | beta (e^x - 1)  (eq 21)        | -beta grad KL(pi_ref || pi)            |
| k3, use_bias_correction_kl | rho k3, rho = pi/pi_old | beta rho x (token level)  | -beta grad KL(pi || pi_ref)  (TRL)     |

In the reward (PPO's eq 2, REINFORCE++, verl's use_kl_in_reward): beta k of the sampled tokens, computed from the
sampler's log-probs, is subtracted from the reward before the advantage; it reaches log pi only through the
score function. Where the term sits is the composition's `kl_in` ("loss" or "reward"), not a setting of the part.
"""

from dataclasses import dataclass

import torch

from .. import _checks
from .registry import KL_TERMS


def _beta(v):
    return _checks.scalar(v.cfg.beta, "beta", low=0.0)


def _x(v):
    if v.logp_ref is None:
        raise ValueError("a KL term needs logp_ref (the reference log-probs): the composition must use pi_ref")
    return v.logp_ref - v.logp  # (B, T) log pi_ref / pi (with logp's gradient on the objective's side)


def k1(x):
    return -x


def k2(x):
    return 0.5 * x ** 2


def k3(x):
    return torch.expm1(x) - x


@dataclass(frozen=True)
class K3Settings:
    """k3's one option."""

    use_bias_correction_kl: bool = False
    """the penalty rho k3 instead of k3, rho the policy's ratio to the sampler (token or sequence, as the policy
    term's importance_sampling_level): its gradient follows KL(pi || pi_ref) (DeepSeek-V3.2, arXiv 2512.02556;
    TRL's use_bias_correction_kl, its default True)"""


def _k3_gc(v):
    x = _x(v)
    beta = _beta(v)
    if not v.setting("use_bias_correction_kl", False):
        return beta * torch.expm1(x)
    level = v.setting("importance_sampling_level", "token")
    rho = v.ratio(level)
    if level == "sequence":  # d(-s k3)/dlogp_t: s's own derivative s/|o| spreads the row's mean k3 over its tokens
        return beta * rho * (torch.expm1(x) - v.seq_mean(k3(x)))
    return beta * rho * x  # d(-r k3)/dlogp = r x: the ratio's derivative cancels k3's bias


def _k3_objective(v):
    x = _x(v)
    k = torch.exp(x) - x - 1
    if v.setting("use_bias_correction_kl", False):
        log_r = v.logp - v.logp_old
        if v.setting("importance_sampling_level", "token") == "sequence":
            log_r = ((log_r * v.mask).sum(-1, keepdim=True) / v.mask.sum(-1, keepdim=True).clamp(min=1))
        k = torch.exp(log_r) * k
    return -_beta(v) * k


def _reward(estimator):
    """k of each sampled token under the sampler (detached: a number attached to the sample, as a reward); the
    advantage subtracts beta times it."""
    def reward(v):
        if v.logp_ref is None:
            raise ValueError("a KL in the reward needs logp_ref (the reference log-probs)")
        return estimator(v.logp_ref - v.sampler_logp) * v.full
    return reward


def _reward_objective(estimator_of_logratio):
    def reward(v):
        return estimator_of_logratio(v.sampler_logp - v.logp_ref) * v.full  # of log pi_sampler / pi_ref, written out
    return reward


KL_TERMS.add("k1", gc=lambda v: _beta(v) * torch.full_like(_x(v), -1.0), objective=lambda v: -_beta(v) * (v.logp - v.logp_ref),
             summary="k1 = log(pi / pi_ref): unbiased, high variance; in the loss its gradient is 0 in expectation",
             cite="Schulman, Approximating KL divergence (2020); DeepSeekMath eq 2 (PPO's KL reward)", aliases=("kl",),
             ships_in=("paper", "verl"), reward=_reward(k1), reward_objective=_reward_objective(lambda lr: lr),
             derivation=lambda n: _derive(n, "k1"))
KL_TERMS.add("k2", gc=lambda v: _beta(v) * _x(v), objective=lambda v: -_beta(v) * 0.5 * (v.logp - v.logp_ref) ** 2,
             summary="k2 = (log(pi / pi_ref))^2 / 2: biased, low variance; its gradient follows KL(pi || pi_ref)",
             cite="Schulman, Approximating KL divergence (2020)", aliases=("mse",), ships_in=("verl",),
             reward=_reward(k2), reward_objective=_reward_objective(lambda lr: 0.5 * lr ** 2),
             derivation=lambda n: _derive(n, "k2"))
KL_TERMS.add("k3", gc=_k3_gc, objective=_k3_objective, settings=K3Settings,
             summary="k3 = pi_ref/pi - 1 - log(pi_ref/pi) >= 0: eq 19's penalty; with use_bias_correction_kl, rho k3",
             cite="DeepSeekMath eq 19-21, arXiv 2402.03300; DeepSeek-V3.2 arXiv 2512.02556 (rho k3)",
             aliases=("low_var_kl",), ships_in=("paper", "TRL", "verl"), reward=_reward(k3),
             reward_objective=_reward_objective(lambda lr: torch.exp(-lr) - 1 + lr),
             derivation=lambda n: _derive(n, "k3"))


def _derive(n, name):
    from ..derivations.policy_gradient import REGISTRY
    return REGISTRY[f"kl_{name}_loss"](n)
