"""Notebook 07's exact i.i.d. Pass@K and Maj@K of one question's answer distribution: against brute
enumeration of every sequence of K draws, against Monte Carlo at K = 64, and what power sharpening does."""

import itertools
import random
from collections import Counter

import pytest

from unified_rl.course import nb_pass_maj as pm


def enumerate_maj(dist, right, k):
    """P(the vote of k i.i.d. draws is right), ties split, None never wins: every sequence of draws."""
    keys = list(dist)
    total = 0.0
    for draw in itertools.product(keys, repeat=k):
        p = 1.0
        for a in draw:
            p *= dist[a]
        votes = Counter(a for a in draw if a is not None)
        if votes:
            top = max(votes.values())
            winners = [a for a, v in votes.items() if v == top]
            total += p * winners.count(right) / len(winners)
    return total


@pytest.mark.parametrize("dist", [
    {"r": 0.3, "a": 0.42, "b": 0.18, None: 0.1},  # a dominant wrong answer and unparsable mass
    {"r": 0.5, "a": 0.5},  # two-way ties at every even k
    {"r": 0.1, "a": 0.3, "b": 0.3, "c": 0.3},
    {"r": 1.0, "a": 0.0},
])
def test_maj_iid_equals_enumeration(dist):
    for k in range(1, 7):
        assert pm.maj_at_k_iid(dist, "r", k) == pytest.approx(enumerate_maj(dist, "r", k), abs=1e-12)


def test_maj_iid_agrees_with_monte_carlo_at_64():
    dist = pm.sharpen(pm.one_question(0.3, 0.6), 0.5)
    keys, weights = list(dist), list(dist.values())
    rng, n, hits = random.Random(0), 6000, 0.0
    for _ in range(n):
        votes = Counter(rng.choices(keys, weights, k=64))
        top = max(votes.values())
        winners = [a for a, v in votes.items() if v == top]
        hits += winners.count("right") / len(winners)
    exact = pm.maj_at_k_iid(dist, "right", 64)
    assert 0.05 < exact < 0.95 and abs(hits / n - exact) < 4 * (exact * (1 - exact) / n) ** 0.5 + 1e-3


def test_pass_iid_and_the_laid_out_shortcut():
    assert pm.pass_at_k_iid(0.1, 64) == pytest.approx(1 - 0.9 ** 64)
    # 64 answers laid out in proportion and all 64 taken: the vote is decided, 0 for a right answer at
    # 0.3 behind a wrong one at 0.42; 64 independent draws put the right one on top 13 % of the time
    assert pm.maj_at_k_iid(pm.one_question(0.3, 0.6), "right", 64) == pytest.approx(0.1277, abs=1e-4)


def test_power_sharpening_raises_maj_of_a_leading_answer_and_costs_pass_of_a_rare_one():
    lead = pm.one_question(0.4, 0.25)  # right 0.4, every wrong answer 0.15 or less
    sharp = pm.sharpen(lead, 3.0)
    assert sharp["right"] > lead["right"]
    for k in (2, 4, 8, 16, 64):
        assert pm.maj_at_k_iid(sharp, "right", k) > pm.maj_at_k_iid(lead, "right", k)
    rare = pm.one_question(0.1, 0.55)  # right 0.1 behind a wrong answer at 0.495
    sharp = pm.sharpen(rare, 3.0)
    assert pm.pass_at_k_iid(sharp["right"], 64) < pm.pass_at_k_iid(rare["right"], 64)


@pytest.mark.parametrize("call, match", [
    (lambda: pm.sharpen({"a": 1.0}, 0), "alpha"),
    (lambda: pm.sharpen({}, 2.0), "empty"),
    (lambda: pm.sharpen({"a": float("nan")}, 2.0), "finite"),
    (lambda: pm.sharpen({"a": 0.0}, 2.0), "no mass"),
    (lambda: pm.one_question(1.5, 0.5), "p_right"),
    (lambda: pm.maj_at_k_iid({"r": 0.5, "a": 0.4}, "r", 4), "sum to 1"),
    (lambda: pm.maj_at_k_iid({"r": 0.5, "a": 0.5}, "x", 4), "not a parsable answer"),
    (lambda: pm.maj_at_k_iid({"r": 0.5, "a": 0.5}, "r", 0), "k must"),
    (lambda: pm.pass_at_k_iid(1.2, 4), "p_right"),
])
def test_bad_input_is_a_clear_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()
