"""What a TRL or verl config means here: the method and settings that give the same gradient coefficient.

    from_trl(loss_type="dapo", epsilon_high=0.28)  -> ("grpo", {"aggregation": "batch-token-mean", ...})
    to_trl("grpo", scale_rewards="none")           -> TRLConfig(config={...GRPOConfig kwargs}, differences=[...])
    from_verl("grpo", "geo_mean")                  -> ("gmpo", {...})

`from_trl` reads TRL 1.16's GRPOConfig fields, `from_verl` verl's adv_estimator, policy loss
(actor.policy_loss.loss_mode) and loss_agg_mode; each returns (METHODS name, train() overrides), so
`train(*from_trl(**config))` trains with the coefficient TRL's `_compute_loss` differentiates (tests/test_trl_losses.py
checks it against TRL's own code, tests/test_verl_losses.py against verl's published formulas). A setting
that changes nothing in the GC (output_dir, logging, ...) is not read; a value with no counterpart here is a
ValueError that names it. `to_trl` goes the other way, for a run of ours, and lists what remains different.
"""

from dataclasses import dataclass, field

from .methods import METHODS

TRL_ADV_EPS = 1e-4  # TRL divides by (std + 1e-4), a constant of its code
TRL_DEFAULTS = dict(loss_type="dapo", beta=0.0, epsilon=0.2, epsilon_high=None, delta=None, scale_rewards="group",
                    importance_sampling_level="token", max_completion_length=256, mask_truncated_completions=False,
                    top_entropy_quantile=1.0, off_policy_mask_threshold=None, use_bias_correction_kl=True,
                    multi_objective_aggregation="sum_then_normalize", sapo_temperature_pos=1.0,
                    sapo_temperature_neg=1.05, vespo_k_pos=2.0, vespo_lambda_pos=3.0, vespo_k_neg=3.0,
                    vespo_lambda_neg=2.0, num_generations=8, per_device_train_batch_size=8,
                    gradient_accumulation_steps=1, num_iterations=1, learning_rate=1e-6, temperature=1.0,
                    n_rewards=1)
"""TRL 1.16's GRPOConfig defaults of every field read here (n_rewards: how many reward_funcs)."""

# the loss types that are GRPO's clipped ratio with one aggregation (TRL's _compute_loss: coef_2 = clamp(...))
_CLIPPED = {"grpo": "seq-mean-token-mean", "dapo": "batch-token-mean", "dr_grpo": "constant", "luspo": "constant",
            "bnpo": None}
_RUN = {"learning_rate": "lr", "num_generations": "group_size", "num_iterations": "epochs", "temperature": "temperature"}


def _trl(config):
    unknown = sorted(set(config) - set(TRL_DEFAULTS))
    if unknown:
        raise ValueError(f"from_trl does not read {unknown}: they change nothing in the gradient coefficient "
                         f"here, or have no counterpart (it reads {sorted(TRL_DEFAULTS)})")
    c = {**TRL_DEFAULTS, **config}
    c["scale_rewards"] = {True: "group", False: "none"}.get(c["scale_rewards"], c["scale_rewards"])  # as TRL does
    c["epsilon_high"] = c["epsilon"] if c["epsilon_high"] is None else c["epsilon_high"]
    return c


def _refuse(c, method, **unsupported):
    """ValueError naming each TRL setting away from its default that `method` has no counterpart for."""
    bad = [k for k, v in unsupported.items() if c[k] != v]
    if bad:
        raise ValueError(f"TRL's loss_type={c['loss_type']!r} with {', '.join(f'{k}={c[k]!r}' for k in bad)} has no "
                         f"counterpart in `{method}` here")


def _bnpo(c):
    """bnpo normalises by the tokens of each micro-batch: per group, or over the batch, here."""
    if c["per_device_train_batch_size"] == c["num_generations"]:
        return "token-mean"
    if c["gradient_accumulation_steps"] == 1:
        return "batch-token-mean"
    raise ValueError("loss_type='bnpo' normalises each micro-batch by its own tokens: here that is one group "
                     "(per_device_train_batch_size = num_generations) or the whole batch (one micro-batch)")


