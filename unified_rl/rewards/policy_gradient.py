"""DAPO's overlong reward shaping (arXiv 2503.14476, §3.4, "soft overlong punishment").

    R_length(o) = 0                                  if |o| <= L_max - L_cache
                = ((L_max - L_cache) - |o|) / L_cache if L_max - L_cache < |o| <= L_max
                = -1                                 if |o| > L_max

added to the base reward. |o| counts response tokens (EOS included). L_max is each row's sampling
budget as the sampler recorded it (`Rollout.budget`: by default `sampling.response_budget`, the longest
reference answer of its questions + EOS + `sampling.RESPONSE_SLACK`), the length at which the sampler
cut the row, so a cut response gets -1; it is read from the rollout, never recomputed, so a batch
gathered from several draws (DAPO's dynamic sampling) penalises each row against its own budget.

`RewardColumns` keeps several rewards apart, one column each (B, K), for GDPO's decoupled
normalisation (arXiv 2601.05242); `OverlongPenalty` is the length penalty alone, as such a column.

Two differences from DAPO's paper. Its base reward is +1 / -1 (right / wrong), the lab's rule 1 / 0:
alone the two give the same group-normalised advantage (R' = 2R - 1), but added to R_length the
penalty weighs twice as much against correctness here as in the paper. And the paper also masks the
loss of truncated samples ("overlong filtering", §3.4); the package does not, it applies the shaping
alone.
"""

import torch

from .core import RuleReward
from ..sampling import RESPONSE_SLACK


def overlong_penalty(lengths, max_len, cache_len):
    """R_length of DAPO for response lengths (B,) in tokens; 0 up to max_len - cache_len, -1 beyond max_len.

    >>> overlong_penalty(torch.tensor([10, 13, 15, 17, 18]), max_len=17, cache_len=4)
    tensor([ 0.0000,  0.0000, -0.5000, -1.0000, -1.0000])
    """
    lengths = torch.as_tensor(lengths, dtype=torch.float64)
    max_len = torch.as_tensor(max_len, dtype=torch.float64, device=lengths.device)  # one, or one per row
    if not cache_len > 0 or not bool((max_len > cache_len).all()):
        raise ValueError(f"need 0 < cache_len < max_len, got cache_len={cache_len}, max_len={max_len.tolist()}")
    soft = ((max_len - cache_len) - lengths) / cache_len  # (B,) linear in the last cache_len tokens
    out = torch.where(lengths <= max_len - cache_len, torch.zeros_like(soft), soft)
    return torch.where(lengths > max_len, -torch.ones_like(soft), out).to(torch.get_default_dtype())


class OverlongReward:
    """A base reward (the rule by default) plus DAPO's soft overlong punishment, as a `reward(rollout)`."""

    def __init__(self, base=None, cache_len=RESPONSE_SLACK):
        self.base = RuleReward() if base is None else base
        self.cache_len = cache_len

    def budget(self, rollout):
        """L_max: the largest of the budgets the sampler recorded for the rows (`Rollout.budget`, read, not
        recomputed; in a distributed run, the whole draw's); each row is penalised against its own."""
        return int(_budgets(rollout).max())

    def __call__(self, rollout):
        base = self.base(rollout)  # (B,)
        return base + OverlongPenalty(self.cache_len)(rollout).to(base)


def _budgets(rollout):
    if getattr(rollout, "budget", None) is None:
        raise ValueError("DAPO's overlong penalty needs the budget each row was sampled with (Rollout.budget); "
                         "these responses were not sampled (given texts have none)")
    return rollout.budget


class OverlongPenalty:
    """DAPO's soft overlong punishment alone, as a `reward(rollout)`: R_length of each row against its budget."""

    def __init__(self, cache_len=RESPONSE_SLACK):
        self.cache_len = cache_len

    def __call__(self, rollout):
        lengths = rollout.mask.sum(-1)  # (B,) response tokens, EOS included
        return overlong_penalty(lengths, _budgets(rollout), self.cache_len).to(rollout.mask.device)


class RewardColumns:
    """Several rewards kept apart: `reward(rollout) -> (B, K)`, one column per reward (GDPO's input)."""

    def __init__(self, *rewards):
        if len(rewards) < 2:
            raise ValueError("RewardColumns needs at least two rewards")
        self.rewards = rewards

    def __call__(self, rollout):
        cols = [r(rollout) for r in self.rewards]
        return torch.stack([c.to(cols[0]) for c in cols], -1)  # (B, K)
