"""Advantages computed once per batch, before its updates, from more than the Step holds.

| name    | A_t                                                                  | needs          | source |
|---------|----------------------------------------------------------------------|----------------|--------|
| gae     | sum_l (gamma lam)^l delta_{t+l}, delta_t = r_t + gamma V_{t+1} - V_t | a value model  | GAE, arXiv 1506.02438; DeepSeekMath eq 18 |
| process | the group-normalised rewards of the steps that end at or after t     | the tokenizer  | DeepSeekMath §4.1.3 |

The composition's per-batch hook (methods.hooks) computes them into `Step.adv`; these pages read it back.
PPO's reward carries its KL per token (eq 2), so GAE takes the KL in the reward from the composition.
"""

from ... import _checks
from ...derivations.paper import REGISTRY as PAPER
from ..registry import ADVANTAGES


def _adv(v):
    if v.adv is None:
        raise ValueError("this advantage is computed once per batch (Method.advantage): the Step has no adv")
    return _checks.per_token(v.adv, "adv", v.full).detach() * v.full


ADVANTAGES.add("gae", gc=_adv, objective=lambda v: v.adv, per_batch="gae", needs_critic=True,
               summary="generalized advantage estimation with a learned value model",
               cite="GAE, Schulman et al., arXiv 1506.02438; DeepSeekMath eq 18", ships_in=("paper", "verl"),
               derivation=PAPER["ppo"])
ADVANTAGES.add("process", gc=_adv, objective=lambda v: v.adv, per_batch="process",
               summary="per-step rewards normalised over the group, summed from each token onward",
               cite="DeepSeekMath §4.1.3, arXiv 2402.03300", ships_in=("paper",), derivation=PAPER["grpo"])
