"""Each method's objective J written in sympy, and its gradient coefficient derived from it.

GC(q, o, t) = |o| * dJ / d log pi_theta(o_t | q, o_<t) (DESIGN.md). Here J is written for one
sample in per-token log-prob symbols (ell_t = log pi_theta(o_t), ell^old_t, ell^ref_t), sympy
differentiates it, and `check` proves the result equal to the hand-derived form and relates it to
the GC the paper prints (DeepSeekMath, arXiv 2402.03300, appendix A.1, eq 6-21; GRPO's clipped
objective is eq 3 of section 4.1.1).

    d = derive("dpo")      # a Derivation: objective, gc, hand, printed, notes
    check(d)               # AssertionError with a readable message if any claim fails
    d                      # in a notebook: renders J, the derived GC and the printed form
"""
from dataclasses import dataclass, replace

import numpy as np
import sympy as sp

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
    cases: tuple = (("for all values", {}),)  # substitutions under which gc == hand is proved
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
        """LaTeX of J, the derived GC of token t, the hand form and (if it differs) the printed one."""
        ell = self.symbols.get("logp", self.symbols.get("logp_chosen"))[t]
        rows = [rf"J &= {sp.latex(self.objective)}",
                rf"{self.scale}\,\frac{{\partial J}}{{\partial {sp.latex(ell)}}} &= {sp.latex(self.gc[t])}",
                rf"\text{{by hand}} &= {sp.latex(self.hand[t])}"]
        if self.printed is not None:
            rows.append(rf"\text{{printed}} &= {sp.latex(self.printed[t])}")
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


def _derive(objective, logp, length):
    """GC_t = |o| * dJ/d ell_t for every token symbol."""
    return tuple(sp.simplify(length * sp.diff(objective, l)) for l in logp)


def _on_policy(expr, logp, logp_old):
    """expr at pi_old = pi_theta (ell^old_t = ell_t), the paper's single-update assumption."""
    return expr.subs(dict(zip(logp_old, logp)))


def _sft(n):
    l = _toks("ell", n)
    J = sum(l) / n  # eq 6
    return Derivation("sft", "eq 6, 7", J, _derive(J, l, n), (sp.Integer(1),) * n, None,
                      {"logp": l}, notes=("Exact: the GC of eq 7 is 1 on every token.",))


def _rft(n):
    l, I = _toks("ell", n), sp.Symbol("I", nonnegative=True)
    J = sum(I * lt for lt in l) / n  # eq 8; I(o) depends on o only, not on theta
    return Derivation("rft", "eq 8, 9, 10", J, _derive(J, l, n), (I,) * n, None,
                      {"logp": l, "correct": I},
                      notes=("Exact: I(o) is a constant of theta, so GC = I(o) (eq 10).",))


def _online_rft(n):
    d = _rft(n)
    note = ("Only the data source differs from RFT: o ~ pi_theta. Eq 11, like every method here, "
            "differentiates the per-sample term with the samples held fixed; the gradient of the "
            "expectation over o ~ pi_theta itself would add a score-function term.")
    return replace(d, method="online_rft", equations="eq 8, 11", notes=d.notes + (note,))


def _dpo(n):
    lc, rc, lr, rr = _toks("ell^+", n), _toks("ell^ref+", n), _toks("ell^-", n), _toks("ell^ref-", n)
    x_c = sum(a - b for a, b in zip(lc, rc)) / n  # length-normalised log-ratios of eq 12
    x_r = sum(a - b for a, b in zip(lr, rr)) / n
    J = sp.log(sigmoid(BETA * x_c - BETA * x_r))  # eq 12
    gc = _derive(J, lc, n) + _derive(J, lr, n)
    c = BETA * sigmoid(BETA * x_r - BETA * x_c)
    hand = (c,) * n + (-c,) * n
    per_tok = [sigmoid(BETA * (lr[t] - rr[t]) - BETA * (lc[t] - rc[t])) for t in range(n)]  # eq 14
    printed = tuple(per_tok) + tuple(-p for p in per_tok)  # eq 13 subtracts it on rejected tokens
    at_means = sigmoid(BETA * x_r - BETA * x_c)  # eq 14 with the per-token arguments -> their means
    claims = tuple((f"exact / printed = beta on {side} tokens once eq 14's per-token arguments "
                    "are the sequence means", g / (sign * at_means) - BETA)
                   for side, g, sign in (("chosen", gc[0], 1), ("rejected", gc[n], -1)))
    notes = ("The exact GC is beta * sigmoid(beta x- - beta x+) on chosen tokens and its negative on "
             "rejected ones, x the length-normalised log-ratio of eq 12.",
             "Eq 14 omits the leading beta (the inner derivative of beta * x) and writes the sigmoid's "
             "argument per token, pairing position t of both responses; eq 12's sigmoid only sees "
             "the sequence means, so the printed GC is not the derivative of eq 12.",
             "Eq 12-14 condition on o_{<=t}; o_{<t} is meant.")
    symbols = {"logp_chosen": lc, "logp_ref_chosen": rc, "logp_rejected": lr,
               "logp_ref_rejected": rr, "beta": BETA}
    return Derivation("dpo", "eq 12, 13, 14", J, gc, hand, printed, symbols, claims, notes=notes)


