"""Example exercises, one of each kind; the pattern every notebook's exercise module follows.

In a notebook:  from unified_rl.course.ex.example import q1, q2, q3, q4, q5
Each exercise names the notebook variable it reads, carries its solution and plausible wrong
answers (tests/test_exercises.py checks every checker on them), and points at the package function
that is the reference, never a copy of it.
"""

import sympy
import torch

from unified_rl import advantages, coefficients
from unified_rl.course.exercises import (ChoiceExercise, ExpressionExercise, FunctionExercise,
                                         SignExercise, ValueExercise)
from unified_rl.course.i18n import Msg

# q1 (derivation): the DPO coefficient. With x = the chosen log-ratio minus the rejected one,
# J = log sigmoid(beta * x); dJ/dx is the coefficient on the chosen response (eq 12 -> eq 14).
beta = sympy.Symbol("beta", positive=True)
x = sympy.Symbol("x", real=True)  # a margin of log-ratios: either sign
q1 = ExpressionExercise(
    lambda: sympy.diff(sympy.log(1 / (1 + sympy.exp(-beta * x))), x),
    var="dpo_gc", title=Msg("example.q1.title"),
    hint=[Msg("example.q1.hint1"),
          Msg("example.q1.hint2")],
    solution=Msg("example.q1.solution"),
    wrong=[1 / (1 + sympy.exp(beta * x)),            # eq 14 as printed: the leading beta dropped
           -beta / (1 + sympy.exp(beta * x)),        # sign flipped
           beta / (1 + sympy.exp(-beta * x))],       # sigmoid(+beta x): the wrong side
)


# q2 (implementation): group-relative advantages, checked against advantages.group_relative.
def _group_relative_solution(rewards, group_size, eps=1e-6):
    r = rewards.view(-1, group_size)  # (n_groups, G)
    std = r.std(dim=1, keepdim=True)  # sample std, torch's default
    adv = (r - r.mean(dim=1, keepdim=True)) / (std + eps)
    return torch.where(std > 0, adv, torch.zeros_like(adv)).view(-1)


def _population_std(rewards, group_size, eps=1e-6):
    r = rewards.view(-1, group_size)
    return ((r - r.mean(1, keepdim=True)) / (r.std(1, unbiased=False, keepdim=True) + eps)).view(-1)


def _whole_batch(rewards, group_size, eps=1e-6):
    return (rewards - rewards.mean()) / (rewards.std() + eps)


def _eps_ignored(rewards, group_size, eps=1e-6):  # the guard hard-coded: right only at eps = 1e-6
    return _group_relative_solution(rewards, group_size)


def _random_rewards(gen):
    G = int(torch.randint(2, 6, (), generator=gen))
    n = int(torch.randint(1, 4, (), generator=gen))
    return {"rewards": torch.randint(0, 2, (n * G,), generator=gen).float(), "group_size": G,
            "eps": float(0.01 + 0.3 * torch.rand((), generator=gen))}  # every parameter varied


q2 = FunctionExercise(
    advantages.group_relative,
    cases={
        Msg("example.q2.case.two_groups_of_two"): {"rewards": torch.tensor([1.0, 0.0, 0.0, 1.0]), "group_size": 2},
        Msg("example.q2.case.one_group_all_correct_no_signal"): {"rewards": torch.ones(4), "group_size": 4},
        Msg("example.q2.case.all_equal_and_eps_0"): {"rewards": torch.zeros(3), "group_size": 3, "eps": 0.0},
        Msg("example.q2.case.real_valued_rewards"): {"rewards": torch.tensor([0.5, 2.0, -1.0, 0.0, 3.0, 3.0]),
                                                     "group_size": 3},
    },
    random_inputs=_random_rewards,
    var="my_group_relative", title=Msg("example.q2.title"),
    hint=[Msg("example.q2.hint1"),
          Msg("example.q2.hint2")],
    solution_value=_group_relative_solution,
    wrong=[_population_std, _whole_batch, _eps_ignored],
)

# q3 (prediction): the sign of the DPO coefficient on the rejected response.
q3 = SignExercise(-1, var="rejected_sign", title=Msg("example.q3.title"),
                  hint=Msg("example.q3.hint"), wrong=[1, 0])


# q4 (predict-then-run): GRPO's coefficient for the one correct answer out of four, beta = 0.
def _one_correct_of_four():
    mask = torch.ones(4, 1)
    z = torch.zeros(4, 1)
    return coefficients.grpo(torch.tensor([1.0, 0.0, 0.0, 0.0]), 4, z, z, mask, beta=0.0)[0, 0].item()


q4 = ValueExercise(_one_correct_of_four, atol=0.05, var="predicted_gc",
                   title=Msg("example.q4.title"),
                   hint=Msg("example.q4.hint"),
                   wrong=[0.75, 1.0, -1.5])

# q5 (choice): which component makes online RFT differ from RFT.
q5 = ChoiceExercise(
    {"data source": Msg("example.q5.option.data_source"), "reward": Msg("example.q5.option.reward"),
     "coefficient": Msg("example.q5.option.coefficient")},
    "data source", var="online_rft_differs_in", title=Msg("example.q5.title"),
    why={"coefficient": Msg("example.q5.why.coefficient"),
         "reward": Msg("example.q5.why.reward")},
)
