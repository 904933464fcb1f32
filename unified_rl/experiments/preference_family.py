"""Beyond the paper: DPO, IPO, SimPO, KTO and ORPO on the lab, at an equal budget.

Every arm starts from the same SFT model and takes the same number of optimizer steps, each on as
many responses (16 pairs = 32 responses; KTO: 32 unpaired responses, plus the 32 mismatched rows
that only set its reference point z0), each method at its own measured regime (its Method defaults
and settings, methods/preference.py). One control arm, ORPO with lambda = 0, is SFT on the chosen
answers alone: it shows how much of ORPO's result its odds-ratio term adds; another, DPO at IPO's
learning rate, shows what DPO does where IPO still holds.

Measured: held-out greedy accuracy (all n_test questions) at the end and every `eval_every` steps
(the trainer's 256), and, on a fixed set of pairs drawn before training, the mean per-token
log-probs of the chosen and the rejected answers and their log-ratios x+, x- to the SFT model
(`experiments.pair_probe.pair_summary`): does the chosen answer's log-prob fall while the margin grows?
And why, through the GC (`gradient_alignment`): DPO's GC is +c on the chosen and -c on the
rejected tokens, so a step moves x+ by c (grad x+ . grad x+ - grad x+ . grad x-) summed over the
batch; x+ falls once the gradients of x+ and x- are aligned enough (Razin et al. 2024, arXiv
2410.08847, call this likelihood displacement).
"""

import dataclasses
import random
from dataclasses import asdict, dataclass

import torch

from .. import coefficients as C
from . import pair_probe
from ..data import PreferencePairs
from ..evaluation import greedy_accuracy
from ..methods import METHODS
from ..rewards import NoisyReward, RuleReward
from ..sampling import token_logp
from ..text import Text
from ..trainer import train
from . import common

ARMS = {
    "dpo": ("dpo", {}),
    "ipo": ("ipo", {}),
    "simpo": ("simpo", {}),
    "kto": ("kto", {}),
    "orpo": ("orpo", {}),
    "sft-on-chosen": ("orpo", {"orpo_lambda": 0.0}),  # ORPO's SFT term alone: the control
    "dpo-fast": ("dpo", {"lr": 2e-5}),  # DPO at IPO's learning rate: where its chosen log-prob falls
}
"""arm -> (method, settings changed from its defaults)"""

PROBED = ("logp_chosen", "logp_rejected", "x_chosen", "x_rejected", "margin", "chosen_fell")


@dataclass(frozen=True)
class Budget:
    """Sizes of the preference-family comparison."""

    steps: int = 60
    """optimizer steps of every arm (the equal budget)"""
    arms: tuple = tuple(ARMS)
    """the arms compared (keys of ARMS)"""
    probe_pairs: int = 64
    """fixed pairs, drawn before training, on which log-probs are followed"""
    probe_every: int = 10
    """steps between measurements of the fixed pairs"""
    eval_every: int = 10
    """steps between held-out evaluations during training"""
    n_test: int = 500
    """held-out questions for the final greedy accuracy"""
    flip_prob: float = 0.0
    """probability that a label is flipped (0: the exact rule; the tiny preset needs noise to form pairs)"""


BUDGETS = {
    "cpu": Budget(),
    "gpu": Budget(steps=100, probe_pairs=128, n_test=1000),
    # tiny: its untrained model answers nothing right, so pairs form only from flipped labels
    "tiny": Budget(steps=2, probe_pairs=4, probe_every=1, eval_every=1, n_test=8, flip_prob=0.5),
}


def _labels(b, seed):
    return RuleReward() if b.flip_prob == 0 else NoisyReward(RuleReward(), b.flip_prob, seed=seed)


def arm_method(arm, reward):
    """(Method, settings) of an arm; pairs and labels come from `reward`."""
    if arm not in ARMS:
        raise ValueError(f"unknown arm {arm!r}; choose from {', '.join(ARMS)}")
    name, settings = ARMS[arm]
    m = dataclasses.replace(METHODS[name], reward=reward)
    if m.data_source is PreferencePairs:
        m = dataclasses.replace(m, data_source=lambda lab: PreferencePairs(lab, reward))
    return m, dict(settings)


def probe_pairs(lab, n, reward, seed):
    """n pairs of pi_sft samples drawn once, before any training, from their own question stream and
    their own sampling seed: the same pairs for a seed whatever ran before in the process."""
    source = PreferencePairs(dataclasses.replace(lab, preset=lab.preset.with_(rl={"prompts_per_step": n})), reward)
    source.rng = random.Random(10_000 + seed)
    with torch.random.fork_rng(devices=[]):  # leave the global generator as it was
        torch.manual_seed(10_000 + seed)
        return source.next_batch()


