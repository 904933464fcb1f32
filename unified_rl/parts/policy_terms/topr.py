"""TOPR (ROLL's `topr`): an SFT-like push on the rows with a positive reward, a ratio capped at 1 on the others.

    f_{i,t} = w+ A log pi_theta(o_{i,t})                          where r_i > 0     GC piece = w+ A
    f_{i,t} = w- sg(clip(rho, 0, 1)) A log pi_theta(o_{i,t})      where r_i <= 0    GC piece = w- min(rho, 1) A

rho = pi_theta / pi_old per token. A positive trajectory is pushed up at full strength however far the policy has
moved (no ratio: as in SFT); a negative one is pushed down only as much as the policy still gives it mass, the
ratio tapered to [0, 1], so that mass already taken away is not pushed on. The split reads each row's reward (its
sum where there are several reward columns), not its advantage.
TOPR: Le Roux et al., "Tapered Off-Policy REINFORCE", arXiv 2503.14286, eq 8; ROLL agentic_actor_pg_worker.py
_compute_topr_loss (topr_positive_weight, topr_negative_weight).
"""

from dataclasses import dataclass

import sympy as sp
import torch

from ... import _checks
from ...derivations.core import Derivation, _ragged
from ...text import Text
from ..registry import POLICY_TERMS


@dataclass(frozen=True)
class Settings:
    topr_positive_weight: float = 1.0
    """w+: the weight of the rows with reward > 0 (ROLL's topr_positive_weight)"""
    topr_negative_weight: float = 1.0
    """w-: the weight of the rows with reward <= 0 (ROLL's topr_negative_weight)"""


def topr(adv, ratio, positive, w_pos=1.0, w_neg=1.0):
    """(B, T) GC piece: w+ A on the positive rows, w- min(rho, 1) A on the others. positive: (B,) bool.

    >>> topr(torch.ones(2, 1), torch.tensor([[3.], [3.]]), torch.tensor([True, False]))
    tensor([[1.],
            [1.]])
    """
    taper = ratio.clamp(0.0, 1.0)
    return torch.where(positive[:, None], w_pos * adv, w_neg * taper * adv)


def _positive(v):
    if v.scores is None:
        raise ValueError("topr needs the rewards: it splits the rows into reward > 0 and reward <= 0")
    r = _checks.as_tensor(v.scores, "rewards").double()
    return (r.sum(-1) if r.dim() == 2 else r) > 0


def _gc(v, adv, keep):
    w_pos = _checks.scalar(v.setting("topr_positive_weight"), "topr_positive_weight", low=0.0)
    w_neg = _checks.scalar(v.setting("topr_negative_weight"), "topr_negative_weight", low=0.0)
    return topr(adv, v.ratio("token"), _positive(v), w_pos, w_neg) * keep


def objective(v, adv):
    """w+ A log pi on the rows with reward > 0; w- sg(clip(rho, 0, 1)) A log pi on the others."""
    r = torch.as_tensor(v.scores).double()
    good = ((r.sum(-1) if r.dim() == 2 else r) > 0)[:, None]
    taper = torch.clamp(torch.exp(v.logp - v.logp_old), 0.0, 1.0).detach()
    return torch.where(good, v.setting("topr_positive_weight") * adv * v.logp,
                       v.setting("topr_negative_weight") * taper * adv * v.logp)


def derive_topr(n):
    """A positive row (n tokens) and a negative one (n + 1), seq-mean-token-mean: sg(min(rho, 1)) by ell-bar."""
    (l1, l2), (o1, o2), (b1, b2) = (_ragged(s, (n, n + 1)) for s in ("ell", "ell^old", "ellbar"))
    A1, A2 = sp.symbols("A_1:3", real=True)
    wp, wn, d = sp.symbols("w_+ w_- d", positive=True)
    J = (sum(wp * A1 * x for x in l1) / n + sum(wn * sp.Min(sp.exp(b - y), 1) * A2 * x
                                                 for b, y, x in zip(b2, o2, l2)) / (n + 1)) / 2
    back = dict(zip(b2, l2))
    rows = ((l1, n), (l2, n + 1))
    gc = tuple((2 * k * sp.diff(J, x)).subs(back) for row, k in rows for x in row)
    hand = tuple([wp * A1] * n + [wn * sp.Min(sp.exp(x - y), 1) * A2 for x, y in zip(l2, o2)])
    claims = ((Text("a negative token the update made likelier (rho > 1) keeps the GC w- A, not w- rho A"),
               hand[n].subs(l2[0], o2[0] + sp.log(1 + d)) - wn * A2),
              (Text("a positive token's GC w+ A does not read rho"), sp.diff(hand[0], o1[0])))
    notes = (Text("Positive rows: GC w+ A whatever pi_theta / pi_old (SFT on them); negative rows: w- min(rho, 1) A, "
                  "the ratio tapered at 1 and not differentiated."),)
    return Derivation("topr", "arXiv 2503.14286, eq 8; ROLL topr", J, gc, hand, None,
                      {"logp": l1 + l2, "logp_old": o1 + o2, "adv": (A1, A2)}, claims, notes=notes,
                      scale="B\\,|o_i|")


POLICY_TERMS.add("topr", gc=_gc, objective=objective, settings=Settings, reads_old=True, derivation=derive_topr,
                 summary="A on the rows with reward > 0 (no ratio), A min(rho, 1) on the others: tapered off-policy",
                 cite="TOPR, Le Roux et al., arXiv 2503.14286 eq 8; ROLL topr", ships_in=("ROLL",))
