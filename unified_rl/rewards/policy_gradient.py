"""DAPO's overlong reward shaping (arXiv 2503.14476, §3.4, "soft overlong punishment").

    R_length(o) = 0                                  if |o| <= L_max - L_cache
                = ((L_max - L_cache) - |o|) / L_cache if L_max - L_cache < |o| <= L_max
                = -1                                 if |o| > L_max

added to the base reward. |o| counts response tokens (EOS included). L_max is the sampler's budget
for the batch, `sampling.response_budget` (the longest reference answer of its questions + EOS +
`sampling.RESPONSE_SLACK`), the length at which the sampler cuts a row, so a cut response gets -1.

Two differences from DAPO's paper. Its base reward is +1 / -1 (right / wrong), the lab's rule 1 / 0:
alone the two give the same group-normalised advantage (R' = 2R - 1), but added to R_length the
penalty weighs twice as much against correctness here as in the paper. And the paper also masks the
loss of truncated samples ("overlong filtering", §3.4); the package does not, it applies the shaping
alone.
"""

import torch

from .core import RuleReward
from ..sampling import RESPONSE_SLACK, response_budget


def overlong_penalty(lengths, max_len, cache_len):
    """R_length of DAPO for response lengths (B,) in tokens; 0 up to max_len - cache_len, -1 beyond max_len.

    >>> overlong_penalty(torch.tensor([10, 13, 15, 17, 18]), max_len=17, cache_len=4)
    tensor([ 0.0000,  0.0000, -0.5000, -1.0000, -1.0000])
    """
    lengths = torch.as_tensor(lengths, dtype=torch.float64)
    if not cache_len > 0 or not max_len > cache_len:
        raise ValueError(f"need 0 < cache_len < max_len, got cache_len={cache_len}, max_len={max_len}")
    soft = ((max_len - cache_len) - lengths) / cache_len  # (B,) linear in the last cache_len tokens
    out = torch.where(lengths <= max_len - cache_len, torch.zeros_like(soft), soft)
    return torch.where(lengths > max_len, -torch.ones_like(soft), out).to(torch.get_default_dtype())


class OverlongReward:
    """A base reward (the rule by default) plus DAPO's soft overlong punishment, as a `reward(rollout)`."""

    def __init__(self, base=None, cache_len=RESPONSE_SLACK):
        self.base = RuleReward() if base is None else base
        self.cache_len = cache_len

    def budget(self, rollout):
        """L_max: the sampler's max_new_tokens for these questions (`sampling.response_budget`, read, not
        recomputed); in a distributed run, the whole batch's, which the rollout carries (Rollout.budget)."""
        return rollout.budget if rollout.budget is not None else response_budget(rollout.problems)

    def __call__(self, rollout):
        base = self.base(rollout)  # (B,)
        lengths = rollout.mask.sum(-1)  # (B,) response tokens, EOS included
        return base + overlong_penalty(lengths, self.budget(rollout), self.cache_len).to(base)
