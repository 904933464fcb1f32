"""Beyond the lab: GRPO and on-policy DPO on a real pretrained chat model, before and after.

The same METHODS, trainer and rule reward as every other experiment, on SmolLM2-135M-Instruct
(offline, `llm.py`) asked the lab's sums in words (`words.py`) at a difficulty where it starts
mid-range. Every seed starts from the same pretrained weights and is measured on the same held-out questions;
seeds differ in the training questions drawn and in the sampling noise.

1. the base model, once (its weights are every seed's start): on the held-out questions greedy
   accuracy, Pass@K and Maj@K for K = 1, 2, ..., `samples` at temperature 0.7, the mean reply length
   in characters, the share of replies whose answer parses strictly (`#### N`, `\\boxed{N}`), only
   leniently (a last number) or not at all, and a few example replies;
2. per seed, GRPO (METHODS' own) for `grpo_steps` steps, and DPO on pairs sampled from the current policy
   (`data.PolicyPairs`: on-policy DPO; pi_ref stays the base model) for `dpo_steps` steps, each
   from the base weights;
3. both trained models measured as in 1 (Pass@K / Maj@K with the seed's own sampling seed).

The verdict per method and metric uses figure7's rule: "raised" (or "lowered") only when every seed
moves the same way and the mean change exceeds the standard deviation over seeds. Whether the base
model started in `start_range` on every seed is recorded beside it.
"""

from dataclasses import asdict, dataclass, replace

import numpy as np
import torch

from ..data import PolicyPairs
from ..lab import make_lab
from ..methods import METHODS
from ..rewards import rule_reward
from ..sampling import sample
from ..text import Text
from ..trainer import llm_preset, train
from ..words import WordsTask, parse_lenient, parse_strict
from . import common
from .figure7 import change

METRICS = ("greedy", "maj_at_k", "pass_at_k", "reply_chars", "strict_share")
"""What the verdict compares before and after (Maj@K and Pass@K at the largest K)."""


@dataclass(frozen=True)
class Budget:
    """Sizes of the real-model experiment."""

    model: str = "smollm2"
    """alias, folder or hub name of the chat model (smollm2: the offline SmolLM2-135M-Instruct)"""
    world: str = "llm-cpu"
    """the LLM preset whose settings the runs start from (llm-cpu or llm-gpu)"""
    digits: int = 1
    """digits per operand of the sums in words (1: the base model starts mid-range)"""
    max_new_tokens: int = 16
    """the reply's budget in tokens"""
    n_test: int = 32
    """held-out questions for greedy accuracy, lengths and parse shares"""
    k_problems: int = 16
    """held-out questions for Pass@K / Maj@K"""
    samples: int = 4
    """samples per question for Pass@K / Maj@K (K = 1, 2, 4, ..., samples)"""
    temperature: float = 0.7
    """sampling temperature of the evaluation"""
    grpo_steps: int = 10
    """GRPO steps (4 questions x 4 samples each on the cpu budget)"""
    dpo_steps: int = 10
    """on-policy DPO steps (up to 4 pairs, from at most 2 draws of 4 questions x 4 samples, per step)"""
    prompts_per_step: int = 4
    """questions per step"""
    group_size: int = 4
    """samples per question (GRPO's G; the samples on-policy DPO picks its pair from)"""
    lr: float = 1e-5
    """AdamW learning rate of both methods (full fine-tuning; a short run, so twice llm-cpu's 5e-6)"""
    dpo_beta: float = 0.5
    """DPO's beta"""
    lora_r: int = 0
    """LoRA rank (0: full fine-tuning)"""
    examples: int = 3
    """example replies recorded before and after"""
    start_range: tuple = (0.2, 0.6)
    """where the base model's greedy accuracy should start for there to be room both ways"""


BUDGETS = {
    "cpu": Budget(),
    "gpu": Budget(world="llm-gpu", digits=2, max_new_tokens=32, n_test=256, k_problems=64, samples=16,
                  grpo_steps=100, dpo_steps=100, prompts_per_step=16, group_size=8, lr=2e-5, lora_r=16),
    "tiny": Budget(max_new_tokens=6, n_test=4, k_problems=2, samples=2, grpo_steps=1, dpo_steps=1,
                   prompts_per_step=2, group_size=2, examples=2),
}

ARMS = ("grpo", "dpo-on-policy")


def world(b):
    """The LLM preset every run of budget `b` trains in."""
    task = WordsTask(digits=b.digits, max_new_tokens=b.max_new_tokens)
    p = llm_preset(b.world, model=b.model, task=task, llm={"lora_r": b.lora_r})
    return p.with_(n_test=b.n_test, eval_problems=b.n_test,
                   rl={"prompts_per_step": b.prompts_per_step, "group_size": b.group_size, "lr": b.lr,
                       "dpo_beta": b.dpo_beta})


