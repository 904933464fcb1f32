"""Exercises of notebook 08 (§5.2.3, towards a more effective RL: data source, algorithm, reward).

In the notebook:  from unified_rl.course.ex.nb08_effective_rl import q1, q2, q3, q4
The reference of the implementation exercise is `advantages.group_relative_process`.
"""

import sympy
import torch

from unified_rl import advantages
from unified_rl.course.exercises import ChoiceExercise, ExpressionExercise, FunctionExercise, ValueExercise
from unified_rl.course.i18n import Msg

# q1 (derivation): the expected reward a method sees when a 0/1 reward r is flipped with probability eps.
r, eps = sympy.symbols("r epsilon", positive=True)
q1 = ExpressionExercise(lambda: r * (1 - eps) + (1 - r) * eps, var="expected_noisy_reward",
                        title=Msg("nb08.q1.title"),
                        hint=[Msg("nb08.q1.hint1"),
                              Msg("nb08.q1.hint2")],
                        solution=Msg("nb08.q1.solution"),
                        wrong=[r * (1 - eps),        # forgets that wrong answers get rewarded too
                               r - eps,              # subtracts the noise
                               (1 - r) * (1 - eps) + r * eps])  # the flipped and kept cases swapped


# q2 (implementation): process-supervised advantages (§4.1.3), against advantages.group_relative_process.
def _process_solution(step_rewards, step_mask, group_size, eps=1e-6):
    B, T = step_mask.shape
    x = step_rewards.reshape(B // group_size, group_size * T)  # every step of a group in one row
    valid = step_mask.reshape(B // group_size, group_size * T)
    n = valid.sum(-1, keepdim=True)
    mean = (x * valid).sum(-1, keepdim=True) / n
    std = ((((x - mean) * valid) ** 2).sum(-1, keepdim=True) / (n - 1).clamp(min=1)).sqrt()
    norm = torch.where(std > 0, (x - mean) / (std + eps), torch.zeros_like(x)) * valid
    return norm.view(B, T).flip(-1).cumsum(-1).flip(-1)  # sum over the steps ending at or after t


def _no_sum(step_rewards, step_mask, group_size, eps=1e-6):  # each token only its own step's reward
    B, T = step_mask.shape
    full = _process_solution(step_rewards, step_mask, group_size, eps)
    return full - torch.nn.functional.pad(full[:, 1:], (0, 1))


def _forward_sum(step_rewards, step_mask, group_size, eps=1e-6):  # sums the steps before t instead
    B, T = step_mask.shape
    own = _no_sum(step_rewards, step_mask, group_size, eps)
    return own.cumsum(-1)


def _per_response(step_rewards, step_mask, group_size, eps=1e-6):  # normalises within each response
    return _process_solution(step_rewards, step_mask, 1, eps)


def _population_std(step_rewards, step_mask, group_size, eps=1e-6):  # divides by n, not n - 1
    B, T = step_mask.shape
    x = step_rewards.reshape(B // group_size, group_size * T)
    valid = step_mask.reshape(B // group_size, group_size * T)
    n = valid.sum(-1, keepdim=True)
    mean = (x * valid).sum(-1, keepdim=True) / n
    std = ((((x - mean) * valid) ** 2).sum(-1, keepdim=True) / n).sqrt()
    norm = torch.where(std > 0, (x - mean) / (std + eps), torch.zeros_like(x)) * valid
    return norm.view(B, T).flip(-1).cumsum(-1).flip(-1)


def _random_steps(gen):
    G = int(torch.randint(2, 5, (), generator=gen))
    n_groups = int(torch.randint(1, 3, (), generator=gen))
    T = int(torch.randint(3, 8, (), generator=gen))
    step_mask = (torch.rand(n_groups * G, T, generator=gen) < 0.5).float()
    step_mask[:, -1] = 1.0  # every response has at least its final answer scored
    step_rewards = torch.randint(0, 2, (n_groups * G, T), generator=gen).float()
    step_rewards = torch.where(step_mask > 0, step_rewards, torch.ones_like(step_rewards))  # 1 off the scored steps
    return {"step_rewards": step_rewards, "step_mask": step_mask, "group_size": G,
            "eps": float(0.01 + 0.3 * torch.rand((), generator=gen))}  # every parameter varied


def _eps_ignored(step_rewards, step_mask, group_size, eps=1e-6):  # the guard hard-coded: right at 1e-6 only
    return _process_solution(step_rewards, step_mask, group_size)


q2 = FunctionExercise(
    advantages.group_relative_process,
    cases={Msg("nb08.q2.case.two_answers_two_steps_each"): {
               "step_rewards": torch.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 0.0]]),
               "step_mask": torch.tensor([[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]]), "group_size": 2},
           Msg("nb08.q2.case.every_step_right_no_signal"): {
               "step_rewards": torch.tensor([[1.0, 1.0], [1.0, 1.0]]),
               "step_mask": torch.ones(2, 2), "group_size": 2}},
    random_inputs=_random_steps,
    var="my_process_advantage", title=Msg("nb08.q2.title"),
    hint=[Msg("nb08.q2.hint1"),
          Msg("nb08.q2.hint2")],
    solution_value=_process_solution,
    wrong=[_no_sum, _forward_sum, _per_response, _population_std, _eps_ignored],
)

# q3 (prediction): the flip probability at which the reward says nothing about correctness.
q3 = ValueExercise(0.5, atol=1e-6, var="useless_flip_prob",
                   title=Msg("nb08.q3.title"),
                   hint=Msg("nb08.q3.hint"),
                   wrong=[0.2, 1.0, 0.4])

# q4 (choice): which of the paper's reward-model directions the learned-reward experiment probes.
q4 = ChoiceExercise(
    {"generalization": Msg("nb08.q4.option.generalization"),
     "uncertainty": Msg("nb08.q4.option.uncertainty"),
     "process rewards": Msg("nb08.q4.option.process_rewards")},
    "generalization", var="rm_direction", title=Msg("nb08.q4.title"),
    why={"uncertainty": Msg("nb08.q4.why.uncertainty"),
         "process rewards": Msg("nb08.q4.why.process_rewards")},
    hint=Msg("nb08.q4.hint"),
)
