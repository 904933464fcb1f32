"""Helpers for notebook 07 (Pass@K vs Maj@K): one question's answer distribution, its power
sharpening, and the exact Pass@K and Maj@K of K samples drawn from it independently.

DeepSeekMath §5.2.2 reads "RL enhances Maj@K but not Pass@K" as RL concentrating probability on
answers the model already gives. To see what that alone does, take one question's distribution over
final answers, raise it to a power alpha and renormalise (`sharpen`), and compute what K i.i.d.
samples from it score: Pass@K = 1 - (1 - p_right)^K, and Maj@K = P(the majority vote of K samples is
right), ties split evenly. `maj_at_k_iid` computes the latter exactly, by generating functions over
the multinomial counts (no sampling, no finite list of answers standing in for the distribution).
"""

import math

import numpy as np

UNPARSABLE = None
"""The key of the mass on answers that cannot be parsed: they are drawn but never win a vote."""


def _check_dist(dist):
    if not dist:
        raise ValueError("the answer distribution is empty")
    if any(not isinstance(p, (int, float)) or not math.isfinite(p) or p < 0 for p in dist.values()):
        raise ValueError(f"probabilities must be finite and >= 0, got {dist}")


def sharpen(dist, alpha):
    """{answer: p} -> {answer: p**alpha / Z}: alpha > 1 sharpens, alpha < 1 flattens, alpha = 1 keeps it.

    This acts on whole final answers, not on tokens: it is not sampling at a lower temperature
    (temperature divides each token's logits; an answer's probability is a product over its tokens).
    """
    _check_dist(dist)
    if not (isinstance(alpha, (int, float)) and math.isfinite(alpha) and alpha > 0):
        raise ValueError(f"alpha must be a finite number > 0, got {alpha!r}")
    w = {a: (p ** alpha if p > 0 else 0.0) for a, p in dist.items()}
    z = sum(w.values())
    if z <= 0:
        raise ValueError(f"the answer distribution has no mass: {dist}")
    return {a: v / z for a, v in w.items()}


def one_question(p_right, top_wrong_share, n_other_wrong=4):
    """A question's answer distribution: the right answer with p_right; of the wrong mass 1 - p_right,
    the share top_wrong_share goes to one dominant wrong answer and the rest evenly to n_other_wrong others."""
    for name, p in (("p_right", p_right), ("top_wrong_share", top_wrong_share)):
        if not (0 <= p <= 1):
            raise ValueError(f"{name} must be in [0, 1], got {p}")
    wrong = 1.0 - p_right
    dist = {"right": p_right, "wrong-1": top_wrong_share * wrong}
    dist.update({f"wrong-{i + 2}": (1 - top_wrong_share) * wrong / n_other_wrong for i in range(n_other_wrong)})
    return dist


def pass_at_k_iid(p_right, k):
    """P(at least one of k independent samples is right) = 1 - (1 - p_right)^k."""
    if not 0 <= p_right <= 1:
        raise ValueError(f"p_right must be in [0, 1], got {p_right}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    return 1.0 - (1.0 - p_right) ** k


def _poisson(lam, k):
    """e^-lam lam^x / x! for x = 0..k, in log space (no overflow for any k)."""
    x = np.arange(k + 1)
    if lam <= 0:
        return (x == 0).astype(float)
    return np.exp(x * math.log(lam) - lam - np.array([math.lgamma(i + 1) for i in x]))


def maj_at_k_iid(dist, right, k):
    """P(the majority vote of k i.i.d. samples from `dist` is `right`), ties split evenly among the tied
    answers; the key None (unparsable) is drawn but never wins. Exact.

    Poissonisation: with each answer's count an independent Poisson(k p_a), the counts conditioned on
    summing to k are multinomial(k, p). So the probability is a ratio of two coefficients of z^k:
    sum over the winning count M and the number of winners w of (right wins with M votes, w - 1 other
    answers tie at M, every other answer below M) / w, over P(Poisson(k) = k).
    """
    _check_dist(dist)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    if abs(sum(dist.values()) - 1.0) > 1e-9:
        raise ValueError(f"the probabilities must sum to 1, got {sum(dist.values())}")
    if right not in dist or right is UNPARSABLE:
        raise ValueError(f"the right answer {right!r} is not a parsable answer of the distribution")
    if dist[right] == 0:
        return 0.0
    w = {a: _poisson(k * p, k) for a, p in dist.items()}  # (k + 1,) per answer
    others = [a for a in dist if a != right and a is not UNPARSABLE and dist[a] > 0]
    free = w[UNPARSABLE] if UNPARSABLE in dist else _poisson(0.0, k)  # unparsable counts: any number
    total = 0.0
    for M in range(1, k + 1):
        poly = np.zeros((k + 1, len(others) + 2))  # (count so far, winners so far)
        poly[M, 1] = w[right][M]  # the right answer gets exactly M votes: a winner
        for a in others:
            below = np.zeros_like(poly)
            for x in range(min(M, k + 1)):  # fewer than M votes: not a winner
                below[x:] += w[a][x] * poly[: k + 1 - x]
            tied = np.zeros_like(poly)  # exactly M votes: one more winner
            tied[M:, 1:] = w[a][M] * poly[: k + 1 - M, :-1]
            poly = below + tied
        col = free[k::-1] @ poly  # (winners + 1,): the unparsable answers fill the count up to k
        total += float(np.sum(col[1:] / np.arange(1, poly.shape[1])))
    return total / _poisson(float(k), k)[k]
