"""The preference family's settings as TRL 1.16's DPOConfig and KTOConfig name them, both ways.

`dpo_from_trl` and `kto_from_trl` give the settings of `train("dpo" | "kto", **them)` whose loss is the one
TRL's trainer computes for a config; `trl_dpo_options` and `trl_kto_options` give the config options whose
loss is our run's, or a ValueError naming what TRL cannot express. The one convention between the two:
TRL sums each response's log-ratios (its sigmoid_norm and ipo divide by the length, as DeepSeekMath's eq 12
does), and it averages its sft loss over every chosen token of the batch; `dpo_norm` / `kto_norm` pick
either. tests/test_trl_preference.py runs TRL's own loss code against ours on these settings.
"""

from types import SimpleNamespace

from .parts import PAIR_LOSSES
from .parts.pair_losses import TRL_DPO as LOSS_TYPES, TRL_KTO as KTO_LOSS_TYPES

TRL_MEAN = ("ipo", "sigmoid_norm")
"""The DPO loss types TRL computes on per-token mean log-ratios; the others take sums."""
USES_LABEL_SMOOTHING = tuple(t for t in LOSS_TYPES if any(f.name == "label_smoothing" for f in PAIR_LOSSES[t].fields()))
"""The DPO loss types whose page reads label_smoothing (TRL's sigmoid reads it too; here it does not: 0 is mapped)."""


def _dpo():
    from .methods.preference import BY_NAME  # the lab's data sources: imported when a mapping is asked for
    return BY_NAME["dpo"]


def check_settings(loss_type, norm, beta, label_smoothing, discopop_tau):
    """ValueError naming the setting if DPO's row refuses these (its settings, and the run's dpo_beta)."""
    dpo = _dpo()
    hp = type(dpo.hparams)(dpo_loss=loss_type, dpo_norm=norm, dpo_label_smoothing=label_smoothing,
                           dpo_discopop_tau=discopop_tau)
    dpo.composition.check(hp, SimpleNamespace(dpo_beta=beta))
    return hp


def dpo_from_trl(loss_type="sigmoid", beta=0.1, label_smoothing=0.0, discopop_tau=0.05):
    """Our DPO settings whose loss is TRL's DPOConfig(loss_type, beta, label_smoothing, discopop_tau)'s.

    >>> dpo_from_trl("sigmoid")["dpo_norm"], dpo_from_trl("sigmoid_norm")["dpo_norm"]
    ('sum', 'mean')
    """
    if isinstance(loss_type, (list, tuple)):
        if len(loss_type) != 1:
            raise ValueError(f"TRL's loss_type {list(loss_type)} combines losses; a run here has one (the GC of "
                             "a weighted sum is the weighted sum of the GCs: coefficients.dpo_weighted)")
        loss_type = loss_type[0]
    norm = "mean" if loss_type in TRL_MEAN else "sum"
    check_settings(loss_type, norm, beta, label_smoothing, discopop_tau)
    return {"dpo_loss": loss_type, "dpo_norm": norm, "dpo_beta": beta, "dpo_label_smoothing": label_smoothing,
            "dpo_discopop_tau": discopop_tau}


def trl_dpo_options(hp, dpo_beta):
    """TRL DPOConfig options whose loss is our DPO run's (hp: its DPOConfig, dpo_beta: its RLConfig's).

    ValueError where TRL has no such loss: a loss type other than sigmoid and ipo on mean log-ratios,
    or ipo on sums. Options that the loss does not read are left out (TRL's defaults stand).
    >>> from unified_rl.methods import METHODS
    >>> trl_dpo_options(METHODS["dpo"].hparams, 0.5)        # DeepSeekMath's eq 12
    {'loss_type': 'sigmoid_norm', 'beta': 0.5}
    """
    loss, norm = hp.dpo_loss, hp.dpo_norm
    if loss == "sigmoid" and norm == "mean":
        loss = "sigmoid_norm"
    if loss not in LOSS_TYPES:
        raise ValueError(f"unknown DPO loss {loss!r}")
    trl_norm = "mean" if loss in TRL_MEAN else "sum"
    if norm != trl_norm and loss != "sigmoid_norm":
        raise ValueError(f"TRL computes {loss!r} on {'per-token means' if trl_norm == 'mean' else 'sums'} of the "
                         f"log-ratios, this run on {'means' if norm == 'mean' else 'sums'}: no DPOConfig matches it")
    out = {"loss_type": loss, "beta": dpo_beta}
    if loss in USES_LABEL_SMOOTHING:
        out["label_smoothing"] = hp.dpo_label_smoothing
    if loss == "discopop":
        out["discopop_tau"] = hp.dpo_discopop_tau
    return out


def kto_from_trl(loss_type="kto", beta=0.1, desirable_weight=1.0, undesirable_weight=1.0):
    """Our KTO settings whose loss is TRL's KTOConfig(loss_type, beta, desirable_weight, undesirable_weight)'s.

    TRL sums the log-ratios (kto_norm="sum") and estimates z0 on mismatched pairs of the batch, as ours does.
    """
    if loss_type not in KTO_LOSS_TYPES:
        raise ValueError(f"unknown KTO loss_type {loss_type!r}; choose one of {', '.join(KTO_LOSS_TYPES)}")
    return {"kto_loss": loss_type, "kto_norm": "sum", "kto_beta": beta, "kto_lam_d": desirable_weight,
            "kto_lam_u": undesirable_weight}


def trl_kto_options(hp):
    """TRL KTOConfig options whose loss is our KTO run's (hp: its KTOConfig); ValueError under kto_norm="mean"."""
    if hp.kto_norm != "sum":
        raise ValueError("TRL's KTOTrainer sums each response's log-ratios; this run takes per-token means "
                         "(kto_norm='mean'): no KTOConfig matches it")
    return {"loss_type": hp.kto_loss, "beta": hp.kto_beta, "desirable_weight": hp.kto_lam_d,
            "undesirable_weight": hp.kto_lam_u}
