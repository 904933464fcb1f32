"""pass@k and maj@k against brute-force enumeration of every k-subset."""
import itertools
import math
from collections import Counter

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from unified_rl.metrics import maj_at_k, mean_maj_at_k, mean_pass_at_k, pass_at_k


def brute_pass(n, c, k):
    """Fraction of k-subsets of n samples (the first c correct) holding a correct one."""
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(i < c for i in s) for s in subsets) / len(subsets)


def brute_maj(answers, flags, k):
    """Mean over every k-subset of the share of tied winners that are correct."""
    good = {a: f for a, f in zip(answers, flags)}
    scores = []
    for s in itertools.combinations(range(len(answers)), k):
        votes = Counter(answers[i] for i in s if answers[i] is not None)
        if not votes:
            scores.append(0.0)
            continue
        top = max(votes.values())
        winners = [a for a, v in votes.items() if v == top]
        scores.append(sum(good[a] for a in winners) / len(winners))
    return sum(scores) / len(scores)


@pytest.mark.parametrize("n", range(1, 9))
def test_pass_at_k_matches_enumeration_and_closed_form(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            got = pass_at_k(n, c, k)
            assert got == pytest.approx(brute_pass(n, c, k), abs=1e-12)
            assert got == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k), abs=1e-12)


def test_pass_at_k_large_n_stays_finite():
    got = pass_at_k(2000, 3, 1000)
    assert got == pytest.approx(1 - math.comb(1997, 1000) / math.comb(2000, 1000), rel=1e-12)
    assert pass_at_k(64, 0, 64) == 0.0 and pass_at_k(64, 1, 64) == 1.0


@pytest.mark.parametrize(
    "args, word",
    [((3, 1, 4), "k=4"), ((3, 4, 1), "c=4"), ((3, -1, 1), "c must be >= 0"),
     ((3, 1, 0), "k must be >= 1"), ((0, 0, 1), "n must be >= 1"), ((3.0, 1, 1), "integer"),
     ((3, 1.5, 1), "integer"), ((3, True, 1), "integer")],
)
def test_pass_at_k_rejects_bad_input(args, word):
    with pytest.raises(ValueError, match=word):
        pass_at_k(*args)


def test_mean_pass_at_k():
    assert mean_pass_at_k(4, [0, 1, 4], 2) == pytest.approx((0 + 0.5 + 1) / 3)
    assert mean_pass_at_k([4, 2], [1, 1], 2) == pytest.approx((0.5 + 1) / 2)
    assert mean_pass_at_k(np.array([4, 2]), torch.tensor([1, 1]), 2) == pytest.approx(0.75)
    with pytest.raises(ValueError, match="2 entries but c has 3"):
        mean_pass_at_k([4, 4], [1, 1, 1], 2)
    with pytest.raises(ValueError, match="empty"):
        mean_pass_at_k(4, [], 2)


small_case = st.integers(1, 8).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from([None, "a", "b", "c", "d"]), min_size=n, max_size=n),
        st.sampled_from(["a", "b", "c", "zz"]),
        st.integers(1, n),
    )
)


@settings(max_examples=300, deadline=None)
@given(small_case)
def test_maj_at_k_matches_enumeration(case):
    answers, correct, k = case
    flags = [a == correct for a in answers]
    want = brute_maj(answers, flags, k)
    assert maj_at_k(answers, correct, k) == pytest.approx(want, abs=1e-12)
    assert maj_at_k(answers, flags, k) == pytest.approx(want, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 8).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from([None, 0, 1, 2, 3]), min_size=n, max_size=n),
        st.sets(st.sampled_from([0, 1, 2, 3])),
        st.integers(1, n),
    )))
def test_maj_at_k_with_several_correct_answers(case):
    answers, good, k = case  # e.g. "0.5" and "1/2": distinct strings, both right
    flags = [int(a in good) for a in answers]
    assert maj_at_k(answers, flags, k) == pytest.approx(brute_maj(answers, flags, k), abs=1e-12)


def test_maj_at_k_worked_examples():
    assert maj_at_k(["1", "2", "2"], "2", 2) == pytest.approx(2 / 3)  # two ties of 1/2, one win
    assert maj_at_k(["x", "y"], "x", 2) == pytest.approx(0.5)  # a two-way tie
    assert maj_at_k([None, None, "x"], "x", 2) == pytest.approx(2 / 3)  # None never wins
    assert maj_at_k([None, None], "x", 1) == 0.0
    assert maj_at_k(["x", "y", "z"], "q", 2) == 0.0
    assert maj_at_k(list(range(64)), 3, 64) == pytest.approx(1 / 64)  # 64-way tie
    assert maj_at_k(["x"] * 64, "x", 64) == 1.0
    # k = 1 is the plain accuracy of one sample
    answers = ["x"] * 5 + ["y"] * 3 + [None] * 2
    assert maj_at_k(answers, "x", 1) == pytest.approx(0.5)
    assert maj_at_k(np.array(answers, dtype=object), torch.tensor([1] * 5 + [0] * 5), 1) == pytest.approx(0.5)


def test_maj_at_k_runs_at_n_64():
    rng = np.random.default_rng(0)
    answers = [None if v == 8 else str(v) for v in rng.choice(9, size=64, p=[.3] + [.0875] * 8)]
    for k in (32, 64):
        got = maj_at_k(answers, "0", k)
        assert 0.0 <= got <= 1.0
    # with all n answers drawn, the vote is deterministic
    top = Counter(a for a in answers if a is not None).most_common(1)[0][0]
    assert maj_at_k(answers, top, 64) == 1.0
    # a 40/24 split: the 24 side wins (or ties) only in rare subsets
    split = ["a"] * 40 + ["b"] * 24
    assert maj_at_k(split, "a", 32) + maj_at_k(split, "b", 32) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "args, word",
    [((["a"], "a", 2), "k=2 is larger"), ((["a"], "a", 0), "k must be >= 1"),
     ((["a", "b"], [1, 0, 1], 1), "marks 3 answers but there are n=2"),
     ((["a", "a"], [1, 0], 1), "marked both correct and incorrect"),
     (([], "a", 1), "empty"), (([["a"]], "a", 1), "hashable"), ((["a"], "a", 1.0), "integer")],
)
def test_maj_at_k_rejects_bad_input(args, word):
    with pytest.raises(ValueError, match=word):
        maj_at_k(*args)


def test_mean_maj_at_k():
    got = mean_maj_at_k([["x", "y"], ["x", "x"]], ["x", "y"], 2)
    assert got == pytest.approx((0.5 + 0.0) / 2)
    with pytest.raises(ValueError, match="2 answer lists but 1 correct"):
        mean_maj_at_k([["x"], ["y"]], ["x"], 1)
