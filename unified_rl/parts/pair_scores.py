"""How each response of a preference batch is scored: one number s = pol - ref per response.

| name      | policy side pol         | reference side ref          | GC piece k = abs(o) ds/d ell_t | who                       |
|-----------|-------------------------|-----------------------------|--------------------------------|---------------------------|
| log_ratio | N(sum_t log pi_theta)   | N(sum_t log pi_ref)         | 1 (mean), abs(o) (sum)         | DPO, IPO, KTO, TRL's loss types |
| logp      | N(sum_t log pi_theta)   | 0: no reference model       | 1 (mean), abs(o) (sum)         | SimPO (eq 4), ORPO (eq 3) |

N is the composition's norm, a setting: "mean" divides by abs(o) (DeepSeekMath's eq 12, SimPO's eq 4, ORPO's
eq 3, TRL's ipo and sigmoid_norm), "sum" keeps the sequence's log-prob (the DPO, IPO and KTO papers', TRL's
other loss types), so that a longer response is pushed harder. A loss reads s (and AOT the two sides apart);
the score's derivative is the same on every token of a response, k: the composed GC of a row is 2 a k, a the
loss's B dJ/ds and 2 because the surrogate averages over the 2B rows where J averages over the B pairs.
"""

import sympy as sp
import torch

from ..derivations.core import Derivation, _one
from ..text import Text
from .pair_view import Score
from .registry import PAIR_SCORES

NORMS = ("mean", "sum")


def score(logp, mask, norm, logp_ref=None):
    """(Score(s, pol, ref), k) of each response, detached: its log-prob (minus pi_ref's) summed or averaged over
    its tokens, and k = abs(o) ds/d ell_t (1 under mean, abs(o) under sum).

    >>> m = torch.tensor([[1., 1., 0.]]); lp = torch.tensor([[-1., -2., -9.]]); ref = torch.tensor([[-1., -1., 0.]])
    >>> sc, k = score(lp, m, "sum", ref); sc.s, sc.pol, sc.ref, k
    (tensor([-1.]), tensor([-3.]), tensor([-2.]), tensor([2.]))
    >>> score(lp, m, "mean")[0].s
    tensor([-1.5000])
    """
    if norm not in NORMS:
        raise ValueError(f"unknown norm {norm!r}; choose 'mean' (each response's mean over its tokens) or 'sum'")
    n = mask.sum(-1)  # (B,)
    div, k = (n, torch.ones_like(n)) if norm == "mean" else (torch.ones_like(n), n)
    pol = (logp.detach() * mask).sum(-1) / div
    if logp_ref is None:
        return Score(pol, pol, torch.zeros_like(pol)), k
    ref = (logp_ref.detach() * mask).sum(-1) / div
    return Score(((logp.detach() - logp_ref.detach()) * mask).sum(-1) / div, pol, ref), k


def _needs_ref(v):
    if v.logp_ref is None:
        raise ValueError("the log_ratio scores need logp_ref (pi_ref's log-probs): the composition must use pi_ref")
    return v.logp_ref


def _log_ratio_gc(v):
    return score(v.logp, v.mask, v.norm, _needs_ref(v))


def _logp_gc(v):
    return score(v.logp, v.mask, v.norm)


# the objective's side: each score written out again, log pi_theta keeping its gradient

def written(logp, mask, norm, logp_ref=None):
    """Score(s, pol, ref) with logp's gradient: sum_t (log pi - log pi_ref), over abs(o) under the mean norm."""
    length = mask.sum(-1) if norm == "mean" else 1.0
    pol = (logp * mask).sum(-1) / length
    if logp_ref is None:
        return Score(pol, pol, torch.zeros_like(pol))
    return Score(((logp - logp_ref) * mask).sum(-1) / length, pol, (logp_ref * mask).sum(-1) / length)


def _log_ratio_objective(v):
    if v.logp_ref is None:
        raise ValueError("the log_ratio scores need logp_ref (pi_ref's log-probs)")
    return written(v.logp, v.mask, v.norm, v.logp_ref.detach())


def _logp_objective(v):
    return written(v.logp, v.mask, v.norm)


# the derivations: one response's score and its GC piece k

def derive_score(n, with_ref=True, norm="mean"):
    """One response of n tokens: J = s, its GC piece abs(o) ds/d ell_t, and the hand form k."""
    l, lref = _one(n, "ell", "ell^ref")
    agg = (lambda xs: sum(xs) / n) if norm == "mean" else sum  # noqa: E731
    J = agg([x - y for x, y in zip(l, lref)]) if with_ref else agg(list(l))
    gc = tuple(n * sp.diff(J, x) for x in l)
    hand = (sp.Integer(1) if norm == "mean" else sp.Integer(n),) * n
    symbols = {"logp": l, "logp_ref": lref} if with_ref else {"logp": l}
    notes = (Text("A response's score is one number; its derivative is the same on every token: k = 1 under the "
                  "mean norm, |o| under the sum, whatever the loss of the scores."),)
    name = "pair_score_log_ratio" if with_ref else "pair_score_logp"
    return Derivation(name, "DeepSeekMath eq 12 (x); SimPO eq 4", J, gc, hand, None, symbols, notes=notes)


def derive_log_ratio(n, norm="mean"):
    return derive_score(n, True, norm)


def derive_logp(n, norm="mean"):
    return derive_score(n, False, norm)


PAIR_SCORES.add("log_ratio", gc=_log_ratio_gc, objective=_log_ratio_objective, uses_ref=True,
                summary="log pi_theta(o) - log pi_ref(o), summed or averaged over the response's tokens",
                cite="DPO, Rafailov et al., arXiv 2305.18290 (eq 7); DeepSeekMath eq 12 (per-token mean)",
                ships_in=("paper", "TRL"), derivation=derive_log_ratio,
                derivations={"pair_score_log_ratio": derive_log_ratio})
PAIR_SCORES.add("logp", gc=_logp_gc, objective=_logp_objective, uses_ref=False,
                summary="log pi_theta(o) alone, summed or averaged over the response's tokens: no reference model",
                cite="SimPO, Meng et al., arXiv 2405.14734 (eq 4); ORPO, Hong et al., arXiv 2403.07691 (eq 3)",
                ships_in=("TRL",), derivation=derive_logp, derivations={"pair_score_logp": derive_logp})
