"""What a TRL or verl config means here: the method (or composition of parts) and settings with the same GC.

    from_trl(loss_type="dapo", epsilon_high=0.28)  -> ("grpo", {"aggregation": "token-mean", ...})
    to_trl("grpo", scale_rewards="none")           -> TRLConfig(config={...GRPOConfig kwargs}, differences=[...])
    from_verl("grpo", "geo_mean")                  -> ("gmpo", {...})
    from_verl("rloo", "cispo", "token-mean")       -> (Method rloo+cispo, {...}): no row is that product

`from_trl` reads TRL 1.16's GRPOConfig fields and returns (METHODS name, train() overrides). `from_verl` reads
verl's algorithm.adv_estimator, actor.policy_loss.loss_mode and actor.loss_agg_mode: verl's names are the parts'
names (parts/), so every product whose parts exist composes; it returns (method, overrides), the method a METHODS
name where a registered row is that composition, else the composed `paradigm.Method` (`parts.compose`). Either
way `train(*from_verl(...))` trains with verl's coefficient (train takes a name or a Method). A config whose part
does not exist is a ValueError naming it and the registry's parts; a setting that changes nothing in the GC
(logging, ...) is not read. tests/test_trl_losses.py checks from_trl against TRL's own code,
tests/test_verl_losses.py from_verl against verl's formulas (core_algos.py at commit b178a3cd; dro and DPPO, added
since, at 1dda039b). `to_trl` goes the other way, for a run of ours, and lists what remains different.
"""

from dataclasses import dataclass, field, fields

from .data import GreedyBaselinePairs, PolicySamples
from .methods import METHODS
from .parts import ADVANTAGES, AGGREGATIONS, KL_TERMS, POLICY_TERMS, compose

TRL_ADV_EPS = 1e-4  # TRL divides by (std + 1e-4), a constant of its code
TRL_DEFAULTS = dict(loss_type="dapo", beta=0.0, epsilon=0.2, epsilon_high=None, delta=None, scale_rewards="group",
                    importance_sampling_level="token", max_completion_length=256, mask_truncated_completions=False,
                    top_entropy_quantile=1.0, off_policy_mask_threshold=None, use_bias_correction_kl=True,
                    multi_objective_aggregation="sum_then_normalize", sapo_temperature_pos=1.0,
                    sapo_temperature_neg=1.05, vespo_k_pos=2.0, vespo_lambda_pos=3.0, vespo_k_neg=3.0,
                    vespo_lambda_neg=2.0, num_generations=8, per_device_train_batch_size=8,
                    gradient_accumulation_steps=1, steps_per_generation=None, num_iterations=1, learning_rate=1e-6,
                    temperature=1.0, n_rewards=1)
"""TRL 1.16's GRPOConfig defaults of every field read here (n_rewards: how many reward_funcs; steps_per_generation
None is gradient_accumulation_steps, as in TRL)."""

# the loss types that are GRPO's clipped ratio with one aggregation (TRL's _compute_loss: coef_2 = clamp(...));
# dapo normalises by the whole batch's tokens (verl's token-mean), bnpo by each micro-batch's (_bnpo)
_CLIPPED = {"grpo": "seq-mean-token-mean", "dapo": "token-mean", "dr_grpo": "seq-mean-token-sum-norm", "luspo": "seq-mean-token-sum",
            "bnpo": None}
_RUN = {"learning_rate": "lr", "num_generations": "group_size", "num_iterations": "epochs", "temperature": "temperature"}
_OPTIONS = dict(delta=None, mask_truncated_completions=False, top_entropy_quantile=1.0, off_policy_mask_threshold=None)


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
    """bnpo normalises by the tokens of each micro-batch. One micro-batch: the batch's (token-mean). Several: TRL
    generates steps_per_generation micro-batches at once, shuffles their rows (shuffle_sequence_dict) and splits
    them (split_tensor_dict), so a micro-batch is a random set of rows, which no aggregation here reproduces; only
    a generation per micro-batch of one group each is a group's token mean (group-token-mean)."""
    if c["gradient_accumulation_steps"] == 1:
        return "token-mean"
    per_generation = c["steps_per_generation"] or c["gradient_accumulation_steps"]
    if per_generation == 1 and c["per_device_train_batch_size"] == c["num_generations"]:
        return "group-token-mean"
    raise ValueError("loss_type='bnpo' with gradient_accumulation_steps > 1 normalises each micro-batch by its own "
                     "tokens, and TRL shuffles the rows of the steps_per_generation micro-batches it generates at once "
                     "before it splits them, so a micro-batch is a random set of rows: no aggregation here is that; "
                     "use one micro-batch (token-mean), loss_type='dapo', or steps_per_generation=1 with "
                     "per_device_train_batch_size = num_generations (one group a micro-batch: group-token-mean)")


