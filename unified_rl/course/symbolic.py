"""How a learner's sympy expression is compared with the expected one: numbers first, algebra bounded.

The two expressions are evaluated at random points (30 significant digits, any exponent, so a huge
power neither overflows nor hangs; both signs wherever a symbol's domain allows, `sample_points`); a point where they differ decides at once, with a message that
says how (a flipped sign, a constant factor, which point). Only when no point can be evaluated does
sympy's `simplify` run, under a time limit, so that no answer can hang a notebook.
"""

import contextlib
import math
import signal
import threading

import numpy as np
import sympy
import torch

from .compare import short_repr
from .i18n import t

TIME_LIMIT_S = 5.0
MAX_OPS = 20_000  # larger expressions are refused before anything else runs
_DIGITS = 30


class TooSlow(Exception):
    """The comparison ran past its time limit."""


@contextlib.contextmanager
def time_limit(seconds):
    """Raise TooSlow inside the block after `seconds` (main thread, POSIX); elsewhere no limit."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def _alarm(signum, frame):
        raise TooSlow()

    old_handler = signal.signal(signal.SIGALRM, _alarm)
    old_delay, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        if old_delay:  # someone else's timer (e.g. a test timeout) was running: give it back
            signal.setitimer(signal.ITIMER_REAL, max(old_delay - seconds, 1e-3))


def read_expression(answer, want):
    """The learner's answer as a sympy expression over the expected one's symbols; ValueError says why not."""
    names = {s.name: s for s in want.free_symbols}
    if torch.is_tensor(answer) or isinstance(answer, np.ndarray):
        if int(np.prod(tuple(answer.shape))) != 1:
            raise ValueError(t("sym.one_expression", got=short_repr(answer)))
        answer = answer.reshape(()).tolist()
    try:
        got = sympy.sympify(answer, locals=names) if isinstance(answer, str) else sympy.sympify(answer)
    except (sympy.SympifyError, TypeError, SyntaxError, ValueError, AttributeError):
        raise ValueError(t("sym.could_not_read", got=short_repr(answer))) from None
    if isinstance(got, sympy.core.relational.Relational):
        raise ValueError(t("sym.not_equation"))
    if not isinstance(got, sympy.Expr):
        raise ValueError(t("sym.one_expression", got=type(answer).__name__))
    # Match symbols by name: the learner's Symbol('beta') may lack the assumptions of ours.
    return got.subs({s: names[s.name] for s in got.free_symbols if s.name in names}, simultaneous=True)


def _number(expr, point):
    """expr at `point` as a sympy number, or None where it is not a finite number there."""
    v = expr.evalf(_DIGITS, subs=point)
    if not v.is_number or v.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
        return None
    if abs(sympy.im(v)) > sympy.Float("1e-20") * max(abs(sympy.re(v)), 1):  # off the real domain (a log of a
        return None  # negative number): two equal forms may take different branches there
    return v


def _fmt(v):
    re_ = sympy.re(v)
    try:
        f = float(re_)
    except (OverflowError, TypeError):
        f = float("inf")
    return f"{f:.6g}" if math.isfinite(f) else str(sympy.N(re_, 6))


def may_be_negative(symbol):
    """Whether a symbol's declared domain holds negative numbers (a real or unrestricted symbol)."""
    return not (symbol.is_nonnegative or symbol.is_positive)


def sample_points(symbols, n_points, seed):
    """`n_points` random points {symbol: value}: magnitudes in [0.3, 1.7] (never 0 or 1 exactly), and
    both signs for every symbol whose domain allows them (each such symbol is negative at some point
    and positive at another), so that an answer that is right for positive values only is found."""
    gen = torch.Generator().manual_seed(seed)
    points = [{s: 0.3 + 1.4 * torch.rand((), generator=gen).item() for s in symbols} for _ in range(n_points)]
    for s in symbols:
        if not may_be_negative(s) or n_points < 2:
            continue
        signs = [1 if torch.rand((), generator=gen).item() < 0.5 else -1 for _ in range(n_points)]
        if len(set(signs)) == 1:  # force both signs
            signs[int(torch.randint(0, n_points, (), generator=gen))] *= -1
        for point, sign in zip(points, signs):
            point[s] *= sign
    return [{s: sympy.Float(v) for s, v in point.items()} for point in points]


def _differs_by(got, want, n_points, seed):
    """Compare at random points: None if equal at all, a message if not, "unknown" if none evaluates."""
    symbols = sorted(want.free_symbols | got.free_symbols, key=lambda s: s.name)
    ratios, first, evaluated, agreed = [], "", 0, 0
    for point in sample_points(symbols, n_points, seed):
        g, w = _number(got, point), _number(want, point)
        if g is None or w is None:
            continue
        evaluated += 1
        scale = sympy.Max(abs(g), abs(w))
        if bool(abs(g - w) <= sympy.Float("1e-9") * scale + sympy.Float("1e-12")):
            agreed += 1
            continue
        ratios.append(g / w if w != 0 else None)
        at = ", ".join(f"{s.name}={float(v):.3g}" for s, v in point.items())
        first = first or t("sym.at", at=at, got=_fmt(g), want=_fmt(w))
    if not evaluated:
        return "unknown"
    if not ratios:
        return None
    if agreed:  # equal at some points, not at others: no constant factor explains it
        return t("sym.not_equal_some", first=first)
    r0 = ratios[0]
    if all(r is not None and bool(abs(r - r0) <= sympy.Float("1e-9") * abs(r0)) for r in ratios):
        k = complex(r0)
        return t("sym.sign_flipped") if abs(k + 1) < 1e-9 else t("sym.factor", k=k.real)
    return t("sym.not_equal", first=first)


def compare_expressions(got, want, *, n_points=8, seed=0, time_limit_s=TIME_LIMIT_S):
    """None if `got` equals `want` (sympy expressions), else what differs, in words. Never hangs."""
    extra = sorted(s.name for s in got.free_symbols if s not in want.free_symbols)
    try:
        with time_limit(time_limit_s):
            ops = sympy.count_ops(got)
            if ops > MAX_OPS:
                return t("sym.too_large", ops=ops)
            verdict = _differs_by(got, want, n_points, seed)
            if verdict == "unknown":  # no point evaluates: only algebra can decide
                diff = sympy.simplify(got - want)
                verdict = None if diff == 0 else t("sym.not_equal_simplify", diff=diff)
    except TooSlow:
        return t("sym.too_slow", s=time_limit_s)
    if verdict and extra:
        return t("sym.extra", extra=', '.join(extra),
                 symbols=', '.join(sorted(s.name for s in want.free_symbols)) or t("sym.no_symbols"))
    return verdict
