"""The machinery every derivation shares: the Derivation record, sympy helpers, and `check`.

GC(q, o, t) = |o| * dJ / d log pi_theta(o_t | q, o_<t). A derivation writes J for one sample in
per-token log-prob symbols (ell_t = log pi_theta(o_t), ell^old_t, ell^ref_t); sympy differentiates
it, and `check` proves the result equal to the hand-derived form and every stated claim.
"""
from dataclasses import dataclass, replace

import numpy as np
import sympy as sp

from ..text import Text

BETA, EPS = sp.Symbol("beta", positive=True), sp.Symbol("epsilon", positive=True)


@dataclass(frozen=True)
class Derivation:
    """One method: its objective, the GC sympy derives from it, and the forms it is checked against."""

    method: str
    equations: str  # where the paper states it
    objective: sp.Expr  # J for one sample (one group for GRPO)
    gc: tuple  # derived |o| dJ/d ell_t, one entry per token (DPO: chosen tokens, then rejected)
    hand: tuple  # the exact GC derived by hand, same layout
    printed: tuple | None  # the paper's printed GC where it differs from `hand`, else None
    symbols: dict  # argument name (as in unified_rl.coefficients) -> symbol or tuple of symbols
    claims: tuple = ()  # (statement, expression that must simplify to 0)
    cases: tuple = ((Text("for all values"), {}),)  # substitutions under which gc == hand is proved
    notes: tuple = ()
    scale: str = "|o|"  # LaTeX of the factor that turns dJ/d ell into GC

    def evaluate(self, which="gc", **values):
        """Evaluate `gc`, `hand` or `printed` at numbers given per argument name; returns an array."""
        exprs, args, nums = getattr(self, which), [], []
        if exprs is None:
            raise ValueError(f"{self.method} has no {which!r} form")
        for name, sym in self.symbols.items():
            if name not in values:
                raise ValueError(f"{self.method}: missing value for {name!r}")
            syms = list(sym) if isinstance(sym, tuple) else [sym]
            x = np.ravel(np.asarray(values[name], dtype=float))
            if x.size != len(syms):
                raise ValueError(f"{name} needs {len(syms)} numbers, got {x.size}")
            args += syms
            nums += list(x)
        exprs = [sp.sympify(e).rewrite(sp.exp) for e in exprs]  # sigmoid -> exp for numpy
        # np.heaviside directly: sympy's own printing of Heaviside takes minutes on clipped GCs
        modules = [{"Heaviside": lambda x, h=0.5: np.heaviside(x, h)}, "numpy"]
        return np.asarray(sp.lambdify(args, exprs, modules)(*nums), dtype=float)

    def latex(self, t=0):
        """LaTeX of J, the derived GC of token t, the hand form and (if it differs) the printed one (labels as Text)."""
        ell = self.symbols.get("logp", self.symbols.get("logp_chosen"))[t]
        rows = [rf"J &= {sp.latex(self.objective)}",
                rf"{self.scale}\,\frac{{\partial J}}{{\partial {sp.latex(ell)}}} &= {sp.latex(self.gc[t])}",
                rf"\text{{{Text('by hand')}}} &= {sp.latex(self.hand[t])}"]
        if self.printed is not None:
            rows.append(rf"\text{{{Text('printed')}}} &= {sp.latex(self.printed[t])}")
        return r"\begin{aligned}" + r" \\ ".join(rows) + r"\end{aligned}"

    def _repr_latex_(self):
        return f"$\\displaystyle {self.latex()}$"


def _toks(name, n):
    return tuple(sp.symbols(f"{name}_1:{n + 1}", real=True))


class sigmoid(sp.Function):
    """The logistic function sigma(z) = 1 / (1 + e^-z), kept whole so J and GC read as printed."""

    def fdiff(self, argindex=1):
        return self * (1 - self)  # sigma' = sigma (1 - sigma)

    def _eval_rewrite_as_exp(self, z, **kwargs):
        return 1 / (1 + sp.exp(-z))

    def _latex(self, printer):
        return rf"\sigma\left({printer._print(self.args[0])}\right)"