def from_trl(**config):
    """(method name, overrides) of TRL 1.16 GRPOConfig fields (the others are TRL's defaults, TRL_DEFAULTS).

    >>> from_trl(loss_type="dr_grpo", scale_rewards=False, max_completion_length=64)[1]["aggregation"]
    'seq-mean-token-sum-norm'
    """
    c = _trl(config)
    run = {ours: c[theirs] for theirs, ours in _RUN.items() if theirs in config}
    run.update(beta=c["beta"], clip_eps=c["epsilon"])
    loss = c["loss_type"]
    if c["n_rewards"] > 1 or c["multi_objective_aggregation"] != "sum_then_normalize":
        if c["n_rewards"] != 2 or loss != "grpo":
            raise ValueError("several rewards map to `gdpo`: its two columns (the rule, the overlong penalty), "
                             "with loss_type='grpo'")
        _refuse(c, "gdpo", epsilon_high=c["epsilon"], importance_sampling_level="token", scale_rewards="group",
                **_OPTIONS)
        if c["beta"] > 0 and c["use_bias_correction_kl"]:
            raise ValueError("`gdpo` here has GRPO's k3 penalty: set use_bias_correction_kl=False (or beta=0)")
        return "gdpo", {**run, "multi_objective_aggregation": c["multi_objective_aggregation"], "adv_eps": TRL_ADV_EPS}
    adv = dict(scale_rewards=c["scale_rewards"], adv_eps=TRL_ADV_EPS)
    if loss == "luspo" and c["importance_sampling_level"] != "sequence":
        raise ValueError("TRL's loss_type='luspo' requires importance_sampling_level='sequence'")
    if loss == "luspo" and c["beta"] == 0 and all(c[k] == v for k, v in _OPTIONS.items()):
        run = {k: v for k, v in run.items() if k not in ("beta", "clip_eps")}  # the luspo row: grpo x gspo, no KL
        return "luspo", {**run, **adv, "gspo_clip_eps": c["epsilon"], "gspo_clip_eps_high": c["epsilon_high"],
                         "aggregation": "seq-mean-token-sum"}
    if loss in _CLIPPED:  # (luspo with beta or TRL's options: the same clipped sequence ratio as grpo's)
        agg = _bnpo(c) if loss == "bnpo" else _CLIPPED[loss]
        return "grpo", {**run, **adv, "aggregation": agg,
                        **({"max_len": float(c["max_completion_length"])} if loss == "dr_grpo" else {}),
                        "clip_eps_high": c["epsilon_high"], "importance_sampling_level": c["importance_sampling_level"],
                        "use_bias_correction_kl": c["use_bias_correction_kl"], **{k: c[k] for k in _OPTIONS}}
    if loss not in ("cispo", "sapo", "vespo"):
        raise ValueError(f"unknown TRL loss_type {loss!r}")
    _refuse(c, loss, beta=0.0, importance_sampling_level="token", **_OPTIONS)
    run.pop("beta")
    run.pop("clip_eps")
    if loss == "cispo":
        if c["epsilon_high"] < 1:
            raise ValueError(f"TRL's cispo clamps the ratio at epsilon_high itself, not 1 + epsilon_high: "
                             f"epsilon_high={c['epsilon_high']} (unset, it is epsilon) caps every weight below 1; "
                             "ScaleRL recommends 5.0")
        return "cispo", {**run, **adv, "cispo_clip_eps_high": c["epsilon_high"] - 1, "aggregation": "token-mean"}
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


_TRL_LOSS = {"seq-mean-token-mean": "grpo", "token-mean": "dapo", "seq-mean-token-sum-norm": "dr_grpo", "group-token-mean": "bnpo",
             "seq-mean-token-sum": "luspo"}
"""Our aggregation -> TRL's clipped loss_type with that normaliser (bnpo: one group per micro-batch)."""


