"""A sampler in another precision than the learner, on SmolLM2-135M-Instruct: how far apart they are, and whether
TIS or MIS changes what a short GRPO run learns.

1. The ratio. From the pretrained weights (float32, the learner), `ratio_questions` sums x `ratio_replies` replies
   are drawn by a copy in each `dtypes` (data/samplers.py: same = the learner itself, the control; bfloat16; ggml's
   Q8_0 and Q4_1 of every matrix; gguf, each tensor rounded to the type the model's own GGUF file stores it in).
   Each token's log rho_s = log pi_learner - log pi_sampler (the learner teacher-forced on the sampler's reply, the
   sampler's log-prob recorded as it drew), per token and summed per reply. From them: how many tokens TIS's
   default weight min(rho_s, 2) truncates and MIS's default band [0.5, 5] masks (parts/sampler_corrections.py),
   per token and per reply (the product). Every draw uses the same questions and the same torch seed.
2. Training. GRPO for `steps` steps from the pretrained weights per seed, with the sampler in `train_dtype`: no
   correction (`none`), TIS (`tis`), MIS (`mis`); and the learner as its own sampler (`same`). Each trained model's
   greedy answers to the same `n_test` held-out sums. Decided (the course's rule, `field_arms`): none - same (what the
   rounded sampler costs), tis - none and mis - none (what the corrections change); every arm - base is descriptive.

Why Q4_1 for training (fixed from probes before the run, 32 replies of the pretrained model, 32 tokens): per token
log rho_s had std 0.046 for bfloat16, 0.069 for Q8_0 and 0.36 for Q4_1 (the file's own Q4_1 weights re-rounded to
Q4_1 everywhere, embeddings and output included); with gguf the sampler of the pretrained weights is the learner to
float error (its weights are that file's, re-rounded to the same types). Only Q4_1 gives the corrections tokens to
act on. Each finished unit is written to OUT/sampler-precision.parts/ (a killed run continues).
"""

import dataclasses
import os
from dataclasses import asdict, dataclass

import numpy as np
import torch

from ..data import samplers
from ..lab import make_lab
from ..methods import METHODS
from ..methods.table import GRPO_MASKS, recompose
from ..parts.sampler_corrections import MisSettings, TisSettings
from ..rewards import rule_reward
from ..text import Text
from ..trainer import llm_preset, train
from ..wiring import policy_logp, response_only
from ..words import WordsTask
from . import common, field_arms
from .real_model import Parts


@dataclass(frozen=True)
class Budget:
    """Sizes of the sampler-precision experiment."""

    model: str = "smollm2"
    """alias, folder or hub name of the chat model (smollm2: the offline SmolLM2-135M-Instruct)"""
    world: str = "llm-cpu"
    """the LLM preset the runs start from"""
    digits: int = 1
    """operand digits of the sums in words (the llm-cpu preset's task)"""
    max_new_tokens: int = 16
    """the reply's budget in tokens"""
    n_test: int = 32
    """held-out sums every trained model answers greedily"""
    ratio_questions: int = 16
    """questions of the ratio measurement"""
    ratio_replies: int = 4
    """replies per question of the ratio measurement"""
    dtypes: tuple = ("same", "bfloat16", "q8_0", "q4_1", "gguf")
    """the samplers whose ratio to the learner is measured"""
    train_dtype: str = "q4_1"
    """the sampler of the GRPO arms none, tis and mis"""
    arms: tuple = ("none", "tis", "mis", "same")
    """GRPO with the train_dtype sampler uncorrected, with TIS, with MIS, and with the learner as its sampler"""
    steps: int = 8
    """GRPO steps per arm"""
    prompts_per_step: int = 2
    """questions per step"""
    group_size: int = 4
    """replies per question"""
    lr: float = 1e-5
    """AdamW learning rate (full fine-tuning)"""
    bootstrap: int = 2000
    """bootstrap resamples of the questions"""


BUDGETS = {
    "cpu": Budget(),
    "gpu": Budget(world="llm-gpu", max_new_tokens=32, n_test=256, ratio_questions=64, steps=60, prompts_per_step=16,
                  group_size=8, lr=2e-4),
    "tiny": Budget(max_new_tokens=4, n_test=4, ratio_questions=2, ratio_replies=2, dtypes=("same", "bfloat16", "q8_0"),
                   train_dtype="q8_0", steps=1, prompts_per_step=2, group_size=2, bootstrap=50),
}
ARMS = ("same", "none", "tis", "mis")
DECIDED = (("none - same", "same", "none"), ("tis - none", "none", "tis"), ("mis - none", "none", "mis"))
TIS_CAP = TisSettings().sampler_correction_cap  # the parts' defaults: what a run with masks=("tis",) uses
MIS_LOW, MIS_HIGH = MisSettings().sampler_mask_low, MisSettings().sampler_mask_high


def world(b):
    """The LLM preset every run of budget `b` trains in."""
    p = llm_preset(b.world, model=b.model, task=WordsTask(digits=b.digits, max_new_tokens=b.max_new_tokens))
    return p.with_(n_test=b.n_test, eval_problems=b.n_test,
                   rl={"prompts_per_step": b.prompts_per_step, "group_size": b.group_size, "lr": b.lr})