def clip(r, lo, hi):
    """clip(r, lo, hi) as sympy Min/Max, so that sympy differentiates it."""
    return sp.Min(sp.Max(r, lo), hi)


def clipped_gc(ratio, adv, clip_eps):
    """Hand form: d/d ell of min(r A, clip(r, 1-eps, 1+eps) A) = r A unless the clip is active."""
    active = ((adv > 0) & (ratio > 1 + clip_eps)) | ((adv < 0) & (ratio < 1 - clip_eps))
    return sp.Piecewise((0, active), (ratio * adv, True))


def outcome_advantage(rewards, eps=sp.Symbol("eps_std", positive=True)):
    """GRPO outcome supervision: (r_i - mean(r)) / (sample std(r) + eps) for one group."""
    G = len(rewards)
    mean = sum(rewards) / G
    std = sp.sqrt(sum((r - mean) ** 2 for r in rewards) / (G - 1))
    return tuple((r - mean) / (std + eps) for r in rewards)


EPS_LOW, EPS_HIGH = sp.Symbol("epsilon_low", positive=True), sp.Symbol("epsilon_high", positive=True)
L = sp.Symbol("L", positive=True)  # a constant normaliser (Dr. GRPO's, the max_len aggregations')

# -- ragged groups (the parts' derivations): responses of different lengths, GC = B |o_i| dJ/d ell_{i,t}


def _ragged(name, lengths):
    """Per-response tuples of token symbols name_{i,t}."""
    return tuple(tuple(sp.Symbol(f"{name}_{i + 1},{t + 1}", real=True) for t in range(n))
                 for i, n in enumerate(lengths))


def _one(n, *names):
    """One response of n tokens: a tuple of token symbols per name."""
    return tuple(_ragged(name, (n,))[0] for name in names)


def _flat(rows):
    return tuple(x for row in rows for x in row)


def _ragged_gc(J, logp_rows):
    """B |o_i| dJ/d ell_{i,t}, flattened over the ragged responses."""
    B = len(logp_rows)
    return tuple(B * len(row) * sp.diff(J, x) for row in logp_rows for x in row)


def _k3(x, ref):
    """k3 of one token: pi_ref/pi - 1 - log(pi_ref/pi), from ell and ell^ref."""
    return sp.exp(ref - x) - (ref - x) - 1


def _asym_clipped(ratio, a):
    """Hand form of d/d ell of min(r A, clip(r, 1-eps_low, 1+eps_high) A): r A unless the clip binds."""
    active = ((a > 0) & (ratio > 1 + EPS_HIGH)) | ((a < 0) & (ratio < 1 - EPS_LOW))
    return sp.Piecewise((0, active), (ratio * a, True))


def _asym_cases(l, lo, adv, low=EPS_LOW, high=EPS_HIGH, offsets=None):
    """Substitutions covering (sign of A) x (ratio above, inside, below [1-low, 1+high]).

    offsets: per-token log-ratio offsets (summing to 0 within a response), so that the tokens of a
    response have different ratios while their geometric mean stays r (GSPO's sequence ratio).
    """
    a, s, u, d = sp.symbols("a s u d", positive=True)
    lo_v = 1 / (1 + s)  # any eps_low in (0, 1)
    ratios = {"r > 1+eps_high": 1 + high + d, "1-eps_low < r < 1+eps_high": 1 - lo_v + (lo_v + high) * u / (1 + u),
              "r < 1-eps_low": (1 - lo_v) * u / (1 + u)}
    cases = []
    for sign_name, sign in (("A > 0", a), ("A < 0", -a)):
        for r_name, r in ratios.items():
            off = offsets or [0] * len(l)
            subs = {low: lo_v, **{x: sign for x in adv}, **{x: y + sp.log(r) + o for x, y, o in zip(l, lo, off)}}
            cases.append((Text("{sign}, {ratio}", sign=sign_name, ratio=r_name), subs))
    return tuple(cases)


