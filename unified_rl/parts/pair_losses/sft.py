"""sft (TRL's loss_type): SFT on the chosen responses, the rejected ones untouched.

    l = -pol+ / L,  L = 1 (mean norm) or the batch's mean chosen length (sum norm)      a+ = 1 / L,  a- = 0

TRL averages its sft loss over every chosen token of the batch: under the sum norm J = sum_i sum_t log pi(o_i+)
/ (the batch's chosen tokens), so L is a batch mean (every rank's rows where the Step carries `across`): not a
function of the pair's own scores. It reads the policy side pol of the scores (the log-prob, never pi_ref's),
and it is ORPO's SFT term (the ORPO row adds it beside the odds-ratio loss).
"""

import sympy as sp
import torch

from ...derivations.core import Derivation, _toks
from ...text import Text
from ..registry import PAIR_LOSSES


def chosen_length(n1, across=None):
    """The batch's mean chosen length: sum of abs(o+) over the number of pairs (every rank's with `across`).

    >>> chosen_length(torch.tensor([2., 4.]))
    tensor(3.)
    """
    totals = torch.stack([torch.tensor(float(n1.shape[0]), dtype=n1.dtype), n1.sum()])
    if across is not None:
        totals = across.sum(totals)
    return totals[1] / totals[0]


def _gc(v):
    a = torch.ones_like(v.p1)
    if v.norm == "sum":
        a = a / chosen_length(v.n1, v.across)
    return a, torch.zeros_like(v.p2)


def _objective(v):
    """The chosen responses' negative log-likelihood: per-token means, or every chosen token of the batch alike."""
    if v.norm == "mean":
        return -v.p1
    n = v.mask[:v.B].sum(-1)
    counts = torch.stack([torch.tensor(float(n.shape[0]), dtype=n.dtype), n.sum()])
    counts = counts if v.across is None else v.across.sum(counts)
    return -v.p1 * counts[0] / counts[1]


def derive_sft(n, norm="sum"):
    """One pair's chosen response: J = its mean log-likelihood (one pair: both norms alike)."""
    lc = _toks("ell^+", n)
    J = sum(lc) / n
    gc = tuple(sp.simplify(n * sp.diff(J, t)) for t in lc)
    notes = (Text("sft is SFT on the chosen responses (eq 6-7's GC of 1) with no pi_ref; the rejected ones get "
                  "GC 0. TRL averages over every chosen token of the batch: under norm = sum the GC is "
                  "|o| / (the batch's mean chosen length), under mean it is 1."),)
    return Derivation("dpo_sft", "TRL DPOTrainer loss_type='sft'", J, gc, (sp.Integer(1),) * n, None,
                      {"logp_chosen": lc}, notes=notes)


PAIR_LOSSES.add("sft", gc=_gc, objective=_objective, derivation=derive_sft, derivations={"dpo_sft": derive_sft},
                summary="SFT on the chosen responses (their log-probs, no pi_ref); the rejected get nothing",
                cite="DeepSeekMath eq 6-7 on the chosen responses; TRL DPOTrainer loss_type='sft'; ORPO eq 6's L_SFT",
                ships_in=("TRL",))
