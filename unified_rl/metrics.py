"""Pass@k and Maj@k: how often k samples contain a correct answer, and how often their vote is right.

DeepSeekMath section 5.2.2 (Figure 7) compares the two to show that RL sharpens the output
distribution (Maj@K rises) rather than adding capabilities (Pass@K stays flat). Both are computed
here exactly from n >= k samples per question, without Monte Carlo:

- pass_at_k: the unbiased estimator of Chen et al. 2021, "Evaluating Large Language Models Trained
  on Code" (arXiv 2107.03374), 1 - C(n-c, k) / C(n, k), in its numerically stable product form.
- maj_at_k: the expectation, over all k-subsets of the n answers drawn without replacement, of
  "the majority answer is correct"; ties are split evenly among the tied answers, and an unparsable
  answer (None) never wins a vote. Counted with a generating function, not by enumerating subsets.
"""
import math
import numbers
from collections import Counter

import numpy as np


def _int(name, value, low=0):
    """Return value as an int >= low, or raise ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


def pass_at_k(n, c, k):
    """Unbiased pass@k from n samples of which c are correct (Chen et al. 2021)."""
    n, c, k = _int("n", n, 1), _int("c", c), _int("k", k, 1)
    if c > n:
        raise ValueError(f"c={c} correct samples is more than n={n} samples")
    if k > n:
        raise ValueError(f"k={k} is larger than the number of samples n={n}")
    if n - c < k:  # every k-subset holds a correct sample
        return 1.0
    # 1 - C(n-c, k)/C(n, k) = 1 - prod_{i=n-c+1}^{n} (1 - k/i): no huge binomials
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def mean_pass_at_k(n, c, k):
    """Mean pass@k over questions; n is one int or one per question, c one per question."""
    if np.ndim(c) != 1:
        raise ValueError(f"c must hold one count per question, got shape {np.shape(c)}")
    c = np.asarray(c).tolist()  # lists, arrays and tensors alike, as Python numbers
    n = [n] * len(c) if isinstance(n, numbers.Integral) else np.asarray(n).tolist()
    if len(n) != len(c):
        raise ValueError(f"n has {len(n)} entries but c has {len(c)}")
    if not c:
        raise ValueError("no questions: c is empty")
    return float(np.mean([pass_at_k(ni, ci, k) for ni, ci in zip(n, c)]))


def _is_mask(correct, n):
    """Whether `correct` is a per-answer 0/1 mask rather than the correct answer's value."""
    if isinstance(correct, (str, bytes)) or not hasattr(correct, "__len__"):
        return False
    try:
        items = [x.item() if hasattr(x, "item") else x for x in correct]
    except TypeError:
        return False
    return all(isinstance(x, numbers.Integral) and x in (0, 1) for x in items)


def _binomial_pmf(m, p):
    """C(m, x) p^x (1-p)^(m-x) for x = 0..m, in log space so large m cannot overflow."""
    x = np.arange(m + 1)
    if p >= 1.0:
        return (x == m).astype(float)
    logc = np.array([math.lgamma(m + 1) - math.lgamma(i + 1) - math.lgamma(m - i + 1) for i in x])
    return np.exp(logc + x * math.log(p) + (m - x) * math.log1p(-p))


def _times(poly, factor, k):
    """Multiply polynomials in z (axis 0, truncated at degree k) by a 1-D factor in z."""
    out = np.zeros_like(poly)
    for x, w in enumerate(factor[: k + 1]):
        if w:
            out[x:] += w * poly[: k + 1 - x]
    return out


def maj_at_k(answers, correct, k):
    """Expected majority-vote accuracy of k answers drawn without replacement from `answers`.

    `answers` holds one question's n parsed answers (None = unparsable). `correct` is either the
    correct answer's value or a length-n sequence of 0/1 marking which answers are correct.
    >>> maj_at_k(["1", "2", "2"], "2", 2)  # {1,2}: tie -> 1/2; {1,2}: 1/2; {2,2}: 1
    0.6666666666666666
    """
    answers = list(answers)
    n = len(answers)
    if n == 0:
        raise ValueError("answers is empty")
    k = _int("k", k, 1)
    if k > n:
        raise ValueError(f"k={k} is larger than the number of answers n={n}")
    try:
        counts = Counter(a for a in answers if a is not None)
    except TypeError as err:
        raise ValueError(f"answers must be hashable: {err}") from None
    if _is_mask(correct, n):
        flags = [bool(x) for x in correct]
        if len(flags) != n:
            raise ValueError(f"correct marks {len(flags)} answers but there are n={n} answers")
        good = {}
        for a, f in zip(answers, flags):
            if a is not None and good.setdefault(a, f) != f:
                raise ValueError(f"answer {a!r} is marked both correct and incorrect")
    else:
        good = {a: a == correct for a in counts}
    n_none = n - sum(counts.values())
    groups = [(m, bool(good[a])) for a, m in counts.items()]
    top = max((m for m, g in groups if g), default=0)
    if top == 0:  # no correct answer among the votes
        return 0.0

    # Every sample weight is scaled by p^x (1-p)^(m-x) with p = k/n: each k-subset gets the same
    # factor p^k (1-p)^(n-k), which cancels in the ratio, and numbers stay near 1 for any n.
    p = k / n
    pmf = {m: _binomial_pmf(m, p) for m in {m for m, _ in groups} | {n_none}}
    total = np.zeros(k + 1)
    total[0] = 1.0
    for m in [m for m, _ in groups] + [n_none]:
        total = _times(total[:, None], pmf[m], k)[:, 0]

    # For a fixed winning count M, answer j contributes lo_j(z) + hi_j z^M a, where a marks a
    # winner. Q = prod_j (...) and D = dQ/db (b marks correct winners, set to a) carry
    # (correct winners) * a^(winners - 1); integrating a over [0, 1] gives correct/winners.
    expected = 0.0
    for M in range(1, min(k, top) + 1):
        width = 1 + sum(m >= M for m, _ in groups)
        Q = np.zeros((k + 1, width))  # (z degree, a degree)
        D = np.zeros((k + 1, width))
        Q[0, 0] = 1.0
        for m, is_good in groups:
            lo = pmf[m][:M]  # the answer gets fewer than M votes
            hi = pmf[m][M] if m >= M else 0.0  # exactly M votes: a winner
            Qlo, Dlo = _times(Q, lo, k), _times(D, lo, k)
            if hi and M <= k:
                shifted_q = np.zeros_like(Q)
                shifted_q[M:, 1:] = hi * Q[: k + 1 - M, :-1]
                if is_good:  # product rule: d/db of b * hi z^M
                    Dlo[M:, :] += hi * Q[: k + 1 - M, :]
                Dlo[M:, 1:] += hi * D[: k + 1 - M, :-1]
                Qlo += shifted_q
            Q, D = Qlo, Dlo
        D = _times(D, pmf[n_none], k)
        expected += float(np.sum(D[k] / np.arange(1, width + 1)))
    return float(expected / total[k])


def mean_maj_at_k(answers, correct, k):
    """Mean maj@k over questions: answers[i] and correct[i] belong to question i."""
    answers, correct = list(answers), list(correct)
    if len(answers) != len(correct):
        raise ValueError(f"{len(answers)} answer lists but {len(correct)} correct entries")
    if not answers:
        raise ValueError("no questions: answers is empty")
    return float(np.mean([maj_at_k(a, c, k) for a, c in zip(answers, correct)]))
