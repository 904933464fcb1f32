"""aot and aot_unpaired (TRL's loss_types; AOT): the batch's margins sorted and matched by rank.

    aot:           d_(k) = sort_k(pol+ - pol-) - sort_k(ref+ - ref-)   the policy's margins against pi_ref's
    aot_unpaired:  d_(k) = sort_k(s+) - sort_k(s-)                     the chosen scores against the rejected ones
    l_k = -(1 - eps) log sigma(beta d_(k)) - eps log sigma(-beta d_(k)),  J = -(1/B) sum_k l_k
    a = g(d) at the rank a response holds, g(d) = beta ((1 - eps) sigma(-beta d) - eps sigma(beta d))

Not a function of a pair's two scores: each response's push depends on where its margin (or score) ranks in
the batch, so a rank holding a share of the batch cannot compute it; both are refused when the Step carries
`across` (run them in one process). aot reads the two sides of the scores apart (pol and ref: pair_scores.py).
AOT, Melnyk et al., arXiv 2406.05882; eps is TRL's label_smoothing.
"""

from dataclasses import dataclass, field

import sympy as sp
import torch
import torch.nn.functional as F

from ...derivations.core import BETA, Derivation, sigmoid as ssig
from ...text import Text
from ..registry import PAIR_LOSSES
from ._common import EPS_LS, NONNEGATIVE, NORM_NOTE, hand, pair_gc, responses


@dataclass(frozen=True)
class Settings:
    beta: float = field(default=0.1, metadata=NONNEGATIVE)
    """beta: the scale of the sorted margins d"""
    label_smoothing: float = field(default=1e-3, metadata=NONNEGATIVE)
    """eps: the smoothing of AOT's log sigmoid (TRL's label_smoothing)"""


def placed(values, order):
    """values[k] moved to the row that holds sorted position k (order: the argsort of the sorted scores)."""
    out = torch.empty_like(values)
    out[order] = values
    return out


def aot_g(d, beta, eps):
    """g(d) = beta ((1 - eps) sigma(-beta d) - eps sigma(beta d)): B dJ/dd at each sorted position.

    >>> aot_g(torch.tensor([0.]), 2.0, 0.0)
    tensor([1.])
    """
    return beta * ((1 - eps) * torch.sigmoid(-beta * d) - eps * torch.sigmoid(beta * d))


def _whole_batch(v, name):
    if v.across is not None:
        raise ValueError(f"the {name} loss ranks the margins over the whole batch, which a rank holding a share of it "
                         "cannot do: run it in one process (without torchrun)")


def _aot_gc(v):
    _whole_batch(v, "aot")
    beta, eps = v.setting("beta"), v.setting("label_smoothing")
    (pol_sorted, order), ref_sorted = torch.sort(v.p1 - v.p2), torch.sort(v.r1 - v.r2)[0]
    a = placed(aot_g(pol_sorted - ref_sorted, beta, eps), order)
    return a, -a


def _aot_unpaired_gc(v):
    _whole_batch(v, "aot_unpaired")
    (c_sorted, order_c), (r_sorted, order_r) = torch.sort(v.s1), torch.sort(v.s2)
    a = aot_g(c_sorted - r_sorted, v.setting("beta"), v.setting("label_smoothing"))  # (B,) by sorted position
    return placed(a, order_c), -placed(a, order_r)


def _smoothed(d, beta, eps):
    """AOT's loss of one sorted margin d, smoothed by eps."""
    return -(1 - eps) * F.logsigmoid(beta * d) - eps * F.logsigmoid(-beta * d)


def _aot_objective(v):
    if v.across is not None:
        raise ValueError("the aot loss ranks the margins over the whole batch: run it in one process")
    d = torch.sort(v.p1 - v.p2)[0] - torch.sort(v.r1 - v.r2)[0]  # policy margins and pi_ref's, each sorted
    return _smoothed(d, v.setting("beta"), v.setting("label_smoothing"))


def _aot_unpaired_objective(v):
    if v.across is not None:
        raise ValueError("the aot_unpaired loss ranks the scores over the whole batch: run it in one process")
    d = torch.sort(v.s1)[0] - torch.sort(v.s2)[0]  # chosen and rejected scores, each sorted
    return _smoothed(d, v.setting("beta"), v.setting("label_smoothing"))