def _offsets(rows, delta=sp.Symbol("delta", positive=True)):
    """Per-token log-ratio offsets +delta, -delta, ... (0 on an odd last token): a response's tokens at different
    ratios with the same geometric mean."""
    return [o for row in rows for o in ([delta, -delta] * len(row))[:len(row) - len(row) % 2] + [0] * (len(row) % 2)]


def _derive(objective, logp, length):
    """GC_t = |o| * dJ/d ell_t for every token symbol."""
    return tuple(sp.simplify(length * sp.diff(objective, l)) for l in logp)


def _on_policy(expr, logp, logp_old):
    """expr at pi_old = pi_theta (ell^old_t = ell_t), the paper's single-update assumption."""
    return expr.subs(dict(zip(logp_old, logp)))


def _sign(x):
    """+1, -1 or 0 if sympy can decide the sign of x once it is one fraction, else None."""
    x = sp.factor(sp.together(x))
    return 1 if x.is_positive else -1 if x.is_negative else 0 if x.is_zero else None


_RELATIONS = {sp.StrictGreaterThan: (1,), sp.GreaterThan: (0, 1),
              sp.StrictLessThan: (-1,), sp.LessThan: (-1, 0)}  # signs of lhs - rhs that make it true


def _decide(expr):
    """Evaluate Min, Max, Heaviside and comparisons whose sign follows from the symbols' assumptions."""
    def pick(kind, want, *args):  # Min wants the arg the others exceed (-1), Max the opposite
        best = args[0]
        for b in args[1:]:
            s = _sign(b - best)
            if s is None:
                return kind(*args)
            best = b if s == want else best
        return best

    def rel(kind, lhs, rhs):
        s = _sign(lhs - rhs)
        return kind(lhs, rhs) if s is None else sp.true if s in _RELATIONS[kind] else sp.false

    for _ in range(5):  # inner Min/Max resolve first, then the steps and branches around them
        before = expr
        expr = expr.replace(sp.Min, lambda *a: pick(sp.Min, -1, *a))
        expr = expr.replace(sp.Max, lambda *a: pick(sp.Max, 1, *a))
        expr = expr.replace(sp.Heaviside, lambda x, *h: {1: 1, -1: 0}.get(_sign(x), sp.Heaviside(x, *h)))
        for kind in _RELATIONS:
            expr = expr.replace(kind, lambda lhs, rhs, kind=kind: rel(kind, lhs, rhs))
        if expr == before:
            break
    return expr


def _probe(expr, seed=0):
    """expr at one random point that respects the symbols' assumptions, or None if not a number."""
    rng = np.random.default_rng(seed)
    point = {x: rng.uniform(0.2, 2.0) if x.is_positive else rng.uniform(-1.5, 1.5)
             for x in expr.free_symbols}
    value = complex(sp.N(expr.subs(point))) if expr.subs(point).is_number else None
    return None if value is None else abs(value)


def _is_zero(expr, subs=None):
    """Whether expr is identically 0: a random point disproves it fast, simplify proves it."""
    expr = _decide((expr.subs(subs) if subs else expr).rewrite(sp.exp))
    if expr == 0:
        return True
    far = _probe(expr)
    if far is not None and far > 1e-9:
        return False
    return sp.simplify(expr) == 0


def check_derivation(d):
    """Prove d's derived GC equals its hand form, and every claim; AssertionError says which fails."""
    for case, subs in d.cases:
        for t, (g, h) in enumerate(zip(d.gc, d.hand)):
            if not _is_zero(g - h, subs):
                raise AssertionError(f"{d.method}: the GC derived from J differs from the hand form "
                                     f"at token {t + 1} ({case}):\n  derived: {g}\n  hand:    {h}")
    for statement, expr in d.claims:
        if not _is_zero(expr):
            raise AssertionError(f"{d.method}: claim fails: {statement}\n  residual: {expr}")
    return True
