"""The methods as rows of a table: each a composition of parts with its data source, reward and defaults.

`compose(...)` turns one choice per axis (parts/) into a `paradigm.Method`: usable wherever a METHODS entry is
(train, the CLI, the model oracle, the reference step, a distributed run). Each row below is one call of it; a
method is its row, and nothing else in the package knows its name.

| method       | advantage           | policy    | KL (where) | aggregation         | data source         | ships in        |
|--------------|---------------------|-----------|------------|---------------------|---------------------|-----------------|
| sft          | one                 | reinforce | -          | seq-mean-token-mean | FixedDataset        | paper           |
| rft          | indicator           | reinforce | -          | seq-mean-token-mean | FrozenPolicySamples | paper           |
| online-rft   | indicator           | reinforce | -          | seq-mean-token-mean | PolicySamples       | paper           |
| ppo          | gae                 | vanilla   | k1 reward  | seq-mean-token-mean | PolicySamples       | paper, verl     |
| grpo         | grpo                | vanilla   | k3 loss    | seq-mean-token-mean | PolicySamples       | paper, TRL, verl|
| grpo-process | process             | vanilla   | k3 loss    | seq-mean-token-mean | PolicySamples       | paper           |
| dr-grpo      | grpo (no std)       | vanilla   | k3 loss    | constant            | PolicySamples       | TRL, verl       |
| dapo         | grpo                | vanilla (clip-higher) | - | group-token-mean | DynamicSampling  | TRL, verl       |
| ...          | (the rows below)    |           |            |                     |                     |                 |
"""

import re
from dataclasses import dataclass, field, replace

from ..data import DynamicSampling, FixedDataset, FrozenPolicySamples, GreedyBaselinePairs, OnOrOffPolicy, PolicySamples
from ..paradigm import Method
from ..parts import ADVANTAGES, Composition, settings_class
from ..parts.composition import settings_fields
from ..rewards import OverlongPenalty, OverlongReward, RewardColumns, RuleReward
from .hooks import Critic, gae_hook, process_advantage

rule = RuleReward()
READ = "what the advantage reads"  # a data source or reward left to compose (None is SFT's: no reward at all)


def _class_name(name):
    """GRPO's settings class is GrpoConfig; a recomposed one's, e.g. GrpoAdvantageRlooConfig."""
    return "".join(w.capitalize() for w in re.split(r"[^A-Za-z0-9]+", name.replace("++", "PlusPlus")) if w) + "Config"


def compose(advantage, policy, kl=None, aggregation="seq-mean-token-mean", *, kl_in="loss", masks=(), terms=(), name=None,
            data_source=READ, reward=READ, defaults=None, paper="", summary="", ships_in=(), uses_ref=None,
            section="rl", init="sft", **settings):
    """A Method of the given parts: `settings` are the parts' settings' defaults (e.g. clip_eps_high=0.28),
    `defaults` the preset section's fields it changes (lr, steps, clip_eps, ...). The data source and reward, unless
    given, are what the advantage reads: the policy's samples scored by the rule, ReMax's (sampled, greedy) pairs,
    GDPO's reward columns (the rule's and the overlong penalty's)."""
    comp = Composition(advantage, policy, kl, kl_in, tuple(masks), terms=tuple(terms))
    name = name or "+".join(p for p in (comp.advantage, comp.policy, comp.kl, *comp.terms) if p)
    hp = settings_class(_class_name(name), comp, {"aggregation": aggregation, **settings})()
    comp = Composition(comp.advantage, comp.policy, comp.kl, comp.kl_in, comp.masks, settings=hp, terms=comp.terms)
    adv = ADVANTAGES[comp.advantage].extra
    if data_source is READ:
        data_source = GreedyBaselinePairs if adv.get("data") == "greedy-pairs" else PolicySamples
    if reward is READ:
        reward = RewardColumns(RuleReward(), OverlongPenalty()) if adv.get("reward_columns") else rule
    hook = {"gae": gae_hook(comp.kl if comp.kl_in == "reward" else None), "process": process_advantage,
            None: None}[adv.get("per_batch")]
    if adv.get("per_batch") == "gae" and comp.kl is not None and comp.kl_in == "loss":
        raise ValueError("gae takes its KL in the reward (DeepSeekMath eq 2): compose it with kl_in='reward'")
    return Method(name, data_source, reward, comp.coefficient, objective=comp.objective, advantage=hook,
                  extra_loss=Critic if adv.get("needs_critic") else None, section=section,
                  uses_ref=comp.kl is not None if uses_ref is None else uses_ref, init=init,
                  off_policy=bool(comp.parts["policy"].extra.get("reads_old")), hparams=hp, defaults=dict(defaults or {}),
                  paper=paper, summary=summary, composition=comp, ships_in=tuple(ships_in))


