"""Evaluation on held-out questions: greedy accuracy, and Pass@K / Maj@K from sampled answers.

Pass@K and Maj@K are DeepSeekMath §5.2.2's lens (Figure 7): Pass@K asks whether any of K samples
is right (what the model *can* do), Maj@K whether the majority vote is right (what it reliably
does). Both use the exact estimators of `metrics` on n samples per question.
"""

import torch

from . import distributed, fsdp
from .metrics import mean_maj_at_k, mean_pass_at_k
from .rewards import answer_of, rule_reward
from .sampling import sample


@torch.no_grad()
def greedy_accuracy(policy, tokenizer, problems, batch_size=512):
    """Fraction of `problems` whose greedy answer is correct (in a distributed run each rank answers its share)."""
    if not problems:
        raise ValueError("no problems to evaluate")
    mine = [problems[i] for i in distributed.share(len(problems))]
    hits = 0.0
    with fsdp.gathered(policy):
        for i in range(0, len(mine), batch_size):
            chunk = mine[i:i + batch_size]
            r = sample(policy, tokenizer, chunk, greedy=True)
            hits += rule_reward(r.problems, r.texts).sum().item()
    return distributed.sum_over_ranks(hits) / len(problems)


@torch.no_grad()
def sample_answers(policy, tokenizer, problems, samples, temperature=0.7, batch_rows=1024, seed=0):
    """(answers, correct) for each problem: `samples` parsed answers (None if malformed) each.

    In a distributed run each rank samples its share of the questions, question i from the stream
    (seed, "eval", i), and the answers are gathered: the same on any number of ranks.
    """
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    per = max(1, batch_rows // samples)
    mine = list(distributed.share(len(problems)))
    answers = []
    with fsdp.gathered(policy):
        for i in range(0, len(mine), per):
            chunk = mine[i:i + per]
            streams = [distributed.stream(seed, "eval", k) for k in chunk] if distributed.active() else None
            r = sample(policy, tokenizer, [problems[k] for k in chunk], group_size=samples, temperature=temperature,
                       generators=streams)
            parsed = [answer_of(p, t) for p, t in zip(r.problems, r.texts)]
            answers += [parsed[j * samples:(j + 1) * samples] for j in range(len(chunk))]
    answers = [a for part in distributed.gather(answers) for a in part]  # every rank's, in question order
    return answers, [p.answer for p in problems]


def pass_maj(answers, correct, ks):
    """{"pass_at_k": {k: ...}, "maj_at_k": {k: ...}} from sampled answers, keys as strings."""
    n = len(answers[0])
    bad = [k for k in ks if k > n]
    if bad:
        raise ValueError(f"k={bad[0]} is larger than the {n} samples per question")
    hits = [sum(a == c for a in row) for row, c in zip(answers, correct)]
    return {"pass_at_k": {str(k): mean_pass_at_k(n, hits, k) for k in ks},
            "maj_at_k": {str(k): mean_maj_at_k(answers, correct, k) for k in ks}}


def evaluate(policy, tokenizer, problems, k_problems=64, samples=16, ks=(1, 4, 16), temperature=0.7,
             seed=None):
    """Greedy accuracy on all `problems`; Pass@K and Maj@K on the first `k_problems` of them.

    seed: torch's RNG is seeded with it before sampling, so the same checkpoint gives the same
    numbers (in a distributed run, per-question streams of the seed: the same on any number of ranks,
    not those of one process outside torchrun). The result says how many questions and samples each figure uses.
    """
    if k_problems < 1 or not problems:
        raise ValueError(f"need at least one question for Pass@K / Maj@K, got k_problems={k_problems} "
                         f"of {len(problems)}")
    ks = sorted(set(int(k) for k in ks))
    if seed is not None:
        torch.manual_seed(seed)
    answers, correct = sample_answers(policy, tokenizer, problems[:k_problems], samples, temperature,
                                      seed=seed or 0)
    out = {"accuracy": greedy_accuracy(policy, tokenizer, problems), "problems": len(problems),
           "samples": samples, "temperature": temperature, "k_problems": min(k_problems, len(problems)),
           "seed": seed}
    out.update(pass_maj(answers, correct, ks))
    return out
