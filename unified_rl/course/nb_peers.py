"""Notebook 10's "what your TRL / verl config means": each option of a peer's config, the method and settings
it is here (`peers.from_trl`, `peers.from_verl`), and what it changes in the GC; and which registered members
of the policy-gradient family a live run or a shipped comparison leaves out.

Every row is computed: the "here" column is what the map returns (the settings that differ from the row's
baseline), and the GC column is the sentence of the catalogue key the row names. A method registered
later appears in `left_out` without an edit here (tests/test_nb_peers.py).
"""

from unified_rl import peers
from unified_rl.course.i18n import t
from unified_rl.methods import get_method
from unified_rl.presets import get_preset

TRL_BASE = {"loss_type": "grpo"}  # an option row: what it changes from TRL's loss_type="grpo"
TRL_LOSS_TYPES = (  # (GRPOConfig fields, the GC's key): a loss-type row shows its method's non-default settings
    ({"loss_type": "grpo"}, "nb.peers.gc.grpo"),
    ({"loss_type": "dr_grpo"}, "nb.peers.gc.dr_grpo"),
    ({"loss_type": "dapo"}, "nb.peers.gc.dapo"),
    ({"loss_type": "bnpo", "per_device_train_batch_size": 8, "num_generations": 8,
      "gradient_accumulation_steps": 16, "steps_per_generation": 1}, "nb.peers.gc.bnpo"),
    ({"loss_type": "luspo", "importance_sampling_level": "sequence"}, "nb.peers.gc.luspo"),
    ({"loss_type": "cispo", "epsilon_high": 5.0}, "nb.peers.gc.cispo"),
    ({"loss_type": "sapo"}, "nb.peers.gc.sapo"),
    ({"loss_type": "vespo"}, "nb.peers.gc.vespo"),
)
TRL_OPTIONS = (
    ({"scale_rewards": "batch"}, "nb.peers.gc.scale_batch"),
    ({"scale_rewards": "none"}, "nb.peers.gc.scale_none"),
    ({"epsilon_high": 0.28}, "nb.peers.gc.epsilon_high"),
    ({"delta": 1.5}, "nb.peers.gc.delta"),
    ({"importance_sampling_level": "sequence"}, "nb.peers.gc.sequence"),
    ({"beta": 0.04}, "nb.peers.gc.beta"),
    ({"beta": 0.04, "use_bias_correction_kl": False}, "nb.peers.gc.plain_k3"),
    ({"mask_truncated_completions": True}, "nb.peers.gc.truncated"),
    ({"top_entropy_quantile": 0.2}, "nb.peers.gc.entropy"),
    ({"off_policy_mask_threshold": 0.5}, "nb.peers.gc.off_policy"),
    ({"multi_objective_aggregation": "normalize_then_sum", "n_rewards": 2}, "nb.peers.gc.gdpo"),
)
VERL = (  # ((adv_estimator, loss_mode, loss_agg_mode), the GC's key)
    (("grpo", "vanilla", "token-mean"), "nb.peers.gc.verl_vanilla"),
    (("grpo", "gspo", "seq-mean-token-mean"), "nb.peers.gc.sequence"),
    (("grpo", "geo_mean", "token-mean"), "nb.peers.gc.gmpo"),
    (("grpo", "clip_cov", "token-mean"), "nb.peers.gc.clip_cov"),
    (("grpo", "kl_cov", "token-mean"), "nb.peers.gc.kl_cov"),
    (("grpo", "cispo", "token-mean"), "nb.peers.gc.cispo"),
    (("grpo", "sapo", "seq-mean-token-mean"), "nb.peers.gc.sapo"),
    (("gpg", "gpg", "token-mean"), "nb.peers.gc.gpg"),
    (("opo", "vanilla", "seq-mean-token-sum"), "nb.peers.gc.opo"),
    (("grpo_passk", "vanilla", "token-mean"), "nb.peers.gc.passk"),
    (("reinforce_plus_plus_baseline", "vanilla", "token-mean"), "nb.peers.gc.reinforce_pp"),
    (("rloo", "vanilla", "seq-mean-token-sum"), "nb.peers.gc.rloo"),
)


def _settings_of(method, overrides):
    """`overrides` minus what a run of `method` (a name, or a composed Method) has anyway (its hparams' and the cpu
    preset's defaults), minus the settings that change nothing here (L outside the aggregations that read it, an
    upper clip equal to the lower)."""
    hp, rl = get_method(method).hparams, get_preset("cpu").rl
    shown = {}
    for k, v in overrides.items():
        if (hasattr(hp, k) and getattr(hp, k) == v) or (hasattr(rl, k) and getattr(rl, k) == v):
            continue
        shown[k] = v
    if shown.get("aggregation", getattr(hp, "aggregation", None)) not in ("constant", "seq-mean-token-sum-norm"):
        shown.pop("max_len", None)
    if shown.get("clip_eps_high") == overrides.get("clip_eps", rl.clip_eps):
        shown.pop("clip_eps_high")
    return shown


def _cell(method, settings):
    name = get_method(method).name  # a row's name, or a composition's (e.g. rloo+cispo)
    return f"`{name}`" + ("" if not settings else ": " + ", ".join(f"`{k}={v!r}`" for k, v in settings.items()))


def _config(fields):
    return ", ".join(f"`{k}={v!r}`" for k, v in fields.items() if k != "n_rewards") + (
        " " + t("nb.peers.two_rewards") if fields.get("n_rewards") == 2 else "")


def trl_rows():
    """[(TRL config, the method and settings here, what it changes in the GC)] for TRL 1.16's GRPOConfig."""
    rows = []
    for fields, key in TRL_LOSS_TYPES:
        name, over = peers.from_trl(**fields)
        rows.append((_config(fields), _cell(name, _settings_of(name, over)), t(key)))
    base_name, base = peers.from_trl(**TRL_BASE)
    for fields, key in TRL_OPTIONS:
        name, over = peers.from_trl(**TRL_BASE, **fields)
        changed = {k: v for k, v in over.items() if base.get(k, object()) != v} if name == base_name else \
            _settings_of(name, over)
        rows.append((_config(fields), _cell(name, changed), t(key)))
    return rows


def verl_rows():
    """[(verl config, the method and settings here, what it changes in the GC)] for verl's estimators and losses."""
    rows = []
    for (est, mode, agg), key in VERL:
        name, over = peers.from_verl(est, mode, agg)
        config = f"`adv_estimator={est!r}`, `loss_mode={mode!r}`, `loss_agg_mode={agg!r}`"
        rows.append((config, _cell(name, _settings_of(name, over)), t(key)))
    return rows


def markdown(rows, peer):
    """A Markdown table of `trl_rows()` or `verl_rows()`; peer: "TRL" or "verl"."""
    head = t("nb.peers.head", peer=peer)
    def cell(x):
        return x.replace("|", "\\|")  # |o_i| inside a cell would end it
    return "\n".join([head, "|---|---|---|"] + [f"| {cell(a)} | {cell(b)} | {cell(c)} |" for a, b, c in rows])


def left_out(names, family=None):
    """The members of `family` (default: the registry's policy-gradient family, read at the call) that `names`
    leaves out, in the registry's order."""
    from unified_rl import methods
    family = methods.POLICY_GRADIENT if family is None else family
    return [m.name for m in family if m.name not in set(names)]