def method_of(arm):
    """The Method an arm trains: METHODS' GRPO, or DPO with pairs of the current policy."""
    if arm == "grpo":
        return METHODS["grpo"]
    if arm == "dpo-on-policy":
        return replace(METHODS["dpo"], data_source=PolicyPairs)
    raise ValueError(f"unknown arm {arm!r}; choose one of {ARMS}")


def parse_shares(texts):
    """Shares of replies whose answer parses strictly, only leniently (a last number), or not at all."""
    if not texts:
        raise ValueError("no replies to read")
    strict = [parse_strict(t) is not None for t in texts]
    lenient = [parse_lenient(t) is not None for t in texts]
    n = len(texts)
    return {"strict_share": sum(strict) / n,
            "lenient_only_share": sum(le and not s for s, le in zip(strict, lenient)) / n,
            "unparsed_share": sum(not le for le in lenient) / n}


@torch.no_grad()
def measure(policy, tokenizer, test, b, seed):
    """Greedy accuracy, reply length, parse shares and examples on `test`; Pass@K / Maj@K on its start."""
    common.phase(f"evaluating: greedy on {len(test)} questions, then sampling {b.samples} answers to each of "
                 f"{min(b.k_problems, len(test))} for Pass@K / Maj@K")
    r = sample(policy, tokenizer, test, greedy=True)
    right = rule_reward(r.problems, r.texts)  # (n,)
    out = {"greedy": right.mean().item(), "reply_chars": float(np.mean([len(t) for t in r.texts])),
           **parse_shares(r.texts)}
    out["examples"] = [{"question": p.prompt, "answer": p.answer, "reply": t, "right": bool(ok)}
                       for p, t, ok in list(zip(r.problems, r.texts, right.tolist()))[: b.examples]]
    torch.manual_seed(10_000 + seed)  # Pass@K / Maj@K sampling: the seed's own noise, the same for each arm
    out.update(common.pass_maj_curve(policy, tokenizer, test[: b.k_problems], b.samples, b.temperature))
    return out


def measure_base(p, b):
    """The pretrained model as every seed starts from it, measured (sampling seed 0)."""
    lab = make_lab(p, 0)
    return measure(lab.policy, lab.tokenizer, lab.test_problems[: b.n_test], b, 0)


def run_seed(p, b, seed, before, progress=False):
    """Each arm trained from the pretrained weights and measured: one seed's dict."""
    t = common.Clock()
    row = {"seed": seed, "before": before, "after": {}, "curves": {}, "train_wall_s": {}}
    for arm in ARMS:
        steps = b.grpo_steps if arm == "grpo" else b.dpo_steps
        common.phase(f"seed {seed}: {arm}, {steps} steps from the pretrained weights")
        r = train(method_of(arm), preset=p, steps=steps, seed=seed, progress=progress, eval_every=0)
        test = r.lab.test_problems[: b.n_test]  # the base model's held-out questions (one split)
        row["after"][arm] = measure(r.policy, r.tokenizer, test, b, seed)
        row["curves"][arm] = [{k: m[k] for k in ("step", "seconds", "accuracy", "response_len", "kl") if k in m}
                              for m in r.metrics]
        row["train_wall_s"][arm] = r.summary["seconds"]
        del r
    row.update(t.read())
    return row


def run(preset="auto", out="results", seeds=3, progress=True, **budget):
    """Run the real-model experiment; write OUT/real-model.json and .png; return the result."""
    exp = common.begin("real-model", BUDGETS, preset, out, seeds, progress, budget)
    preset, b, say, clock = exp.preset, exp.budget, exp.say, exp.clock
    if b.samples < 1 or b.k_problems < 1 or b.k_problems > b.n_test:
        raise ValueError(f"need samples >= 1 and 1 <= k_problems <= n_test, got {b.samples}, {b.k_problems}, "
                         f"{b.n_test}")
    if min(b.grpo_steps, b.dpo_steps) < 1:
        raise ValueError(f"grpo_steps and dpo_steps must be >= 1, got {b.grpo_steps}, {b.dpo_steps}")
    ks = common.powers_of_two(b.samples)
    p = world(b)
    per_seed, before = [], measure_base(p, b)
    say(f"real-model base model: greedy {before['greedy']:.3f}, Maj@{ks[-1]} {before['maj_at_k'][-1]:.3f}, "
        f"Pass@{ks[-1]} {before['pass_at_k'][-1]:.3f} ({clock.read()['wall_s']} s)")
    for seed in range(seeds):
        x = run_seed(p, b, seed, before, progress)
        per_seed.append(x)
        say(f"real-model seed {seed}: greedy {x['before']['greedy']:.3f} -> "
            + ", ".join(f"{a} {x['after'][a]['greedy']:.3f}" for a in ARMS) + f" ({x['wall_s']} s)")
    return exp.finish(summarise(ks, per_seed, preset, b, seeds, clock.read()), plot)


def _value(m, key):
    """A metric of one measurement: a number, or the last (largest-K) entry of a curve."""
    v = m[key]
    return v[-1] if isinstance(v, list) else v