def to_trl(name, **overrides):
    """GRPOConfig kwargs whose `_compute_loss` differentiates the GC of `train(name, **overrides)`, and the
    differences that remain (each a named convention), for the methods TRL's GRPOTrainer has.

    >>> to_trl("grpo").config["loss_type"], to_trl("grpo").config["use_bias_correction_kl"]
    ('grpo', False)
    """
    if name not in ("grpo", "luspo", "cispo", "sapo", "vespo", "gdpo"):
        raise ValueError(f"no GRPOConfig reproduces `{name}`: TRL's GRPOTrainer covers grpo (and with its options "
                         "dr-grpo, dapo's loss, gspo), luspo, cispo, sapo, vespo and gdpo")
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
    if name == "luspo":
        out.update(loss_type="luspo", importance_sampling_level="sequence", beta=0.0, epsilon=hp.gspo_clip_eps,
                   epsilon_high=hp.gspo_clip_eps_high)
        if hp.aggregation != "seq-mean-token-sum":
            diffs.append(f"aggregation: {hp.aggregation} here, seq-mean-token-sum in TRL's luspo")
        return TRLConfig(out, diffs)
    if name == "grpo":
        if hp.aggregation not in _TRL_LOSS:
            raise ValueError(f"no TRL loss_type normalises as aggregation={hp.aggregation!r}; TRL's: "
                             f"{', '.join(f'{a} ({t})' for a, t in _TRL_LOSS.items())}")
        loss = _TRL_LOSS[hp.aggregation]
        if loss == "luspo" and hp.importance_sampling_level != "sequence":
            raise ValueError("TRL's token-sum loss (luspo) requires importance_sampling_level='sequence'")
        if loss == "dr_grpo":
            if hp.max_len != int(hp.max_len) or hp.max_len < 2:
                raise ValueError(f"TRL's dr_grpo divides by max_completion_length, which is also its sampling "
                                 f"budget: L = {hp.max_len} cannot be both")
            out["max_completion_length"] = int(hp.max_len)
            diffs.append(f"max_completion_length={int(hp.max_len)} is also TRL's sampling budget")
        if loss == "bnpo":
            out.update(per_device_train_batch_size=cfg.group_size, gradient_accumulation_steps=cfg.prompts_per_step,
                       steps_per_generation=1)  # a group a micro-batch, each generated apart: no shuffle mixes them
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
        if hp.aggregation != "token-mean":
            diffs.append(f"aggregation: {hp.aggregation} here, token-mean (the batch's) in TRL's cispo")
    elif name == "sapo":
        out.update(sapo_temperature_pos=hp.sapo_tau_pos, sapo_temperature_neg=hp.sapo_tau_neg)
    else:
        out.update({k: getattr(hp, k) for k in ("vespo_k_pos", "vespo_lambda_pos", "vespo_k_neg", "vespo_lambda_neg")})
    return TRLConfig(out, diffs)


# ---------------------------------------------------------------- verl

VERL_DEFAULTS = dict(clip_ratio=0.2, clip_ratio_low=0.2, clip_ratio_high=0.2, clip_ratio_c=3.0, tau_pos=1.0,
                     tau_neg=1.05, clip_cov_ratio=2e-4, clip_cov_lb=1.0, clip_cov_ub=5.0, kl_cov_ratio=2e-4,
                     ppo_kl_coef=0.1, loss_scale_factor=None, use_kl_loss=False, kl_loss_coef=0.001,
                     kl_loss_type="low_var_kl", norm_adv_by_std_in_grpo=True, epsilon=1e-6, gamma=1.0, lam=1.0,
                     use_kl_in_reward=False, kl_penalty="kl", kl_ctrl_type="fixed", kl_coef=0.001)
"""verl's defaults (its ActorConfig and AlgoConfig) of the settings read here: actor.* (clip_ratio_low/high are
0.2 themselves, so clip_ratio counts only where they are None, as in verl), actor.policy_loss.* (clip_cov_*,
kl_cov_ratio, ppo_kl_coef), algorithm.* (norm_adv_by_std_in_grpo, gamma, lam, use_kl_in_reward, kl_penalty) and
algorithm.kl_ctrl.type / kl_coef as kl_ctrl_type / kl_coef. epsilon is compute_grpo_outcome_advantage's."""
VERL_ALIASES = {"reinforce_plus_plus_baseline": "reinforce_plus_plus"}
"""verl's estimators that are a part with a setting: reinforce_plus_plus_baseline is reinforce_baseline='group'."""
SEQ_MEAN_LOSSES = ("gspo", "sapo", "geo_mean")  # verl aggregates these by seq-mean-token-mean, whatever loss_agg_mode
_DIFFERS = {}
"""verl's names whose part here computes something else (none today)."""


def verl_names(registry):
    """{verl's name: part name} of the parts of `registry` that ship in verl (their names and aliases), less those
    whose arithmetic is not verl's (_DIFFERS); a part registered later with ships_in 'verl' maps without an edit."""
    names = {n: p.name for p in registry.values() if "verl" in p.ships_in for n in (p.name, *p.aliases)}
    if registry is ADVANTAGES:
        names.update(VERL_ALIASES)
    return {k: v for k, v in names.items() if k not in _DIFFERS}


