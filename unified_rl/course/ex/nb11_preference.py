"""Exercises of course/11_preference_family.ipynb: the GCs of IPO, SimPO and KTO, derived, implemented, predicted.

In the notebook:  from unified_rl.course.ex.nb11_preference import q1, q2, q3, q4, q5
Each exercise names the notebook variable it reads and carries its solution and plausible wrong
answers (tests/test_exercises.py runs every checker on them). References are the package's own
functions (`coefficients.simpo`, `coefficients.kto`, `coefficients.ipo`), never a copy.
"""

import sympy
import torch

from unified_rl import coefficients
from unified_rl.course.exercises import ChoiceExercise, ExpressionExercise, FunctionExercise, ValueExercise
from unified_rl.course.i18n import Msg

# q1 (derivation): IPO's coefficient of one *rejected* token, |o-| = 2, per-token log-ratios l1, l2.
tau = sympy.Symbol("tau", positive=True)
x_plus, l1, l2 = sympy.symbols("x_plus l1 l2", real=True)  # log-ratios: either sign


def _ipo_objective(mean=True):
    x_minus = (l1 + l2) / 2 if mean else l1 + l2
    return -(x_plus - x_minus - 1 / (2 * tau)) ** 2  # eq 17 for one pair


def _sigmoid(z):
    return 1 / (1 + sympy.exp(-z))


q1 = ExpressionExercise(
    lambda: 2 * sympy.diff(_ipo_objective(), l1),
    var="gc_rejected_token", title=Msg("nb11.q1.title"),
    hint=[Msg("nb11.q1.hint1"),
          Msg("nb11.q1.hint2")],
    solution=Msg("nb11.q1.solution"),
    wrong=[sympy.diff(_ipo_objective(), l1),  # forgot |o-|: off by 1/2
           -2 * sympy.diff(_ipo_objective(), l1),  # the chosen side's sign
           2 * sympy.diff(_ipo_objective(mean=False), l1),  # summed log-ratios: h grows with |o-|
           2 * (x_plus - (l1 + l2) / 2) - 1,  # tau dropped: the target margin 1/(2 tau) as 1/2
           -_sigmoid((l1 + l2) / 2 - x_plus)],  # DPO's saturating form
)


# q2 (implementation): SimPO's coefficient, checked against coefficients.simpo by value and gradient.
def _simpo_solution(logp_chosen, mask_chosen, logp_rejected, mask_rejected, beta, gamma):
    l_c = (logp_chosen * mask_chosen).sum(-1) / mask_chosen.sum(-1)  # (B,) eq 4: mean log-prob
    l_r = (logp_rejected * mask_rejected).sum(-1) / mask_rejected.sum(-1)  # (B,)
    c = (beta * torch.sigmoid(gamma - beta * (l_c - l_r))).detach()  # (B,)
    return c[:, None] * mask_chosen, -c[:, None] * mask_rejected


def _simpo_with(logp_chosen, mask_chosen, logp_rejected, mask_rejected, beta, gamma, *, norm=True, lead=True,
                sign_gamma=1.0, sign_rejected=-1.0, detach=True, masked=True):
    n_c = mask_chosen.sum(-1) if norm else 1.0
    n_r = mask_rejected.sum(-1) if norm else 1.0
    m_c, m_r = (mask_chosen, mask_rejected) if masked else (1.0, 1.0)
    l_c, l_r = (logp_chosen * m_c).sum(-1) / n_c, (logp_rejected * m_r).sum(-1) / n_r
    c = (beta if lead else 1.0) * torch.sigmoid(sign_gamma * gamma - beta * (l_c - l_r))
    c = c.detach() if detach else c
    return c[:, None] * mask_chosen, sign_rejected * c[:, None] * mask_rejected


def _summed(**kw):
    """Summed log-probs: eq 4 without its 1/|y| (long responses dominate)."""
    return _simpo_with(**kw, norm=False)


def _no_beta(**kw):
    """sigmoid(...) without the leading beta, the chain rule's inner factor."""
    return _simpo_with(**kw, lead=False)


def _gamma_sign(**kw):
    """The margin gamma on the wrong side: beta * sigmoid(-gamma - beta (l+ - l-))."""
    return _simpo_with(**kw, sign_gamma=-1.0)


def _same_sign(**kw):
    """+c on the rejected response too: pushes it up."""
    return _simpo_with(**kw, sign_rejected=1.0)


