"""Exercises of notebook 07 (§5.2.2, why RL works: Pass@K and Maj@K).

In the notebook:  from unified_rl.course.ex.nb07_pass_maj import q1, q2, q3, q4, q5
The references are `metrics.pass_at_k` and `metrics.maj_at_k`, never copies of them.
"""

import math

import sympy
import torch

from unified_rl import metrics
from unified_rl.course.exercises import ExpressionExercise, FunctionExercise, ValueExercise

# q1 (by hand): pass@4 from n = 8 samples of which c = 2 are right.
q1 = ValueExercise(lambda: metrics.pass_at_k(8, 2, 4), atol=1e-3, var="pass_4_of_8",
                   title="Q1: pass@4 by hand (n = 8, c = 2)",
                   hint=["Count the 4-subsets of the 8 samples that hold no correct sample: C(6, 4) of C(8, 4).",
                         "1 - C(6, 4) / C(8, 4) = 1 - 15 / 70."],
                   solution="```python\npass_4_of_8 = 1 - math.comb(6, 4) / math.comb(8, 4)   # 0.7857\n```",
                   wrong=[1 - (1 - 2 / 8) ** 4,  # drawn with replacement: the biased 1 - (1 - c/n)^k
                          2 / 8,                 # pass@1
                          math.comb(6, 4) / math.comb(8, 4)])  # the probability of failing

# q2 (derivation): pass@2 as a formula in n and c.
n, c = sympy.symbols("n c", positive=True)
q2 = ExpressionExercise(lambda: 1 - (n - c) * (n - c - 1) / (n * (n - 1)), var="pass_at_2",
                        title="Q2: derive pass@2 in terms of n and c",
                        hint=["pass@2 = 1 - P(both samples of a random pair are wrong).",
                              "There are C(n, 2) = n(n-1)/2 pairs, and C(n-c, 2) = (n-c)(n-c-1)/2 of them are all wrong."],
                        solution="```python\npass_at_2 = 1 - (n - c) * (n - c - 1) / (n * (n - 1))\n```",
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


def _random_answers(gen):
    n_ = int(torch.randint(1, 9, (), generator=gen))
    pool = ["3", "5", "8", None]
    answers = [pool[int(i)] for i in torch.randint(0, 4, (n_,), generator=gen)]
    return {"answers": answers, "correct": pool[int(torch.randint(0, 3, (), generator=gen))]}


q3 = FunctionExercise(
    _maj_at_1_reference,
    cases={"one right of three": {"answers": ["3", "5", "5"], "correct": "3"},
           "the majority is wrong": {"answers": ["5", "5", "3", "5"], "correct": "3"},
           "unparsable answers never win": {"answers": [None, None, "3"], "correct": None},
           "first answer wrong": {"answers": ["5", "3", "3", "3"], "correct": "3"}},
    random_inputs=_random_answers,
    var="my_maj_at_1", title="Q3: implement maj@1",
    hint=["With k = 1 the 'vote' is a single answer: maj@1 is the chance that one random answer is right.",
          "Count the answers equal to `correct` (an unparsable answer, None, is never right) and divide by n."],
    solution_value=_maj_at_1_solution,
    wrong=[_none_wins, _first_only, _mode],
)

# q4 (by hand): maj@3 of four answers ["7", "7", "3", "5"], correct "7".
q4 = ValueExercise(lambda: metrics.maj_at_k(["7", "7", "3", "5"], "7", 3), atol=1e-3, var="maj_3",
                   title="Q4: maj@3 by hand",
                   hint=["There are C(4, 3) = 4 subsets of three answers. List them.",
                         "Two subsets hold both 7s (7 wins); two hold one 7, one 3, one 5: a three-way tie, "
                         "which counts 1/3."],
                   solution="```python\nmaj_3 = (1 + 1 + 1/3 + 1/3) / 4   # = 2/3\n```",
                   wrong=[0.5,   # ties counted as losses
                          0.75,  # ties counted as wins
                          1.0])  # the majority over all four answers

# q5 (prediction): Pass@64 of a question the model solves with probability 0.1 per sample.
q5 = ValueExercise(lambda: 1 - 0.9 ** 64, atol=1e-3, var="pass_64_at_p01",
                   title="Q5: Pass@64 of a 10 % question",
                   hint="With independent samples, Pass@K = 1 - P(all K wrong) = 1 - (1 - p)^K.",
                   solution="```python\npass_64_at_p01 = 1 - 0.9 ** 64   # 0.9988: almost always solved\n```",
                   wrong=[0.1, 0.9 ** 64, 6.4])
