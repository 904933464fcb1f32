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

Derivations (sympy, derivations.REGISTRY): kl_k1_loss, kl_k2_loss, kl_k3_loss, kl_k3_ratio_loss (use_bias_correction_kl
per token), kl_k1_reward (k1 in the reward), each also proving which KL its expected gradient follows; and
grpo_sequence_kl_ratio (use_bias_correction_kl at the sequence level).
"""

from dataclasses import dataclass

import sympy as sp
import torch

from .. import _checks
from ..derivations.core import BETA, Derivation, _k3, _one, _ragged_gc
from ..text import Text
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
    x = v.logp_ref - v.logp  # log pi_ref / pi_theta
    k = torch.exp(x) - x - 1
    if v.setting("use_bias_correction_kl", False):
        log_r = v.logp - v.logp_old
        if v.setting("importance_sampling_level", "token") == "sequence":
            log_r = ((log_r * v.mask).sum(-1, keepdim=True) / v.mask.sum(-1, keepdim=True).clamp(min=1))
        k = torch.exp(log_r) * k
    return -v.cfg.beta * k


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


# the derivations: each estimator's GC from its J, and which KL its expected gradient follows (exact sums)

KL_TARGETS = {"k1_loss": None, "k2_loss": "reverse", "k3_loss": "forward", "k3_ratio_loss": "reverse",
              "k1_reward": "reverse"}
"""Each use of an estimator (kl_USE in derivations.REGISTRY) -> the KL its expected gradient follows (None: 0)."""


def _kl_parts(n, use):
    """(J, derived GC, hand GC, (ell, ell^ref, ell^old)) of one response of n tokens."""
    l, lref, lo, bar = _one(n, "ell", "ell^ref", "ell^old", "ellbar")
    if use == "k1_reward":  # sg(return) * log pi: the KL of the sampled tokens from t on, held fixed
        ret = [-BETA * sum(b - z for b, z in zip(bar[t:], lref[t:])) for t in range(n)]
        J = sum(r * x for r, x in zip(ret, l)) / n
        gc = tuple(g.subs(dict(zip(bar, lo))) for g in _ragged_gc(J, (l,)))
        hand = tuple(-BETA * sum(y - z for y, z in zip(lo[t:], lref[t:])) for t in range(n))
        return J, gc, hand, (l, lref, lo)
    k1_ = [x - z for x, z in zip(l, lref)]
    per_token = {"k1_loss": k1_, "k2_loss": [k ** 2 / 2 for k in k1_], "k3_loss": [_k3(x, z) for x, z in zip(l, lref)],
                 "k3_ratio_loss": [sp.exp(x - y) * _k3(x, z) for x, y, z in zip(l, lo, lref)]}[use]
    J = -BETA * sum(per_token) / n
    x = [z - y for y, z in zip(l, lref)]  # log(pi_ref / pi)
    hand = tuple({"k1_loss": -BETA, "k2_loss": BETA * xi, "k3_loss": BETA * (sp.exp(xi) - 1),
                  "k3_ratio_loss": BETA * sp.exp(y - o) * xi}[use] for xi, y, o in zip(x, l, lo))
    return J, _ragged_gc(J, (l,)), hand, (l, lref, lo)


def derive_kl(n, use, target=None):
    """use: a key of KL_TARGETS; target: the KL claimed ("reverse", "forward", "zero"; default: the true one)."""
    J, gc, hand, (l, lref, lo) = _kl_parts(n, use)
    # the expectation over one token of a 3-token vocabulary, exactly: sum_o pi(o) GC(o) d log pi(o) / dz_j
    _, (g1,), _, (l1, lref1, lo1) = _kl_parts(1, use)
    z, w = sp.symbols("z_1:4", real=True), sp.symbols("w_1:4", real=True)
    logpi = [zi - sp.log(sum(sp.exp(v) for v in z)) for zi in z]
    logref = [wi - sp.log(sum(sp.exp(v) for v in w)) for wi in w]
    at = lambda o: {l1[0]: logpi[o], lref1[0]: logref[o], lo1[0]: logpi[o]}  # noqa: E731 on-policy sample o
    expected = [sum(sp.exp(logpi[o]) * g1.subs(at(o)) * sp.diff(logpi[o], zj) for o in range(3)) for zj in z]
    kls = {"reverse": sum(sp.exp(logpi[o]) * (logpi[o] - logref[o]) for o in range(3)),
           "forward": sum(sp.exp(logref[o]) * (logref[o] - logpi[o]) for o in range(3))}
    target = KL_TARGETS[use] if target is None else None if target == "zero" else target
    said = "0" if target is None else Text("-beta grad KL {target}", target=Text(target))
    claims = tuple((Text("E_pi[GC grad log pi] = {said} (d/dz_{j})", said=said, j=j + 1),
                    e if target is None else e + BETA * sp.diff(kls[target], z[j])) for j, e in enumerate(expected))
    symbols = {"logp": l, "logp_ref": lref, "beta": BETA}
    if use in ("k3_ratio_loss", "k1_reward"):
        symbols["logp_old"] = lo
    what = Text("zero") if target is None else Text("minus beta times the gradient of the {target} KL",
                                                     target=Text(target))
    notes = (Text("The claims sum over every token of a 3-token vocabulary (pi = softmax(z), pi_ref = softmax(w)), "
                  "on-policy: the expected gradient is {what}.", what=what),)
    return Derivation(f"kl_{use}", "kl/gc.py", J, gc, hand, None, symbols, claims, notes=notes)


def derive_sequence_kl_ratio(n):
    """k3 with use_bias_correction_kl at the sequence level: the row's ratio s multiplies every token's k3."""
    l, lo, lref = _one(n, "ell", "ell^old", "ell^ref")
    s = sp.exp(sum(x - y for x, y in zip(l, lo)) / n)  # the sequence ratio, with its gradient
    J = -BETA * sum(s * _k3(x, z) for x, z in zip(l, lref)) / n
    gc = _ragged_gc(J, (l,))
    mean_k3 = sum(_k3(x, z) for x, z in zip(l, lref)) / n
    hand = tuple(BETA * s * (sp.exp(z - x) - 1 - mean_k3) for x, z in zip(l, lref))
    claims = ((Text("with one token it is the token-level r k3 term, beta r x"),
               hand[0] - BETA * s * (lref[0] - l[0])),) if n == 1 else ()
    notes = (Text("TRL's use_bias_correction_kl multiplies k3 by the importance weight; at the sequence level the "
                  "weight s is shared by the row's tokens, so each token's GC also carries the row's mean k3."),)
    symbols = {"logp": l, "logp_old": lo, "logp_ref": lref, "beta": BETA}
    return Derivation("grpo_sequence_kl_ratio", "TRL use_bias_correction_kl, sequence level", J, gc, hand, None,
                      symbols, claims, notes=notes)


def _derive_use(use):
    def derive(n):
        return derive_kl(n, use)
    derive.__name__ = derive.__qualname__ = f"derive_kl_{use}"
    return derive


DERIVE = {f"kl_{use}": _derive_use(use) for use in KL_TARGETS}
"""derivations.REGISTRY's KL entries: kl_k1_loss, kl_k2_loss, kl_k3_loss, kl_k3_ratio_loss, kl_k1_reward."""