def _not_detached(**kw):
    """The right numbers, but the coefficient keeps its graph."""
    return _simpo_with(**kw, detach=False)


def _simpo_unmasked(**kw):
    """Sums every position of a row, padding included (divided by |o| all the same): an unmasked sum."""
    return _simpo_with(**kw, masked=False)


def _masks(gen, B, T):
    lens = torch.randint(1, T + 1, (2, B), generator=gen)
    return [(torch.arange(T)[None] < n[:, None]).float() for n in lens]  # (B, T) each, ragged


def _simpo_inputs(gen, B=None, T=None):
    B, T = B or int(torch.randint(2, 5, (), generator=gen)), T or int(torch.randint(4, 8, (), generator=gen))
    mc, mr = _masks(gen, B, T)
    lc, lr = (-(3 * torch.rand(B, T, generator=gen) + 0.01) for _ in range(2))  # log-probs < 0, off the mask too
    return {"logp_chosen": lc, "mask_chosen": mc, "logp_rejected": lr, "mask_rejected": mr,
            "beta": float(1 + 4 * torch.rand((), generator=gen)), "gamma": float(2 * torch.rand((), generator=gen))}


def _simpo_case(T_c, T_r, mean_c, mean_r, beta, gamma):
    mc, mr = torch.zeros(1, 5), torch.zeros(1, 5)
    mc[0, :T_c], mr[0, :T_r] = 1, 1
    return {"logp_chosen": mean_c * mc, "mask_chosen": mc, "logp_rejected": mean_r * mr, "mask_rejected": mr,
            "beta": beta, "gamma": gamma}


q2 = FunctionExercise(
    coefficients.simpo,
    cases={Msg("nb11.q2.case.equal_mean_log_probs_gamma_0"): _simpo_case(2, 2, -1.0, -1.0, 2.0, 0.0),
           Msg("nb11.q2.case.chosen_far_more_likely_margin_past_gamma"): _simpo_case(3, 4, -0.1, -2.0, 2.5, 1.0),
           Msg("nb11.q2.case.different_lengths_same_mean"): _simpo_case(1, 5, -0.5, -0.5, 2.0, 1.0),
           Msg("nb11.q2.case.ragged_batch"): lambda gen: _simpo_inputs(gen, B=4, T=7)},
    random_inputs=_simpo_inputs, detached=True, var="my_simpo_coef",
    title=Msg("nb11.q2.title"),
    hint=[Msg("nb11.q2.hint1"),
          Msg("nb11.q2.hint2")],
    solution_value=_simpo_solution,
    wrong=[_summed, _no_beta, _gamma_sign, _same_sign, _not_detached, _simpo_unmasked],
)


# q3 (implementation): KTO's coefficient, checked against coefficients.kto by value and gradient.
def _kto_solution(logp, logp_ref, mask, desirable, z0, beta, lam_d, lam_u):
    x = ((logp - logp_ref) * mask).sum(-1) / mask.sum(-1)  # (B,) length-normalised log-ratio
    z = beta * (x - z0)  # (B,)
    push = (beta * torch.sigmoid(z) * torch.sigmoid(-z)).detach()  # (B,) d sigmoid(z) / dx
    c = torch.where(desirable > 0, lam_d * push, -lam_u * push)  # (B,)
    return c[:, None] * mask


def _kto_with(logp, logp_ref, mask, desirable, z0, beta, lam_d, lam_u, *, slope=True, inner=True,
              sign_u=-1.0, per_token=False, detach=True, masked=True):
    m = mask if masked else 1.0
    x = logp - logp_ref if per_token else (((logp - logp_ref) * m).sum(-1) / mask.sum(-1))[:, None]
    z = beta * (x - z0)  # (B, T) or (B, 1)
    push = torch.sigmoid(z) * (torch.sigmoid(-z) if slope else 1.0) * (beta if inner else 1.0)
    push = push.detach() if detach else push
    w = torch.where(desirable[:, None] > 0, torch.full_like(push, lam_d), torch.full_like(push, sign_u * lam_u))
    return w * push * mask


def _value_not_slope(**kw):
    """The value sigmoid(z) of v instead of its slope in x: the coefficient of a sigmoid is its derivative."""
    return _kto_with(**kw, slope=False)


def _kto_no_beta(**kw):
    """sigmoid(z) sigmoid(-z) without the inner derivative beta of z = beta (x - z0)."""
    return _kto_with(**kw, inner=False)


