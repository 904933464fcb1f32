"""What the §5.2 experiments measure and how they summarise it: Pass@K / Maj@K curves over K = 1, 2, 4,
..., greedy accuracy, and statistics over seeds (mean, sample std, min, max)."""

import math

import numpy as np

from ..evaluation import greedy_accuracy, pass_maj, sample_answers
from .runner import phase


def powers_of_two(n):
    """1, 2, 4, ... up to n: the K values of Figure 7."""
    if n < 1:
        raise ValueError(f"need at least one sample per question, got {n}")
    return [2**i for i in range(int(math.log2(n)) + 1)]


def pass_maj_curve(policy, tokenizer, problems, samples, temperature=0.7):
    """Pass@K and Maj@K lists for K = 1, 2, 4, ..., samples (exact estimators), and "hits": the number
    of right samples of each question."""
    ks = powers_of_two(samples)
    answers, correct = sample_answers(policy, tokenizer, problems, samples, temperature)
    pm = pass_maj(answers, correct, ks)
    out = {key: [pm[key][str(k)] for k in ks] for key in ("pass_at_k", "maj_at_k")}
    out["hits"] = [sum(a == c for a in row) for row, c in zip(answers, correct)]
    return out


def evaluate_policy(policy, tokenizer, problems, k_problems, samples, temperature=0.7):
    """Greedy accuracy on all `problems`, Pass@K / Maj@K curves on the first `k_problems`."""
    phase(f"evaluating: greedy on {len(problems)} questions, then sampling {samples} answers to each of "
          f"{min(k_problems, len(problems))} for Pass@K / Maj@K")
    out = {"greedy": greedy_accuracy(policy, tokenizer, problems)}
    out.update(pass_maj_curve(policy, tokenizer, problems[:k_problems], samples, temperature))
    return out


def stats(values):
    """Mean, sample std (0 for one seed), min and max of per-seed numbers."""
    v = np.asarray(values, dtype=float)
    return {"mean": float(v.mean()), "std": float(v.std(ddof=1)) if len(v) > 1 else 0.0,
            "min": float(v.min()), "max": float(v.max())}


def mean_curves(per_seed, skip=("hits",)):
    """Mean and std over seeds of every list- or number-valued entry of per-seed dicts (but `skip`)."""
    mean, std = {}, {}
    for key, first in per_seed[0].items():
        if key in skip:
            continue
        if isinstance(first, (int, float)) or (isinstance(first, list) and first
                                               and isinstance(first[0], (int, float))):
            a = np.asarray([s[key] for s in per_seed], dtype=float)
            mean[key] = a.mean(0).tolist()
            std[key] = (a.std(0, ddof=1) if len(a) > 1 else np.zeros_like(a[0])).tolist()
    return mean, std


def fmt(s, digits=3):
    """'0.612 +/- 0.021' from stats() (the spread is the sample std over seeds)."""
    return f"{s['mean']:.{digits}f} +/- {s['std']:.{digits}f}"
