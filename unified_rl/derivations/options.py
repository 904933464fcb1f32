"""GRPO's options (TRL's GRPOConfig, verl) in sympy: each J written out, its GC derived (coefficients/options.py).

The aggregations (loss types) and the sequence ratio (importance_sampling_level) are derived in
`policy_gradient` (aggregation_*, gspo), the plain KL bias correction in kl_k3_ratio_loss. Here: the
two-sided clip (delta), the bias-corrected KL at the sequence level, and the tokens and rows the loss
keeps (mask_truncated_completions, top_entropy_quantile, off_policy_mask_threshold).
"""
import sympy as sp

from ..text import Text
from .core import BETA, Derivation, clip
from .policy_gradient import EPS_HIGH, EPS_LOW, _flat, _gc, _ragged

DELTA_GAP = sp.Symbol("D", positive=True)  # delta = 1 + eps_high + D: above the clip range, as TRL recommends


def _two_sided(n):
    l, lo = _ragged("ell", (n,))[0], _ragged("ell^old", (n,))[0]
    A = sp.Symbol("A", real=True)
    delta = 1 + EPS_HIGH + DELTA_GAP
    r = [sp.exp(x - y) for x, y in zip(l, lo)]
    J = sum(sp.Min(sp.Min(ri, delta) * A, clip(ri, 1 - EPS_LOW, 1 + EPS_HIGH) * A) for ri in r) / n
    gc = _gc(J, (l,))
    stop = lambda ri: ((A > 0) & (ri > 1 + EPS_HIGH)) | ((A < 0) & (ri < 1 - EPS_LOW)) | ((A < 0) & (ri > delta))  # noqa: E731
    hand = tuple(sp.Piecewise((0, stop(ri)), (ri * A, True)) for ri in r)
    a, s, u, d = sp.symbols("a s u d", positive=True)
    lo_v = 1 / (1 + s)
    ratios = {"r > delta": delta + d, "1+eps_high < r < delta": 1 + EPS_HIGH + DELTA_GAP * u / (1 + u),
              "1-eps_low < r < 1+eps_high": 1 - lo_v + (lo_v + EPS_HIGH) * u / (1 + u),
              "r < 1-eps_low": (1 - lo_v) * u / (1 + u)}
    cases = tuple((Text("{sign}, {ratio}", sign=sign_name, ratio=r_name),
                   {EPS_LOW: lo_v, A: sign, **{x: y + sp.log(rv) for x, y in zip(l, lo)}})
                  for sign_name, sign in (("A > 0", a), ("A < 0", -a)) for r_name, rv in ratios.items())
    notes = (Text("Two-sided clipping (INTELLECT-2; TRL's delta, verl's dual-clip clip_ratio_c): min(r, delta) in "
                  "the unclipped term. Where A < 0 and r > delta the objective is delta A, a constant, so the "
                  "GC is 0: a token the update already made far likelier stops being pushed down."),)
    symbols = {"adv": A, "logp": l, "logp_old": lo, "clip_eps": EPS_LOW, "clip_eps_high": EPS_HIGH,
               "delta_gap": DELTA_GAP}
    return Derivation("grpo_two_sided", "arXiv 2505.07291; TRL delta", J, gc, hand, None, symbols, cases=cases,
                      notes=notes)


def _k3(x, ref):
    return sp.exp(ref - x) - (ref - x) - 1


def _sequence_kl_ratio(n):
    l, lo, lref = (_ragged(name, (n,))[0] for name in ("ell", "ell^old", "ell^ref"))
    s = sp.exp(sum(x - y for x, y in zip(l, lo)) / n)  # the sequence ratio, with its gradient
    J = -BETA * sum(s * _k3(x, z) for x, z in zip(l, lref)) / n
    gc = _gc(J, (l,))
    mean_k3 = sum(_k3(x, z) for x, z in zip(l, lref)) / n
    hand = tuple(BETA * s * (sp.exp(z - x) - 1 - mean_k3) for x, z in zip(l, lref))
    claims = ((Text("with one token it is the token-level r k3 term, beta r x"),
               hand[0] - BETA * s * (lref[0] - l[0])),) if n == 1 else ()
    notes = (Text("TRL's use_bias_correction_kl multiplies k3 by the importance weight; at the sequence level the "
                  "weight s is shared by the row's tokens, so each token's GC also carries the row's mean k3."),)
    symbols = {"logp": l, "logp_old": lo, "logp_ref": lref, "beta": BETA}
    return Derivation("grpo_sequence_kl_ratio", "TRL use_bias_correction_kl, sequence level", J, gc, hand, None,
                      symbols, claims, notes=notes)


def _kept(n):
    lengths = (n, n + 1, n)  # the third row is cut at the budget
    l = _ragged("ell", lengths)
    A = sp.symbols("A_1:4", real=True)
    e = _ragged("e", lengths)  # entropy mask: 1 on kept tokens (a number, not a function of theta)
    o = sp.symbols("o_1:4", nonnegative=True)  # off-policy row mask
    kept = (0, 1)
    N = sum(len(l[i]) for i in kept)  # batch-token-mean over the kept rows only
    J = sum(o[i] * A[i] * ei * x for i in kept for ei, x in zip(e[i], l[i])) / N
    B = len(lengths)
    hand = tuple((sp.Rational(B * len(l[i]), N) * o[i] * A[i] * ei if i in kept else sp.Integer(0))
                 for i in range(B) for ei in e[i])
    notes = (Text("mask_truncated_completions drops the cut row from J and from the token count N; the entropy "
                  "mask e and the off-policy mask o are numbers fixed before the update, so each multiplies its "
                  "token's GC: GC = B |o_i| / N * o_i e_{{i,t}} A_i on the kept rows, 0 on the cut one."),)
    symbols = {"logp": _flat(l), "adv": A, "entropy_mask": _flat(e), "row_mask": o}
    return Derivation("grpo_kept_tokens", "TRL mask_truncated_completions, top_entropy_quantile, "
                      "off_policy_mask_threshold", J, _gc(J, l), hand, None, symbols, notes=notes, scale="B\\,|o_i|")


REGISTRY = {"grpo_two_sided": _two_sided, "grpo_sequence_kl_ratio": _sequence_kl_ratio,
            "grpo_kept_tokens": _kept}