def _kto_same_sign(**kw):
    """Undesirable responses pushed up like desirable ones."""
    return _kto_with(**kw, sign_u=1.0)


def _kto_per_token(**kw):
    """z from each token's own log-ratio instead of the response's mean: v sees only x."""
    return _kto_with(**kw, per_token=True)


def _kto_not_detached(**kw):
    return _kto_with(**kw, detach=False)


def _kto_no_lam_u(**kw):
    """lam_u forgotten: -sigmoid(z) sigmoid(-z) beta on an undesirable response, right only at lam_u = 1."""
    return _kto_with(**{**kw, "lam_u": 1.0})


def _kto_unmasked(**kw):
    """Sums every position of a row, padding included (divided by |o| all the same): an unmasked sum."""
    return _kto_with(**kw, masked=False)


def _kto_inputs(gen, B=None, T=None):
    B, T = B or int(torch.randint(2, 6, (), generator=gen)), T or int(torch.randint(4, 8, (), generator=gen))
    (mask, _) = _masks(gen, B, T)
    logp = -(3 * torch.rand(B, T, generator=gen) + 0.01)  # non-zero off the mask too
    logp_ref = logp + torch.randn(B, T, generator=gen)  # log-ratios of either sign
    return {"logp": logp, "logp_ref": logp_ref, "mask": mask,
            "desirable": torch.randint(0, 2, (B,), generator=gen).float(),
            "z0": float(torch.rand((), generator=gen)), "beta": float(0.2 + 2 * torch.rand((), generator=gen)),
            "lam_d": float(1.1 + 2 * torch.rand((), generator=gen)),
            "lam_u": float(0.2 + 0.7 * torch.rand((), generator=gen))}  # lam_u varied: forgetting it fails


q3 = FunctionExercise(
    coefficients.kto,
    cases={Msg("nb11.q3.case.one_desirable_one_undesirable_at_z0"): {
               "logp": torch.tensor([[-1.0, -1.0], [-2.0, 0.0]]), "logp_ref": torch.tensor([[-1.5, -1.5], [-2.5, 0.0]]),
               "mask": torch.tensor([[1.0, 1.0], [1.0, 0.0]]), "desirable": torch.tensor([1.0, 0.0]),
               "z0": 0.5, "beta": 1.0, "lam_d": 2.0, "lam_u": 1.0},
           Msg("nb11.q3.case.ragged_batch"): lambda gen: _kto_inputs(gen, B=5, T=7)},
    random_inputs=_kto_inputs, detached=True, var="my_kto_coef", title=Msg("nb11.q3.title"),
    hint=[Msg("nb11.q3.hint1"),
          Msg("nb11.q3.hint2")],
    solution_value=_kto_solution,
    wrong=[_value_not_slope, _kto_no_beta, _kto_same_sign, _kto_per_token, _kto_not_detached, _kto_no_lam_u,
           _kto_unmasked],
)


# q4 (predict, then run): IPO past its target.
def _ipo_past_target():
    m = torch.ones(1, 1)
    c_pos, _ = coefficients.ipo(torch.tensor([[1.5]]), torch.zeros(1, 1), m, torch.zeros(1, 1),
                                torch.zeros(1, 1), m, tau=0.5)
    return c_pos.item()


q4 = ValueExercise(
    _ipo_past_target, atol=1e-6, var="predicted_ipo_gc",
    title=Msg("nb11.q4.title"),
    hint=[Msg("nb11.q4.hint1"),
          Msg("nb11.q4.hint2")],
    wrong=[0.0, 1.0, 2.0, 0.5 / (1 + 2.718281828459045 ** 0.75)],  # stops; |GC|; 1/tau; DPO's form
)

# q5 (choice): what held the chosen log-prob up in the training run.
q5 = ChoiceExercise(
    {"sft_term": Msg("nb11.q5.option.sft_term"),
     "no_reference": Msg("nb11.q5.option.no_reference"),
     "odds_ratio": Msg("nb11.q5.option.odds_ratio"),
     "small_lambda": Msg("nb11.q5.option.small_lambda")},
    "sft_term", var="what_holds_x_plus", title=Msg("nb11.q5.title"),
    hint=Msg("nb11.q5.hint"),
    why={"no_reference": Msg("nb11.q5.why.no_reference"),
         "odds_ratio": Msg("nb11.q5.why.odds_ratio"),
         "small_lambda": Msg("nb11.q5.why.small_lambda")},
)
