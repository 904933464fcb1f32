"""Every loss_type of TRL 1.16's DPOTrainer in sympy: J = -l for one pair, its GC derived and proved equal to
the hand form of `coefficients.dpo_losses` (AOT: two pairs, in each order of their margins).

The chosen response has n tokens and the rejected one n + 1, so the length factor of norm="sum" shows:
GC = |o| dJ/d ell_t, which is dJ/ds under norm="mean" (s the per-token mean log-ratio) and |o| dJ/ds
under "sum" (s the sequence log-ratio). Papers: objectives/dpo_losses.py.
"""
import sympy as sp

from ..text import Text
from .core import BETA, Derivation, _toks, sigmoid

EPS_LS = sp.Symbol("epsilon", positive=True)  # TRL's label_smoothing
TAU_D = sp.Symbol("tau", positive=True)  # DiscoPOP's temperature


def _dsig(z):
    return sigmoid(z) * sigmoid(-z)


def _responses(norm, n, pairs=1):
    """Symbols of `pairs` pairs (chosen: n tokens, rejected: n + 1) and each response's score."""
    tag = lambda side, p: f"{side}{p + 1}" if pairs > 1 else side  # noqa: E731
    lc = [_toks(f"ell^{tag('+', p)}", n) for p in range(pairs)]
    rc = [_toks(f"ell^ref{tag('+', p)}", n) for p in range(pairs)]
    lr = [_toks(f"ell^{tag('-', p)}", n + 1) for p in range(pairs)]
    rr = [_toks(f"ell^ref{tag('-', p)}", n + 1) for p in range(pairs)]
    agg = (lambda xs: sum(xs) / len(xs)) if norm == "mean" else sum  # noqa: E731
    s_c = [agg([a - b for a, b in zip(x, y)]) for x, y in zip(lc, rc)]
    s_r = [agg([a - b for a, b in zip(x, y)]) for x, y in zip(lr, rr)]
    return (lc, rc, lr, rr), (s_c, s_r), agg


def _gc(J, lc, lr, pairs=1, simplify=sp.factor_terms):
    """GC_t = pairs * |o| * dJ / d ell_t, chosen tokens then rejected tokens (pair by pair)."""
    return (tuple(simplify(pairs * len(x) * sp.diff(J, t)) for x in lc for t in x)
            + tuple(simplify(pairs * len(x) * sp.diff(J, t)) for x in lr for t in x))


def _hand(a_c, a_r, lc, lr, norm):
    """k a per token: k = |o| under norm="sum", 1 under "mean"."""
    k = (lambda x: len(x)) if norm == "sum" else (lambda x: 1)  # noqa: E731
    return (tuple(k(x) * a for x, a in zip(lc, a_c) for _ in x) + tuple(k(x) * a for x, a in zip(lr, a_r) for _ in x))


NORM_NOTE = {"mean": Text("norm = mean: s is the per-token mean log-ratio (eq 12's x), so the GC is dJ/ds, one "
                          "number per response, whatever its length."),
             "sum": Text("norm = sum: s is the sequence log-ratio, so the GC is |o| dJ/ds: a longer response is "
                         "pushed harder (here the chosen response has n tokens, the rejected one n + 1).")}


