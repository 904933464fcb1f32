"""SAPO, VESPO, LUSPO, GMPO, Clip-Cov and KL-Cov in sympy: each J as printed, its GC derived (coefficients/ratio_shapes.py).

Conventions as in `policy_gradient`: GC = B |o_i| dJ/d ell_{i,t}; a stop-gradient is a copy of the
symbol (ell-bar) set equal to ell after differentiating; the tokens Clip-Cov and KL-Cov single out are
numbers c_t, s_t in {0, 1} chosen before the update.
"""
import sympy as sp

from ..text import Text
from .core import Derivation, clip, sigmoid
from .policy_gradient import EPS_HIGH, EPS_LOW, _asym_cases, _asym_clipped, _flat, _gc, _ragged

TAU, KAPPA = sp.Symbol("tau", positive=True), sp.Symbol("kappa", positive=True)
K, LAM = sp.Symbol("k", positive=True), sp.Symbol("lambda", positive=True)


def _one(n, *names):
    return tuple(_ragged(name, (n,))[0] for name in names)


def _sapo(n):
    l, lo = _one(n, "ell", "ell^old")
    A = sp.Symbol("A", real=True)
    r = [sp.exp(x - y) for x, y in zip(l, lo)]
    J = sum(4 / TAU * sigmoid(TAU * (ri - 1)) * A for ri in r) / n
    hand = tuple(4 * sigmoid(TAU * (ri - 1)) * (1 - sigmoid(TAU * (ri - 1))) * ri * A for ri in r)
    claims = tuple((Text("at pi_old = pi_theta token {t}'s GC is A", t=t + 1), (h - A).subs(dict(zip(lo, l))))
                   for t, h in enumerate(hand))
    notes = (Text("The gate 4/tau sigmoid(tau (r - 1)) has slope 1 at r = 1 and flattens as r leaves 1, so the GC "
                  "4 sigma (1 - sigma) r A fades smoothly where PPO's clip would cut it to 0; tau is tau_pos where "
                  "A > 0 and tau_neg otherwise."),)
    return Derivation("sapo", "arXiv 2511.20347", J, _gc(J, (l,)), hand, None,
                      {"adv": A, "logp": l, "logp_old": lo, "tau": TAU}, claims, notes=notes)


def _vespo(n):
    l, lo, bar = _one(n, "ell", "ell^old", "ellbar")
    A = sp.Symbol("A", real=True)
    W = sp.exp(sum(b - y for b, y in zip(bar, lo)))  # sg: the sequence's product of ratios
    phi = sp.exp(LAM) * W ** K * sp.exp(-LAM * W)
    J = phi * A * sum(l) / n  # batch-token-mean of one response
    gc = tuple(g.subs(dict(zip(bar, l))) for g in _gc(J, (l,)))
    W_l = sp.exp(sum(x - y for x, y in zip(l, lo)))
    hand = tuple(sp.exp(LAM) * W_l ** K * sp.exp(-LAM * W_l) * A for _ in l)
    claims = ((Text("phi(1) = 1: at pi_old = pi_theta the GC is A"), (hand[0] - A).subs(dict(zip(lo, l)))),)
    notes = (Text("phi(W) = e^lambda W^k e^(-lambda W) weighs A log pi without being differentiated: the GC is "
                  "phi(W_i) A_i on every token, largest at W = k / lambda and never a hard 0."),)
    return Derivation("vespo", "arXiv 2602.10693", J, gc, hand, None,
                      {"adv": A, "logp": l, "logp_old": lo, "k": K, "lambda": LAM}, claims, notes=notes)


def _luspo(n):
    lengths = (n, n + 1)
    l, lo = _ragged("ell", lengths), _ragged("ell^old", lengths)
    A = sp.symbols("Ahat_1:3", real=True)
    s = [sp.exp(sum(x - y for x, y in zip(*rows)) / len(rows[0])) for rows in zip(l, lo)]
    J = sum(len(row) * sp.Min(si * a, clip(si, 1 - EPS_LOW, 1 + EPS_HIGH) * a) for row, si, a in zip(l, s, A)) / 2
    hand = tuple(len(row) * _asym_clipped(si, a) for row, si, a in zip(l, s, A) for _ in row)
    notes = (Text("GSPO's term of each sequence times its length |o_i| (a token sum of the constant per-token "
                  "term): the GC is |o_i| s_i A_i, so a long answer's tokens are pushed as hard as a short one's "
                  "in total, not per token."),)
    delta = sp.Symbol("delta", positive=True)
    offsets = [o for row in l for o in ([delta, -delta] * len(row))[:len(row) - len(row) % 2] + [0] * (len(row) % 2)]
    symbols = {"adv": A, "logp": _flat(l), "logp_old": _flat(lo), "clip_eps": EPS_LOW, "clip_eps_high": EPS_HIGH}
    return Derivation("luspo", "arXiv 2602.05261", J, _gc(J, l), hand, None, symbols,
                      cases=_asym_cases(_flat(l), _flat(lo), A, offsets=offsets), notes=notes, scale="B\\,|o_i|")


