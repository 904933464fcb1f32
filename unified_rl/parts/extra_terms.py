"""Terms added beside the policy term that are not a KL to pi_ref: they take the KL axis's place (`kl=`, in the loss).

| name            | term of J (maximised)                                   | GC term (per token)                 | source |
|-----------------|---------------------------------------------------------|-------------------------------------|--------|
| log_ratio_sq    | -tau (log pi_theta - log pi_old)^2, the composition's aggregation | -2 tau log r               | prime-rl default_loss_fn (Kimi K2.5, arXiv 2602.02276) |
| positive_nll    | mu sum_{r_i > 0} sum_t log pi / N+ (its own normaliser) | mu B |o_i| / N+ on the rows r_i > 0 | VAPO eq 10, arXiv 2504.05118; NeMo-RL positive_example_nll_weight |
| entropy_bonus   | c sum_t -rho_s log pi / N (its own normaliser)          | -c rho_s (log pi + 1) B |o_i| / N   | TRL entropy_coef (an estimator: below) |

N+ counts the kept tokens of the rows with reward > 0 and N every kept token: NeMo-RL and TRL normalise these terms
by their own token counts whatever the policy loss divides by, so the GC term is divided by the aggregation's row
factor w_i, which the composition multiplies back.

The NLL is a function of the sampled tokens' log-probs, so its GC is exact. The entropy is not: TRL's bonus is
c times the mean over positions of H_t = -sum_a pi(a) log pi(a), the whole distribution at each prefix, whose
gradient is no coefficient on the sampled token. What a sampled token can carry is an estimate: with rho_s =
pi_theta / pi_sampler (not differentiated), E_{a ~ pi_sampler}[-rho_s log pi_theta(a)] = H_t, and
E[-rho_s (log pi_theta(a) + 1) grad log pi_theta(a)] = grad H_t, so `entropy_bonus` follows TRL's gradient in
expectation over the sampled tokens, not on one batch (derive("entropy_bonus") proves the expectation on a
three-token vocabulary; tests/test_field_2026_trl.py checks the expectation against TRL's own loss on the tiny
lab model, and that one batch's tokens give only an estimate of it). TRL's
use_adaptive_entropy (entropy_target, entropy_coef_delta: Skywork-OR1) moves c between steps from the measured
entropy: a controller of the run, not a term of one step's loss, and not here.
"""

from dataclasses import dataclass

import sympy as sp
import torch

from .. import _checks
from ..derivations.core import Derivation, _one, _ragged
from ..text import Text
from . import aggregations
from .registry import AGGREGATIONS, TERMS


@dataclass(frozen=True)
class LogRatioSqSettings:
    log_ratio_sq_tau: float = 1e-3
    """tau: J gets -tau (log pi_theta - log pi_old)^2 on every token (prime-rl's kl_tau, 1e-3)"""


@dataclass(frozen=True)
class PositiveNllSettings:
    positive_example_nll_weight: float = 0.1
    """mu: J gets mu times the mean log pi over the tokens of the rows with reward > 0 (VAPO's 0.1; NeMo-RL's name,
    0 there by default: off)"""


@dataclass(frozen=True)
class EntropySettings:
    entropy_coef: float = 0.01
    """c: J gets c times the estimated mean per-token entropy of the kept tokens (TRL's entropy_coef; 0 there by
    default: off)"""


def own_average(mask, on, w, across=None):
    """(B, T) B |o_i| / (N_on w_i) on the tokens `on` (0 elsewhere): the GC factor of a term averaged over its own
    N_on tokens, divided by the aggregation's row factor w (B, 1), which the composition multiplies back.

    >>> m = torch.ones(2, 2); on = torch.tensor([[1., 1.], [0., 0.]])   # the term covers row 1's two tokens
    >>> own_average(m, on, torch.ones(2, 1))    # seq-mean-token-mean (w = 1): B |o_1| / N_on = 2
    tensor([[2., 2.],
            [0., 0.]])
    """
    totals = torch.stack([torch.tensor(float(mask.shape[0]), dtype=mask.dtype), on.sum()])
    if across is not None:
        totals = across.sum(totals)
    n = mask.sum(-1, keepdim=True)
    factor = torch.where(w > 0, totals[0] * n / (totals[1].clamp(min=1) * w.clamp(min=1e-300)), torch.zeros_like(w))
    return factor * on