def _policy_terms(l, lo, A, clipped):
    """Ratio terms r A (eq 16, 19) or min(r A, clip(r) A) (eq 15, 3), and their hand-derived GC."""
    ratio = [sp.exp(a - b) for a, b in zip(l, lo)]  # pi_theta / pi_old
    if not clipped:
        return [r * a for r, a in zip(ratio, A)], [r * a for r, a in zip(ratio, A)]
    terms = [sp.Min(r * a, clip(r, 1 - EPS, 1 + EPS) * a) for r, a in zip(ratio, A)]
    return terms, [clipped_gc(r, a, EPS) for r, a in zip(ratio, A)]


def _clip_cases(l, lo, adv):
    """Substitutions covering every region of (sign of A, ratio vs [1-eps, 1+eps]) symbolically."""
    a, s, u, d = sp.symbols("a s u d", positive=True)
    eps = 1 / (1 + s)  # any eps in (0, 1)
    ratios = {"r > 1+eps": 1 + eps + d, "1-eps < r < 1+eps": 1 - eps + 2 * eps * u / (1 + u),
              "r < 1-eps": (1 - eps) * u / (1 + u)}
    cases = []
    for sign_name, sign in (("A > 0", a), ("A < 0", -a), ("A = 0", 0)):
        for r_name, r in ratios.items():
            subs = {EPS: eps, **{x: sign for x in adv}, **{x: y + sp.log(r) for x, y in zip(l, lo)}}
            cases.append((f"{sign_name}, {r_name}", subs))
    return tuple(cases)


CLIP_NOTES = ("The GC of min(r A, clip(r, 1-eps, 1+eps) A) is r A where the unclipped term is "
              "active and 0 where the clip is (A > 0 and r > 1+eps, or A < 0 and r < 1-eps). With "
              "A > 0 and r < 1-eps the min picks r A, so the GC stays r A there.",
              "At the kinks r = 1 +- eps J has no derivative; sympy's Heaviside(0) = 1/2 averages.")


def _ppo(n, clipped=False):
    l, lo, A = _toks("ell", n), _toks("ell^old", n), _toks("A", n)
    terms, hand = _policy_terms(l, lo, A, clipped)
    J = sum(terms) / n  # eq 15 (clipped) or eq 16
    # Min/Max differentiate to Heaviside steps, which simplify cannot tidy: keep them raw
    gc = tuple(n * sp.diff(J, x) for x in l) if clipped else _derive(J, l, n)
    claims = tuple((f"at pi_old = pi_theta token {t + 1}'s GC is A_t (eq 17, 18)",
                    _on_policy(gc[t], l, lo) - A[t]) for t in range(n))
    notes = ("The exact GC is r_t A_t, r_t = pi_theta / pi_old; eq 17/18's A_t is its value at "
             "pi_old = pi_theta (one update per exploration stage, as the paper assumes).",
             "A_t (GAE) is computed from rewards and the value model V_psi, a constant of theta.",
             "Eq 15-16 condition on o_{<=t}; o_{<t} is meant.")
    symbols = {"adv": A, "logp": l, "logp_old": lo}
    if clipped:
        return Derivation("ppo_clip", "eq 15, 17, 18", J, gc, tuple(hand), A,
                          {**symbols, "clip_eps": EPS}, claims, _clip_cases(l, lo, A),
                          CLIP_NOTES + notes)
    return Derivation("ppo", "eq 16, 17, 18", J, gc, tuple(hand), A, symbols, claims, notes=notes)