def _gmpo(n):
    l, lo = _one(n, "ell", "ell^old")
    A = sp.Symbol("A", real=True)
    lr = [x - y for x, y in zip(l, lo)]
    c = [sp.sign(A) * sp.Min(sp.sign(A) * x, sp.sign(A) * clip(x, -EPS_LOW, EPS_HIGH)) for x in lr]
    J = A * sp.exp(sum(c) / n)
    c_hand = [sp.Piecewise((EPS_HIGH, (A > 0) & (x > EPS_HIGH)), (-EPS_LOW, (A < 0) & (x < -EPS_LOW)), (x, True))
              for x in lr]
    rho = sp.exp(sum(c_hand) / n)
    hand = tuple(sp.Piecewise((0, ((A > 0) & (x > EPS_HIGH)) | ((A < 0) & (x < -EPS_LOW))), (A * rho, True))
                 for x in lr)
    a, u, d = sp.symbols("a u d", positive=True)
    where = {"log r > eps_high": EPS_HIGH + d, "-eps_low < log r < eps_high": -EPS_LOW + (EPS_LOW + EPS_HIGH) * u / (1 + u),
             "log r < -eps_low": -EPS_LOW - d}
    inside = where["-eps_low < log r < eps_high"]
    cases = tuple((Text("{sign}, {ratio}", sign=sn, ratio=rn),  # the first token in the region, the others inside
                   {A: sv, **{x: y + (v if t == 0 else inside) for t, (x, y) in enumerate(zip(l, lo))}})
                  for sn, sv in (("A > 0", a), ("A < 0", -a)) for rn, v in where.items())
    notes = (Text("The sequence's weight is the geometric mean of its token ratios, each clipped in log space on "
                  "the side A's sign makes pessimistic; d/d ell_t of exp(mean_t c) is rho / |o|, so the GC is A rho "
                  "on the tokens whose log-ratio is inside the clip and 0 on the others."),)
    symbols = {"adv": A, "logp": l, "logp_old": lo, "clip_eps": EPS_LOW, "clip_eps_high": EPS_HIGH}
    return Derivation("gmpo", "arXiv 2507.20673", J, _gc(J, (l,)), hand, None, symbols, cases=cases, notes=notes)


def _clip_cov(n):
    l, lo = _one(n, "ell", "ell^old")
    A = sp.Symbol("A", real=True)
    corr = tuple(sp.Symbol(f"c_{t + 1}", nonnegative=True) for t in range(n))  # 0 on the detached tokens, else 1
    r = [sp.exp(x - y) for x, y in zip(l, lo)]
    J = sum(ci * sp.Min(ri * A, clip(ri, 1 - EPS_LOW, 1 + EPS_HIGH) * A) for ci, ri in zip(corr, r)) / n
    hand = tuple(ci * _asym_clipped(ri, A) for ci, ri in zip(corr, r))
    notes = (Text("Clip-Cov multiplies PPO's term of a few tokens by c = 0 (drawn among the unclipped tokens whose "
                  "covariance of A and log pi is in (lb, ub)); c is chosen before the update, so the GC is c times "
                  "PPO's."),)
    symbols = {"adv": (A,), "logp": l, "logp_old": lo, "clip_eps": EPS_LOW, "clip_eps_high": EPS_HIGH, "corr": corr}
    return Derivation("clip_cov", "arXiv 2505.22617, §4", J, _gc(J, (l,)), hand, None, symbols,
                      cases=_asym_cases(l, lo, (A,)), notes=notes)


def _kl_cov(n):
    l, lo = _one(n, "ell", "ell^old")
    A = sp.Symbol("A", real=True)
    chosen = tuple(sp.Symbol(f"s_{t + 1}", nonnegative=True) for t in range(n))  # 1 on the top-covariance tokens
    J = sum(sp.exp(x - y) * A - KAPPA * s * sp.Abs(x - y) for x, y, s in zip(l, lo, chosen)) / n
    hand = tuple(sp.exp(x - y) * A - KAPPA * s * sp.sign(x - y) for x, y, s in zip(l, lo, chosen))
    notes = (Text("KL-Cov has no clip: the GC is r A, minus kappa sign(log r) on the chosen tokens, which pulls "
                  "their log-ratio back to 0 (and is 0 at pi_old = pi_theta)."),)
    symbols = {"adv": A, "logp": l, "logp_old": lo, "kappa": KAPPA, "chosen": chosen}
    return Derivation("kl_cov", "arXiv 2505.22617, §4", J, _gc(J, (l,)), hand, None, symbols, notes=notes)


REGISTRY = {"sapo": _sapo, "vespo": _vespo, "luspo": _luspo, "gmpo": _gmpo, "clip_cov": _clip_cov,
            "kl_cov": _kl_cov}