def entropy_estimate_gc(logp, sampler_logp, coef):
    """(B, T) d/dlogp of coef * (-rho log pi), rho = pi_theta / pi_sampler: -coef rho (log pi + 1).

    >>> entropy_estimate_gc(torch.tensor([[-2.0, 0.0]]), torch.tensor([[-2.0, 0.0]]), 1.0)  # surprisal 2 up, 0 down
    tensor([[ 1., -1.]])
    """
    return -coef * torch.exp(logp - sampler_logp) * (logp + 1)


def log_ratio_sq_gc(log_ratio, tau):
    """(B, T) d/dlogp of -tau (log r)^2: -2 tau log r.

    >>> log_ratio_sq_gc(torch.tensor([[0.5, -0.25]]), 0.1)
    tensor([[-0.1000,  0.0500]])
    """
    return -2 * tau * log_ratio


def _weight(v):
    return aggregations.weight(v, v.setting("aggregation", "seq-mean-token-mean"))  # (B, 1)


def _rewards_positive(v):
    if v.scores is None:
        raise ValueError("positive_nll needs the rewards: its term covers the rows with reward > 0")
    r = _checks.as_tensor(v.scores, "rewards").double()
    return ((r.sum(-1) if r.dim() == 2 else r) > 0).to(v.mask.dtype)[:, None]


def _log_ratio_sq(v):
    return log_ratio_sq_gc(v.log_ratio(), _checks.scalar(v.setting("log_ratio_sq_tau"), "log_ratio_sq_tau", low=0.0))


def _positive_nll(v):
    mu = _checks.scalar(v.setting("positive_example_nll_weight"), "positive_example_nll_weight", low=0.0)
    return mu * own_average(v.mask, v.mask * _rewards_positive(v), _weight(v), v.across)


def _entropy_bonus(v):
    c = _checks.scalar(v.setting("entropy_coef"), "entropy_coef", low=0.0)
    return entropy_estimate_gc(v.logp, v.sampler_logp, c) * own_average(v.mask, v.mask, _weight(v), v.across)


# the objective's side: each term written out, and the aggregation undone by its own derivative

def _per_row(v):
    """(B, T) a_i: d Agg(f) / d f_{i,t} of the composition's aggregation (its objective, which is linear in f)."""
    probe = torch.ones_like(v.mask).requires_grad_()
    with torch.enable_grad():
        (a,) = torch.autograd.grad(AGGREGATIONS.get(v.setting("aggregation", "seq-mean-token-mean")).objective(probe, v),
                                   probe)
    return a


def _averaged(v, term, on):
    """term on the tokens `on`, such that the composition's aggregation of it is sum(on * term) / sum(on)."""
    a = _per_row(v)
    scale = torch.where(a > 0, 1 / (on.sum().clamp(min=1) * a.clamp(min=1e-300)), torch.zeros_like(a))
    return term * on * scale


def _log_ratio_sq_objective(v):
    """-tau (log pi - log pi_old)^2 per token."""
    return -v.setting("log_ratio_sq_tau") * (v.logp - v.logp_old) ** 2


def _positive_nll_objective(v):
    """mu log pi averaged over the tokens of the rows with reward > 0."""
    r = torch.as_tensor(v.scores).double()
    good = ((r.sum(-1) if r.dim() == 2 else r) > 0).to(v.mask.dtype)[:, None]
    return _averaged(v, v.setting("positive_example_nll_weight") * v.logp, v.mask * good)


def _entropy_bonus_objective(v):
    """c times -(pi_theta / pi_sampler) log pi_theta averaged over the kept tokens: the importance-weighted surprisal,
    whose expectation over the sampler's tokens is the mean entropy of pi_theta."""
    surprisal = -torch.exp(v.logp - v.sampler_logp) * v.logp
    return _averaged(v, v.setting("entropy_coef") * surprisal, v.mask)


# the derivations

def derive_log_ratio_sq(n):
    """One response: J = -tau mean_t (ell_t - ell^old_t)^2."""
    l, lo = _one(n, "ell", "ell^old")
    tau = sp.Symbol("tau", positive=True)
    J = -tau * sum((x - y) ** 2 for x, y in zip(l, lo)) / n
    hand = tuple(-2 * tau * (x - y) for x, y in zip(l, lo))
    claims = ((Text("at pi_old = pi_theta the term's GC is 0"), hand[0].subs(lo[0], l[0])),)
    notes = (Text("The square pulls each token's log-ratio back toward pi_old with GC -2 tau log r, in the "
                  "aggregation of the policy term (prime-rl sums both over the batch's tokens)."),)
    return Derivation("log_ratio_sq", "prime-rl default_loss_fn; arXiv 2602.02276", J,
                      tuple(n * sp.diff(J, x) for x in l), hand, None,
                      {"logp": l, "logp_old": lo, "log_ratio_sq_tau": tau}, claims, notes=notes)