def _part(registry, key, name):
    if name in _DIFFERS:
        raise ValueError(f"{key}={name!r}: {_DIFFERS[name]}, so no {registry.axis} part here is verl's {name}")
    known = verl_names(registry)
    if name not in known:
        raise ValueError(f"{key}={name!r}: no {registry.axis} part here computes verl's {name!r} (verl's names that "
                         f"map: {', '.join(known)}; the {registry.axis} parts: {', '.join(sorted(registry))})")
    return known[name]


def _kl(c):
    """(KL part, where, beta) of verl's use_kl_loss / use_kl_in_reward."""
    if c["use_kl_loss"] and c["use_kl_in_reward"]:
        raise ValueError("use_kl_loss and use_kl_in_reward together are two KL terms; a composition has one")
    if not (c["use_kl_loss"] or c["use_kl_in_reward"]):
        return None, "loss", 0.0
    key, where, beta = ("kl_loss_type", "loss", c["kl_loss_coef"]) if c["use_kl_loss"] else \
        ("kl_penalty", "reward", c["kl_coef"])
    if where == "reward" and c["kl_ctrl_type"] != "fixed":
        raise ValueError(f"kl_ctrl_type={c['kl_ctrl_type']!r}: beta here is fixed (verl's kl_ctrl.type='fixed')")
    return _part(KL_TERMS, key, c[key]), where, beta


def _policy_settings(policy, c, low, high):
    """(RLConfig overrides, the policy part's settings) of verl's actor config."""
    if policy == "vanilla":
        if c["clip_ratio_c"] < 1 + high:  # verl's dual clip acts on A < 0 only, the part's delta on both signs
            raise ValueError(f"clip_ratio_c={c['clip_ratio_c']} < 1 + clip_ratio_high: the vanilla part's delta "
                             "equals verl's dual clip only from 1 + clip_ratio_high up")
        return {"clip_eps": low}, {"clip_eps_high": high, "delta": c["clip_ratio_c"]}
    if policy == "clip_cov":
        if low != high:
            raise ValueError("the clip_cov part's clip is RLConfig.clip_eps, symmetric: clip_ratio_low != "
                             "clip_ratio_high")
        return {"clip_eps": low}, {k: c[k] for k in ("clip_cov_ratio", "clip_cov_lb", "clip_cov_ub")}
    return {}, {"gspo": {"gspo_clip_eps": low, "gspo_clip_eps_high": high},
                "sapo": {"sapo_tau_pos": c["tau_pos"], "sapo_tau_neg": c["tau_neg"]},
                "cispo": {"cispo_clip_eps": low, "cispo_clip_eps_high": high},
                "geo_mean": {"gmpo_clip_eps": low, "gmpo_clip_eps_high": high},
                "kl_cov": {"kl_cov_ratio": c["kl_cov_ratio"], "kl_cov_coef": c["ppo_kl_coef"]},
                # DPPO: verl's clip_ratio_low/high are the divergence bounds, clip_ratio_c the ratio's cap
                **{p: {f"{p}_delta_low": low, f"{p}_delta_high": high, f"{p}_ratio_cap": c["clip_ratio_c"]}
                   for p in ("dppo_tv", "dppo_kl")}}.get(policy, {})


def _advantage_settings(adv, est, c, kl_where):
    if adv == "gae":  # verl whitens GAE's advantages over the batch's tokens (masked_whiten)
        return {"gae_whiten": True}
    if adv == "reinforce_plus_plus":
        if est == "reinforce_plus_plus" and c["gamma"] != 1:
            raise ValueError(f"gamma={c['gamma']}: the reinforce_plus_plus part's returns are undiscounted (gamma 1)")
        baseline = est.endswith("baseline")  # verl's _baseline estimator sums each response's token rewards
        return {"reinforce_baseline": "group" if baseline else "none",
                **({"reinforce_kl_span": "response"} if baseline and kl_where == "reward" else {})}
    return {"grpo": {"scale_rewards": "group" if c["norm_adv_by_std_in_grpo"] else "none", "adv_eps": c["epsilon"]},
            "grpo_passk": {"passk_std": bool(c["norm_adv_by_std_in_grpo"]), "adv_eps": c["epsilon"]},
            "gpg": {"gpg_count": "nonzero-reward"}}.get(adv, {})


