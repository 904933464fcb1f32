"""The policy-gradient family after DeepSeekMath in sympy: each J as its paper prints it, its GC derived.

Responses of a group have different lengths here (n and n+1 tokens), because what these methods
change is mostly how |o_i| enters. GC = B |o_i| dJ/d ell_{i,t} for a batch of B responses (eq 5's
convention, coefficients/policy_gradient.py). A stop-gradient sg(x) is written with a copy of the symbol
(ell-bar) that is set equal to ell after differentiating. The KL derivations also prove, with exact
sums over a 3-token vocabulary, which KL each estimator's expected gradient follows.
"""
import sympy as sp

from ..text import Text
from .core import BETA, Derivation, clip

EPS_LOW, EPS_HIGH = sp.Symbol("epsilon_low", positive=True), sp.Symbol("epsilon_high", positive=True)
L = sp.Symbol("L", positive=True)  # Dr. GRPO's constant normaliser


def _ragged(name, lengths):
    """Per-response tuples of token symbols name_{i,t}."""
    return tuple(tuple(sp.Symbol(f"{name}_{i + 1},{t + 1}", real=True) for t in range(n))
                 for i, n in enumerate(lengths))


def _flat(rows):
    return tuple(x for row in rows for x in row)


def _gc(J, logp_rows):
    """B |o_i| dJ/d ell_{i,t}, flattened over the ragged responses."""
    B = len(logp_rows)
    return tuple(B * len(row) * sp.diff(J, x) for row in logp_rows for x in row)


def _aggregate(terms, aggregation):
    """J from per-token terms (rows of a group) under one of the three aggregations."""
    B = len(terms)
    if aggregation == "seq-mean-token-mean":
        return sum(sum(row) / len(row) for row in terms) / B
    if aggregation in ("token-mean", "batch-token-mean"):  # the rows here are one group: the batch
        return sum(sum(row) for row in terms) / sum(len(row) for row in terms)
    return sum(sum(row) for row in terms) / (B * L)


def _weight(rows, aggregation):
    """The hand-derived row factor (coefficients.policy_gradient.aggregation_weight) for each token."""
    B, N = len(rows), sum(len(r) for r in rows)
    w = {"seq-mean-token-mean": lambda n: sp.Integer(1), "token-mean": lambda n: sp.Rational(B * n, N),
         "batch-token-mean": lambda n: sp.Rational(B * n, N), "constant": lambda n: n / L}[aggregation]
    return tuple(w(len(row)) for row in rows for _ in row)


def _k3(x, ref):
    return sp.exp(ref - x) - (ref - x) - 1


def _dr_grpo(n):
    lengths = (n, n + 1)
    l, lo, lref = _ragged("ell", lengths), _ragged("ell^old", lengths), _ragged("ell^ref", lengths)
    R = sp.symbols("R_1:3", real=True)
    A = [r - sum(R) / 2 for r in R]  # no std
    terms = [[sp.exp(x - y) * a - BETA * _k3(x, z) for x, y, z in zip(*rows)] for rows, a in zip(zip(l, lo, lref), A)]
    J = sum(sum(row) for row in terms) / (2 * L)  # 1/G sum_i sum_t (...) / L
    gc = _gc(J, l)
    w = _weight(l, "constant")
    hand = tuple(wi * (sp.exp(x - y) * a + BETA * (sp.exp(z - x) - 1))
                 for wi, x, y, z, a in zip(w, _flat(l), _flat(lo), _flat(lref), [a for row, a in zip(l, A) for _ in row]))
    printed = tuple(wi * (a + BETA * (sp.exp(z - x) - 1))
                    for wi, x, z, a in zip(w, _flat(l), _flat(lref), [a for row, a in zip(l, A) for _ in row]))
    on_policy = dict(zip(_flat(lo), _flat(l)))
    claims = tuple((Text("at pi_old = pi_theta token {k}'s GC is |o_i|/L (R_i - mean R + KL term)", k=k + 1),
                    (g - p).subs(on_policy)) for k, (g, p) in enumerate(zip(gc, printed)))
    notes = (Text("No std and no 1/|o_i|: as eq 5 divides by |o_i|, the GC carries |o_i| / L, so every token "
             "of every response gets the same push A_i / L, whatever its length."),)
    symbols = {"rewards": R, "logp": _flat(l), "logp_old": _flat(lo), "logp_ref": _flat(lref), "beta": BETA,
               "max_len": L}
    return Derivation("dr_grpo", "arXiv 2503.20783, Figure 1", J, gc, hand, printed, symbols, claims,
                      notes=notes, scale="B\\,|o_i|")


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