def derive_positive_nll(n):
    """Two rows, reward > 0 (n tokens) and reward <= 0 (n + 1): J = mu sum_{t in row 1} ell / N+, N+ = n."""
    l = _ragged("ell", (n, n + 1))
    mu = sp.Symbol("mu", positive=True)
    J = mu * sum(l[0]) / n
    gc = tuple(2 * len(row) * sp.diff(J, x) for row in l for x in row)
    hand = tuple([2 * n * mu / n] * n + [sp.Integer(0)] * (n + 1))  # B |o_i| mu / N+ on the positive row
    claims = ((Text("a row with reward <= 0 gets no GC from the term"), gc[n]),)
    notes = (Text("The NLL is a function of the sampled tokens' log-probs, so its GC is exact: mu B |o_i| / N+ on "
                  "the rows with reward > 0, N+ their tokens, whatever the policy term's aggregation."),)
    return Derivation("positive_nll", "VAPO eq 10, arXiv 2504.05118", J, gc, hand, None,
                      {"logp": l[0] + l[1], "positive_example_nll_weight": mu}, claims, notes=notes,
                      scale="B\\,|o_i|")


def derive_entropy_bonus(n):
    """One response: J = c mean_t -rho_t ell_t, rho_t = exp(ell_t - ell^s_t); and the estimator's expectation."""
    l, ls = _one(n, "ell", "ell^s")
    c = sp.Symbol("c", positive=True)
    J = c * sum(-sp.exp(x - s) * x for x, s in zip(l, ls)) / n
    hand = tuple(-c * sp.exp(x - s) * (x + 1) for x, s in zip(l, ls))
    z = sp.symbols("z_1:4", real=True)  # the logits of a three-token vocabulary, sampled on-policy
    logpi = [zi - sp.log(sum(sp.exp(w) for w in z)) for zi in z]
    H = -sum(sp.exp(lp) * lp for lp in logpi)
    (g,) = _one(1, "ell")
    at = lambda o: {g[0]: logpi[o]}  # noqa: E731
    one = -c * (g[0] + 1)  # the GC of one token at rho_s = 1
    claims = tuple((Text("E_pi[GC grad log pi] = c grad H, the exact entropy's gradient (d/dz_{j})", j=j + 1),
                    sum(sp.exp(logpi[o]) * one.subs(at(o)) * sp.diff(logpi[o], zj) for o in range(3))
                    - c * sp.diff(H, zj)) for j, zj in enumerate(z))
    notes = (Text("TRL's bonus is the entropy of the whole distribution at each prefix, no function of the sampled "
                  "token's log-prob: its gradient is no GC. The importance-weighted surprisal -rho log pi estimates "
                  "it, and its GC -c rho (log pi + 1) has TRL's gradient as its expectation over the sampled tokens, "
                  "not on one batch."),)
    return Derivation("entropy_bonus", "TRL entropy_coef (an estimator)", J, tuple(n * sp.diff(J, x) for x in l), hand,
                      None, {"logp": l, "sampler_logp": ls, "entropy_coef": c}, claims, notes=notes)


TERMS.add("log_ratio_sq", gc=_log_ratio_sq, objective=_log_ratio_sq_objective, settings=LogRatioSqSettings,
             derivation=derive_log_ratio_sq, aliases=("kimi_k2_5",),
             summary="-tau (log pi_theta - log pi_old)^2 per token: a squared pull toward the sampler (Kimi K2.5)",
             cite="prime-rl default_loss_fn (Kimi K2.5, arXiv 2602.02276)", ships_in=("prime-rl",))
TERMS.add("positive_nll", gc=_positive_nll, objective=_positive_nll_objective, settings=PositiveNllSettings,
             derivation=derive_positive_nll, aliases=("vapo_nll",),
             summary="mu times the mean log pi of the rows with reward > 0: SFT on the right answers beside the RL term",
             cite="VAPO eq 10, arXiv 2504.05118; NeMo-RL positive_example_nll_weight", ships_in=("NeMo-RL",))
TERMS.add("entropy_bonus", gc=_entropy_bonus, objective=_entropy_bonus_objective, settings=EntropySettings,
             derivation=derive_entropy_bonus,
             summary="c times the estimated mean entropy: -rho log pi per sampled token, TRL's bonus in expectation",
             cite="TRL GRPOConfig entropy_coef (estimated on the sampled tokens)", ships_in=("TRL",))