def derive_aot(n, unpaired=False, norm="sum"):
    """Two pairs: each sorted quantity pairs by rank, so each response's GC is g(d) at the rank it holds."""
    (lc, rc, lr, rr), (s_c, s_r), agg = responses(norm, n, pairs=2)
    g = lambda d: BETA * ((1 - EPS_LS) * ssig(-BETA * d) - EPS_LS * ssig(BETA * d))  # noqa: E731
    loss = lambda d: -(1 - EPS_LS) * sp.log(ssig(BETA * d)) - EPS_LS * sp.log(ssig(-BETA * d))  # noqa: E731
    if unpaired:
        top, bottom = s_c, s_r  # chosen log-ratios sorted against rejected log-ratios
    else:
        top = [agg(x) - agg(y) for x, y in zip(lc, lr)]  # the policy's margins
        bottom = [agg(x) - agg(y) for x, y in zip(rc, rr)]  # pi_ref's
    lo = [sp.Min(*top) - sp.Min(*bottom), sp.Max(*top) - sp.Max(*bottom)]  # sorted margins d_1 <= ... by rank
    J = -(loss(lo[0]) + loss(lo[1])) / 2
    gc = pair_gc(J, lc, lr, pairs=2, simplify=lambda e: e)  # simplify spends minutes on Min/Max of sigmoids
    rank = lambda xs, i: sp.Piecewise((g(lo[0]), xs[i] < xs[1 - i]), (g(lo[1]), True))  # noqa: E731
    a_c = [rank(top, i) for i in range(2)]
    a_r = [-rank(top, i) for i in range(2)] if not unpaired else [-rank(bottom, i) for i in range(2)]
    d1, d2 = sp.symbols("delta_1 delta_2", positive=True)
    cases = []  # every order of the two sorted quantities, made explicit by positive gaps
    for i_top in (0, 1):
        for i_bot in (0, 1):
            subs = {lc[i_top][0]: sp.solve(top[i_top] - top[1 - i_top] + d1, lc[i_top][0])[0]}
            if unpaired:
                subs[lr[i_bot][0]] = sp.solve(bottom[i_bot] - bottom[1 - i_bot] + d2, lr[i_bot][0])[0]
            else:
                subs[rc[i_bot][0]] = sp.solve(bottom[i_bot] - bottom[1 - i_bot] + d2, rc[i_bot][0])[0]
            cases.append((Text("pair {a} < pair {b} in the first sorted quantity, pair {c} < pair {d} in the second",
                               a=i_top + 1, b=2 - i_top, c=i_bot + 1, d=2 - i_bot), subs))
    name = "aot_unpaired" if unpaired else "aot"
    notes = (Text("Two pairs. {what} are each sorted over the batch and matched by rank: a response's GC is "
                  "g(d) of the sorted position it holds, g(d) = beta ((1 - epsilon) sigmoid(-beta d) - epsilon "
                  "sigmoid(beta d)).", what=Text("The chosen and the rejected log-ratios") if unpaired
                  else Text("The policy's margins and pi_ref's margins")), NORM_NOTE[norm])
    symbols = {"logp_chosen": lc[0] + lc[1], "logp_ref_chosen": rc[0] + rc[1], "logp_rejected": lr[0] + lr[1],
               "logp_ref_rejected": rr[0] + rr[1], "beta": BETA, "label_smoothing": EPS_LS}
    return Derivation(f"dpo_{name}", f"TRL DPOTrainer loss_type={name!r}", J, gc, hand(a_c, a_r, lc, lr, norm), None,
                      symbols, cases=tuple(cases), notes=notes, scale=r"B\,|o_i|")


def derive_aot_paired(n, norm="sum"):
    return derive_aot(n, False, norm)


def derive_aot_unpaired(n, norm="sum"):
    return derive_aot(n, True, norm)


PAIR_LOSSES.add("aot", gc=_aot_gc, objective=_aot_objective, settings=Settings, derivation=derive_aot_paired,
                derivations={"dpo_aot": derive_aot_paired},
                summary="the batch's policy margins and pi_ref's margins, each sorted, matched by rank (a batch loss)",
                cite="AOT, Melnyk et al., arXiv 2406.05882", ships_in=("TRL",))
PAIR_LOSSES.add("aot_unpaired", gc=_aot_unpaired_gc, objective=_aot_unpaired_objective, settings=Settings,
                derivation=derive_aot_unpaired, derivations={"dpo_aot_unpaired": derive_aot_unpaired},
                summary="the batch's chosen scores and rejected scores, each sorted, matched by rank (a batch loss)",
                cite="AOT, Melnyk et al., arXiv 2406.05882", ships_in=("TRL",))