def _asym_clipped(ratio, a):
    active = ((a > 0) & (ratio > 1 + EPS_HIGH)) | ((a < 0) & (ratio < 1 - EPS_LOW))
    return sp.Piecewise((0, active), (ratio * a, True))


def _dapo(n):
    lengths = (n, n + 1)
    l, lo = _ragged("ell", lengths), _ragged("ell^old", lengths)
    A = sp.symbols("Ahat_1:3", real=True)
    r = [[sp.exp(x - y) for x, y in zip(*rows)] for rows in zip(l, lo)]
    terms = [[sp.Min(ri * a, clip(ri, 1 - EPS_LOW, 1 + EPS_HIGH) * a) for ri in row] for row, a in zip(r, A)]
    J = _aggregate(terms, "token-mean")
    adv = [a for row, a in zip(l, A) for _ in row]
    hand = tuple(w * _asym_clipped(ri, a) for w, ri, a in zip(_weight(l, "token-mean"), _flat(r), adv))
    notes = (Text("Token-mean over the group: the GC of o_i carries G |o_i| / sum_j |o_j|."),
             Text("Clip-higher: the push on a token with A > 0 stops at r > 1 + eps_high, on one with A < 0 at "
             "r < 1 - eps_low; eps_high > eps_low leaves rising tokens more room."))
    symbols = {"adv": A, "logp": _flat(l), "logp_old": _flat(lo), "clip_eps": EPS_LOW, "clip_eps_high": EPS_HIGH}
    return Derivation("dapo", "arXiv 2503.14476, §3", J, _gc(J, l), hand, None, symbols,
                      cases=_asym_cases(_flat(l), _flat(lo), A), notes=notes, scale="B\\,|o_i|")


def _gspo(n):
    lengths = (n, n + 1)
    l, lo = _ragged("ell", lengths), _ragged("ell^old", lengths)
    A = sp.symbols("Ahat_1:3", real=True)
    s = [sp.exp(sum(x - y for x, y in zip(*rows)) / len(rows[0])) for rows in zip(l, lo)]
    J = sum(sp.Min(si * a, clip(si, 1 - EPS_LOW, 1 + EPS_HIGH) * a) for si, a in zip(s, A)) / 2
    gc = _gc(J, l)
    hand = tuple(_asym_clipped(si, a) for row, si, a in zip(l, s, A) for _ in row)
    k, claims = 0, []
    for row in l:  # every token of a response has the same GC
        claims += [(Text("response token {t} has the GC of token {first}", t=k + t + 2, first=k + 1),
                    gc[k + t + 1] - gc[k]) for t in range(len(row) - 1)]
        k += len(row)
    notes = (Text("s_i = exp(mean_t (ell - ell^old)) has d s_i / d ell_{{i,t}} = s_i / |o_i|: with the |o_i| of eq 5 "
             "the GC is s_i A_i on every token of o_i, or 0 on all of them where the sequence clip binds."),)
    symbols = {"adv": A, "logp": _flat(l), "logp_old": _flat(lo), "clip_eps": EPS_LOW, "clip_eps_high": EPS_HIGH}
    delta = sp.Symbol("delta", positive=True)  # tokens of a response at different ratios, same s_i
    offsets = [o for row in l for o in ([delta, -delta] * len(row))[:len(row) - len(row) % 2] + [0] * (len(row) % 2)]
    return Derivation("gspo", "arXiv 2507.18071, §4", J, gc, hand, None, symbols, tuple(claims),
                      _asym_cases(_flat(l), _flat(lo), A, offsets=offsets), notes, "B\\,|o_i|")