def _named(made, settings):
    """(METHODS name, extra overrides) of a registered row that is `made` under `settings`, or None."""
    comp, hp = made.composition, made.hparams
    for m in METHODS.values():
        c = m.composition
        if not hasattr(c, "advantage") or (c.advantage, c.policy) != (comp.advantage, comp.policy) or m.defaults or \
                m.data_source is not made.data_source or type(m.reward) is not type(made.reward):
            continue
        if comp.kl is not None and (c.kl, c.kl_in) != (comp.kl, comp.kl_in):
            continue
        part_defaults = {f.name: f.default for p in c.parts.values() for f in p.fields()}
        same = all(getattr(m.hparams, f.name, None) == getattr(hp, f.name) for f in fields(hp)
                   if f.name not in settings)
        if same and all(getattr(m.hparams, k) == v for k, v in part_defaults.items() if not hasattr(hp, k)):
            return m.name, ({"beta": 0.0} if comp.kl is None and c.kl is not None else {})
    return None


def from_verl(adv_estimator="grpo", loss_mode="vanilla", loss_agg_mode="token-mean", **config):
    """(method, overrides) of verl's algorithm.adv_estimator, actor.policy_loss.loss_mode and actor.loss_agg_mode,
    with verl's settings (VERL_DEFAULTS): method is a METHODS name where a registered row is this composition,
    else a `paradigm.Method` composed of the parts; `train(*from_verl(...))` trains either.

    verl's vanilla loss has a dual clip (clip_ratio_c, 3 by default): the vanilla part's `delta`. A part's own
    setting (dro_beta) is read under its name; left out, it is the part's default (verl requires dro_beta).

    >>> from_verl("grpo", "geo_mean")[0], from_verl("gpg", "gpg")[1]["gpg_count"]
    ('gmpo', 'nonzero-reward')
    >>> from_verl("rloo", "cispo", "token-mean")[0].name
    'rloo+cispo'
    """
    c = {**VERL_DEFAULTS, **config}
    adv = _part(ADVANTAGES, "adv_estimator", adv_estimator)
    policy = _part(POLICY_TERMS, "loss_mode", loss_mode)
    agg = _part(AGGREGATIONS, "loss_agg_mode", loss_agg_mode)
    kl, kl_in, beta = _kl(c)
    if policy in SEQ_MEAN_LOSSES:
        if kl is not None and kl_in == "loss" and agg != "seq-mean-token-mean":
            raise ValueError(f"verl aggregates {loss_mode}'s loss by seq-mean-token-mean and its KL loss by "
                             f"{loss_agg_mode}: a composition has one aggregation")
        agg = "seq-mean-token-mean"
    low = c["clip_ratio"] if c["clip_ratio_low"] is None else c["clip_ratio_low"]
    high = c["clip_ratio"] if c["clip_ratio_high"] is None else c["clip_ratio_high"]
    section, settings = _policy_settings(policy, c, low, high)
    settings = {**_advantage_settings(adv, adv_estimator, c, kl_in if kl else None), **settings, "aggregation": agg}
    # a part's own setting, named as verl names it in the config (dro's policy_loss.dro_beta), is read as it is
    own = {f.name for r, n in ((ADVANTAGES, adv), (POLICY_TERMS, policy)) for f in r[n].fields()} - set(settings)
    unknown = sorted(set(config) - set(VERL_DEFAULTS) - own)
    if unknown:
        raise ValueError(f"from_verl does not read {unknown} (it reads {sorted(VERL_DEFAULTS)} and the chosen parts' "
                         f"own settings {sorted(own)})")
    settings.update({k: v for k, v in config.items() if k in own})
    L = c["loss_scale_factor"]
    if agg == "seq-mean-token-sum-norm" and L is not None:
        settings["max_len"] = float(L)
    if kl is not None:
        section["beta"] = beta
    if adv == "gae":  # GAE's discount and lambda are the run's (RLConfig), as verl's algorithm.gamma and lam
        section.update(gamma=c["gamma"], lam=c["lam"])
    name = "+".join(p for p in (adv, policy, kl) if p) + ("-in-reward" if kl_in == "reward" else "")
    made = compose(adv, policy, kl, agg, kl_in=kl_in, name=name, defaults=section,
                   data_source=GreedyBaselinePairs if "rows" in ADVANTAGES[adv].extra else PolicySamples,
                   paper=f"verl adv_estimator={adv_estimator}, loss_mode={loss_mode}, loss_agg_mode={loss_agg_mode}",
                   ships_in=("verl",),
                   **{k: v for k, v in settings.items() if k != "aggregation"})
    named = _named(made, settings)
    if named is not None:
        return named[0], {**section, **named[1], **settings}
    return made, {**section, **settings}