def gradient_alignment(policy, ref, pairs, beta):
    """How a DPO step moves the chosen log-ratios of `pairs` (B chosen rows, then B rejected), to first order.

    g+_i, g-_i: the parameter gradients of x+_i and x-_i. Returns the mean and median cosine of
    (g+_i, g-_i) and the fraction of pairs whose x+ a gradient step along DPO's direction
    G = sum_j c_j (g+_j - g-_j) lowers (g+_i . G < 0), c_j the exact coefficient at the pairs' margins.
    """
    B, m = len(pairs) // 2, pairs.mask
    params = [p for p in policy.parameters() if p.requires_grad]
    rows = []
    for i in range(2 * B):
        ids, att = pairs.input_ids[i:i + 1], pairs.attention_mask[i:i + 1]
        x = (token_logp(policy, ids, att) * m[i:i + 1]).sum() / m[i].sum()  # mean log-prob; pi_ref adds no gradient
        rows.append(torch.cat([g.flatten() for g in torch.autograd.grad(x, params)]))
    g = torch.stack(rows).double()  # (2B, P)
    with torch.no_grad():
        logp = token_logp(policy, pairs.input_ids, pairs.attention_mask) * m  # (2B, T)
        logp_ref = token_logp(ref, pairs.input_ids, pairs.attention_mask) * m
    c = C.dpo(logp[:B], logp_ref[:B], m[:B], logp[B:], logp_ref[B:], m[B:], beta)[0].amax(-1).double()  # (B,)
    cos = torch.nn.functional.cosine_similarity(g[:B], g[B:], dim=1)  # (B,)
    step = (c[:, None] * (g[:B] - g[B:])).sum(0)  # (P,) DPO's ascent direction
    return {"cos_mean": cos.mean().item(), "cos_median": cos.median().item(),
            "x_plus_lowered": ((g[:B] @ step) < 0).double().mean().item()}


def run(preset="auto", out="results", seeds=3, progress=True, **budget):
    """Run the comparison; write OUT/preference-family.json and .png; return the result."""
    exp = common.begin("preference-family", BUDGETS, preset, out, seeds, progress, budget)
    preset, b, say = exp.preset, exp.budget, exp.say
    for arm in b.arms:
        arm_method(arm, RuleReward())  # fail before any training on an unknown arm
    if b.steps < 1 or b.probe_every < 1 or b.probe_pairs < 1:
        raise ValueError("steps, probe_every and probe_pairs must be >= 1")
    per_seed = []
    for seed, init, lab in exp.seed_labs(preset):
        test = lab.test_problems[: b.n_test]
        pairs = probe_pairs(lab, b.probe_pairs, _labels(b, seed), seed)
        row = {"seed": seed, "sft": greedy_accuracy(lab.policy, lab.tokenizer, test), "arms": {},
               "alignment_sft": gradient_alignment(lab.policy, lab.ref, pairs, preset.rl.dpo_beta)}
        for arm in b.arms:
            t = common.Clock()
            method, settings = arm_method(arm, _labels(b, seed))
            probed, history = pair_probe.probed(method, pairs, every=b.probe_every)
            r = train(probed, lab=common.lab_on(preset, seed, init), steps=b.steps, seed=seed,
                      progress=progress, eval_every=b.eval_every, **settings)
            history.append(pair_probe.pair_summary(r.policy, lab.ref, pairs, preset.rl.dpo_beta, step=b.steps))
            row["arms"][arm] = {
                "accuracy": greedy_accuracy(r.policy, r.tokenizer, test),
                "curve": [[m["step"], m["eval_accuracy"]] for m in r.metrics if "eval_accuracy" in m],
                "probe": {"step": [h["step"] for h in history], **{k: [h[k] for h in history] for k in PROBED}},
                "alignment": gradient_alignment(r.policy, lab.ref, pairs, preset.rl.dpo_beta),
                "lr": r.summary["config"]["rl"]["lr"], "hparams": r.summary["hparams"], **t.read()}
            say(f"preference-family seed {seed} {arm}: held-out {row['arms'][arm]['accuracy']:.3f} "
                f"(SFT {row['sft']:.3f}); chosen x+ {history[-1]['x_chosen']:+.3f}, "
                f"rejected x- {history[-1]['x_rejected']:+.3f} ({t.read()['wall_s']} s)")
        per_seed.append(row)
    return exp.finish(summarise(per_seed, preset, b, seeds, exp.clock.read()), plot)


