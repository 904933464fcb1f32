"""Each method's own objective J, differentiable: the oracle the coefficients are tested against.

Written as the papers print them, with no reference to gradient coefficients; the tests check that
autograd of each equals the gradient of `paradigm.surrogate_loss` with the method's GC. All are to be
maximised and average over the batch (per response 1/|o| sum_t, then mean over i).

`paper` holds DeepSeekMath's six (appendix A.1, eq 6-19), `dpo_losses` every loss_type of TRL's
DPOTrainer; every name is importable from here.
"""

from .paper import dpo, grpo, online_rft, ppo, rft, sft
from .preference import ipo, kto, orpo, simpo
from .policy_gradient import cispo, dapo, dr_grpo, gspo, kl_penalty, reinforce_pp, remax, rloo

__all__ = ["dpo", "grpo", "online_rft", "ppo", "rft", "sft"]
__all__ += ["ipo", "kto", "orpo", "simpo"]  # preference.py
__all__ += ["cispo", "dapo", "dr_grpo", "gspo", "kl_penalty", "reinforce_pp", "remax", "rloo"]  # policy_gradient.py
from .options import grpo_options  # noqa: E402
__all__ += ["grpo_options"]  # options.py
from .ratio_shapes import clip_cov, gmpo, kl_cov, sapo, vespo  # noqa: E402
from .baselines import gpg, opo  # noqa: E402
__all__ += ["clip_cov", "gmpo", "kl_cov", "sapo", "vespo", "gpg", "opo"]  # ratio_shapes.py, baselines.py
# TRL's DPO loss types
from .dpo_losses import dpo_loss, dpo_weighted  # noqa: E402
__all__ += ["dpo_loss", "dpo_weighted"]  # dpo_losses.py
