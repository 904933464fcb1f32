"""The six methods of DeepSeekMath appendix A.1 (eq 6-21) in sympy, each GC derived from its J.

Here J is written for one sample in per-token log-prob symbols, sympy differentiates it, and the
result is related to the GC the paper prints (arXiv 2402.03300, appendix A.1, eq 6-21; GRPO's
clipped objective is eq 3 of section 4.1.1).
"""
from dataclasses import replace

import sympy as sp

from ..text import Text
from .core import BETA, EPS, Derivation, _derive, _on_policy, _toks, clip, clipped_gc, sigmoid


def _sft(n):
    l = _toks("ell", n)
    J = sum(l) / n  # eq 6
    return Derivation("sft", "eq 6, 7", J, _derive(J, l, n), (sp.Integer(1),) * n, None,
                      {"logp": l}, notes=(Text("Exact: the GC of eq 7 is 1 on every token."),))


def _rft(n):
    l, I = _toks("ell", n), sp.Symbol("I", nonnegative=True)
    J = sum(I * lt for lt in l) / n  # eq 8; I(o) depends on o only, not on theta
    return Derivation("rft", "eq 8, 9, 10", J, _derive(J, l, n), (I,) * n, None,
                      {"logp": l, "correct": I},
                      notes=(Text("Exact: I(o) is a constant of theta, so GC = I(o) (eq 10)."),))


def _online_rft(n):
    d = _rft(n)
    note = (Text("Only the data source differs from RFT: o ~ pi_theta. Eq 11, like every method here, "
            "differentiates the per-sample term with the samples held fixed; the gradient of the "
            "expectation over o ~ pi_theta itself would add a score-function term."))
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
    claims = tuple((Text("exact / printed = beta on {side} tokens once eq 14's per-token arguments "
                         "are the sequence means", side=side), g / (sign * at_means) - BETA)
                   for side, g, sign in ((Text("chosen"), gc[0], 1), (Text("rejected"), gc[n], -1)))
    notes = (Text("The exact GC is beta * sigmoid(beta x- - beta x+) on chosen tokens and its negative on "
             "rejected ones, x the length-normalised log-ratio of eq 12."),
             Text("Eq 14 omits the leading beta (the inner derivative of beta * x) and writes the sigmoid's "
             "argument per token, pairing position t of both responses; eq 12's sigmoid only sees "
             "the sequence means, so the printed GC is not the derivative of eq 12."),
             Text("Eq 12-14 condition on o_{{<=t}}; o_{{<t}} is meant."))
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
            cases.append((Text("{sign}, {ratio}", sign=sign_name, ratio=r_name), subs))
    return tuple(cases)


CLIP_NOTES = (Text("The GC of min(r A, clip(r, 1-eps, 1+eps) A) is r A where the unclipped term is "
              "active and 0 where the clip is (A > 0 and r > 1+eps, or A < 0 and r < 1-eps). With "
              "A > 0 and r < 1-eps the min picks r A, so the GC stays r A there."),
              Text("At the kinks r = 1 +- eps J has no derivative; sympy's Heaviside(0) = 1/2 averages."))


def _ppo(n, clipped=False):
    l, lo, A = _toks("ell", n), _toks("ell^old", n), _toks("A", n)
    terms, hand = _policy_terms(l, lo, A, clipped)
    J = sum(terms) / n  # eq 15 (clipped) or eq 16
    # Min/Max differentiate to Heaviside steps, which simplify cannot tidy: keep them raw
    gc = tuple(n * sp.diff(J, x) for x in l) if clipped else _derive(J, l, n)
    claims = tuple((Text("at pi_old = pi_theta token {t}'s GC is A_t (eq 17, 18)", t=t + 1),
                    _on_policy(gc[t], l, lo) - A[t]) for t in range(n))
    notes = (Text("The exact GC is r_t A_t, r_t = pi_theta / pi_old; eq 17/18's A_t is its value at "
             "pi_old = pi_theta (one update per exploration stage, as the paper assumes)."),
             Text("A_t (GAE) is computed from rewards and the value model V_psi, a constant of theta."),
             Text("Eq 15-16 condition on o_{{<=t}}; o_{{<t}} is meant."))
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
    claims = tuple((Text("at pi_old = pi_theta token {i},{t}'s GC is eq 21", i=i, t=t), _on_policy(g - p, l, lo))
                   for (i, t), g, p in zip(idx, gc, printed))
    notes = (Text("The k3 term pi_ref/pi - log(pi_ref/pi) - 1 with pi = exp(ell) has derivative "
             "1 - pi_ref/pi, so -beta * k3 contributes beta * (pi_ref/pi - 1) for every pi_theta: "
             "eq 20/21 are exact for the KL term."),
             Text("The ratio term gives r * A-hat, which is eq 21's A-hat at pi_old = pi_theta."),
             Text("GC = G |o_i| dJ/d ell_{{i,t}}: the 1/G of eq 19 is the mean over the batch in eq 5."),
             Text("Eq 20 writes {{o_t}}_{{t=1}}^G for {{o_i}}_{{i=1}}^G and drops q from pi(o_{{i,t}} | o_{{i,<t}}); "
             "eq 19 conditions on o_{{i,<=t}} where o_{{i,<t}} is meant."))
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
