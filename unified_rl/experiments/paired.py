"""Paired differences per K (a trained model minus the model it started from) with two descriptive 95 %
intervals; the verdicts are `verdicts`' (one primary K, simultaneous intervals over seeds).

The data of one comparison at one K: `base` and `arm`, arrays (S, Q) of one metric (Pass@K or Maj@K)
per seed s and held-out question q, the same questions on every seed. Two sources of noise, one
interval each:
- over seeds: the S per-seed mean differences, mean +/- t(0.975, S-1) x sd / sqrt(S) (Student's t);
- over questions: the Q per-question differences (averaged over seeds), a percentile bootstrap of
  their mean (questions resampled with replacement, a fixed generator: the same numbers every time).
"""

import numpy as np

from .verdicts import t_interval


def seed_interval(d):
    """(low, high) of the 95 % t interval of the mean of per-seed differences `d` (no width for one)."""
    return t_interval(d, 0.95)


def question_interval(d, n_boot=2000, seed=0):
    """(low, high) of the 95 % percentile bootstrap of the mean of per-question differences `d`."""
    d = np.asarray(d, dtype=float)
    if d.ndim != 1 or len(d) < 2:
        raise ValueError(f"a bootstrap over questions needs two or more, got shape {d.shape}")
    idx = np.random.default_rng(seed).integers(0, len(d), (n_boot, len(d)))  # (n_boot, Q)
    means = d[idx].mean(1)  # (n_boot,)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def compare(base, arm, n_boot=2000):
    """The difference arm - base at one K from (S, Q) arrays: its mean, per seed, and both intervals."""
    base, arm = np.asarray(base, dtype=float), np.asarray(arm, dtype=float)
    if base.shape != arm.shape or base.ndim != 2:
        raise ValueError(f"base and arm must be (seeds, questions) arrays of one shape, got {base.shape}, {arm.shape}")
    diff = arm - base  # (S, Q)
    per_seed = diff.mean(1)  # (S,)
    return {"mean": float(diff.mean()), "per_seed": per_seed.tolist(), "seeds_ci": list(seed_interval(per_seed)),
            "questions_ci": list(question_interval(diff.mean(0), n_boot))}
