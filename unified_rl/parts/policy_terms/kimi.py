"""Kimi k1.5's policy term (ROLL's `kimi15`): the advantage, and a square of the log-ratio to the sampler.

    level "token" (ROLL):    f_{i,t} = A log pi_theta(o_{i,t}) - tau/2 (log r_{i,t})^2        GC piece = A - tau log r_{i,t}
    level "sequence" (paper): sum_t f_{i,t} = A log pi_theta(o_i) - tau/2 (log pi_theta(o_i) / pi_old(o_i))^2
                                                                                  GC piece = A - tau sum_t log r_{i,t}

The paper's eq 3 (its gradient of the squared loss of eq 2) squares the whole response's log-ratio, so every token
of o_i is pulled back by the response's summed log-ratio; ROLL squares each token's, which is verl's `dro` term
(tau = dro_beta). At the sequence level f_{i,t} = A log pi - tau/2 |o_i| m_i^2 (m_i the mean log-ratio over o_i's
tokens): summed over the tokens it is the paper's, so under seq-mean-token-sum J is eq 3's.
Kimi k1.5, arXiv 2501.12599, §2.3.2 eq 3; ROLL agentic_actor_pg_worker.py _compute_kimi15_loss (kimi15_tau).
"""

from dataclasses import dataclass, field

import sympy as sp
import torch

from ... import _checks
from ...derivations.core import Derivation, _ragged
from ...text import Text
from ..aggregations import sympy_weights
from ..registry import POLICY_TERMS

LEVELS = ("token", "sequence")


@dataclass(frozen=True)
class Settings:
    kimi15_tau: float = 0.1
    """tau of the square (ROLL's kimi15_tau, 0.1)"""
    kimi15_level: str = field(default="token", metadata={"choices": LEVELS})
    """square each token's log-ratio (ROLL, verl's dro) or the response's sum of them (the paper's eq 3)"""


def kimi15(adv, log_ratio, mask, tau, level="token", keep=None):
    """(B, T) GC piece: keep (A - tau log r) per token, or keep A - tau m_i sum_t keep_t at the sequence level
    (m_i the mean log-ratio over the row's tokens; with keep the mask that is A - tau sum_t log r).

    >>> kimi15(torch.ones(1, 2), torch.tensor([[0.1, 0.3]]), torch.ones(1, 2), 1.0, "sequence")
    tensor([[0.6000, 0.6000]])
    """
    keep = mask if keep is None else keep
    if level == "token":
        return (adv - tau * log_ratio) * keep
    if level != "sequence":
        raise ValueError(f"unknown kimi15_level {level!r}; choose one of {', '.join(LEVELS)}")
    m = (log_ratio * mask).sum(-1, keepdim=True) / mask.sum(-1, keepdim=True).clamp(min=1)
    return adv * keep - tau * m * (keep * mask).sum(-1, keepdim=True) * mask


def _gc(v, adv, keep):
    tau = _checks.scalar(v.setting("kimi15_tau"), "kimi15_tau", low=0.0)
    return kimi15(adv, v.log_ratio(), v.mask, tau, v.setting("kimi15_level", "token"), keep)


def objective(v, adv):
    """A log pi minus tau/2 times the square of each token's log-ratio, or |o_i| m_i^2 on every token of o_i."""
    d = (v.logp - v.logp_old) * v.mask
    tau = v.setting("kimi15_tau")
    if v.setting("kimi15_level", "token") == "token":
        return adv * v.logp - tau / 2 * d ** 2
    n = v.mask.sum(-1, keepdim=True).clamp(min=1)
    return adv * v.logp - tau / 2 * n * (d.sum(-1, keepdim=True) / n) ** 2


def derive_kimi15(n):
    """The paper's level, two responses, seq-mean-token-sum: J = mean_i (A_i sum_t ell - tau/2 (sum_t log r)^2)."""
    lengths = (n, n + 1)
    l, lo = _ragged("ell", lengths), _ragged("ell^old", lengths)
    A, tau = sp.symbols("A_1:3", real=True), sp.Symbol("tau", positive=True)
    S = [sum(x - y for x, y in zip(a, b)) for a, b in zip(l, lo)]
    J = sum(a * sum(row) - tau / 2 * s ** 2 for a, row, s in zip(A, l, S)) / 2
    gc = tuple(2 * len(row) * sp.diff(J, x) for row in l for x in row)
    w = sympy_weights(l, "seq-mean-token-sum")
    hand = tuple(wi * (a - tau * s) for wi, (a, s) in zip(w, [(a, s) for row, a, s in zip(l, A, S) for _ in row]))
    on = {y: x for a, b in zip(l, lo) for x, y in zip(a, b)}
    claims = ((Text("at pi_old = pi_theta the GC is |o_i| A_i, REINFORCE's with the token sum"),
               hand[0].subs(on) - n * A[0]),)
    notes = (Text("The square of the response's log-ratio pulls every token of o_i back by tau times the summed "
                  "log-ratio of the response, not by its own (ROLL's per-token square, verl's dro)."),)
    return Derivation("kimi15", "arXiv 2501.12599, eq 3", J, gc, hand, None,
                      {"adv": A, "logp": tuple(x for r in l for x in r), "logp_old": tuple(x for r in lo for x in r),
                       "kimi15_tau": tau}, claims, notes=notes, scale="B\\,|o_i|")


POLICY_TERMS.add("kimi15", gc=_gc, objective=objective, settings=Settings, reads_old=True, derivation=derive_kimi15,
                 summary="A minus tau times the log-ratio to the sampler, per token (ROLL) or per response (the paper)",
                 cite="Kimi k1.5, arXiv 2501.12599 eq 3; ROLL kimi15", ships_in=("ROLL",))
