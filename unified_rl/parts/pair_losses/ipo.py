"""ipo (TRL's loss_type; IPO): regress the margin of the scores onto a target.

    l = (s+ - s- - 1/(2 beta))^2                      a+ = 1/beta - 2 (s+ - s-),  a- = -a+

The push is linear in the margin: 1/beta at margin 0, 0 on the target 1/(2 beta), reversed past it (it pulls
the margin back), where DPO's fades but never reverses. IPO, Azar et al., arXiv 2310.12036 eq 17 writes tau
for TRL's beta (the IPO row calls it ipo_tau) and sums log-ratios; TRL's ipo (and the IPO row) take per-token
means.
"""

from dataclasses import dataclass, field

import sympy as sp
import torch

from ...derivations.core import BETA, Derivation, _derive, _toks
from ...text import Text
from ..registry import PAIR_LOSSES
from ._common import NONNEGATIVE, derive_loss, mean, same_on_every_token

TAU = sp.Symbol("tau", positive=True)


@dataclass(frozen=True)
class Settings:
    beta: float = field(default=0.1, metadata=NONNEGATIVE)
    """beta (IPO's tau): the margin s+ - s- is regressed onto 1/(2 beta)"""


def ipo_a(s1, s2, beta):
    """(a+, a-) of l = (s+ - s- - 1/(2 beta))^2: +-(1/beta - 2 (s+ - s-)).

    >>> ipo_a(torch.tensor([0., 1.5]), torch.tensor([0., 0.]), 0.5)   # margin 0: 1/beta; past the target 1: reversed
    (tensor([ 2., -1.]), tensor([-2.,  1.]))
    """
    a = 1 / beta - 2 * (s1 - s2)
    return a, -a


def _gc(v):
    return ipo_a(v.s1, v.s2, v.setting("beta"))


def _objective(v):
    """(s+ - s- - 1/(2 beta))^2 per pair."""
    return (v.s1 - v.s2 - 1 / (2 * v.setting("beta"))) ** 2


def _check(get, name):
    beta = get("beta")
    if beta is not None and beta <= 0:
        raise ValueError(f"ipo needs beta > 0: its target is 1/(2 beta) ({name('beta')} = {beta})")


def _claims(c):
    return ((Text("the GC is 0 at the target margin s+ - s- = 1/(2 beta) and reverses past it"),
             c.a_c.subs(c.at(c.s_c - c.s_r - 1 / (2 * BETA)))),)


def derive_ipo_loss(n, norm="sum"):
    """TRL's ipo on one pair."""
    return derive_loss("ipo", n, norm, lambda s_c, s_r, u, r_c, r_r: ((s_c - s_r - 1 / (2 * BETA)) ** 2,
                                                                       1 / BETA - 2 * (s_c - s_r), None), _claims)


def derive_ipo(n):
    """IPO as its paper writes it (tau), on per-token mean log-ratios: the IPO row."""
    lc, rc, lr, rr = _toks("ell^+", n), _toks("ell^ref+", n), _toks("ell^-", n), _toks("ell^ref-", n)
    margin = mean([a - b for a, b in zip(lc, rc)]) - mean([a - b for a, b in zip(lr, rr)])
    J = -(margin - 1 / (2 * TAU)) ** 2  # eq 17, h with length-normalised log-ratios
    gc = _derive(J, lc, n) + _derive(J, lr, n)
    c = 1 / TAU - 2 * margin
    delta = sp.Symbol("delta", real=True)
    past = {lc[0]: sp.solve(margin - 1 / (2 * TAU) - delta, lc[0])[0]}  # margin = target + delta
    claims = ((Text("the GC is linear in the margin (no sigmoid, no saturation)"), sp.diff(gc[0], lc[0], 2)),
              (Text("at margin = 1/(2 tau) + delta the chosen GC is -2 delta: 0 on target, reversed past it"),
               gc[0].subs(past) + 2 * delta)) + same_on_every_token(gc, n, "chosen")
    notes = (Text("The GC is c = 1/tau - 2 (x+ - x-) on chosen tokens and -c on rejected ones: J regresses "
             "the margin onto 1/(2 tau)."),
             Text("Unlike DPO's beta sigmoid(-beta margin), c does not fade as the margin grows: it shrinks "
             "linearly, is 0 at the target and reverses sign past it, pulling the margin back."),
             Text("The paper's h sums log-ratios over tokens; here x is the per-token mean, as in "
             "DeepSeekMath's eq 12, so the target 1/(2 tau) is a margin per token."))
    symbols = {"logp_chosen": lc, "logp_ref_chosen": rc, "logp_rejected": lr,
               "logp_ref_rejected": rr, "tau": TAU}
    return Derivation("ipo", "IPO eq 17", J, gc, (c,) * n + (-c,) * n, None, symbols, claims, notes=notes)


PAIR_LOSSES.add("ipo", gc=_gc, objective=_objective, settings=Settings, check=_check, derivation=derive_ipo_loss,
                derivations={"dpo_ipo": derive_ipo_loss, "ipo": derive_ipo},
                summary="(s+ - s- - 1/(2 beta))^2: regress the margin onto a target; linear, reverses past it",
                cite="IPO, Azar et al., arXiv 2310.12036 eq 17", ships_in=("TRL",))
