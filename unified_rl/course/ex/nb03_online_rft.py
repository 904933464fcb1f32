"""Exercises of notebook 03 (online RFT, eq 11).

In the notebook:  from unified_rl.course.ex.nb03_online_rft import q1, q2, q3
"""

import sympy
import torch

from unified_rl import objectives
from unified_rl.course.exercises import ChoiceExercise, ExpressionExercise, FunctionExercise
from unified_rl.course.i18n import Msg

# q1 (derivation): a policy right with probability p = sigmoid(theta); the samples come from a sampler
# right with probability rho (rho = p: online RFT; rho = the frozen SFT model's accuracy: RFT). The
# expectation of eq 11's per-sample term under the sampler, E[I(o) d/dtheta log pi_theta(o)], is
# rho (1 - p): only at rho = p is it dp/dtheta, so the expectation, not the identity, is what is checked.
theta = sympy.Symbol("theta", real=True)
rho = sympy.Symbol("rho", positive=True)  # a probability
_p = 1 / (1 + sympy.exp(-theta))
q1 = ExpressionExercise(
    lambda: rho * sympy.diff(sympy.log(_p), theta) + (1 - rho) * 0,
    var="expected_online_grad", title=Msg("nb03.q1.title"),
    hint=[Msg("nb03.q1.hint1"),
          Msg("nb03.q1.hint2")],
    solution=Msg("nb03.q1.solution"),
    wrong=[sympy.diff(_p, theta),  # the shortcut dp/dtheta: true only when the sampler is the policy (rho = p)
           rho * sympy.diff(_p, theta),  # d p instead of d log p: the log-derivative trick skipped
           rho * sympy.diff(sympy.log(_p), theta) + (1 - rho) * sympy.diff(sympy.log(1 - _p), theta),  # I(o) = 1 for both
           _p],  # the accuracy itself, not a gradient
)


# q2 (implementation): the online RFT objective (eq 8's form on samples of pi_theta), vs objectives.online_rft.
def _solution(logp, correct, mask):
    per_response = (correct[:, None] * logp * mask).sum(-1) / mask.sum(-1)  # (B,)
    return per_response.mean()


def _no_filter(logp, correct, mask):
    return ((logp * mask).sum(-1) / mask.sum(-1)).mean()


def _only_survivors_averaged(logp, correct, mask):
    per_response = (logp * mask).sum(-1) / mask.sum(-1)
    return (per_response * correct).sum() / correct.sum().clamp(min=1)


def _keeps_wrong(logp, correct, mask):
    return (((1 - correct)[:, None] * logp * mask).sum(-1) / mask.sum(-1)).mean()


def _token_mean(logp, correct, mask):  # one mean over all tokens: per token, not per sequence
    return (correct[:, None] * logp * mask).sum() / mask.sum()


def _batch_sum(logp, correct, mask):  # a sum over the samples instead of their mean
    return ((correct[:, None] * logp * mask).sum(-1) / mask.sum(-1)).sum()


def _detached(logp, correct, mask):  # the right number, but no gradient reaches logp
    return ((correct[:, None] * logp.detach() * mask).sum(-1) / mask.sum(-1)).mean()


def _random_batch(gen):
    B, T = int(torch.randint(2, 7, (), generator=gen)), int(torch.randint(4, 9, (), generator=gen))
    start = torch.randint(0, 3, (B,), generator=gen)
    length = torch.randint(1, T - 2, (B,), generator=gen)
    t = torch.arange(T)[None]
    mask = ((t >= start[:, None]) & (t < start[:, None] + length[:, None])).double()  # (B, T)
    correct = torch.randint(0, 2, (B,), generator=gen).double()
    correct[0] = 1.0 - correct[1]  # at least one right and one wrong sample
    return {"logp": -3 * torch.rand(B, T, generator=gen, dtype=torch.float64), "correct": correct, "mask": mask}


q2 = FunctionExercise(
    objectives.online_rft,
    cases={Msg("nb03.q2.case.one_right_one_wrong"): {
               "logp": torch.tensor([[-1.0, -2.0], [-0.5, -4.0]]), "correct": torch.tensor([1.0, 0.0]),
               "mask": torch.ones(2, 2)},
           Msg("nb03.q2.case.three_samples_one_right"): {
               "logp": torch.tensor([[-1.0, -1.0, -1.0], [-2.0, -2.0, 0.0], [-3.0, 0.0, 0.0]]),
               "correct": torch.tensor([0.0, 1.0, 0.0]),
               "mask": torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])}},
    random_inputs=_random_batch, atol=1e-9,
    var="my_online_rft_objective", title=Msg("nb03.q2.title"),
    hint=[Msg("nb03.q2.hint1"),
          Msg("nb03.q2.hint2")],
    solution_value=_solution,
    wrong=[_no_filter, _only_survivors_averaged, _keeps_wrong, _token_mean, _batch_sum, _detached],
)

# q3 (prediction): where the survival rate can change during training.
q3 = ChoiceExercise(
    {"RFT": Msg("nb03.q3.option.RFT"), "online RFT": Msg("nb03.q3.option.online_RFT"),
     "both": "", "neither": ""},
    "online RFT", var="survival_can_change_in",
    title=Msg("nb03.q3.title"),
    hint=Msg("nb03.q3.hint"),
    why={"RFT": Msg("nb03.q3.why.RFT"),
         "both": Msg("nb03.q3.why.both"),
         "neither": Msg("nb03.q3.why.neither")},
    wrong=["RFT", "both", "neither"],
)
