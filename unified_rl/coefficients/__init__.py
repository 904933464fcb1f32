"""The gradient coefficient GC(q, o, t) of every method.

GC is |o| times the derivative of the method's objective J with respect to log pi_theta(o_t | ...):
plug it into `paradigm.surrogate_loss` and the gradient is exactly grad J (tests/test_oracle.py).
Every function is pure, returns a detached (B, T) tensor that is 0 off the mask, and names the
equation it implements.

`paper` holds DeepSeekMath's six (appendix A.1, eq 7-21), `policy_gradient` the methods after GRPO,
`preference` those beside DPO, `dpo_losses` every loss_type of TRL's DPOTrainer; the KL terms come
from `kl.gc`. Every name is importable from here.
"""

from .paper import dpo, grpo, online_rft, ppo, rft, sft
from .preference import ipo, kto, kto_reference_point, orpo, simpo
from ..kl.gc import kl_in_reward, kl_penalty
from .policy_gradient import (AGGREGATIONS, aggregation_weight, cispo, dapo, dr_grpo, gspo, reinforce_pp,
                     reinforce_pp_advantage, remax, rloo)

__all__ = ["dpo", "grpo", "online_rft", "ppo", "rft", "sft"]
__all__ += ["ipo", "kto", "kto_reference_point", "orpo", "simpo"]  # preference.py
__all__ += ["AGGREGATIONS", "aggregation_weight", "cispo", "dapo", "dr_grpo", "gspo", "kl_in_reward",
            "kl_penalty", "reinforce_pp", "reinforce_pp_advantage", "remax", "rloo"]  # policy_gradient.py, kl/gc.py
from .options import LEVELS, entropy_mask, grpo_options, kept_rows, off_policy_rows  # noqa: E402
__all__ += ["LEVELS", "entropy_mask", "grpo_options", "kept_rows", "off_policy_rows"]  # options.py
from .ratio_shapes import clip_cov, draw_seed, gmpo, kl_cov, sapo, vespo  # noqa: E402
from .baselines import gpg, opo  # noqa: E402
__all__ += ["clip_cov", "draw_seed", "gmpo", "kl_cov", "sapo", "vespo", "gpg", "opo"]  # ratio_shapes.py, baselines.py
# TRL's DPO loss types
from .dpo_losses import LOSS_TYPES as DPO_LOSS_TYPES, dpo_loss, dpo_weighted  # noqa: E402
__all__ += ["DPO_LOSS_TYPES", "dpo_loss", "dpo_weighted"]  # dpo_losses.py