def _pair_loss(loss_type, norm, n):
    (lc, rc, lr, rr), (s_c, s_r), _ = _responses(norm, n)
    s_c, s_r = s_c[0], s_r[0]  # one pair
    u, r_c, r_r = BETA * (s_c - s_r), BETA * s_c, BETA * s_r
    log = sp.log
    losses = {  # the paper's per-pair loss l(s+, s-) and the hand-derived (a+, a-) = (dJ/ds+, dJ/ds-)
        "sigmoid": (-log(sigmoid(u)), BETA * sigmoid(-u), None),
        "hinge": (sp.Max(0, 1 - u), BETA * sp.Heaviside(1 - u), None),
        "ipo": ((s_c - s_r - 1 / (2 * BETA)) ** 2, 1 / BETA - 2 * (s_c - s_r), None),
        "exo_pair": (sigmoid(u) * (log(sigmoid(u)) - log(1 - EPS_LS)) + sigmoid(-u) * (log(sigmoid(-u)) - log(EPS_LS)),
                     BETA * _dsig(u) * (log((1 - EPS_LS) / EPS_LS) - u), None),
        "nca_pair": (-log(sigmoid(r_c)) - log(sigmoid(-r_c)) / 2 - log(sigmoid(-r_r)) / 2,
                     BETA * (sigmoid(-r_c) - sigmoid(r_c) / 2), -BETA * sigmoid(r_r) / 2),
        "robust": (((1 - EPS_LS) * -log(sigmoid(u)) - EPS_LS * -log(sigmoid(-u))) / (1 - 2 * EPS_LS),
                   BETA * ((1 - EPS_LS) * sigmoid(-u) + EPS_LS * sigmoid(u)) / (1 - 2 * EPS_LS), None),
        "bco_pair": (-log(sigmoid(r_c)) - log(sigmoid(-r_r)), BETA * sigmoid(-r_c), -BETA * sigmoid(r_r)),
        "sppo_hard": ((s_c - 1 / (2 * BETA)) ** 2 + (s_r + 1 / (2 * BETA)) ** 2, 1 / BETA - 2 * s_c,
                      -(1 / BETA + 2 * s_r)),
        "apo_zero": (1 - sigmoid(r_c) + sigmoid(r_r), BETA * _dsig(r_c), -BETA * _dsig(r_r)),
        "apo_down": (sigmoid(r_c) + 1 - sigmoid(u), BETA * (_dsig(u) - _dsig(r_c)), -BETA * _dsig(u)),
        "discopop": (-log(sigmoid(u)) * (1 - sigmoid(u / TAU_D)) + sp.exp(-u) * sigmoid(u / TAU_D),
                     BETA * (sigmoid(-u) * (1 - sigmoid(u / TAU_D)) + sp.exp(-u) * sigmoid(u / TAU_D)
                             - _dsig(u / TAU_D) / TAU_D * (log(sigmoid(u)) + sp.exp(-u))), None),
    }
    loss, a_c, a_r = losses[loss_type]
    a_r = -a_c if a_r is None else a_r
    J = -loss
    symbols = {"logp_chosen": lc[0], "logp_ref_chosen": rc[0], "logp_rejected": lr[0],
               "logp_ref_rejected": rr[0], "beta": BETA}
    if loss_type in ("exo_pair", "robust"):
        symbols["label_smoothing"] = EPS_LS
    if loss_type == "discopop":
        symbols["discopop_tau"] = TAU_D
    return J, _gc(J, lc, lr), _hand([a_c], [a_r], lc, lr, norm), symbols, (u, r_c, r_r, s_c, s_r)


def _claims(loss_type, norm, n, hand, parts, lc, lr):
    """What each loss's GC does, proved: where it vanishes or reverses, what it does not depend on."""
    u, r_c, r_r, s_c, s_r = parts
    a_c = hand[0] / (n if norm == "sum" else 1)  # dJ/ds+
    a_r = hand[n] / (n + 1 if norm == "sum" else 1)  # dJ/ds-
    gap = sp.Symbol("d", positive=True)
    at = lambda target, t=lc[0]: {t: sp.solve(target, t)[0]}  # noqa: E731  where target = 0
    claims = {
        "hinge": ((Text("the GC is beta while u < 1 ..."), a_c.subs(at(u - 1 + gap)) - BETA),
                  (Text("... and 0 once u > 1: past the margin 1/beta the pair is left alone"), a_c.subs(at(u - 1 - gap)))),
        "ipo": ((Text("the GC is 0 at the target margin s+ - s- = 1/(2 beta) and reverses past it"),
                 a_c.subs(at(s_c - s_r - 1 / (2 * BETA)))),),
        "exo_pair": ((Text("the GC is 0 where u = log((1 - epsilon)/epsilon): the margin is pulled to that target"),
                      a_c.subs(at(u - sp.log((1 - EPS_LS) / EPS_LS)))),),
        "nca_pair": ((Text("the chosen GC is 0 where beta s+ = log 2 and reverses past it"), a_c.subs(at(r_c - sp.log(2)))),),
        "robust": ((Text("with epsilon = 0 robust's GC is sigmoid's"), (a_c - BETA * sigmoid(-u)).subs(EPS_LS, 0)),),
        "sppo_hard": ((Text("the chosen GC is 0 at s+ = 1/(2 beta) ..."), a_c.subs(at(s_c - 1 / (2 * BETA)))),
                      (Text("... and the rejected GC at s- = -1/(2 beta): each response has a target of its own"),
                       a_r.subs(at(s_r + 1 / (2 * BETA), lr[0])))),
        "bco_pair": ((Text("the chosen GC does not depend on the rejected response: no pair coupling"),
                      sp.diff(a_c, lr[0])),),
        "apo_zero": ((Text("the chosen GC does not depend on the rejected response: no pair coupling"),
                      sp.diff(a_c, lr[0])),),
    }
    return claims.get(loss_type, ())