def _grpo(n, group_size=2, clipped=False):
    G = group_size
    idx = [(i, t) for i in range(1, G + 1) for t in range(1, n + 1)]
    sym = lambda name: tuple(sp.Symbol(f"{name}_{i},{t}", real=True) for i, t in idx)  # noqa: E731
    l, lo, lref, A = sym("ell"), sym("ell^old"), sym("ell^ref"), sym("Ahat")
    pi, pi_ref = [sp.exp(x) for x in l], [sp.exp(x) for x in lref]
    k3 = [pr / p - sp.log(pr / p) - 1 for p, pr in zip(pi, pi_ref)]  # eq 4's unbiased KL estimator
    terms, hand = _policy_terms(l, lo, A, clipped)  # eq 3 trains with the clip; eq 19 drops it
    J = sum(p - BETA * k for p, k in zip(terms, k3)) / (G * n)
    gc = tuple(G * n * sp.diff(J, x) for x in l)  # 1/G is the batch mean of eq 5
    gc = gc if clipped else tuple(sp.simplify(g) for g in gc)
    kl_gc = [BETA * (pr / p - 1) for p, pr in zip(pi, pi_ref)]
    printed = tuple(a + k for a, k in zip(A, kl_gc))  # eq 20, 21
    claims = tuple((f"at pi_old = pi_theta token {i},{t}'s GC is eq 21", _on_policy(g - p, l, lo))
                   for (i, t), g, p in zip(idx, gc, printed))
    notes = ("The k3 term pi_ref/pi - log(pi_ref/pi) - 1 with pi = exp(ell) has derivative "
             "1 - pi_ref/pi, so -beta * k3 contributes beta * (pi_ref/pi - 1) for every pi_theta: "
             "eq 20/21 are exact for the KL term.",
             "The ratio term gives r * A-hat, which is eq 21's A-hat at pi_old = pi_theta.",
             "GC = G |o_i| dJ/d ell_{i,t}: the 1/G of eq 19 is the mean over the batch in eq 5.",
             "Eq 20 writes {o_t}_{t=1}^G for {o_i}_{i=1}^G and drops q from pi(o_{i,t} | o_{i,<t}); "
             "eq 19 conditions on o_{i,<=t} where o_{i,<t} is meant.")
    symbols = {"adv": A, "logp": l, "logp_old": lo, "logp_ref": lref, "beta": BETA}
    hand = tuple(h + k for h, k in zip(hand, kl_gc))
    if clipped:  # the KL term is untouched by the clip
        return Derivation("grpo_clip", "eq 3, 4, 21", J, gc, hand, printed,
                          {**symbols, "clip_eps": EPS}, claims, _clip_cases(l, lo, A),
                          CLIP_NOTES + notes, r"G\,|o_i|")
    return Derivation("grpo", "eq 19, 20, 21", J, gc, hand, printed, symbols, claims,
                      notes=notes, scale=r"G\,|o_i|")


REGISTRY = {
    "sft": _sft,
    "rft": _rft,
    "online_rft": _online_rft,
    "dpo": _dpo,
    "ppo": _ppo,
    "ppo_clip": lambda n: _ppo(n, clipped=True),
    "grpo": _grpo,
    "grpo_clip": lambda n, group_size=2: _grpo(n, group_size, clipped=True),
}
METHODS = tuple(REGISTRY)


def derive(method, n_tokens=3, **options):
    """The Derivation of one method (see METHODS) with n_tokens per response."""
    if method not in REGISTRY:
        raise ValueError(f"unknown method {method!r}; known: {', '.join(METHODS)}")
    if not isinstance(n_tokens, int) or n_tokens < 1:
        raise ValueError(f"n_tokens must be a positive int, got {n_tokens!r}")
    return REGISTRY[method](n_tokens, **options)


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


def check(method, n_tokens=3):
    """Prove the derived GC equals the hand form, and every claim; AssertionError says which fails."""
    d = derive(method, n_tokens) if isinstance(method, str) else method
    for case, subs in d.cases:
        for t, (g, h) in enumerate(zip(d.gc, d.hand)):
            if not _is_zero(g - h, subs):
                raise AssertionError(f"{d.method}: the GC derived from J differs from the hand form "
                                     f"at token {t + 1} ({case}):\n  derived: {g}\n  hand:    {h}")
    for statement, expr in d.claims:
        if not _is_zero(expr):
            raise AssertionError(f"{d.method}: claim fails: {statement}\n  residual: {expr}")
    return True
