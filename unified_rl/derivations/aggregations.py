"""The aggregations (parts/aggregations.py) in sympy: J of per-token terms A_i ell_{i,t}, and the GC it gives.

Two responses of n and n + 1 tokens, one group: every aggregation's GC is A_i times its row factor w_i.
"""
import sympy as sp

from ..text import Text
from .core import Derivation
from .policy_gradient import _flat, _gc, _ragged

L = sp.Symbol("L", positive=True)


def _J(terms, name):
    B = len(terms)
    sums = [sum(row) for row in terms]
    return {"seq-mean-token-mean": lambda: sum(s / len(row) for s, row in zip(sums, terms)) / B,
            "token-mean": lambda: sum(sums) / sum(len(row) for row in terms),
            "group-token-mean": lambda: sum(sums) / sum(len(row) for row in terms),  # the rows are one group
            "seq-mean-token-sum": lambda: sum(sums) / B,
            "seq-mean-token-sum-norm": lambda: sum(sums) / L,
            "constant": lambda: sum(sums) / (B * L)}[name]()


def _w(rows, name):
    B, N = len(rows), sum(len(r) for r in rows)
    return {"seq-mean-token-mean": lambda n: sp.Integer(1), "token-mean": lambda n: sp.Rational(B * n, N),
            "group-token-mean": lambda n: sp.Rational(B * n, N), "seq-mean-token-sum": lambda n: sp.Integer(n),
            "seq-mean-token-sum-norm": lambda n: B * n / L, "constant": lambda n: n / L}[name]


def derive_aggregation(n, name):
    """The Derivation of aggregation `name` on two responses of n and n + 1 tokens."""
    lengths = (n, n + 1)
    l, A = _ragged("ell", lengths), sp.symbols("A_1:3", real=True)
    J = _J([[a * x for x in row] for row, a in zip(l, A)], name)
    w = _w(l, name)
    hand = tuple(w(len(row)) * a for row, a in zip(l, A) for _ in row)
    notes = (Text("Per-token terms A_i ell_{{i,t}} aggregated by {aggregation}; two responses of {n} and "
                  "{n_plus_1} tokens. The GC is A_i times the row factor w_i of parts/aggregations.py.",
                  aggregation=name, n=n, n_plus_1=n + 1),)
    symbols = {"logp": _flat(l), "adv": A} | ({"max_len": L} if "norm" in name or name == "constant" else {})
    return Derivation(f"aggregation: {name}", "parts/aggregations.py", J, _gc(J, l), hand, None, symbols,
                      notes=notes, scale="B\\,|o_i|")


NAMES = ("seq-mean-token-mean", "token-mean", "group-token-mean", "seq-mean-token-sum", "seq-mean-token-sum-norm",
         "constant")
REGISTRY = {f"aggregation_{a.replace('-', '_')}": (lambda n, a=a: derive_aggregation(n, a)) for a in NAMES}
