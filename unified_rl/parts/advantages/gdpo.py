"""GDPO's reward-decoupled advantage (TRL's multi_objective_aggregation="normalize_then_sum").

Each reward column (B, K) normalised within its group, summed, then the sum normalised over the whole batch
(every rank's). "sum_then_normalize" is GRPO's A-hat of the columns' sum. GDPO: arXiv 2601.05242.
"""

from dataclasses import dataclass, field

import sympy as sp
import torch

from ... import advantages
from ...derivations.core import Derivation, _flat, _ragged, _ragged_gc
from ...text import Text
from ..registry import ADVANTAGES
from ._common import on_tokens

AGGREGATIONS = ("normalize_then_sum", "sum_then_normalize")


@dataclass(frozen=True)
class Settings:
    multi_objective_aggregation: str = field(default="normalize_then_sum", metadata={"choices": AGGREGATIONS})
    """normalise each reward in its group, sum, normalise over the batch (GDPO); or sum, then GRPO's A-hat"""
    adv_eps: float = 1e-6
    """eps of every std's denominator (TRL's: 1e-4)"""


def _gc(v):
    how = v.setting("multi_objective_aggregation")
    if how not in AGGREGATIONS:
        raise ValueError(f"unknown multi_objective_aggregation {how!r}")
    if v.kl_reward is not None:
        raise ValueError("gdpo's reward columns take no KL in the reward: put the KL in the loss")
    if how == "normalize_then_sum":
        a = advantages.decoupled(v.scores, v.group_size, v.setting("adv_eps"), across=v.across)
    else:
        total = v.scores.sum(-1) if v.scores.dim() == 2 else v.scores
        a = advantages.group_relative(total, v.group_size, v.setting("adv_eps"))
    return on_tokens(a, v)


def _normalised(x, eps):
    """(x - mean) / (sample std + eps) over the last axis; 0 where every entry is equal."""
    centred = x - x.mean(-1, keepdim=True)
    equal = x.amax(-1, keepdim=True) == x.amin(-1, keepdim=True)
    return torch.where(equal, torch.zeros_like(centred), centred / (x.std(-1, keepdim=True) + eps))


def objective(v):
    r = torch.as_tensor(v.scores).double()
    r = r[:, None] if r.dim() == 1 else r
    eps, G = v.setting("adv_eps"), v.group_size
    if v.setting("multi_objective_aggregation") == "sum_then_normalize":
        a = _normalised(r.sum(-1).view(-1, G), eps).view(-1)
    else:
        per = torch.stack([_normalised(r[:, k].view(-1, G), eps).view(-1) for k in range(r.shape[1])], -1)
        a = _normalised(per.sum(-1)[None], eps).view(-1)
    return a.view(-1, 1).to(v.mask.dtype)


def _sympy_normalised(xs):
    m = sum(xs) / len(xs)
    sd = sp.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    return [(x - m) / sd for x in xs]


def derive_gdpo(n):
    """Two reward columns of one group (the batch): GRPO's GC on the decoupled advantage (eps = 0)."""
    lengths = (n, n + 1, n)
    l = _ragged("ell", lengths)
    R = sp.symbols("R_1:4", real=True)  # the first reward of each answer
    C = sp.symbols("C_1:4", real=True)  # the second
    A = _sympy_normalised([a + b for a, b in zip(_sympy_normalised(R), _sympy_normalised(C))])
    J = sum(a * sum(row) / len(row) for a, row in zip(A, l)) / len(l)
    hand = tuple(a for a, row in zip(A, l) for _ in row)
    c = sp.Symbol("c", real=True)
    claims = ((Text("a reward column that moves by a constant in the group changes no advantage"),
               sum((a - a.subs({C[0]: C[0] + c, C[1]: C[1] + c, C[2]: C[2] + c})) ** 2 for a in A)),)
    notes = (Text("GDPO normalises each reward within its group before summing (then normalises the sum over the "
                  "batch): a reward with a large spread no longer drowns one with a small spread. The GC is that "
                  "advantage, as in GRPO (eps = 0 here)."),)
    return Derivation("gdpo", "arXiv 2601.05242", J, _ragged_gc(J, l), hand, None,
                      {"rewards": R + C, "logp": _flat(l)}, claims, notes=notes, scale="B\\,|o_i|")


ADVANTAGES.add("gdpo", gc=_gc, objective=objective, settings=Settings,
               summary="several rewards, each normalised in its group before they are summed",
               cite="GDPO, arXiv 2601.05242; TRL multi_objective_aggregation", ships_in=("TRL",),
               derivation=derive_gdpo, derivations={"gdpo": derive_gdpo},
               no_kl_reward="its rewards are several columns, each normalised on its own", reward_columns=True)
