"""odds_ratio (ORPO's L_OR): the log odds ratio of the chosen response's probability over the rejected one's.

    l = -lam log sigma(log odds(P+) - log odds(P-)),  P = e^s, odds = P / (1 - P)
    a+ = lam P- / D,  a- = -lam P- (1 - P+) / ((1 - P-) D),  D = P- (1 - P+) + P+ (1 - P-)

It reads its scores as log-probabilities (P = e^s), so it composes with the logp scores only; the ORPO row
takes their per-token mean (eq 3's P) and adds the sft loss beside it (eq 6: L_SFT + lam L_OR). The hand form
is eq 8-10's delta(d) h(d) rewritten to stay finite when a chosen response has P+ = 1. ORPO, Hong et al.,
arXiv 2403.07691 eq 3-10.
"""

from dataclasses import dataclass, field

import sympy as sp
import torch
import torch.nn.functional as F

from ...derivations.core import Derivation, _derive, _toks, sigmoid as ssig
from ...text import Text
from ..registry import PAIR_LOSSES
from ._common import NONNEGATIVE, mean

LAM = sp.Symbol("lambda", positive=True)


@dataclass(frozen=True)
class Settings:
    lam: float = field(default=0.1, metadata=NONNEGATIVE)
    """lambda: weight of the odds-ratio loss beside the SFT loss (eq 6)"""


def odds_ratio_a(l_c, l_r, lam):
    """(a+, a-) of lam L_OR on log-prob scores l (<= 0; a rejected one < 0).

    >>> half = torch.tensor([-0.6931471805599453], dtype=torch.float64)   # P+ = P- = 1/2
    >>> [a.item() for a in odds_ratio_a(half, half, 0.1)]
    [0.1, -0.1]
    """
    p_c, p_r = l_c.exp(), l_r.exp()  # (B,) eq 3's P
    q_c, q_r = -torch.expm1(l_c), -torch.expm1(l_r)  # (B,) 1 - P, accurate near P = 1
    d = p_r * q_c + p_c * q_r
    return lam * p_r / d, -(lam * p_r * q_c / (q_r * d))  # sigmoid(-log OR) / (1 - P) on each response


def _gc(v):
    word = "mean " if v.norm == "mean" else ""
    for name, l in (("chosen", v.s1), ("rejected", v.s2)):
        if (l > 0).any():
            raise ValueError(f"a {name} response has a positive {word}log-prob: ORPO needs log-probabilities")
    if (v.s2 == 0).any():
        raise ValueError(f"a rejected response has probability 1 ({word}log-prob 0): ORPO's gradient is infinite")
    return odds_ratio_a(v.s1, v.s2, v.setting("lam"))


def _objective(v):
    """lam L_OR = -lam log sigma(log odds+ - log odds-), odds = P / (1 - P) (eq 4, 7)."""
    l_c, l_r = v.s1, v.s2
    if (l_c >= 0).any() or (l_r >= 0).any():
        raise ValueError("ORPO's odds need P(y|x) < 1: every response needs a negative mean log-prob")
    log_odds_c = l_c - torch.log(-torch.expm1(l_c))  # log P - log(1 - P)
    log_odds_r = l_r - torch.log(-torch.expm1(l_r))
    return -v.setting("lam") * F.logsigmoid(log_odds_c - log_odds_r)


def derive_orpo(n):
    """ORPO's eq 6 on one pair: the SFT term and lam times the odds-ratio term."""
    lc, lr = _toks("ell^+", n), _toks("ell^-", n)
    m_c, m_r = mean(lc), mean(lr)  # eq 3: log P = mean log-prob
    log_odds = [m - sp.log(1 - sp.exp(m)) for m in (m_c, m_r)]  # eq 4
    J = m_c + LAM * sp.log(ssig(log_odds[0] - log_odds[1]))  # minus eq 6, with eq 7
    gc = _derive(J, lc, n) + _derive(J, lr, n)
    p_c, p_r = sp.exp(m_c), sp.exp(m_r)
    d = p_r * (1 - p_c) + p_c * (1 - p_r)
    hand = (1 + LAM * p_r / d,) * n + (-LAM * p_r * (1 - p_c) / ((1 - p_r) * d),) * n
    odds_c, odds_r = p_c / (1 - p_c), p_r / (1 - p_r)
    delta = 1 / (1 + odds_c / odds_r)  # eq 9
    printed = (1 + LAM * delta / (1 - p_c),) * n + (-LAM * delta / (1 - p_r),) * n  # eq 8, 10, plus L_SFT's 1
    claims = ((Text("eq 8-10's delta(d) h(d), plus the SFT term, equals the hand form on chosen tokens"),
               printed[0] - hand[0]),
              (Text("... and on rejected tokens"), printed[n] - hand[n]),
              (Text("with lambda = 0 ORPO's GC is SFT's: 1 on chosen, 0 on rejected tokens"),
               hand[0].subs(LAM, 0) - 1 + hand[n].subs(LAM, 0)))
    notes = (Text("The GC is 1 + lambda P-/D on chosen tokens and -lambda P-(1-P+)/((1-P-) D) on rejected "
             "ones, P = exp(mean log-prob), D = P-(1-P+) + P+(1-P-): SFT's coefficient plus the odds-ratio "
             "term, with no pi_ref."),
             Text("Eq 8-10 print the odds-ratio gradient as delta(d) h(d), delta = 1/(1 + odds+/odds-) and "
             "h = grad log P+/(1-P+) - grad log P-/(1-P-); the hand form is that product rewritten to "
             "stay finite when P+ = 1."))
    symbols = {"logp_chosen": lc, "logp_rejected": lr, "lam": LAM}
    return Derivation("orpo", "ORPO eq 3-10", J, gc, hand, printed, symbols, claims, notes=notes)


PAIR_LOSSES.add("odds_ratio", gc=_gc, objective=_objective, settings=Settings, scores=("logp",),
                derivation=derive_orpo, derivations={"orpo": derive_orpo},
                summary="-lam log sigma(log odds+ - log odds-), odds = P / (1 - P): ORPO's odds-ratio term",
                cite="ORPO, Hong et al., arXiv 2403.07691 eq 3-10", ships_in=("TRL",))