def from_trl(**config):
    """(method name, overrides) of TRL 1.16 GRPOConfig fields (the others are TRL's defaults, TRL_DEFAULTS).

    >>> from_trl(loss_type="dr_grpo", scale_rewards=False, max_completion_length=64)[1]["aggregation"]
    'constant'
    """
    c = _trl(config)
    run = {ours: c[theirs] for theirs, ours in _RUN.items() if theirs in config}
    run.update(beta=c["beta"], clip_eps=c["epsilon"])
    loss = c["loss_type"]
    if c["n_rewards"] > 1 or c["multi_objective_aggregation"] != "sum_then_normalize":
        if c["n_rewards"] != 2 or loss != "grpo":
            raise ValueError("several rewards map to `gdpo`: its two columns (the rule, the overlong penalty), "
                             "with loss_type='grpo'")
        _refuse(c, "gdpo", epsilon_high=c["epsilon"], delta=None, importance_sampling_level="token",
                mask_truncated_completions=False, top_entropy_quantile=1.0, off_policy_mask_threshold=None,
                scale_rewards="group")
        if c["beta"] > 0 and c["use_bias_correction_kl"]:
            raise ValueError("`gdpo` here has GRPO's k3 penalty: set use_bias_correction_kl=False (or beta=0)")
        return "gdpo", {**run, "multi_objective_aggregation": c["multi_objective_aggregation"], "adv_eps": TRL_ADV_EPS}
    adv = dict(scale_rewards=c["scale_rewards"], adv_eps=TRL_ADV_EPS)
    if loss in _CLIPPED:
        if loss == "luspo" and c["importance_sampling_level"] != "sequence":
            raise ValueError("TRL's loss_type='luspo' requires importance_sampling_level='sequence'")
        agg = _bnpo(c) if loss == "bnpo" else _CLIPPED[loss]
        return "grpo", {**run, **adv, "aggregation": agg,
                        "max_len": float(c["max_completion_length"] if loss == "dr_grpo" else 1.0),
                        "clip_eps_high": c["epsilon_high"], "delta": c["delta"],
                        "importance_sampling_level": c["importance_sampling_level"],
                        "use_bias_correction_kl": c["use_bias_correction_kl"],
                        "mask_truncated_completions": c["mask_truncated_completions"],
                        "top_entropy_quantile": c["top_entropy_quantile"],
                        "off_policy_mask_threshold": c["off_policy_mask_threshold"]}
    if loss not in ("cispo", "sapo", "vespo"):
        raise ValueError(f"unknown TRL loss_type {loss!r}")
    _refuse(c, loss, beta=0.0, delta=None, importance_sampling_level="token", mask_truncated_completions=False,
            top_entropy_quantile=1.0, off_policy_mask_threshold=None)
    run.pop("beta")
    run.pop("clip_eps")
    if loss == "cispo":
        if c["epsilon_high"] < 1:
            raise ValueError(f"TRL's cispo clamps the ratio at epsilon_high itself, not 1 + epsilon_high: "
                             f"epsilon_high={c['epsilon_high']} (unset, it is epsilon) caps every weight below 1; "
                             "ScaleRL recommends 5.0")
        return "cispo", {**run, **adv, "cispo_clip_eps_high": c["epsilon_high"] - 1, "aggregation": "batch-token-mean"}
    if loss == "sapo":
        return "sapo", {**run, **adv, "sapo_tau_pos": c["sapo_temperature_pos"],
                        "sapo_tau_neg": c["sapo_temperature_neg"]}
    return "vespo", {**run, **adv, **{k: c[k] for k in ("vespo_k_pos", "vespo_lambda_pos", "vespo_k_neg",
                                                         "vespo_lambda_neg")}}


@dataclass
class TRLConfig:
    """What reproduces a run of ours in TRL: GRPOConfig keyword arguments, and what they cannot express."""

    config: dict
    differences: list = field(default_factory=list)


def _settings(name, overrides):
    from .presets import get_preset
    from .wiring import configure
    preset, hp = configure(METHODS[name], get_preset("cpu"), overrides)
    return preset.rl, hp


