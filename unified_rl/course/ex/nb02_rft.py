"""Exercises of notebook 02 (RFT, eq 8-10).

In the notebook:  from unified_rl.course.ex.nb02_rft import q1, q2, q3, q4
Q1 derives the GC hidden in a common variant of eq 8 (a mean over the kept samples only).
"""

import sympy
import torch

from unified_rl import coefficients
from unified_rl.course.exercises import ChoiceExercise, ExpressionExercise, FunctionExercise, SignExercise
from unified_rl.course.gradcheck import surrogate_without_detach
from unified_rl.course.i18n import Msg

# q1 (derivation): a mean over the kept samples only, J = sum_i I_i mean_t(ell_it) / sum_i I_i, for two
# samples of two tokens each, is eq 5 with GC = B |o_1| dJ/d ell_1 = 2 I_1 / (I_1 + I_2) on sample 1.
I_1, I_2 = sympy.symbols("I_1 I_2", positive=True)
ell = sympy.symbols("ell_1:5", real=True)


def _kept_mean_objective():
    return (I_1 * (ell[0] + ell[1]) / 2 + I_2 * (ell[2] + ell[3]) / 2) / (I_1 + I_2)


q1 = ExpressionExercise(
    lambda: 2 * 2 * sympy.diff(_kept_mean_objective(), ell[0]),
    var="kept_mean_gc", title=Msg("nb02.q1.title"),
    hint=[Msg("nb02.q1.hint1"),
          Msg("nb02.q1.hint2")],
    solution=Msg("nb02.q1.solution"),
    wrong=[I_1 / (I_1 + I_2),                # forgot the batch size B = 2
           I_1,                              # eq 10 as if nothing were renormalised
           4 * I_1 / (I_1 + I_2),            # |o_1| counted twice
           2 * I_2 / (I_1 + I_2)],           # the other sample's
)


# q2 (implementation): the coefficient of eq 10, checked against coefficients.rft.
def _rft_solution(correct, mask):
    return (correct[:, None].to(mask.dtype) * mask).detach()  # (B, T): I(o) on each response token


def _forgets_mask(correct, mask):
    return correct[:, None].to(mask.dtype).expand_as(mask).clone()


def _keeps_wrong(correct, mask):
    return (1 - correct[:, None].to(mask.dtype)) * mask


def _sft_instead(correct, mask):
    return mask.clone()


def _negative_on_wrong(correct, mask):  # pushes wrong samples down: not RFT's filter
    return (2 * correct[:, None].to(mask.dtype) - 1) * mask


def _last_token_only(correct, mask):  # I(o) on one token instead of every token of the sequence
    last = mask * (mask.cumsum(-1) == mask.sum(-1, keepdim=True))
    return correct[:, None].to(mask.dtype) * last


def _divided_by_length(correct, mask):  # 1/|o| twice: eq 5 divides by |o| already
    return correct[:, None].to(mask.dtype) * mask / mask.sum(-1, keepdim=True)


def _random_batch(gen):
    B, T = int(torch.randint(1, 7, (), generator=gen)), int(torch.randint(4, 9, (), generator=gen))
    start = torch.randint(0, 3, (B,), generator=gen)
    length = torch.randint(1, T - 2, (B,), generator=gen)
    t = torch.arange(T)[None]
    mask = ((t >= start[:, None]) & (t < start[:, None] + length[:, None])).float()  # (B, T)
    return {"correct": torch.randint(0, 2, (B,), generator=gen).float(), "mask": mask}


q2 = FunctionExercise(
    coefficients.rft,
    cases={Msg("nb02.q2.case.one_right_one_wrong"): {"correct": torch.tensor([1.0, 0.0]), "mask": torch.ones(2, 3)},
           Msg("nb02.q2.case.prompt_tokens_off_the_mask"): {"correct": torch.tensor([1.0, 1.0]),
                                                            "mask": torch.tensor([[0.0, 1.0, 1.0], [0.0, 0.0, 1.0]])},
           Msg("nb02.q2.case.all_wrong"): {"correct": torch.zeros(3), "mask": torch.ones(3, 2)}},
    random_inputs=_random_batch, detached=True,
    loss=surrogate_without_detach((None, None, "mask")),  # the gradient eq 5 gives a policy's log-probs
    var="my_rft_coefficient", title=Msg("nb02.q2.title"),
    hint=[Msg("nb02.q2.hint1"),
          Msg("nb02.q2.hint2")],
    solution_value=_rft_solution,
    wrong=[_forgets_mask, _keeps_wrong, _sft_instead, _negative_on_wrong, _last_token_only, _divided_by_length],
)

# q3 (prediction): the push RFT gives to a token of a wrong sample.
q3 = SignExercise(0, var="wrong_sample_sign", title=Msg("nb02.q3.title"),
                  hint=Msg("nb02.q3.hint"), wrong=[-1, 1])

# q4 (prediction): what happens to the share of surviving samples while RFT trains.
q4 = ChoiceExercise(
    {"rises": Msg("nb02.q4.option.rises"),
     "stays at the SFT model's level": Msg("nb02.q4.option.stays_at_the_SFT_model_s_level"),
     "falls": Msg("nb02.q4.option.falls")},
    "stays at the SFT model's level", var="rft_survival_over_training",
    title=Msg("nb02.q4.title"),
    hint=Msg("nb02.q4.hint"),
    why={"rises": Msg("nb02.q4.why.rises"),
         "falls": Msg("nb02.q4.why.falls")},
    wrong=["rises", "falls"],
)
