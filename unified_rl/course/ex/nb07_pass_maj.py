"""Exercises of notebook 07 (§5.2.2, why RL works: Pass@K and Maj@K).

In the notebook:  from unified_rl.course.ex.nb07_pass_maj import q1, q2, q3, q4, q5
The references are `metrics.pass_at_k` and `metrics.maj_at_k`, never copies of them.
"""

import math

import sympy
import torch

from unified_rl import metrics
from unified_rl.course.exercises import ExpressionExercise, FunctionExercise, ValueExercise
from unified_rl.course.i18n import Msg

# q1 (by hand): pass@4 from n = 8 samples of which c = 2 are right.
q1 = ValueExercise(lambda: metrics.pass_at_k(8, 2, 4), atol=1e-3, var="pass_4_of_8",
                   title=Msg("nb07.q1.title"),
                   hint=[Msg("nb07.q1.hint1"),
                         Msg("nb07.q1.hint2")],
                   solution=Msg("nb07.q1.solution"),
                   wrong=[1 - (1 - 2 / 8) ** 4,  # drawn with replacement: the biased 1 - (1 - c/n)^k
                          2 / 8,                 # pass@1
                          math.comb(6, 4) / math.comb(8, 4)])  # the probability of failing

# q2 (derivation): pass@2 as a formula in n and c.
n, c = sympy.symbols("n c", positive=True)
q2 = ExpressionExercise(lambda: 1 - (n - c) * (n - c - 1) / (n * (n - 1)), var="pass_at_2",
                        title=Msg("nb07.q2.title"),
                        hint=[Msg("nb07.q2.hint1"),
                              Msg("nb07.q2.hint2")],
                        solution=Msg("nb07.q2.solution"),
                        wrong=[1 - (1 - c / n) ** 2,  # with replacement
                               2 * c / n,             # union bound, not a probability
                               (n - c) * (n - c - 1) / (n * (n - 1))])  # P(fail), not P(pass)


# q3 (implementation): maj@1 of one question's answers, against metrics.maj_at_k(..., k=1).
def _maj_at_1_solution(answers, correct):
    return sum(a is not None and a == correct for a in answers) / len(answers)


def _maj_at_1_reference(answers, correct):
    return metrics.maj_at_k(answers, correct, 1)


def _none_wins(answers, correct):  # counts unparsable answers as right when the answer is missing
    return sum(a == correct for a in answers) / len(answers)


def _first_only(answers, correct):  # the first sample only: one draw, not the expectation
    return float(answers[0] == correct)


def _mode(answers, correct):  # the majority over all n answers: that is maj@n
    votes = [a for a in answers if a is not None]
    return float(bool(votes) and max(set(votes), key=votes.count) == correct)


def _marks_in_place(answers, correct):  # the right number, from the learner's list overwritten with 0/1 marks
    answers[:] = [a is not None and a == correct for a in answers]
    return sum(answers) / len(answers)


def _random_answers(gen):
    n_ = int(torch.randint(1, 9, (), generator=gen))
    pool = ["3", "5", "8", None]
    answers = [pool[int(i)] for i in torch.randint(0, 4, (n_,), generator=gen)]
    return {"answers": answers, "correct": pool[int(torch.randint(0, 3, (), generator=gen))]}


q3 = FunctionExercise(
    _maj_at_1_reference,
    cases={Msg("nb07.q3.case.one_right_of_three"): {"answers": ["3", "5", "5"], "correct": "3"},
           Msg("nb07.q3.case.the_majority_is_wrong"): {"answers": ["5", "5", "3", "5"], "correct": "3"},
           Msg("nb07.q3.case.unparsable_answers_never_win"): {"answers": [None, None, "3"], "correct": None},
           Msg("nb07.q3.case.first_answer_wrong"): {"answers": ["5", "3", "3", "3"], "correct": "3"}},
    random_inputs=_random_answers,
    var="my_maj_at_1", title=Msg("nb07.q3.title"),
    hint=[Msg("nb07.q3.hint1"),
          Msg("nb07.q3.hint2")],
    solution_value=_maj_at_1_solution,
    wrong=[_none_wins, _first_only, _mode, _marks_in_place],
)

# q4 (by hand): maj@3 of four answers ["7", "7", "3", "5"], correct "7".
q4 = ValueExercise(lambda: metrics.maj_at_k(["7", "7", "3", "5"], "7", 3), atol=1e-3, var="maj_3",
                   title=Msg("nb07.q4.title"),
                   hint=[Msg("nb07.q4.hint1"),
                         Msg("nb07.q4.hint2")],
                   solution=Msg("nb07.q4.solution"),
                   wrong=[0.5,   # ties counted as losses
                          0.75,  # ties counted as wins
                          1.0])  # the majority over all four answers

# q5 (prediction): Pass@64 of a question the model solves with probability 0.1 per sample.
q5 = ValueExercise(lambda: 1 - 0.9 ** 64, atol=1e-3, var="pass_64_at_p01",
                   title=Msg("nb07.q5.title"),
                   hint=Msg("nb07.q5.hint"),
                   solution=Msg("nb07.q5.solution"),
                   wrong=[0.1, 0.9 ** 64, 6.4])