def _dpo_loss(loss_type, n, norm="sum"):
    J, gc, hand, symbols, parts = _pair_loss(loss_type, norm, n)
    claims = _claims(loss_type, norm, n, hand, parts, symbols["logp_chosen"], symbols["logp_rejected"])
    notes = (Text("J = -l(s+, s-) for one pair, l TRL's {loss_type} loss; u = beta (s+ - s-).", loss_type=loss_type),
             NORM_NOTE[norm])
    return Derivation(f"dpo_{loss_type}", f"TRL DPOTrainer loss_type={loss_type!r}", J, gc, hand, None, symbols,
                      claims, notes=notes)


def _aot(n, unpaired=False, norm="sum"):
    """Two pairs: each sorted quantity pairs by rank, so each response's GC is g(d) at the rank it holds."""
    (lc, rc, lr, rr), (s_c, s_r), agg = _responses(norm, n, pairs=2)
    g = lambda d: BETA * ((1 - EPS_LS) * sigmoid(-BETA * d) - EPS_LS * sigmoid(BETA * d))  # noqa: E731
    loss = lambda d: -(1 - EPS_LS) * sp.log(sigmoid(BETA * d)) - EPS_LS * sp.log(sigmoid(-BETA * d))  # noqa: E731
    if unpaired:
        top, bottom = s_c, s_r  # chosen log-ratios sorted against rejected log-ratios
    else:
        top = [agg(x) - agg(y) for x, y in zip(lc, lr)]  # the policy's margins
        bottom = [agg(x) - agg(y) for x, y in zip(rc, rr)]  # pi_ref's
    lo = [sp.Min(*top) - sp.Min(*bottom), sp.Max(*top) - sp.Max(*bottom)]  # sorted margins d_1 <= ... by rank
    J = -(loss(lo[0]) + loss(lo[1])) / 2
    gc = _gc(J, lc, lr, pairs=2, simplify=lambda e: e)  # simplify spends minutes on Min/Max of sigmoids
    rank = lambda xs, i: sp.Piecewise((g(lo[0]), xs[i] < xs[1 - i]), (g(lo[1]), True))  # noqa: E731
    a_c = [rank(top, i) for i in range(2)]
    a_r = [-rank(top, i) for i in range(2)] if not unpaired else [-rank(bottom, i) for i in range(2)]
    hand = _hand(a_c, a_r, lc, lr, norm)
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
    return Derivation(f"dpo_{name}", f"TRL DPOTrainer loss_type={name!r}", J, gc, hand, None, symbols,
                      cases=tuple(cases), notes=notes, scale=r"B\,|o_i|")


def _sft(n, norm="sum"):
    lc = _toks("ell^+", n)
    J = sum(lc) / n  # the mean log-likelihood of the chosen tokens (one pair: both norms alike)
    gc = tuple(sp.simplify(n * sp.diff(J, t)) for t in lc)
    notes = (Text("sft is SFT on the chosen responses (eq 6-7's GC of 1) with no pi_ref; the rejected ones get "
                  "GC 0. TRL averages over every chosen token of the batch: under norm = sum the GC is "
                  "|o| / (the batch's mean chosen length), under mean it is 1."),)
    return Derivation("dpo_sft", "TRL DPOTrainer loss_type='sft'", J, gc, (sp.Integer(1),) * n, None,
                      {"logp_chosen": lc}, notes=notes)


REGISTRY = {f"dpo_{lt}": (lambda n, norm="sum", lt=lt: _dpo_loss(lt, n, norm))
            for lt in ("sigmoid", "hinge", "ipo", "exo_pair", "nca_pair", "robust", "bco_pair", "sppo_hard",
                       "apo_zero", "apo_down", "discopop")}
REGISTRY["dpo_sigmoid_norm"] = lambda n, norm="mean": _dpo_loss("sigmoid", n, "mean")
REGISTRY["dpo_aot"] = lambda n, norm="sum": _aot(n, False, norm)
REGISTRY["dpo_aot_unpaired"] = lambda n, norm="sum": _aot(n, True, norm)
REGISTRY["dpo_sft"] = _sft
