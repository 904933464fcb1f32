"""What the loss pages share: sigmoid's slope on the coefficient's side, and the sympy of one or two pairs.

A loss page's `gc(v)` gives (a1, a2): B dJ/ds of each row's score, first half and second half (pair_view.py);
its `objective(v)` gives the loss l of each pair (B,), and J = -mean l. Its derivation writes J = -l(s+, s-)
for one pair in token symbols, the chosen response n tokens long and the rejected one n + 1, so that the
length factor of the sum norm shows: GC = abs(o) dJ/d ell_t.
"""

from types import SimpleNamespace

import sympy as sp
import torch

from ...derivations.core import BETA, Derivation, _toks
from ...text import Text

EPS_LS = sp.Symbol("epsilon", positive=True)  # TRL's label_smoothing
TAU_D = sp.Symbol("tau", positive=True)  # DiscoPOP's temperature
NONNEGATIVE = {"low": 0.0}  # a setting's bounds, checked when a composition's settings are made and at each step


def dsig(z):
    """sigma'(z) = sigma(z) sigma(-z). (B,)"""
    return torch.sigmoid(z) * torch.sigmoid(-z)


def responses(norm, n, pairs=1):
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


def pair_gc(J, lc, lr, pairs=1, simplify=sp.factor_terms):
    """GC_t = pairs * abs(o) * dJ / d ell_t, chosen tokens then rejected tokens (pair by pair)."""
    return (tuple(simplify(pairs * len(x) * sp.diff(J, t)) for x in lc for t in x)
            + tuple(simplify(pairs * len(x) * sp.diff(J, t)) for x in lr for t in x))


def hand(a_c, a_r, lc, lr, norm):
    """k a per token: k = abs(o) under norm="sum", 1 under "mean"."""
    k = (lambda x: len(x)) if norm == "sum" else (lambda x: 1)  # noqa: E731
    return (tuple(k(x) * a for x, a in zip(lc, a_c) for _ in x) + tuple(k(x) * a for x, a in zip(lr, a_r) for _ in x))


NORM_NOTE = {"mean": Text("norm = mean: s is the per-token mean log-ratio (eq 12's x), so the GC is dJ/ds, one "
                          "number per response, whatever its length."),
             "sum": Text("norm = sum: s is the sequence log-ratio, so the GC is |o| dJ/ds: a longer response is "
                         "pushed harder (here the chosen response has n tokens, the rejected one n + 1).")}


def derive_loss(loss_type, n, norm, loss, claims=None, symbols=()):
    """The Derivation of TRL's `loss_type` for one pair: loss(s+, s-, u, r+, r-) -> (l, a+, a-), a- None for -a+;
    claims(ctx) -> ((statement, expression that must be 0), ...); symbols: (name, symbol) of its settings."""
    (lc, rc, lr, rr), (s_c, s_r), _ = responses(norm, n)
    s_c, s_r = s_c[0], s_r[0]  # one pair
    u, r_c, r_r = BETA * (s_c - s_r), BETA * s_c, BETA * s_r
    l, a_c, a_r = loss(s_c, s_r, u, r_c, r_r)
    a_r = -a_c if a_r is None else a_r
    J = -l
    at = lambda target, t=lc[0][0]: {t: sp.solve(target, t)[0]}  # noqa: E731  where target = 0
    ctx = SimpleNamespace(u=u, r_c=r_c, r_r=r_r, s_c=s_c, s_r=s_r, a_c=a_c, a_r=a_r, lc=lc[0], lr=lr[0], at=at,
                          gap=sp.Symbol("d", positive=True))
    notes = (Text("J = -l(s+, s-) for one pair, l TRL's {loss_type} loss; u = beta (s+ - s-).", loss_type=loss_type),
             NORM_NOTE[norm])
    return Derivation(f"dpo_{loss_type}", f"TRL DPOTrainer loss_type={loss_type!r}", J, pair_gc(J, lc, lr),
                      hand([a_c], [a_r], lc, lr, norm), None,
                      {"logp_chosen": lc[0], "logp_ref_chosen": rc[0], "logp_rejected": lr[0],
                       "logp_ref_rejected": rr[0], "beta": BETA, **dict(symbols)},
                      claims(ctx) if claims else (), notes=notes)


def mean(xs):
    return sum(xs) / len(xs)


def same_on_every_token(gc, n, side):
    """Claims that the GC of the n tokens starting at gc[0] are all equal (DeepSeekMath's 1/|o| shape)."""
    return tuple((Text("the GC is the same on every {side} token (token {t} = token 1)", side=Text(side), t=t + 1),
                  gc[t] - gc[0]) for t in range(1, n))