def summarise(ks, per_seed, preset, b, seeds, seconds):
    """Means and spread over seeds before and after, the changes and their verdicts, the headline."""
    before = [x["before"] for x in per_seed]
    result = {"experiment": "real-model", "preset": preset.name, "seeds": seeds, "budget": asdict(b), "k": ks,
              "arms": list(ARMS), "before": {}, "after": {}, "change": {}}
    result["before"], _ = common.mean_curves(before)
    lo, hi = b.start_range
    starts = [m["greedy"] for m in before]
    result["start_in_range"] = {"per_seed": starts, "range": list(b.start_range),
                                "all": all(lo <= v <= hi for v in starts)}
    for arm in ARMS:
        after = [x["after"][arm] for x in per_seed]
        result["after"][arm], _ = common.mean_curves(after)
        result["change"][arm] = {}
        for key in METRICS:
            d = [_value(a, key) - _value(m, key) for a, m in zip(after, before)]
            result["change"][arm][key] = {"per_seed": d, **common.stats(d), "verdict": change(d)}
        result["change"][arm]["train_wall_s"] = common.stats([x["train_wall_s"][arm] for x in per_seed])
    result["per_seed"] = per_seed
    result["seconds"] = seconds
    result["headline"] = headline(result)
    return result


def headline(result):
    """The numbers worth printing: per arm, each metric before -> after and its verdict."""
    K = result["k"][-1]
    names = {"greedy": "greedy accuracy", "maj_at_k": f"Maj@{K}", "pass_at_k": f"Pass@{K}",
             "reply_chars": "reply length (chars)", "strict_share": "strict-parse share"}
    head = {"base model greedy accuracy": common.fmt(common.stats(result["start_in_range"]["per_seed"])),
            "started in range": result["start_in_range"]["all"]}
    for arm in result["arms"]:
        rows = {}
        for key, label in names.items():
            before = common.stats([_value(x["before"], key) for x in result["per_seed"]])
            after = common.stats([_value(x["after"][arm], key) for x in result["per_seed"]])
            c = result["change"][arm][key]
            rows[label] = f"{common.fmt(before)} -> {common.fmt(after)} ({c['verdict']}, {c['mean']:+.3f})"
        head[arm] = rows
    head.update(seeds=result["seeds"], wall_s=result["seconds"]["wall_s"], cpu_s=result["seconds"]["cpu_s"])
    return head


def table(result):
    """Rows (metric, before, one column per arm) of means over seeds, for a notebook to print."""
    K = result["k"][-1]
    keys = [("greedy", "greedy accuracy"), ("maj_at_k", f"Maj@{K}"), ("pass_at_k", f"Pass@{K}"),
            ("reply_chars", "reply length (chars)"), ("strict_share", "answers parsed strictly"),
            ("lenient_only_share", "answers parsed only leniently"), ("unparsed_share", "no answer")]
    rows = []
    for key, label in keys:
        mean = lambda m: float(np.mean([_value(m_, key) for m_ in m]))  # noqa: E731
        row = [label, mean([x["before"] for x in result["per_seed"]])]
        row += [mean([x["after"][arm] for x in result["per_seed"]]) for arm in result["arms"]]
        rows.append(row)
    return ["metric", "before", *result["arms"]], rows


def plot(result):
    """Greedy accuracy per seed before and after each arm, and Maj@K / Pass@K against K (means)."""
    import matplotlib.pyplot as plt  # here, not at the top: running an experiment needs no matplotlib
    ks, arms = result["k"], result["arms"]
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.2))
    names = ["before", *arms]
    for x in result["per_seed"]:
        vals = [x["before"]["greedy"]] + [x["after"][a]["greedy"] for a in arms]
        axes[0].plot(range(len(names)), vals, marker="o", color="grey", alpha=0.6)
    means = [result["before"]["greedy"]] + [result["after"][a]["greedy"] for a in arms]
    axes[0].plot(range(len(names)), means, marker="s", color="C3", lw=2, label=Text("mean"))
    axes[0].set_xticks(range(len(names)), [Text("before")] + names[1:])
    axes[0].set(ylabel=Text("held-out greedy accuracy"), title=Text("each seed (grey)"))
    axes[0].legend(fontsize=7)
    for ax, key, label in zip(axes[1:], ("maj_at_k", "pass_at_k"), ("Maj@K", "Pass@K")):
        ax.plot(ks, result["before"][key], marker="o", color="grey", label=Text("before"))
        for i, a in enumerate(arms):
            ax.plot(ks, result["after"][a][key], marker="o", color=f"C{i}", label=a)
        ax.set_xscale("log", base=2)
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.set(xlabel="K", title=label)
        ax.legend(fontsize=7)
    for ax in axes:
        ax.grid(alpha=0.3)
    b = result["budget"]
    fig.suptitle(Text("{model} on sums in words ({digits} digit): {seeds} seed(s), GRPO {grpo} / DPO {dpo} steps",
                      model=b["model"], digits=b["digits"], seeds=result["seeds"], grpo=b["grpo_steps"], dpo=b["dpo_steps"]))
    fig.tight_layout()
    return fig