KL_TERMS.add("k1", gc=lambda v: _beta(v) * torch.full_like(_x(v), -1.0),
             objective=lambda v: -v.cfg.beta * (v.logp - v.logp_ref),
             summary="k1 = log(pi / pi_ref): unbiased, high variance; in the loss its gradient is 0 in expectation",
             cite="Schulman, Approximating KL divergence (2020); DeepSeekMath eq 2 (PPO's KL reward)", aliases=("kl",),
             ships_in=("paper", "verl"), reward=_reward(k1), reward_objective=_reward_objective(lambda lr: lr),
             derivation=DERIVE["kl_k1_loss"], derivations={k: DERIVE[k] for k in ("kl_k1_loss", "kl_k1_reward")})
KL_TERMS.add("k2", gc=lambda v: _beta(v) * _x(v), objective=lambda v: -v.cfg.beta * 0.5 * (v.logp - v.logp_ref) ** 2,
             summary="k2 = (log(pi / pi_ref))^2 / 2: biased, low variance; its gradient follows KL(pi || pi_ref)",
             cite="Schulman, Approximating KL divergence (2020)", aliases=("mse",), ships_in=("verl",),
             reward=_reward(k2), reward_objective=_reward_objective(lambda lr: 0.5 * lr ** 2),
             derivation=DERIVE["kl_k2_loss"], derivations={"kl_k2_loss": DERIVE["kl_k2_loss"]})
KL_TERMS.add("k3", gc=_k3_gc, objective=_k3_objective, settings=K3Settings,
             summary="k3 = pi_ref/pi - 1 - log(pi_ref/pi) >= 0: eq 19's penalty; with use_bias_correction_kl, rho k3",
             cite="DeepSeekMath eq 19-21, arXiv 2402.03300; DeepSeek-V3.2 arXiv 2512.02556 (rho k3)",
             aliases=("low_var_kl",), ships_in=("paper", "TRL", "verl"), reward=_reward(k3),
             reward_objective=_reward_objective(lambda lr: torch.exp(-lr) - 1 + lr),
             derivation=DERIVE["kl_k3_loss"], derivations={**{k: DERIVE[k] for k in ("kl_k3_loss", "kl_k3_ratio_loss")},
                                                           "grpo_sequence_kl_ratio": derive_sequence_kl_ratio})

