"""Exercises of course/04_dpo.ipynb: DPO's coefficient (eq 12-14), derived, implemented, predicted.

In the notebook:  from unified_rl.course.ex.nb04_dpo import q1, q2, q3, q4
Each exercise names the notebook variable it reads and carries its solution and plausible wrong
answers (tests/test_exercises.py runs every checker on them). References are the package's own
functions (`coefficients.dpo`), never a copy.
"""

import sympy
import torch

from unified_rl import coefficients
from unified_rl.course.exercises import ChoiceExercise, ExpressionExercise, FunctionExercise, ValueExercise
from unified_rl.course.i18n import Msg

# q1 (derivation): the coefficient of one *rejected* token, with |o-| = 2 and per-token log-ratios
# l1, l2 (log pi_theta - log pi_ref), so x- = (l1 + l2) / 2. GC = |o-| * dJ/dl1 (docs/ARCHITECTURE.md).
beta = sympy.Symbol("beta", positive=True)
x_plus, l1, l2 = sympy.symbols("x_plus l1 l2", real=True)  # log-ratios: either sign


def _sigmoid(z):
    return 1 / (1 + sympy.exp(-z))


def _q1_objective():
    return sympy.log(_sigmoid(beta * x_plus - beta * (l1 + l2) / 2))  # eq 12 for one pair


q1 = ExpressionExercise(
    lambda: 2 * sympy.diff(_q1_objective(), l1),
    var="gc_rejected_token", title=Msg("nb04.q1.title"),
    hint=[Msg("nb04.q1.hint1"),
          Msg("nb04.q1.hint2")],
    solution=Msg("nb04.q1.solution"),
    wrong=[sympy.diff(_q1_objective(), l1),  # forgot |o-|: off by 1/2
           -_sigmoid(beta * (l1 + l2) / 2 - beta * x_plus),  # eq 14 as printed: no leading beta
           beta * _sigmoid(beta * (l1 + l2) / 2 - beta * x_plus),  # sign of a chosen token
           -beta * _sigmoid(beta * l1 - beta * x_plus)],  # the per-token argument of the printed eq 14
)


# q2 (implementation): the exact DPO coefficient, checked against coefficients.dpo.
def _dpo_solution(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected,
                  mask_rejected, beta):
    x_c = ((logp_chosen - logp_ref_chosen) * mask_chosen).sum(-1) / mask_chosen.sum(-1)  # (B,)
    x_r = ((logp_rejected - logp_ref_rejected) * mask_rejected).sum(-1) / mask_rejected.sum(-1)  # (B,)
    c = (beta * torch.sigmoid(beta * x_r - beta * x_c)).detach()  # (B,)
    return c[:, None] * mask_chosen, -c[:, None] * mask_rejected


def _printed(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected, beta):
    """Eq 14 read literally at the sequence level: the leading beta missing."""
    c_pos, c_neg = _dpo_solution(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected,
                                 logp_ref_rejected, mask_rejected, beta)
    return c_pos / beta, c_neg / beta


def _summed(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected, beta):
    """Sums instead of eq 12's length-normalised means (the original DPO paper's form)."""
    x_c = ((logp_chosen - logp_ref_chosen) * mask_chosen).sum(-1)
    x_r = ((logp_rejected - logp_ref_rejected) * mask_rejected).sum(-1)
    c = (beta * torch.sigmoid(beta * x_r - beta * x_c)).detach()
    return c[:, None] * mask_chosen, -c[:, None] * mask_rejected


def _same_sign(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected, beta):
    """+c on both responses: pushes the rejected one up too."""
    c_pos, _ = _dpo_solution(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected,
                             logp_ref_rejected, mask_rejected, beta)
    return c_pos, c_pos.abs().amax(-1, keepdim=True) * mask_rejected


def _not_detached(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected,
                  beta):
    """The right numbers, but the coefficient keeps its graph: autograd would differentiate the sigmoid too."""
    x_c = ((logp_chosen - logp_ref_chosen) * mask_chosen).sum(-1) / mask_chosen.sum(-1)
    x_r = ((logp_rejected - logp_ref_rejected) * mask_rejected).sum(-1) / mask_rejected.sum(-1)
    c = beta * torch.sigmoid(beta * x_r - beta * x_c)
    return c[:, None] * mask_chosen, -c[:, None] * mask_rejected


def _per_token(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected, beta):
    """Eq 14's per-token argument (position t of o+ against position t of o-), with the beta restored."""
    c = beta * torch.sigmoid(beta * (logp_rejected - logp_ref_rejected) - beta * (logp_chosen - logp_ref_chosen))
    return (c * mask_chosen).detach(), (-c * mask_rejected).detach()