def _cispo(n):
    lengths = (n, n + 1)
    l, lo, bar = _ragged("ell", lengths), _ragged("ell^old", lengths), _ragged("ellbar", lengths)
    A = sp.symbols("Ahat_1:3", real=True)
    w = [[clip(sp.exp(b - y), 1 - EPS_LOW, 1 + EPS_HIGH) for b, y in zip(*rows)] for rows in zip(bar, lo)]  # sg(r)
    J = _aggregate([[wi * a * x for wi, x in zip(*rows)] for rows, a in zip(zip(w, l), A)], "token-mean")
    gc = tuple(g.subs(dict(zip(_flat(bar), _flat(l)))) for g in _gc(J, l))  # sg: ell-bar = ell after d/d ell
    ratio = [sp.exp(x - y) for x, y in zip(_flat(l), _flat(lo))]
    adv = [a for row, a in zip(l, A) for _ in row]
    hand = tuple(wt * a * sp.Piecewise((1 + EPS_HIGH, r > 1 + EPS_HIGH), (1 - EPS_LOW, r < 1 - EPS_LOW), (r, True))
                 for wt, r, a in zip(_weight(l, "token-mean"), ratio, adv))
    notes = (Text("The weight sg(clip(r)) is not differentiated: the GC is G |o_i| / sum_j |o_j| * clip(r) * A, "
             "never 0 where A is not (PPO's and DAPO's clip set it to 0)."),)
    symbols = {"adv": A, "logp": _flat(l), "logp_old": _flat(lo), "clip_eps": EPS_LOW, "clip_eps_high": EPS_HIGH}
    return Derivation("cispo", "arXiv 2506.13585, §3.1", J, gc, hand, None, symbols,
                      cases=_asym_cases(_flat(l), _flat(lo), A), notes=notes, scale="B\\,|o_i|")


def _rloo(n, group_size=3):
    lengths = tuple(n + (i == group_size - 1) for i in range(group_size))
    l, R, k = _ragged("ell", lengths), sp.symbols(f"R_1:{group_size + 1}", real=True), group_size
    loo = [R[i] - sum(R[j] for j in range(k) if j != i) / (k - 1) for i in range(k)]
    J = sum(b * sum(row) for b, row in zip(loo, l)) / k  # log pi(o_i | q) = sum_t ell_{i,t}
    mean = sum(R) / k
    hand = tuple(len(row) * sp.Rational(k, k - 1) * (r - mean) for row, r in zip(l, R) for _ in row)
    notes = (Text("REINFORCE on whole sequences (a token sum): GC = |o_i| (R_i - mean of the others), which is "
             "|o_i| k/(k-1) (R_i - mean R): GRPO's centred reward, without std, scaled by k/(k-1)."),)
    return Derivation("rloo", "arXiv 2402.14740, §3", J, _gc(J, l), hand, None, {"rewards": R, "logp": _flat(l)},
                      notes=notes, scale="B\\,|o_i|")


def _reinforce_pp(n):
    l, lo, lref = (_ragged(name, (n,))[0] for name in ("ell", "ell^old", "ell^ref"))
    R, mu, sigma = sp.Symbol("R", real=True), sp.Symbol("mu", real=True), sp.Symbol("sigma", positive=True)
    A = [R - BETA * sum(y - z for y, z in zip(lo[t:], lref[t:])) for t in range(n)]  # KL(i) = log pi_old/pi_ref
    An = [(a - mu) / sigma for a in A]  # batch mean and std: constants of theta
    J = sum(sp.exp(x - y) * a for x, y, a in zip(l, lo, An)) / n
    gc = _gc(J, (l,))
    hand = tuple(sp.exp(x - y) * a for x, y, a in zip(l, lo, An))
    claims = tuple((Text("at pi_old = pi_theta token {t}'s GC is the normalised return A_t", t=t + 1),
                     (g - a).subs(dict(zip(lo, l))))
                   for t, (g, a) in enumerate(zip(gc, An)))
    notes = (Text("The KL sits in the return: token t's advantage holds -beta times the k1 of itself and every "
             "later token (coefficients.kl_in_reward), then the batch's mean and std normalise it."),)
    symbols = {"rewards": R, "logp": l, "logp_old": lo, "logp_ref": lref, "beta": BETA, "mu": mu, "sigma": sigma}
    return Derivation("reinforce_pp", "arXiv 2501.03262", J, gc, hand, tuple(An), symbols, claims, notes=notes)


def _remax(n):
    l = _ragged("ell", (n, n))  # sampled, greedy
    R, Rg = sp.symbols("R R_greedy", real=True)
    J = (R - Rg) * sum(l[0])  # one question: (R(o) - R(o_greedy)) log pi(o | q)
    hand = tuple(2 * n * (R - Rg) for _ in l[0]) + tuple(sp.Integer(0) for _ in l[1])
    notes = (Text("B = 2 rows per question (sampled, greedy): GC = 2 |o| (R - R_greedy) on the sampled row; "
             "J does not depend on the greedy row's log-probs, so its GC is 0."),)
    return Derivation("remax", "arXiv 2310.10505, Algorithm 1", J, _gc(J, l), hand, None,
                      {"logp": _flat(l), "rewards": (R, Rg)}, notes=notes, scale="B\\,|o_i|")


