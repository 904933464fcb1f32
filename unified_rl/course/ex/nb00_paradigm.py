"""Exercises of notebook 00 (eq 5: one gradient, three components).

In the notebook:  from unified_rl.course.ex.nb00_paradigm import q1, q2, q3
"""

import torch

from unified_rl import paradigm
from unified_rl.course.exercises import ChoiceExercise, FunctionExercise, ValueExercise
from unified_rl.course.i18n import Msg

# q1 (choice): which of the three components separates GRPO from online RFT.
q1 = ChoiceExercise(
    {"data source": Msg("nb00.q1.option.data_source"), "reward function": Msg("nb00.q1.option.reward_function"),
     "gradient coefficient": Msg("nb00.q1.option.gradient_coefficient")},
    "gradient coefficient", var="grpo_differs_in", title=Msg("nb00.q1.title"),
    hint=Msg("nb00.q1.hint"),
    why={"data source": Msg("nb00.q1.why.data_source"),
         "reward function": Msg("nb00.q1.why.reward_function")},
    wrong=["data source", "reward function"],
)


# q2 (predict-then-run): the gradient of the surrogate with respect to one token's log-prob.
def _surrogate_grad_first_token():
    mask = torch.tensor([[1.0] * 4 + [0.0] * 4, [1.0] * 8], dtype=torch.float64)  # |o_0| = 4, |o_1| = 8
    logp = torch.zeros_like(mask, requires_grad=True)
    paradigm.surrogate_loss(logp, torch.ones_like(mask), mask).backward()
    return logp.grad[0, 0].item()


q2 = ValueExercise(
    _surrogate_grad_first_token, atol=1e-6, var="d_loss_d_logp",
    title=Msg("nb00.q2.title"),
    hint=[Msg("nb00.q2.hint1"),
          Msg("nb00.q2.hint2")],
    solution=Msg("nb00.q2.solution"),
    wrong=[-0.25, -1 / 12, 0.125],  # no batch mean; one mean over all 12 tokens; the sign of J, not of the loss
)


# q3 (implementation): the eq-5 surrogate, checked against paradigm.surrogate_loss.
def _surrogate_solution(logp, coef, mask):
    per_seq = (coef.detach() * logp * mask).sum(-1) / mask.sum(-1)  # (B,) 1/|o_i| sum_t GC logp
    return -per_seq.mean()


def _no_detach(logp, coef, mask):  # same value, but autograd also differentiates the coefficient
    return -((coef * logp * mask).sum(-1) / mask.sum(-1)).mean()


def _token_mean(logp, coef, mask):  # one mean over all tokens: per token, not per sequence
    return -(coef.detach() * logp * mask).sum() / mask.sum()


def _no_minus(logp, coef, mask):  # J itself, not the loss to minimise: the wrong sign
    return ((coef.detach() * logp * mask).sum(-1) / mask.sum(-1)).mean()


def _no_mask(logp, coef, mask):  # prompt and padding tokens counted
    return -((coef.detach() * logp).sum(-1) / mask.sum(-1)).mean()


def _batch_sum(logp, coef, mask):  # a sum over the batch instead of its mean
    return -((coef.detach() * logp * mask).sum(-1) / mask.sum(-1)).sum()


def _no_length_norm(logp, coef, mask):  # no 1/|o|: long responses weigh more
    return -(coef.detach() * logp * mask).sum(-1).mean()


def _random_batch(gen):
    B, T = int(torch.randint(1, 5, (), generator=gen)), int(torch.randint(3, 8, (), generator=gen))
    start = torch.randint(0, 2, (B,), generator=gen)  # a prompt token before some responses
    length = torch.randint(1, T, (B,), generator=gen)
    t = torch.arange(T)[None]
    mask = ((t >= start[:, None]) & (t < start[:, None] + length[:, None])).double()  # (B, T)
    return {"logp": -3 * torch.rand(B, T, generator=gen, dtype=torch.float64),
            "coef": torch.randn(B, T, generator=gen, dtype=torch.float64), "mask": mask}  # non-zero off the mask too


q3 = FunctionExercise(
    paradigm.surrogate_loss,
    cases={
        Msg("nb00.q3.case.two_responses_of_equal_length"): {"logp": torch.tensor([[-1.0, -2.0], [-0.5, -0.5]]),
                                                            "coef": torch.tensor([[1.0, 1.0], [0.0, 0.0]]),
                                                            "mask": torch.ones(2, 2)},
        Msg("nb00.q3.case.lengths_1_and_3"): {"logp": torch.tensor([[-1.0, 0.0, 0.0], [-1.0, -2.0, -3.0]]),
                                              "coef": torch.tensor([[2.0, 0.0, 0.0], [1.0, 1.0, 1.0]]),
                                              "mask": torch.tensor([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])},
        Msg("nb00.q3.case.a_prompt_token_off_the_mask"): {"logp": torch.tensor([[-5.0, -1.0, -1.0]]),
                                                          "coef": torch.tensor([[1.0, 1.0, 1.0]]),
                                                          "mask": torch.tensor([[0.0, 1.0, 1.0]])},
    },
    random_inputs=_random_batch, atol=1e-9,
    var="my_surrogate_loss", title=Msg("nb00.q3.title"),
    hint=[Msg("nb00.q3.hint1"),
          Msg("nb00.q3.hint2")],
    solution_value=_surrogate_solution,
    wrong=[_no_detach, _token_mean, _no_minus, _no_mask, _batch_sum, _no_length_norm],
)
