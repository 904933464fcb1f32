"""GPG, OPO, Pass@k training and GDPO in sympy (coefficients/baselines.py, advantages.py).

They change the advantage, not the shape of the objective: each J is REINFORCE (or GRPO) on its
advantage, so the GC is the advantage times the aggregation's row factor. What the derivations show is
where each advantage comes from: OPO's baseline is the one that minimises the length-weighted squared
advantage, Pass@k training's only pushes the best answer, and GDPO's ignores a reward that is constant
in a group. GC = B |o_i| dJ/d ell_{i,t}.
"""
import sympy as sp

from ..text import Text
from .core import Derivation
from .policy_gradient import _flat, _gc, _ragged

ALPHA = sp.Symbol("alpha", positive=True)


def _gpg(n):
    lengths = (n, n + 1)
    l = _ragged("ell", lengths)
    R = sp.symbols("R_1:3", real=True)
    A = [ALPHA * (r - sum(R) / 2) for r in R]
    N = sum(lengths)
    J = sum(a * x for a, row in zip(A, l) for x in row) / N  # verl's token-mean, no ratio
    hand = tuple(sp.Rational(2 * len(row), N) * a for a, row in zip(A, l) for _ in row)
    notes = (Text("GPG is REINFORCE on alpha (R - mean R): no ratio, so the GC is the same at every update of a "
                  "batch; alpha = B / (the samples whose advantage is not 0) scales the batch up by the share "
                  "of groups that carry no signal."),)
    return Derivation("gpg", "arXiv 2504.02546", J, _gc(J, l), hand, None,
                      {"rewards": R, "logp": _flat(l), "alpha": ALPHA}, notes=notes, scale="B\\,|o_i|")


def _opo(n):
    lengths = (n, n + 1)
    l = _ragged("ell", lengths)
    R = sp.symbols("R_1:3", real=True)
    b = sum(len(row) * r for row, r in zip(l, R)) / sum(lengths)
    J = sum((r - b) * sum(row) for r, row in zip(R, l)) / 2  # a token sum per response, mean over the group
    hand = tuple(len(row) * (r - b) for r, row in zip(R, l) for _ in row)
    x = sp.Symbol("b", real=True)
    spread = sum(len(row) * (r - x) ** 2 for r, row in zip(R, l))
    claims = ((Text("b minimises sum_i |o_i| (R_i - b)^2, the variance of the gradient when the score function's "
                    "squared norm grows with |o|"), sp.diff(spread, x).subs(x, b)),)
    notes = (Text("OPO's baseline is the mean reward weighted by length; on the token sum log pi(o | q) the GC is "
                  "|o_i| (R_i - b) on every token."),)
    return Derivation("opo", "arXiv 2505.23585", J, _gc(J, l), hand, None, {"rewards": R, "logp": _flat(l)},
                      claims, notes=notes, scale="B\\,|o_i|")


def _passk(n, group_size=3):
    lengths = tuple(n + (i == 1) for i in range(group_size))
    l = _ragged("ell", lengths)
    R = sp.symbols(f"R_1:{group_size + 1}", real=True)
    sigma = sp.Symbol("sigma", positive=True)
    best = (R[0] - R[1]) / sigma  # the case R_1 > R_2 >= R_3: response 1 is the best, R_2 the second
    A = [best] + [sp.Integer(0)] * (group_size - 1)
    J = sum(a * sum(row) / len(row) for a, row in zip(A, l)) / group_size  # GRPO's seq-mean-token-mean
    hand = tuple(a for a, row in zip(A, l) for _ in row)
    notes = (Text("Pass@k training gives the group's best answer (R_max - R_second) / sigma and every other answer "
                  "0: the GC pushes up only the answer that decides whether one of k samples is right, and never "
                  "pushes a wrong answer down."),)
    return Derivation("grpo_passk", "arXiv 2503.19595", J, _gc(J, l), hand, None,
                      {"rewards": R, "logp": _flat(l), "sigma": sigma}, notes=notes, scale="B\\,|o_i|")


def _normalised(xs):
    m = sum(xs) / len(xs)
    sd = sp.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    return [(x - m) / sd for x in xs]


def _gdpo(n):
    lengths = (n, n + 1, n)
    l = _ragged("ell", lengths)
    R = sp.symbols("R_1:4", real=True)  # the first reward of each answer
    C = sp.symbols("C_1:4", real=True)  # the second
    A = _normalised([a + b for a, b in zip(_normalised(R), _normalised(C))])  # one group: it is the batch too
    J = sum(a * sum(row) / len(row) for a, row in zip(A, l)) / len(l)
    hand = tuple(a for a, row in zip(A, l) for _ in row)
    c = sp.Symbol("c", real=True)
    claims = ((Text("a reward column that moves by a constant in the group changes no advantage"),
               sum((a - a.subs({C[0]: C[0] + c, C[1]: C[1] + c, C[2]: C[2] + c})) ** 2 for a in A)),)
    notes = (Text("GDPO normalises each reward within its group before summing (then normalises the sum over the "
                  "batch): a reward with a large spread no longer drowns one with a small spread. The GC is that "
                  "advantage, as in GRPO (eps = 0 here)."),)
    return Derivation("gdpo", "arXiv 2601.05242", J, _gc(J, l), hand, None,
                      {"rewards": R + C, "logp": _flat(l)}, claims, notes=notes, scale="B\\,|o_i|")


REGISTRY = {"gpg": _gpg, "opo": _opo, "grpo_passk": _passk, "gdpo": _gdpo}
