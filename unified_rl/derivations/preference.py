"""IPO, SimPO, KTO and ORPO in sympy, each GC derived from its J and proved equal to the hand form.

J is written for one pair (KTO: one desirable and one undesirable response) in per-token log-prob
symbols, with the length-normalised log-ratios or log-probs of `objectives.preference`. Papers:
IPO arXiv 2310.12036 eq 17; SimPO arXiv 2405.14734 eq 4-6; KTO arXiv 2402.01306 section 4.1 (the loss
and its gradient, eq 7 and 9 in v2); ORPO arXiv 2403.07691 eq 3-7 and its gradient, eq 8-10.
"""
import sympy as sp

from ..text import Text
from .core import BETA, Derivation, _derive, _toks, sigmoid
from .paper import _dpo

TAU, GAMMA = sp.Symbol("tau", positive=True), sp.Symbol("gamma", real=True)
LAM, LAM_D, LAM_U = (sp.Symbol(s, positive=True) for s in ("lambda", "lambda_D", "lambda_U"))
Z0 = sp.Symbol("z_0", real=True)


def _mean(xs):
    return sum(xs) / len(xs)


def _same_on_every_token(gc, n, side):
    """Claims that the GC of the n tokens starting at gc[0] are all equal (DeepSeekMath's 1/|o| shape)."""
    return tuple((Text("the GC is the same on every {side} token (token {t} = token 1)", side=Text(side), t=t + 1),
                  gc[t] - gc[0])
                 for t in range(1, n))


def _ipo(n):
    lc, rc, lr, rr = _toks("ell^+", n), _toks("ell^ref+", n), _toks("ell^-", n), _toks("ell^ref-", n)
    margin = _mean([a - b for a, b in zip(lc, rc)]) - _mean([a - b for a, b in zip(lr, rr)])
    J = -(margin - 1 / (2 * TAU)) ** 2  # eq 17, h with length-normalised log-ratios
    gc = _derive(J, lc, n) + _derive(J, lr, n)
    c = 1 / TAU - 2 * margin
    delta = sp.Symbol("delta", real=True)
    past = {lc[0]: sp.solve(margin - 1 / (2 * TAU) - delta, lc[0])[0]}  # margin = target + delta
    claims = ((Text("the GC is linear in the margin (no sigmoid, no saturation)"), sp.diff(gc[0], lc[0], 2)),
              (Text("at margin = 1/(2 tau) + delta the chosen GC is -2 delta: 0 on target, reversed past it"),
               gc[0].subs(past) + 2 * delta)) + _same_on_every_token(gc, n, "chosen")
    notes = (Text("The GC is c = 1/tau - 2 (x+ - x-) on chosen tokens and -c on rejected ones: J regresses "
             "the margin onto 1/(2 tau)."),
             Text("Unlike DPO's beta sigmoid(-beta margin), c does not fade as the margin grows: it shrinks "
             "linearly, is 0 at the target and reverses sign past it, pulling the margin back."),
             Text("The paper's h sums log-ratios over tokens; here x is the per-token mean, as in "
             "DeepSeekMath's eq 12, so the target 1/(2 tau) is a margin per token."))
    symbols = {"logp_chosen": lc, "logp_ref_chosen": rc, "logp_rejected": lr,
               "logp_ref_rejected": rr, "tau": TAU}
    return Derivation("ipo", "IPO eq 17", J, gc, (c,) * n + (-c,) * n, None, symbols, claims, notes=notes)


def _simpo(n):
    lc, lr = _toks("ell^+", n), _toks("ell^-", n)
    J = sp.log(sigmoid(BETA * _mean(lc) - BETA * _mean(lr) - GAMMA))  # eq 6
    gc = _derive(J, lc, n) + _derive(J, lr, n)
    c = BETA * sigmoid(GAMMA - BETA * _mean(lc) + BETA * _mean(lr))
    dpo = _dpo(n)  # SimPO with gamma = 0 and log-ratios in place of log-probs is DPO (eq 12)
    to_ratios = {**{a: a - b for a, b in zip(lc, dpo.symbols["logp_ref_chosen"])},
                 **{a: a - b for a, b in zip(lr, dpo.symbols["logp_ref_rejected"])}}
    as_dpo = c.subs(GAMMA, 0).subs(to_ratios, simultaneous=True)
    as_dpo = as_dpo.subs(dict(zip(lc, dpo.symbols["logp_chosen"])) | dict(zip(lr, dpo.symbols["logp_rejected"])))
    claims = ((Text("with gamma = 0 and pi_ref in the log-probs, SimPO's GC is DPO's exact GC"), as_dpo - dpo.hand[0]),
              ) + _same_on_every_token(gc, n, "chosen") + _same_on_every_token(gc[n:], n, "rejected")
    notes = (Text("The GC is c = beta sigmoid(gamma - beta (l+ - l-)) on chosen tokens and -c on rejected "
             "ones, l the mean log-prob of eq 4: DPO's coefficient with no pi_ref and a margin shifted by gamma."),
             Text("The 1/|y| of eq 4 is exactly eq 5's 1/|o|: the GC is one number per response."))
    symbols = {"logp_chosen": lc, "logp_rejected": lr, "beta": BETA, "gamma": GAMMA}
    return Derivation("simpo", "SimPO eq 4, 5, 6", J, gc, (c,) * n + (-c,) * n, None, symbols, claims,
                      notes=notes)