def to_trl(name, **overrides):
    """GRPOConfig kwargs whose `_compute_loss` differentiates the GC of `train(name, **overrides)`, and the
    differences that remain (each a named convention), for the methods TRL's GRPOTrainer has.

    >>> to_trl("grpo").config["loss_type"], to_trl("grpo").config["use_bias_correction_kl"]
    ('grpo', False)
    """
    if name not in ("grpo", "cispo", "sapo", "vespo", "gdpo"):
        raise ValueError(f"no GRPOConfig reproduces `{name}`: TRL's GRPOTrainer covers grpo (and with its options "
                         "dr-grpo, dapo's loss, gspo, luspo), cispo, sapo, vespo and gdpo")
    cfg, hp = _settings(name, overrides)
    out = dict(num_generations=cfg.group_size, per_device_train_batch_size=cfg.prompts_per_step * cfg.group_size,
               num_iterations=cfg.epochs, learning_rate=cfg.lr, temperature=cfg.temperature)
    diffs = [f"A's eps: {hp.adv_eps:g} here, 1e-4 in TRL"] if hp.adv_eps != TRL_ADV_EPS else []
    diffs.append("the sampling budget: here the longest reference answer of the batch + EOS + 4 tokens; TRL's "
                 "max_completion_length is one number")
    if name in ("grpo", "gdpo"):
        out.update(beta=cfg.beta, epsilon=cfg.clip_eps)
    if name == "gdpo":
        out.update(loss_type="grpo", multi_objective_aggregation=hp.multi_objective_aggregation)
        diffs.append("reward_funcs: the rule and DAPO's overlong penalty, two functions")
        return TRLConfig(out, diffs)
    out["scale_rewards"] = hp.scale_rewards
    if name == "grpo":
        loss = {"seq-mean-token-mean": "grpo", "batch-token-mean": "dapo", "constant": "dr_grpo",
                "token-mean": "bnpo"}[hp.aggregation]
        if hp.aggregation == "constant" and hp.max_len == 1 and hp.importance_sampling_level == "sequence":
            loss = "luspo"  # each sequence's term times its length: the token sum, L = 1
        elif hp.aggregation == "constant":
            if hp.max_len != int(hp.max_len) or hp.max_len < 2:
                raise ValueError(f"TRL's dr_grpo divides by max_completion_length, which is also its sampling "
                                 f"budget: L = {hp.max_len} cannot be both")
            out["max_completion_length"] = int(hp.max_len)
            diffs.append(f"max_completion_length={int(hp.max_len)} is also TRL's sampling budget")
        if hp.aggregation == "token-mean":
            out.update(per_device_train_batch_size=cfg.group_size, gradient_accumulation_steps=cfg.prompts_per_step)
        out.update(loss_type=loss, epsilon_high=hp.clip_eps_high, delta=hp.delta,
                   importance_sampling_level=hp.importance_sampling_level,
                   use_bias_correction_kl=hp.use_bias_correction_kl,
                   mask_truncated_completions=hp.mask_truncated_completions,
                   top_entropy_quantile=hp.top_entropy_quantile, off_policy_mask_threshold=hp.off_policy_mask_threshold)
        if hp.top_entropy_quantile < 1:
            diffs.append("top_entropy_quantile ranks the sampler's entropies here, pi_theta's at each update in TRL")
        return TRLConfig(out, diffs)
    out.update(loss_type=name, beta=0.0)
    if name == "cispo":
        out["epsilon_high"] = 1 + hp.cispo_clip_eps_high
        if hp.aggregation != "batch-token-mean":
            diffs.append(f"aggregation: {hp.aggregation} here, batch-token-mean in TRL's cispo")
    elif name == "sapo":
        out.update(sapo_temperature_pos=hp.sapo_tau_pos, sapo_temperature_neg=hp.sapo_tau_neg)
    else:
        out.update({k: getattr(hp, k) for k in ("vespo_k_pos", "vespo_lambda_pos", "vespo_k_neg", "vespo_lambda_neg")})
    return TRLConfig(out, diffs)


VERL_AGG = {"token-mean": ("batch-token-mean", None), "seq-mean-token-mean": ("seq-mean-token-mean", None),
            "seq-mean-token-sum": ("constant", 1.0)}
"""verl's loss_agg_mode -> (aggregation, L); seq-mean-token-sum-norm divides the batch's sum by a constant
without the 1/B (L = loss_scale_factor / B here, which depends on the batch): give it as constant yourself."""
VERL_DEFAULTS = dict(clip_ratio=0.2, clip_ratio_low=None, clip_ratio_high=None, clip_ratio_c=3.0,
                     norm_adv_by_std_in_grpo=True, epsilon=1e-6, use_kl_loss=False, kl_loss_coef=0.001,
                     kl_loss_type="low_var_kl", tau_pos=1.0, tau_neg=1.05, clip_cov_ratio=2e-4, clip_cov_lb=1.0,
                     clip_cov_ub=5.0, kl_cov_ratio=2e-4, ppo_kl_coef=1.0)
"""verl's defaults of the actor and algorithm settings read here (actor.policy_loss.* and algorithm.*)."""
_VERL_PAIRS = {("grpo", "vanilla"): "grpo", ("grpo", "gspo"): "grpo", ("grpo", "sapo"): "sapo",
               ("grpo", "cispo"): "cispo", ("grpo", "geo_mean"): "gmpo", ("grpo", "clip_cov"): "clip-cov",
               ("grpo", "kl_cov"): "kl-cov", ("gpg", "gpg"): "gpg", ("opo", "vanilla"): "opo",
               ("grpo_passk", "vanilla"): "grpo-passk", ("reinforce_plus_plus_baseline", "vanilla"): "reinforce++",
               ("reinforce_plus_plus", "vanilla"): "reinforce++", ("rloo", "vanilla"): "rloo"}