AXES = ("advantage", "policy", "kl", "kl_in", "aggregation", "masks", "terms")


def recompose(name=None, **axes):
    """A Method from a row (`name`) with some of its parts replaced (`axes`: advantage, policy, kl, kl_in,
    aggregation, masks), or, without a name, from the parts alone. `recompose("grpo", advantage="rloo")` is GRPO
    with RLOO's baseline: its settings are its parts' (the row's where the parts keep them)."""
    axes = {k: tuple(v) if k in ("masks", "terms") else v for k, v in axes.items() if v is not None}
    unknown = sorted(set(axes) - set(AXES))
    if unknown:
        raise ValueError(f"{unknown} are no axes of a composition; the axes: {', '.join(AXES)}")
    if name is None:
        if "advantage" not in axes or "policy" not in axes:
            raise ValueError("a composition needs at least an advantage and a policy term (or a method to start from)")
        return compose(**axes)
    rows = {r.name: r for r in ROWS}
    if name not in rows:
        raise ValueError(f"{name!r} is not a composition of the policy-gradient parts (the preference family has "
                         f"axes of its own: parts.compose_pairs); the compositions: {', '.join(rows)}")
    if not axes:
        return rows[name].method()
    row = rows[name]
    if axes.get("kl") in ("none", "None"):  # no KL term
        axes.update(kl=None, kl_in="loss")
    changed = ",".join(f"{k}={'+'.join(v) if k in ('masks', 'terms') else v}" for k, v in axes.items())
    new = replace(row, name=f"{name}({changed})", **axes)
    keep = {k: v for k, v in row.settings.items()
            if k in {n for n, _, _ in settings_fields(Composition(new.advantage, new.policy, new.kl, new.kl_in,
                                                                  tuple(new.masks), terms=tuple(new.terms)))}}
    return replace(new, settings=keep, uses_ref=None if row.uses_ref is None or "kl" in axes else row.uses_ref).method()


@dataclass(frozen=True)
class Row:
    """One named composition: its parts, what it reads and is read from, and where it comes from."""

    name: str
    advantage: str
    policy: str
    kl: str = None
    kl_in: str = "loss"
    aggregation: str = "seq-mean-token-mean"
    masks: tuple = ()
    terms: tuple = ()  # regularisers beside the policy term (parts.TERMS)
    data_source: object = READ  # what the advantage reads, unless the row names one
    reward: object = READ  # the same; None: no reward (SFT's data is human-selected)
    settings: dict = field(default_factory=dict)  # the parts' settings this method sets otherwise
    defaults: dict = field(default_factory=dict)  # the preset section's fields it changes
    uses_ref: bool = None  # None: it uses pi_ref iff it has a KL term
    section: str = "rl"
    init: str = "sft"
    paper: str = ""
    summary: str = ""
    ships_in: tuple = ()

    def method(self):
        return compose(self.advantage, self.policy, self.kl, self.aggregation, kl_in=self.kl_in, masks=self.masks,
                       terms=self.terms,
                       name=self.name, data_source=self.data_source, reward=self.reward, defaults=self.defaults,
                       paper=self.paper, summary=self.summary, ships_in=self.ships_in, uses_ref=self.uses_ref,
                       section=self.section, init=self.init, **self.settings)


_DSM = "DeepSeekMath {}, arXiv 2402.03300"
GRPO_MASKS = ("truncated", "entropy", "off-policy-sequence")

