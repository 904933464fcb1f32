"""The preference family's losses: the loss of the two scores, one page each (registered where defined).

TRL_DPO lists TRL 1.16's DPOConfig.loss_type values in its docstring's order (DPO's `dpo_loss` setting picks
among them), TRL_KTO its KTOConfig.loss_type values (KTO's `kto_loss`).
"""

from . import sigmoid, hinge, ipo, exo_pair, nca_pair, robust, bco_pair, sppo_hard, aot, apo, discopop  # noqa: F401
from . import sft, simpo, kto, odds_ratio  # noqa: F401  (each page registers its parts)

TRL_DPO = ("sigmoid", "hinge", "ipo", "exo_pair", "nca_pair", "robust", "bco_pair", "sppo_hard", "aot",
           "aot_unpaired", "apo_zero", "apo_down", "discopop", "sft", "sigmoid_norm")
TRL_KTO = ("kto", "apo_zero_unpaired")


def trl_dpo(loss_type):
    """The log-ratio scores and TRL's DPO `loss_type`, its norm a setting (pair_norm), every TRL loss's settings
    checked: DPO's row with its dpo_loss set, on bare tensors (coefficients.dpo_loss, objectives.dpo_loss)."""
    from ..pair_composition import composed
    from ..pair_scores import NORMS
    if loss_type not in TRL_DPO:
        raise ValueError(f"unknown DPO loss_type {loss_type!r}; choose one of {', '.join(TRL_DPO)}")
    return composed("log_ratio", loss_type, norms=NORMS, losses=TRL_DPO)