def _unmasked(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected, beta):
    """Sums every position of a row, padding included (divided by |o| all the same): an unmasked sum."""
    x_c = (logp_chosen - logp_ref_chosen).sum(-1) / mask_chosen.sum(-1)
    x_r = (logp_rejected - logp_ref_rejected).sum(-1) / mask_rejected.sum(-1)
    c = (beta * torch.sigmoid(beta * x_r - beta * x_c)).detach()
    return c[:, None] * mask_chosen, -c[:, None] * mask_rejected


def _pair(gen, B=None, T=None, beta=0.5, scale=1.0):
    B = B or int(torch.randint(2, 5, (), generator=gen))
    T = T or int(torch.randint(4, 8, (), generator=gen))
    lens = torch.randint(1, T + 1, (2, B), generator=gen)
    masks = [(torch.arange(T)[None] < n[:, None]).float() for n in lens]  # (B, T) each, ragged
    lp = [-3 * torch.rand(B, T, generator=gen) for _ in range(4)]  # logp, logp_ref: non-zero off the mask too
    lp = [x + scale * torch.randn(B, T, generator=gen) * m for x, m in zip(lp, masks * 2)]
    return {"logp_chosen": lp[0], "logp_ref_chosen": lp[2], "mask_chosen": masks[0],
            "logp_rejected": lp[1], "logp_ref_rejected": lp[3], "mask_rejected": masks[1], "beta": beta}


def _case(T_c, T_r, beta, margin=0.0):
    mc, mr = torch.zeros(1, 4), torch.zeros(1, 4)
    mc[0, :T_c], mr[0, :T_r] = 1, 1
    return {"logp_chosen": (-1.0 + margin) * mc, "logp_ref_chosen": -1.0 * mc, "mask_chosen": mc,
            "logp_rejected": -2.0 * mr, "logp_ref_rejected": -2.0 * mr, "mask_rejected": mr, "beta": beta}


q2 = FunctionExercise(
    coefficients.dpo,
    cases={
        Msg("nb04.q2.case.equal_log_ratios_beta_0_1"): _case(2, 2, 0.1),
        Msg("nb04.q2.case.a_pair_already_ranked_right_margin_8"): _case(3, 2, 0.5, margin=8.0),
        Msg("nb04.q2.case.a_mis_ranked_pair_margin_8"): _case(2, 4, 0.5, margin=-8.0),
        Msg("nb04.q2.case.ragged_lengths_with_padding"): lambda gen: _pair(gen, B=4, T=7, beta=0.3),
    },
    random_inputs=lambda gen: _pair(gen, beta=float(torch.rand((), generator=gen)) * 2 + 0.05),
    detached=True, var="my_dpo_coef", title=Msg("nb04.q2.title"),
    hint=[Msg("nb04.q2.hint1"),
          Msg("nb04.q2.hint2")],
    solution_value=_dpo_solution,
    wrong=[_printed, _summed, _same_sign, _not_detached, _per_token, _unmasked],
)

# q3 (predict, then run): how much push does a well-ranked pair still get? beta = 0.5, margin 4.


def _saturated_gc():
    m = torch.ones(1, 1)
    c_pos, _ = coefficients.dpo(torch.tensor([[4.0]]), torch.zeros(1, 1), m, torch.zeros(1, 1),
                                torch.zeros(1, 1), m, beta=0.5)
    return c_pos.item()


q3 = ValueExercise(
    _saturated_gc, atol=0.005, var="predicted_gc",
    title=Msg("nb04.q3.title"),
    hint=[Msg("nb04.q3.hint1"), Msg("nb04.q3.hint2")],
    wrong=[0.5, 0.25, 0.119, 0.0],  # no saturation; sigmoid(0) * beta; eq 14 as printed; fully saturated
)

# q4 (choice): why x+ can fall while training succeeds.
q4 = ChoiceExercise(
    {"margin": Msg("nb04.q4.option.margin"),
     "x_plus": Msg("nb04.q4.option.x_plus"),
     "length": Msg("nb04.q4.option.length"),
     "beta": Msg("nb04.q4.option.beta")},
    "margin", var="what_dpo_constrains", title=Msg("nb04.q4.title"),
    hint=Msg("nb04.q4.hint"),
    why={"x_plus": Msg("nb04.q4.why.x_plus"),
         "length": Msg("nb04.q4.why.length"),
         "beta": Msg("nb04.q4.why.beta")},
)