def summarise(per_seed, preset, b, seeds, seconds):
    """Mean and spread over seeds of each arm's accuracy and of its probed log-probs at the end."""
    result = {"experiment": "preference-family", "preset": preset.name, "seeds": seeds, "budget": asdict(b),
              "arms": {a: {"method": ARMS[a][0], "settings": ARMS[a][1]} for a in b.arms},
              "sft": common.stats([row["sft"] for row in per_seed]), "accuracy": {}, "change_vs_sft": {},
              "end": {}, "curve": {}, "probe": {}, "alignment": {},
              "alignment_sft": {k: common.stats([row["alignment_sft"][k] for row in per_seed])
                                for k in per_seed[0]["alignment_sft"]}}
    for a in b.arms:
        runs = [row["arms"][a] for row in per_seed]
        result["arms"][a].update(lr=runs[0]["lr"], hparams=runs[0]["hparams"])
        result["accuracy"][a] = common.stats([r["accuracy"] for r in runs])
        result["change_vs_sft"][a] = common.stats([r["accuracy"] - row["sft"] for r, row in zip(runs, per_seed)])
        result["end"][a] = {k: common.stats([r["probe"][k][-1] - r["probe"][k][0] if k.startswith("logp")
                                             else r["probe"][k][-1] for r in runs]) for k in PROBED}
        result["alignment"][a] = {k: common.stats([r["alignment"][k] for r in runs]) for k in runs[0]["alignment"]}
        result["curve"][a], _ = common.mean_curves([{"step": [c[0] for c in r["curve"]],
                                                     "accuracy": [c[1] for c in r["curve"]]} for r in runs])
        result["probe"][a], _ = common.mean_curves([r["probe"] for r in runs])
    result["per_seed"] = per_seed
    result["seconds"] = seconds
    head = {"SFT held-out accuracy": common.fmt(result["sft"]),
            "SFT: pairs whose x+ a DPO step lowers": common.fmt(result["alignment_sft"]["x_plus_lowered"])}
    for a in b.arms:
        e = result["end"][a]
        head[a] = {"accuracy": common.fmt(result["accuracy"][a]), "vs SFT": common.fmt(result["change_vs_sft"][a]),
                   "x+ (chosen)": common.fmt(e["x_chosen"]), "x- (rejected)": common.fmt(e["x_rejected"]),
                   "pairs whose x+ a DPO step lowers": common.fmt(result["alignment"][a]["x_plus_lowered"])}
    head.update(seeds=seeds, wall_s=seconds["wall_s"], cpu_s=seconds["cpu_s"])
    result["headline"] = head
    return result


def plot(result):
    """Held-out accuracy over training, the chosen and rejected log-ratios x+, x- on the fixed pairs,
    and each arm's final accuracy (mean and spread over seeds)."""
    import matplotlib.pyplot as plt  # here, not at the top: running an experiment needs no matplotlib
    arms = list(result["arms"])
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for i, a in enumerate(arms):
        c, p = result["curve"][a], result["probe"][a]
        axes[0].plot([0] + c["step"], [result["sft"]["mean"]] + c["accuracy"], marker="o", ms=3, color=f"C{i}", label=a)
        axes[1].plot(p["step"], p["x_chosen"], color=f"C{i}", label=f"{a}: x⁺")
        axes[1].plot(p["step"], p["x_rejected"], color=f"C{i}", ls="--")
    axes[0].axhline(result["sft"]["mean"], color="grey", ls=":", lw=1)
    axes[0].set(xlabel=Text("step"), ylabel=Text("held-out greedy accuracy"), title=Text("accuracy during training"))
    axes[1].axhline(0, color="grey", lw=1)
    axes[1].set(xlabel=Text("step"), ylabel=Text("log-ratio to the SFT model"), title=Text("fixed pairs: x⁺ solid, x⁻ dashed"))
    means = [result["accuracy"][a]["mean"] for a in arms]
    axes[2].bar(range(len(arms)), means, yerr=[result["accuracy"][a]["std"] for a in arms],
                color=[f"C{i}" for i in range(len(arms))], capsize=3)
    axes[2].axhline(result["sft"]["mean"], color="grey", ls=":", lw=1, label="SFT")
    axes[2].set_xticks(range(len(arms)), arms, rotation=30, fontsize=8)
    axes[2].set(ylabel=Text("held-out greedy accuracy"), title=Text("after {steps} steps", steps=result["budget"]["steps"]))
    for ax in axes[:2]:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    fig.suptitle(Text("The preference family at an equal budget ({seeds} seed(s))", seeds=result["seeds"]))
    fig.tight_layout()
    return fig