def method_of(arm):
    """GRPO (arms same, none), or GRPO with the tis or mis part among its masks."""
    if arm in ("same", "none"):
        return METHODS["grpo"]
    if arm in ("tis", "mis"):
        return recompose("grpo", masks=GRPO_MASKS + (arm,))
    raise ValueError(f"unknown arm {arm!r}; choose from {ARMS}")


@torch.no_grad()
def ratio_draw(lab, b, dtype, seed=0):
    """One draw of the `dtype` sampler: per reply, each token's log pi_learner - log pi_sampler, and whether it is right."""
    p = lab.preset.with_(rl={"sampler_dtype": dtype, "sampler_lag": 0, "temperature": 1.0,
                             "prompts_per_step": b.ratio_questions, "group_size": b.ratio_replies})
    torch.manual_seed(seed)  # the same questions (the source's rng) and the same random stream for every dtype
    batch = samplers.source_of(METHODS["grpo"], dataclasses.replace(lab, preset=p)).next_batch()
    learner = policy_logp(lab.policy, batch, response_only(lab))  # (B, T)
    d = (learner - batch.logp).double()
    rows = [d[i, batch.mask[i].bool()].tolist() for i in range(len(batch))]
    return {"log_rho": rows, "right": [int(x) for x in rule_reward(batch.problems, batch.texts).round().tolist()]}


def ratio_stats(draw):
    """What a draw's log-ratios say: their spread per token and per reply, and the tokens / replies TIS's and MIS's
    default bounds act on."""
    tok = np.concatenate([np.asarray(r, dtype=float) for r in draw["log_rho"]])
    seq = np.array([float(np.sum(r)) for r in draw["log_rho"]])
    rho, rho_seq = np.exp(tok), np.exp(seq)
    band = lambda r: int(((r < MIS_LOW) | (r > MIS_HIGH)).sum())  # noqa: E731
    q = [0.01, 0.5, 0.99]
    return {"tokens": int(tok.size), "replies": int(seq.size), "sampled_accuracy": float(np.mean(draw["right"])),
            "token": {"mean": float(tok.mean()), "std": float(tok.std()), "max_abs": float(np.abs(tok).max()),
                      "quantiles": dict(zip(map(str, q), np.quantile(tok, q).tolist())),
                      "tis_truncated": int((rho > TIS_CAP).sum()), "mis_masked": band(rho)},
            "sequence": {"mean": float(seq.mean()), "std": float(seq.std()), "max_abs": float(np.abs(seq).max()),
                         "quantiles": dict(zip(map(str, q), np.quantile(seq, q).tolist())),
                         "tis_truncated": int((rho_seq > TIS_CAP).sum()), "mis_masked": band(rho_seq)}}


def train_arm(p, b, seed, arm, test, progress):
    """One GRPO arm from the pretrained weights: its greedy answers to `test`, its curve and its cost."""
    dtype = "same" if arm == "same" else b.train_dtype
    common.phase(f"seed {seed}: GRPO, sampler {dtype}, {arm}, {b.steps} steps")
    clock = common.Clock()
    r = train(method_of(arm), preset=p, steps=b.steps, seed=seed, progress=progress, eval_every=0, sampler_dtype=dtype)
    rows = b.prompts_per_step * b.group_size
    return {"right": field_arms.greedy_right(r.policy, r.tokenizer, test),
            "curve": [{k: m[k] for k in ("step", "seconds", "accuracy", "coef_zero_frac", "response_len")} for m in r.metrics],
            "sampled_tokens": float(sum(m["response_len"] for m in r.metrics) * rows), "train_wall_s": r.summary["seconds"],
            **clock.read()}


def run(preset="auto", out="results", seeds=3, progress=True, **budget):
    """Run the experiment; write OUT/sampler-precision.json and .png; return the result."""
    exp = common.begin("sampler-precision", BUDGETS, preset, out, seeds, progress, budget)
    preset, b, say = exp.preset, exp.budget, exp.say
    if not b.arms or any(a not in ARMS for a in b.arms):
        raise ValueError(f"arms must be some of {ARMS}, got {b.arms!r}")
    if b.steps < 1 or b.n_test < 2:
        raise ValueError(f"need steps >= 1 and n_test >= 2, got {b.steps}, {b.n_test}")
    p, parts = world(b), Parts(os.path.join(out, "sampler-precision.parts"), b)
    lab = make_lab(p, 0)
    test = lab.test_problems[: b.n_test]
    draws = {}
    for dtype in b.dtypes:
        draws[dtype] = parts.get(f"ratio-{dtype}", lambda: ratio_draw(lab, b, dtype))
        s = ratio_stats(draws[dtype])
        say(f"sampler-precision {dtype}: log rho per token std {s['token']['std']:.4f}, TIS truncates "
            f"{s['token']['tis_truncated']} of {s['tokens']} tokens, MIS masks {s['token']['mis_masked']}")
    base = parts.get("greedy-base", lambda: field_arms.greedy_right(lab.policy, lab.tokenizer, test))
    del lab
    per_seed = []
    for seed in range(seeds):
        row = {"seed": seed, "right": {"base": base}, "runs": {}}
        for arm in b.arms:
            x = parts.get(f"seed{seed}-{arm}", lambda: train_arm(p, b, seed, arm, test, progress))
            row["right"][arm] = x.pop("right")
            row["runs"][arm] = x
        per_seed.append(row)
        say(f"sampler-precision seed {seed}: " + ", ".join(f"{a} {np.mean(row['right'][a]):.3f}" for a in ("base", *b.arms)))
    result = {"experiment": "sampler-precision", "preset": preset.name, "world": p.name, "seeds": seeds,
              "budget": asdict(b), "arms": ["base", *b.arms], "questions": [{"question": q.prompt, "answer": q.answer}
                                                                         for q in test],
              "bounds": {"tis_cap": TIS_CAP, "mis_low": MIS_LOW, "mis_high": MIS_HIGH}, "ratio_draws": draws,
              "per_seed": per_seed, "seconds": exp.clock.read()}
    return exp.finish(derive(result), plot)


