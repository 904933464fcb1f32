"""ReMax's greedy baseline (verl's `remax`): A = r(o) - r(o_greedy), the greedy answer to the same question.

Rows come in pairs (group_size 2): a sampled response, then the greedy one. The greedy row is only a baseline:
it leaves the loss (`rows` keeps the sampled rows), and the composition scales the sampled rows' GC by
B / B_sampled = 2, since eq 5 averages over every row of the batch. With the KL in the reward (verl's
use_kl_in_reward), the sampled row's return from t on carries it: A_t = r - beta sum_{t' >= t} k_t' - r_greedy
(verl's compute_remax_outcome_advantage on token-level rewards). ReMax: Li et al., arXiv 2310.10505, Algorithm 1.
"""

import sympy as sp
import torch

from ... import _checks, advantages
from ...derivations.core import Derivation, _flat, _ragged, _ragged_gc
from ...text import Text
from ..registry import ADVANTAGES


def _pairs(v):
    if v.scores is None:
        raise ValueError("remax needs rewards")
    r = _checks.per_sequence(v.scores, "rewards", v.full.shape[0])
    _checks.groups(v.full.shape[0], 2)
    return r.double().view(-1, 2)  # (n, 2): sampled, greedy


def _gc(v):
    p = _pairs(v)
    adv = torch.zeros_like(p)
    adv[:, 0] = p[:, 0] - p[:, 1]
    out = adv.view(-1)[:, None] * v.full.double()  # (B, T)
    if v.kl_reward is not None:  # the sampled row's KL from t on; the greedy row is no sample of the policy's
        m = v.full.double()
        to_go = advantages.returns_to_go(v.kl_reward.double() * m, m) * sampled_rows(v).double()[:, None]
        out = out - _checks.scalar(v.cfg.beta, "beta", low=0.0) * to_go
    return out.to(v.full.dtype).detach()


def sampled_rows(v):
    """(B,) True on the sampled rows, False on the greedy baselines."""
    return torch.arange(v.full.shape[0], device=v.full.device) % 2 == 0


def objective(v):
    r = torch.as_tensor(v.scores).double().view(-1, 2)
    a = torch.stack([r[:, 0] - r[:, 1], torch.zeros_like(r[:, 0])], 1).view(-1, 1) * torch.ones_like(v.full).double()
    if v.kl_reward is not None:
        k = (v.kl_reward * v.full).double()
        later = torch.stack([k[:, t:].sum(-1) for t in range(k.shape[1])], 1)  # sum_{t' >= t}
        later[1::2] = 0  # the greedy rows are baselines: no return of theirs
        a = a - v.cfg.beta * later
    return a.to(v.mask.dtype)


def derive_remax(n):
    """One question's sampled and greedy answers: GC = 2 |o| (R - R_greedy) on the sampled row, 0 on the greedy."""
    l = _ragged("ell", (n, n))  # sampled, greedy
    R, Rg = sp.symbols("R R_greedy", real=True)
    J = (R - Rg) * sum(l[0])  # one question: (R(o) - R(o_greedy)) log pi(o | q)
    hand = tuple(2 * n * (R - Rg) for _ in l[0]) + tuple(sp.Integer(0) for _ in l[1])
    notes = (Text("B = 2 rows per question (sampled, greedy): GC = 2 |o| (R - R_greedy) on the sampled row; "
                  "J does not depend on the greedy row's log-probs, so its GC is 0."),)
    return Derivation("remax", "arXiv 2310.10505, Algorithm 1", J, _ragged_gc(J, l), hand, None,
                      {"logp": _flat(l), "rewards": (R, Rg)}, notes=notes, scale="B\\,|o_i|")


ADVANTAGES.add("remax", gc=_gc, objective=objective, rows=sampled_rows, data="greedy-pairs",
               summary="r minus the reward of the greedy answer to the same question",
               cite="ReMax, Li et al., arXiv 2310.10505", ships_in=("verl",), derivation=derive_remax,
               derivations={"remax": derive_remax})
