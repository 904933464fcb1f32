"""Reward functions, the second component of the paradigm: how good a response is.

Every reward is a callable `reward(rollout) -> (B,) tensor`, so a method can swap one for another
(DeepSeekMath §5.2.1); `RewardColumns` gives (B, K), one column per reward, for GDPO.

| module            | rewards                                                                  |
|-------------------|--------------------------------------------------------------------------|
| `core`            | rule_reward / RuleReward (outcome), process_rewards (per step), ModelReward, NoisyReward |
| `policy_gradient` | OverlongReward: DAPO's soft overlong punishment on top of a base reward; OverlongPenalty alone; RewardColumns (GDPO's several rewards) |
| `model`           | RewardModel: a learned outcome reward model, its training and AUC        |

No reward evaluates model output as code: answers are parsed as digits.
"""

from .core import ModelReward, NoisyReward, RuleReward, _char_ends, answer_of, process_rewards, rule_reward
from .policy_gradient import OverlongPenalty, OverlongReward, RewardColumns, overlong_penalty

__all__ = ["ModelReward", "NoisyReward", "RuleReward", "answer_of", "process_rewards", "rule_reward", "OverlongReward",
           "overlong_penalty", "OverlongPenalty", "RewardColumns"]
