"""Each method's own objective J, differentiable: the oracle the coefficients are tested against.

Written as the papers print them, with no reference to gradient coefficients; the tests check that
autograd of each equals the gradient of `paradigm.surrogate_loss` with the method's GC. All are to be
maximised and average over the batch (per response 1/|o| sum_t, then mean over i).

`paper` holds DeepSeekMath's six (appendix A.1, eq 6-19) as printed; every other reinforcement-learning
method's J is its composition's (`METHODS[name].objective(step)`), each part's term written on the part's page
(parts/). `preference` holds the methods beside DPO, `dpo_losses` every loss_type of TRL's DPOTrainer.
"""

from .paper import dpo, grpo, online_rft, ppo, rft, sft
from .preference import ipo, kto, orpo, simpo
from .dpo_losses import dpo_loss, dpo_weighted

__all__ = ["dpo", "grpo", "online_rft", "ppo", "rft", "sft", "ipo", "kto", "orpo", "simpo", "dpo_loss", "dpo_weighted"]