def derive(result):
    """`result` with everything it says recomputed from its stored draws and per-seed answers: the ratio statistics,
    the accuracies, the comparisons, the verdicts and the headline."""
    b, per_seed = result["budget"], result["per_seed"]
    arms = [a for a in result["arms"] if a != "base"]
    result["ratios"] = {dtype: ratio_stats(d) for dtype, d in result["ratio_draws"].items()}
    comparisons = [(f"{a} - base", "base", a) for a in arms] + [c for c in DECIDED if c[1] in arms and c[2] in arms]
    decided = [c[0] for c in DECIDED if c[1] in arms and c[2] in arms]
    derived, head = field_arms.summary(per_seed, ["base", *arms], comparisons, decided, b["bootstrap"])
    result.update(derived)
    lines = {}
    for dtype, s in result["ratios"].items():
        t, q = s["token"], s["sequence"]
        lines[f"sampler {dtype}"] = (
            f"log rho per token mean {t['mean']:+.4f} std {t['std']:.4f} (1 %, 99 %: {t['quantiles']['0.01']:+.3f}, "
            f"{t['quantiles']['0.99']:+.3f}); TIS (cap {TIS_CAP:g}) truncates {t['tis_truncated']} of {s['tokens']} "
            f"tokens, MIS [{MIS_LOW:g}, {MIS_HIGH:g}] masks {t['mis_masked']}; per reply std {q['std']:.3f}, "
            f"TIS truncates {q['tis_truncated']} of {s['replies']}, MIS masks {q['mis_masked']}; "
            f"sampled accuracy {s['sampled_accuracy']:.3f}")
    tokens = {a: common.stats([s["runs"][a]["sampled_tokens"] for s in per_seed]) for a in arms}
    result["headline"] = {**lines, **head, "sampled tokens per run": {a: f"{t['mean']:.0f}" for a, t in tokens.items()},
                          "seeds": result["seeds"], "wall_s": result["seconds"]["wall_s"],
                          "cpu_s": result["seconds"]["cpu_s"]}
    return result


def revive(result):
    """A loaded result with its derived parts rebuilt from its stored numbers (`field_arms.revive`)."""
    return field_arms.revive(result, derive)


def plot(result):
    """Left: the per-token log rho_s of each sampler (histogram). Right: each comparison with its interval over seeds."""
    import matplotlib.pyplot as plt  # here, not at the top: running an experiment needs no matplotlib
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
    draws = result["ratio_draws"]
    every = np.concatenate([np.asarray(r, dtype=float) for d in draws.values() for r in d["log_rho"]])
    edges = np.linspace(min(every.min(), -np.log(2)) - 1e-9, max(every.max(), np.log(2)) + 1e-9, 60)
    for i, (dtype, d) in enumerate(draws.items()):
        ax1.hist(np.concatenate([np.asarray(r, dtype=float) for r in d["log_rho"]]), bins=edges, histtype="step",
                 color=f"C{i}", label=dtype)
    for x in (np.log(TIS_CAP), np.log(MIS_LOW), np.log(MIS_HIGH)):
        ax1.axvline(x, color="grey", lw=0.8, ls=":")
    ax1.set_yscale("log")
    ax1.set(xlabel=Text("log pi_learner - log pi_sampler per token"), ylabel=Text("tokens"),
            title=Text("the sampler's ratio to the learner"))
    ax1.legend(fontsize=7)
    field_arms.plot_changes(ax2, result)
    ax2.set(title=Text("GRPO, {steps} steps: held-out greedy accuracy", steps=result["budget"]["steps"]))
    fig.suptitle(Text("A rounded sampler on SmolLM2-135M-Instruct: {seeds} seed(s), {n} held-out sums",
                      seeds=result["seeds"], n=result["budget"]["n_test"]), fontsize=9)
    fig.tight_layout()
    return fig
