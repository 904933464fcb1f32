"""Helpers for notebook 07 (Pass@K vs Maj@K): answer distributions, sharpened and laid out as samples.

DeepSeekMath §5.2.2 reads "RL raises Maj@K but not Pass@K" as RL *sharpening* the output
distribution. To see what sharpening alone does, take one question's distribution over final answers,
raise it to a power alpha > 1 and renormalise (what lowering the temperature does to whole answers),
lay it out as n sampled answers in those proportions, and score them with the package's exact
estimators (`metrics.pass_at_k`, `metrics.maj_at_k`).
"""

import math


def sharpen(dist, alpha):
    """{answer: p} -> {answer: p**alpha / Z}: alpha > 1 sharpens, alpha < 1 flattens, alpha = 1 keeps it."""
    if not dist:
        raise ValueError("the answer distribution is empty")
    if not (isinstance(alpha, (int, float)) and math.isfinite(alpha) and alpha > 0):
        raise ValueError(f"alpha must be a finite number > 0, got {alpha!r}")
    if any(not math.isfinite(p) or p < 0 for p in dist.values()):
        raise ValueError(f"probabilities must be finite and >= 0, got {dist}")
    w = {a: (p ** alpha if p > 0 else 0.0) for a, p in dist.items()}
    z = sum(w.values())
    if z <= 0:
        raise ValueError(f"the answer distribution has no mass: {dist}")
    return {a: v / z for a, v in w.items()}


def as_answers(dist, n=64):
    """n answers in the proportions of dist, rounded by largest remainders, for the exact estimators."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    total = sum(dist.values())
    if total <= 0:
        raise ValueError(f"the answer distribution has no mass: {dist}")
    share = {a: p / total * n for a, p in dist.items()}
    counts = {a: int(s) for a, s in share.items()}
    for a in sorted(dist, key=lambda a: share[a] - counts[a], reverse=True)[: n - sum(counts.values())]:
        counts[a] += 1
    return [a for a, m in counts.items() for _ in range(m)]


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
