"""Exercises of notebook 01 (SFT, eq 6-7, and the 1/|o| of eq 5).

In the notebook:  from unified_rl.course.ex.nb01_sft import q1, q2, q3
"""

import sympy
import torch

from unified_rl import objectives
from unified_rl.course.exercises import ExpressionExercise, FunctionExercise, ValueExercise
from unified_rl.course.i18n import Msg

# q1 (derivation): a token mean over the batch is eq 5 with a length-dependent GC.
# Two responses of n1 and n2 tokens; the token mean J = (sum of all n1 + n2 log-probs) / (n1 + n2)
# gives each token of response 1 the derivative 1 / (n1 + n2); eq 5 with B = 2 gives GC / (2 n1).
n1, n2, gc = sympy.symbols("n1 n2 GC", positive=True)
q1 = ExpressionExercise(
    lambda: sympy.solve(sympy.Eq(gc / (2 * n1), 1 / (n1 + n2)), gc)[0],
    var="token_mean_gc", title=Msg("nb01.q1.title"),
    hint=[Msg("nb01.q1.hint1"),
          Msg("nb01.q1.hint2")],
    solution=Msg("nb01.q1.solution"),
    wrong=[n1 / (n1 + n2),        # forgot the batch mean over B = 2
           sympy.Integer(1),       # eq 6's own GC
           2 * n2 / (n1 + n2)],    # the other response's length
)


# q2 (implementation): the SFT objective of eq 6, checked against objectives.sft.
def _sft_solution(logp, mask):
    per_response = (logp * mask).sum(-1) / mask.sum(-1)  # (B,) (1/|o|) sum_t log pi
    return per_response.mean()


def _token_mean(logp, mask):
    return (logp * mask).sum() / mask.sum()


def _no_length_norm(logp, mask):
    return (logp * mask).sum(-1).mean()


def _no_mask(logp, mask):
    return (logp.sum(-1) / mask.sum(-1)).mean()


def _batch_sum(logp, mask):  # a sum over the responses instead of their mean
    return ((logp * mask).sum(-1) / mask.sum(-1)).sum()


def _negated(logp, mask):  # the loss, not the objective: the wrong sign
    return -((logp * mask).sum(-1) / mask.sum(-1)).mean()


def _detached(logp, mask):  # the right number, but no gradient reaches logp: nothing would train
    return ((logp.detach() * mask).sum(-1) / mask.sum(-1)).mean()


def _random_batch(gen):
    B, T = int(torch.randint(1, 5, (), generator=gen)), int(torch.randint(4, 9, (), generator=gen))
    start = torch.randint(0, 3, (B,), generator=gen)  # prompt tokens before each response
    length = torch.randint(1, T - 2, (B,), generator=gen)
    t = torch.arange(T)[None]
    mask = ((t >= start[:, None]) & (t < start[:, None] + length[:, None])).double()  # (B, T)
    return {"logp": -3 * torch.rand(B, T, generator=gen, dtype=torch.float64), "mask": mask}


q2 = FunctionExercise(
    objectives.sft,
    cases={Msg("nb01.q2.case.lengths_1_and_3"): {"logp": torch.tensor([[-2.0, -9.0, -9.0], [-1.0, -2.0, -3.0]]),
                                                 "mask": torch.tensor([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])},
           Msg("nb01.q2.case.a_prompt_token_off_the_mask"): {"logp": torch.tensor([[-5.0, -1.0, -0.5]]),
                                                             "mask": torch.tensor([[0.0, 1.0, 1.0]])}},
    random_inputs=_random_batch, atol=1e-9,
    var="my_sft_objective", title=Msg("nb01.q2.title"),
    hint=[Msg("nb01.q2.hint1"),
          Msg("nb01.q2.hint2")],
    solution_value=_sft_solution,
    wrong=[_token_mean, _no_length_norm, _no_mask, _batch_sum, _negated, _detached],
)


# q3 (predict-then-run): how much more each token of a short response weighs than one of a long one.
def _weight_ratio():
    from unified_rl.course.nb_basics import token_weights
    from unified_rl.sampling import rollout_from_texts
    from unified_rl.task import TaskConfig, make_problem
    from unified_rl.tokenizer import build_tokenizer

    cfg = TaskConfig(digits=2)
    problems = [make_problem((23, 45), cfg), make_problem((47, 85), cfg)]  # "8;6;=68", "12;13;1;=132"
    r = rollout_from_texts(build_tokenizer(), problems, [p.solution for p in problems])
    w, _ = token_weights(r.mask.sum(-1).long(), "eq5")
    return (w[0].amax() / w[1].amax()).item()


q3 = ValueExercise(
    _weight_ratio, atol=1e-6, var="short_over_long",
    title=Msg("nb01.q3.title"),
    hint=[Msg("nb01.q3.hint1"),
          Msg("nb01.q3.hint2")],
    solution=Msg("nb01.q3.solution"),
    wrong=[1.0, 12 / 7, 8 / 13],  # token mean; forgot <eos>; inverted
)