ROWS = (
    Row("sft", "one", "reinforce", data_source=FixedDataset, reward=None, uses_ref=False, section="sft",
        init="scratch", paper=_DSM.format("eq 6-7"), summary="imitate human-written solutions", ships_in=("paper",)),
    Row("rft", "indicator", "reinforce", data_source=FrozenPolicySamples, uses_ref=True,  # pi_ref's KL is logged
        paper=_DSM.format("eq 8-10"), summary="imitate the SFT model's correct samples", ships_in=("paper",)),
    Row("online-rft", "indicator", "reinforce", uses_ref=True, paper=_DSM.format("eq 11"),
        summary="imitate the policy's own correct samples", ships_in=("paper",)),
    Row("ppo", "gae", "vanilla", kl="k1", kl_in="reward",
        paper=_DSM.format("eq 15-18 (eq 2's KL reward)") + "; GAE: arXiv 1506.02438",
        summary="policy gradient with GAE advantages from a learned value model", ships_in=("paper", "verl")),
    Row("grpo", "grpo", "vanilla", kl="k3", masks=GRPO_MASKS, paper=_DSM.format("eq 19-21"),
        summary="policy gradient with group-relative advantages and a k3 KL penalty", ships_in=("paper", "TRL", "verl")),
    Row("grpo-process", "process", "vanilla", kl="k3", paper=_DSM.format("§4.1.3 with eq 19-21"),
        summary="GRPO with per-step (process) rewards", ships_in=("paper",)),
    Row("dr-grpo", "grpo", "vanilla", kl="k3", aggregation="seq-mean-token-sum-norm", settings={"scale_rewards": "none"},
        paper="Dr. GRPO, Liu et al., arXiv 2503.20783 (Figure 1)",
        summary="GRPO without the std and the 1/|o| (a constant normaliser)", ships_in=("TRL", "verl")),
    Row("dapo", "grpo", "vanilla", aggregation="group-token-mean", data_source=DynamicSampling,
        reward=OverlongReward(), settings={"clip_eps_high": 0.28}, paper="DAPO, Yu et al., arXiv 2503.14476 (§3)",
        summary="clip-higher, dynamic sampling, a token mean per question, overlong shaping; no KL", ships_in=("TRL", "verl")),
    Row("gspo", "grpo", "gspo", paper="GSPO, Zheng et al., arXiv 2507.18071",
        summary="one importance ratio per sequence, clipped at the sequence level; no KL", ships_in=("TRL", "verl")),
    Row("cispo", "grpo", "cispo", aggregation="group-token-mean", paper="CISPO, MiniMax-M1, arXiv 2506.13585 (§3.1)",
        summary="a clipped stop-gradient ratio weighs every token, none dropped; no KL", ships_in=("TRL", "verl")),
    Row("rloo", "rloo", "vanilla", aggregation="seq-mean-token-sum", paper="RLOO, Ahmadian et al., arXiv 2402.14740",
        summary="REINFORCE with the leave-one-out baseline: k/(k-1) (r - mean), no std; no KL", ships_in=("TRL", "verl")),
    Row("reinforce++", "reinforce_plus_plus", "vanilla", kl="k1", kl_in="reward",
        paper="REINFORCE++, Hu et al., arXiv 2501.03262",
        summary="returns with the k1 KL in them, normalised over the whole batch", ships_in=("verl",)),
    Row("remax", "remax", "vanilla", aggregation="seq-mean-token-sum", data_source=GreedyBaselinePairs,
        paper="ReMax, Li et al., arXiv 2310.10505",
        summary="REINFORCE with the greedy answer's reward as the baseline; no KL", ships_in=("verl",)),
    Row("sapo", "grpo", "sapo", paper="SAPO, Gao et al., arXiv 2511.20347",
        summary="a smooth sigmoid gate of the ratio instead of the hard clip; no KL", ships_in=("TRL", "verl")),
    Row("vespo", "grpo", "vespo", aggregation="token-mean", paper="VESPO, arXiv 2602.10693",
        summary="a stop-gradient Gamma weight of the sequence's ratio on A log pi; no KL", ships_in=("TRL",)),
    Row("luspo", "grpo", "gspo", aggregation="seq-mean-token-sum", paper="LUSPO, arXiv 2602.05261",
        summary="GSPO's clipped sequence ratio with each sequence's term times its length; no KL", ships_in=("TRL",)),
    Row("gmpo", "grpo", "geo_mean", paper="GMPO, Zhao et al., arXiv 2507.20673",
        summary="the geometric mean of token ratios clipped in log space, per sequence; no KL", ships_in=("verl",)),
    Row("clip-cov", "grpo", "clip_cov", aggregation="token-mean", paper="Clip-Cov, Cui et al., arXiv 2505.22617 (§4)",
        summary="PPO's clip, and no gradient on a few tokens of high A-log-prob covariance; no KL", ships_in=("verl",)),
    Row("kl-cov", "grpo", "kl_cov", aggregation="token-mean", paper="KL-Cov, Cui et al., arXiv 2505.22617 (§4)",
        summary="no clip; a |log r| penalty on the tokens of highest A-log-prob covariance; no KL", ships_in=("verl",)),
    Row("gpg", "gpg", "reinforce", aggregation="token-mean", paper="GPG, Chu et al., arXiv 2504.02546",
        summary="REINFORCE on alpha (r - mean): no ratio, no clip, no std, no KL", ships_in=("verl",)),
    Row("opo", "opo", "vanilla", aggregation="seq-mean-token-sum", paper="OPO, Hao et al., arXiv 2505.23585",
        summary="REINFORCE on whole sequences with the length-weighted mean reward as baseline; no KL", ships_in=("verl",)),
    Row("grpo-passk", "grpo_passk", "vanilla", kl="k3", paper="Pass@k training, Chen et al., arXiv 2503.19595",
        summary="GRPO where only each group's best answer gets an advantage, r_max - r_second", ships_in=("verl",)),
    Row("gdpo", "gdpo", "vanilla", kl="k3", reward=RewardColumns(RuleReward(), OverlongPenalty()),
        paper="GDPO, arXiv 2601.05242",
        summary="GRPO on several rewards, each normalised in its group before they are summed", ships_in=("TRL",)),
    Row("maxrl", "maxrl", "vanilla", paper="MaxRL, Tajwar et al., arXiv 2602.02710",
        summary="PPO's clip on (r - p) / p: a question's right answers weigh 1/p, its success rate p; no KL",
        ships_in=("prime-rl", "SkyRL", "TRL")),
    Row("dro", "grpo", "dro", paper="verl dro; Richemond et al., arXiv 2405.19107",
        summary="GRPO's advantage with a quadratic pull of each token's log-ratio toward the sampler, no clip; no KL",
        ships_in=("verl",)),
    # DPPO as verl's example runs it: Dr. GRPO's advantage, the sequences' token sums over L (verl's
    # seq-mean-token-sum-norm since its b8d91ef8 is the constant aggregation here), no truncation (clip_ratio_c 10000)
    Row("dppo", "grpo", "dppo_tv", aggregation="seq-mean-token-sum-norm", settings={"scale_rewards": "none"},
        paper="DPPO (Binary-TV), Qi et al., arXiv 2602.04879; verl dppo_tv",
        summary="r - group mean on the tokens whose probability moved less than 0.15 against A's push: no ratio clip; "
                "no KL", ships_in=("verl", "prime-rl", "SkyRL")),
    Row("dppo-kl", "grpo", "dppo_kl", aggregation="seq-mean-token-sum-norm", settings={"scale_rewards": "none"},
        paper="DPPO (Binary-KL), Qi et al., arXiv 2602.04879; verl dppo_kl",
        summary="r - group mean on the tokens whose binary KL to pi_old stays under 0.05 against A's push; no KL",
        ships_in=("verl", "SkyRL")),
    # a teacher as the reward (data/teachers.py: RLConfig.teacher, teacher_sees), and SFT's relatives
    Row("opd", "opd", "reinforce", aggregation="token-mean", uses_ref=True,
        paper="On-policy distillation: GKD, Agarwal et al., arXiv 2306.13649; TRL's sampled-token distillation",
        summary="each sampled token's log pi_teacher - log pi_theta as its reward: the reverse KL to a frozen teacher",
        ships_in=("TRL",)),
    Row("gkd", "one", "gkd", aggregation="token-mean", data_source=OnOrOffPolicy, uses_ref=True,
        defaults={"gkd_lambda": 0.5}, paper="GKD, Agarwal et al., arXiv 2306.13649 (eq 2-3, Algorithm 1)",
        summary="the generalized JSD of the sampled token's coin to the teacher's, on own samples half the batches",
        ships_in=("TRL",)),
    Row("sdft", "opd", "reinforce", uses_ref=True, defaults={"teacher": "ref", "teacher_sees": "answer"},
        paper="SDFT, Shenfeld et al., arXiv 2601.19897 (TRL's sampled-token mode)",
        summary="on-policy distillation from the starting model shown the reference answer", ships_in=("TRL",)),
    Row("opsd", "opd", "reinforce", uses_ref=True, defaults={"teacher": "policy", "teacher_sees": "answer"},
        paper="OPSD, Zhao et al., arXiv 2601.18734",
        summary="on-policy distillation from the policy itself shown the reference answer (no gradient through it)"),
    Row("dft", "one", "dft", aggregation="token-mean", data_source=FixedDataset, reward=None, uses_ref=False,
        section="sft", init="scratch", paper="DFT, Wu et al., arXiv 2508.05629 (eq 8)",
        summary="SFT with each token's gradient scaled by its own probability", ships_in=("TRL",)),
    Row("self-distill", "one", "reinforce", uses_ref=False, paper="SSD, Zhang et al., arXiv 2604.01193",
        summary="SFT on the policy's own samples, right or wrong: RFT without its filter"),
)
"""Every reinforcement-learning method as a composition (the preference family: methods/preference.py)."""