KL_TARGETS = {"k1_loss": None, "k2_loss": "reverse", "k3_loss": "forward", "k3_ratio_loss": "reverse",
              "k1_reward": "reverse"}


def _kl_parts(n, use):
    """(J, derived GC, hand GC, (ell, ell^ref, ell^old)) of one response of n tokens."""
    l, lref, lo, bar = (_ragged(name, (n,))[0] for name in ("ell", "ell^ref", "ell^old", "ellbar"))
    if use == "k1_reward":  # sg(return) * log pi: the KL of the sampled tokens from t on, held fixed
        ret = [-BETA * sum(b - z for b, z in zip(bar[t:], lref[t:])) for t in range(n)]
        J = sum(r * x for r, x in zip(ret, l)) / n
        gc = tuple(g.subs(dict(zip(bar, lo))) for g in _gc(J, (l,)))
        hand = tuple(-BETA * sum(y - z for y, z in zip(lo[t:], lref[t:])) for t in range(n))
        return J, gc, hand, (l, lref, lo)
    k1 = [x - z for x, z in zip(l, lref)]
    per_token = {"k1_loss": k1, "k2_loss": [k ** 2 / 2 for k in k1], "k3_loss": [_k3(x, z) for x, z in zip(l, lref)],
                 "k3_ratio_loss": [sp.exp(x - y) * _k3(x, z) for x, y, z in zip(l, lo, lref)]}[use]
    J = -BETA * sum(per_token) / n
    x = [z - y for y, z in zip(l, lref)]  # log(pi_ref / pi)
    hand = tuple({"k1_loss": -BETA, "k2_loss": BETA * xi, "k3_loss": BETA * (sp.exp(xi) - 1),
                  "k3_ratio_loss": BETA * sp.exp(y - o) * xi}[use] for xi, y, o in zip(x, l, lo))
    return J, _gc(J, (l,)), hand, (l, lref, lo)


def _kl(n, use, target=None):
    """use: a key of KL_TARGETS; target: the KL claimed ("reverse", "forward", "zero"; default: the true one)."""
    J, gc, hand, (l, lref, lo) = _kl_parts(n, use)
    # the expectation over one token of a 3-token vocabulary, exactly: sum_o pi(o) GC(o) d log pi(o) / dz_j
    _, (g1,), _, (l1, lref1, lo1) = _kl_parts(1, use)
    z, w = sp.symbols("z_1:4", real=True), sp.symbols("w_1:4", real=True)
    logpi = [zi - sp.log(sum(sp.exp(v) for v in z)) for zi in z]
    logref = [wi - sp.log(sum(sp.exp(v) for v in w)) for wi in w]
    at = lambda o: {l1[0]: logpi[o], lref1[0]: logref[o], lo1[0]: logpi[o]}  # noqa: E731 on-policy sample o
    expected = [sum(sp.exp(logpi[o]) * g1.subs(at(o)) * sp.diff(logpi[o], zj) for o in range(3)) for zj in z]
    kls = {"reverse": sum(sp.exp(logpi[o]) * (logpi[o] - logref[o]) for o in range(3)),
           "forward": sum(sp.exp(logref[o]) * (logref[o] - logpi[o]) for o in range(3))}
    target = KL_TARGETS[use] if target is None else None if target == "zero" else target
    said = "0" if target is None else Text("-beta grad KL {target}", target=Text(target))
    claims = tuple((Text("E_pi[GC grad log pi] = {said} (d/dz_{j})", said=said, j=j + 1),
                    e if target is None else e + BETA * sp.diff(kls[target], z[j])) for j, e in enumerate(expected))
    symbols = {"logp": l, "logp_ref": lref, "beta": BETA}
    if use in ("k3_ratio_loss", "k1_reward"):
        symbols["logp_old"] = lo
    what = Text("zero") if target is None else Text("minus beta times the gradient of the {target} KL",
                                                     target=Text(target))
    notes = (Text("The claims sum over every token of a 3-token vocabulary (pi = softmax(z), pi_ref = softmax(w)), "
                  "on-policy: the expected gradient is {what}.", what=what),)
    return Derivation(f"kl_{use}", "kl/gc.py", J, gc, hand, None, symbols, claims, notes=notes)


REGISTRY = {
    "dr_grpo": _dr_grpo, "dapo": _dapo, "gspo": _gspo, "cispo": _cispo, "rloo": _rloo,
    "reinforce_pp": _reinforce_pp, "remax": _remax,
    **{f"kl_{use}": (lambda n, use=use: _kl(n, use)) for use in KL_TARGETS},
}