def from_verl(adv_estimator="grpo", loss_mode="vanilla", loss_agg_mode="token-mean", **config):
    """(method name, overrides) of verl's algorithm.adv_estimator, actor.policy_loss.loss_mode and
    actor.loss_agg_mode, with the settings of VERL_DEFAULTS (clip_ratio*, norm_adv_by_std_in_grpo, use_kl_loss, ...).

    verl's vanilla loss has a dual clip (clip_ratio_c, 3 by default): it is GRPO's `delta` here; opo, rloo,
    grpo-passk and reinforce++ have none, so they differ from verl where an A < 0 token's ratio passes it.

    >>> from_verl("grpo", "geo_mean")[0], from_verl("gpg", "gpg")[1]["gpg_count"]
    ('gmpo', 'nonzero-reward')
    """
    unknown = sorted(set(config) - set(VERL_DEFAULTS))
    if unknown:
        raise ValueError(f"from_verl does not read {unknown} (it reads {sorted(VERL_DEFAULTS)})")
    if (adv_estimator, loss_mode) not in _VERL_PAIRS:
        raise ValueError(f"no method here pairs verl's adv_estimator={adv_estimator!r} with loss_mode={loss_mode!r}; "
                         f"the pairs: {sorted(_VERL_PAIRS)}")
    if loss_agg_mode not in VERL_AGG:
        raise ValueError(f"loss_agg_mode={loss_agg_mode!r} has no fixed counterpart here; choose one of {sorted(VERL_AGG)}")
    c = {**VERL_DEFAULTS, **config}
    low = c["clip_ratio"] if c["clip_ratio_low"] is None else c["clip_ratio_low"]
    high = c["clip_ratio"] if c["clip_ratio_high"] is None else c["clip_ratio_high"]
    name = _VERL_PAIRS[adv_estimator, loss_mode]
    agg, L = VERL_AGG[loss_agg_mode]
    aggregation = dict(aggregation=agg, **({"max_len": L} if L is not None else {}))
    adv = dict(scale_rewards="group" if c["norm_adv_by_std_in_grpo"] else "none", adv_eps=c["epsilon"])
    if c["use_kl_loss"] and (c["kl_loss_type"] not in ("low_var_kl", "k3") or name not in ("grpo", "reinforce++")):
        raise ValueError("use_kl_loss maps to GRPO's k3 penalty (kl_loss_type low_var_kl) for grpo and reinforce++ only")
    beta = c["kl_loss_coef"] if c["use_kl_loss"] else 0.0
    if name == "grpo":
        sequence = loss_mode == "gspo"  # verl's gspo: the sequence ratio, seq-mean-token-mean, no dual clip
        return "grpo", {**adv, "clip_eps": low, "clip_eps_high": high, "beta": beta,
                        "delta": None if sequence else c["clip_ratio_c"],
                        "importance_sampling_level": "sequence" if sequence else "token",
                        **(dict(aggregation="seq-mean-token-mean") if sequence else aggregation)}
    if name == "sapo":
        return "sapo", {**adv, "sapo_tau_pos": c["tau_pos"], "sapo_tau_neg": c["tau_neg"]}  # verl forces seq-mean
    if name == "cispo":
        return "cispo", {**adv, "cispo_clip_eps": low, "cispo_clip_eps_high": high, **aggregation}
    if name == "gmpo":
        return "gmpo", {**adv, "gmpo_clip_eps": low, "gmpo_clip_eps_high": high}  # verl: a mean over sequences
    if name == "clip-cov":
        if low != high:
            raise ValueError("clip-cov's clip here is RLConfig.clip_eps, symmetric")
        return "clip-cov", {**adv, "clip_eps": low, "clip_cov_ratio": c["clip_cov_ratio"],
                            "clip_cov_lb": c["clip_cov_lb"], "clip_cov_ub": c["clip_cov_ub"], **aggregation}
    if name == "kl-cov":
        return "kl-cov", {**adv, "kl_cov_ratio": c["kl_cov_ratio"], "kl_cov_coef": c["ppo_kl_coef"], **aggregation}
    if name == "gpg":
        return "gpg", {"gpg_count": "nonzero-reward", **aggregation}
    if name == "grpo-passk":
        return "grpo-passk", {"passk_std": c["norm_adv_by_std_in_grpo"], "adv_eps": c["epsilon"], "clip_eps": low,
                              "beta": 0.0, **aggregation}
    if low != high:
        raise ValueError(f"`{name}`'s clip here is RLConfig.clip_eps, symmetric")
    if name == "reinforce++":
        baseline = "group" if adv_estimator == "reinforce_plus_plus_baseline" else "none"
        return "reinforce++", {"reinforce_baseline": baseline, "kl_in": "loss", "beta": beta, "clip_eps": low,
                               **aggregation}
    return name, {"clip_eps": low, **aggregation}  # opo, rloo
