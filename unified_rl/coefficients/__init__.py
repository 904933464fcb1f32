"""The gradient coefficient GC(q, o, t) as pure tensor functions.

GC is |o| times the derivative of the method's objective J with respect to log pi_theta(o_t | ...):
plug it into `paradigm.surrogate_loss` and the gradient is exactly grad J (tests/test_oracle.py).
Every function is pure, returns a detached (B, T) tensor that is 0 off the mask, and names the
equation it implements.

`paper` holds DeepSeekMath's six (appendix A.1, eq 7-21), each the composition of parts (parts/) the trainer
runs; every other reinforcement-learning method is a composition too (`parts.compose`, `methods.METHODS`), its
coefficient `METHODS[name].coefficient(step)`. `preference` holds the methods beside DPO, `dpo_losses` every
loss_type of TRL's DPOTrainer: each their row of methods/preference.py (a composition of the preference parts)
called on bare tensors; the KL terms' GC is `kl.gc`.
"""

from .paper import dpo, grpo, online_rft, ppo, rft, sft
from .preference import ipo, kto, kto_reference_point, orpo, simpo
from ..kl.gc import kl_in_reward, kl_penalty
from .dpo_losses import LOSS_TYPES as DPO_LOSS_TYPES, dpo_loss, dpo_weighted

__all__ = ["dpo", "grpo", "online_rft", "ppo", "rft", "sft", "ipo", "kto", "kto_reference_point", "orpo", "simpo",
           "kl_in_reward", "kl_penalty", "DPO_LOSS_TYPES", "dpo_loss", "dpo_weighted"]