def _kto(n, norm="mean"):
    ld, rd, lu, ru = _toks("ell^D", n), _toks("ell^refD", n), _toks("ell^U", n), _toks("ell^refU", n)
    agg = _mean if norm == "mean" else sum  # norm="sum": the paper's and TRL's sequence log-ratio
    x_d, x_u = agg([a - b for a, b in zip(ld, rd)]), agg([a - b for a, b in zip(lu, ru)])
    v_d, v_u = LAM_D * sigmoid(BETA * (x_d - Z0)), LAM_U * sigmoid(BETA * (Z0 - x_u))
    J = -((LAM_D - v_d) + (LAM_U - v_u)) / 2  # minus the KTO loss over a batch of two responses
    gc = tuple(2 * n * sp.diff(J, x) for x in ld + lu)  # the 1/2 is eq 5's batch mean
    z_d, z_u = BETA * (x_d - Z0), BETA * (x_u - Z0)
    k = n if norm == "sum" else 1  # d x / d ell_t = 1 for a sum: the GC carries |o|
    hand = ((k * LAM_D * BETA * sigmoid(z_d) * sigmoid(-z_d),) * n
            + (-k * LAM_U * BETA * sigmoid(z_u) * sigmoid(-z_u),) * n)
    at_z0 = {ld[0]: sp.solve(x_d - Z0, ld[0])[0]}
    apo = -(LAM_D * (1 - sigmoid(BETA * x_d)) + LAM_U * sigmoid(BETA * x_u)) / 2  # APO-zero, unpaired (TRL)
    claims = ((Text("the desirable push is largest where x = z0 (its slope in x vanishes there)"),
               sp.diff(gc[0], ld[0]).subs(at_z0)),
              ) + _same_on_every_token(gc, n, "desirable") + (
              (Text("with z0 = 0, J is TRL's apo_zero_unpaired loss (APO-zero, arXiv 2408.06266, unpaired)"),
               J.subs(Z0, 0) - apo),)
    notes = (Text("The GC is lambda_D beta sigmoid(z) sigmoid(-z) on a desirable response's tokens and "
             "-lambda_U beta sigmoid(z) sigmoid(-z) on an undesirable one's, z = beta (x - z0): the "
             "paper's gradient (eq 9) with the length-normalised log-ratio x."),
             Text("z0 is a symbol here, a constant of theta: the paper estimates it on mismatched pairs and "
             "does not backpropagate through it."),
             Text("sigmoid(z) sigmoid(-z) fades on both sides of z = 0: responses far on the right side of "
             "z0 are left alone, and so are those far on the wrong side."))
    if norm == "sum":
        notes += (Text("norm = sum: x is the sequence log-ratio, as the paper and TRL's KTOTrainer take it, so "
                       "the GC carries a factor |o|."),)
    symbols = {"logp": ld + lu, "logp_ref": rd + ru, "z0": Z0, "beta": BETA, "lam_d": LAM_D, "lam_u": LAM_U}
    return Derivation("kto", "KTO section 4.1 (v2 eq 7, 9)", J, gc, hand, None, symbols, claims, notes=notes,
                      scale=r"2\,|o_i|")


def _orpo(n):
    lc, lr = _toks("ell^+", n), _toks("ell^-", n)
    m_c, m_r = _mean(lc), _mean(lr)  # eq 3: log P = mean log-prob
    log_odds = [m - sp.log(1 - sp.exp(m)) for m in (m_c, m_r)]  # eq 4
    J = m_c + LAM * sp.log(sigmoid(log_odds[0] - log_odds[1]))  # minus eq 6, with eq 7
    gc = _derive(J, lc, n) + _derive(J, lr, n)
    p_c, p_r = sp.exp(m_c), sp.exp(m_r)
    d = p_r * (1 - p_c) + p_c * (1 - p_r)
    hand = (1 + LAM * p_r / d,) * n + (-LAM * p_r * (1 - p_c) / ((1 - p_r) * d),) * n
    odds_c, odds_r = p_c / (1 - p_c), p_r / (1 - p_r)
    delta = 1 / (1 + odds_c / odds_r)  # eq 9
    printed = (1 + LAM * delta / (1 - p_c),) * n + (-LAM * delta / (1 - p_r),) * n  # eq 8, 10, plus L_SFT's 1
    claims = ((Text("eq 8-10's delta(d) h(d), plus the SFT term, equals the hand form on chosen tokens"),
               printed[0] - hand[0]),
              (Text("... and on rejected tokens"), printed[n] - hand[n]),
              (Text("with lambda = 0 ORPO's GC is SFT's: 1 on chosen, 0 on rejected tokens"),
               hand[0].subs(LAM, 0) - 1 + hand[n].subs(LAM, 0)))
    notes = (Text("The GC is 1 + lambda P-/D on chosen tokens and -lambda P-(1-P+)/((1-P-) D) on rejected "
             "ones, P = exp(mean log-prob), D = P-(1-P+) + P+(1-P-): SFT's coefficient plus the odds-ratio "
             "term, with no pi_ref."),
             Text("Eq 8-10 print the odds-ratio gradient as delta(d) h(d), delta = 1/(1 + odds+/odds-) and "
             "h = grad log P+/(1-P+) - grad log P-/(1-P-); the hand form is that product rewritten to "
             "stay finite when P+ = 1."))
    symbols = {"logp_chosen": lc, "logp_rejected": lr, "lam": LAM}
    return Derivation("orpo", "ORPO eq 3-10", J, gc, hand, printed, symbols, claims, notes=notes)


REGISTRY = {"ipo": _ipo, "simpo": _simpo, "kto": _kto, "orpo": _orpo,
            "kto_sum": lambda n: _kto(n, "sum")}  # the paper's and TRL's summed log-ratios (kto_norm="sum")
