"""DeepSeekMath §5.2.2's Figure 7 question on a real chat model: does RL raise Maj@K, Pass@K, or both?

The same METHODS, trainer and rule reward as every other experiment, on SmolLM2-135M-Instruct
(offline, `llm.py`; a 4-bit quantised copy dequantised to float32) asked sums in words (`words.py`).
Per seed, from the same pretrained weights, on the same held-out questions:

1. the base model: greedy accuracy and the share of replies the token budget cuts off; `samples`
   replies per question at temperature 0.7 (the seed's own sampling noise), read by the lenient rule,
   for Pass@K and Maj@K at K = 1, 2, 4, ..., `samples` (the unbiased estimators of `metrics`);
2. GRPO (METHODS' own) for `grpo_steps` steps, and DPO on pairs sampled from the current policy
   (`data.PolicyPairs`: on-policy DPO; pi_ref stays the base model) for `dpo_steps` steps;
3. both trained models measured as in 1, with the same sampling seed as the seed's base model.

How the sizes were chosen (probes on SmolLM2, 8 questions x 64 samples each, before the run):
two-digit sums alone gave ~4 % right samples (19 of 512), too few for on-policy DPO to find a right
and a wrong reply (a step fails without a pair) or for GRPO's groups to differ; single-digit sums are
solved by some sample nearly always (in the shipped run 23-24 of its 24 single-digit questions, against
15-20 of 24 two-digit ones), which leaves no room at large K. So the questions mix the two in equal
shares. The user turn asks for one short sentence: with the plain question 48 new tokens cut off 48 %
of the sampled two-digit replies, asked for a sentence 4 %. The base model's greedy accuracy and cut
share at every budget in `budgets_considered` are part of the result.

Every (seed, model) measurement is written to OUT/real-model.parts/ as it completes; a run killed
half-way and started again with the same command and budget continues from there (a part of another
budget is refused, never mixed in). The intervals per K: `paired` (descriptive); the verdicts, at the
course's primary K only: `verdicts`.
"""

import json
import os
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch

from ..data import PolicyPairs
from ..lab import make_lab
from ..methods import METHODS
from ..metrics import maj_at_k, pass_at_k
from ..rewards import answer_of, rule_reward
from ..sampling import sample, stop_ids
from ..trainer import llm_preset, train
from ..words import MixedTask, WordsTask, parse_lenient, parse_strict
from . import common, paired
from .answers import replies
from .real_model_report import derive, headline, plot, revive  # noqa: F401 (the rule's verdicts, headline, figure, loading)


@dataclass(frozen=True)
class Budget:
    """Sizes of the real-model Figure 7 experiment."""

    model: str = "smollm2"
    """alias, folder or hub name of the chat model (smollm2: the offline SmolLM2-135M-Instruct)"""
    world: str = "llm-cpu"
    """the LLM preset whose settings the runs start from (llm-cpu or llm-gpu)"""
    digits: tuple = (1, 2)
    """the question mix: sums whose operands have each of these digit counts, in equal shares"""
    template: str = "What is {expr}? Answer in one short sentence."
    """the user turn (the chat template adds the model's default system prompt)"""
    max_new_tokens: int = 48
    """the reply's budget in tokens, in training and evaluation"""
    budgets_considered: tuple = (16, 32, 48, 64)
    """budgets at which the base model's greedy accuracy and cut share are measured"""
    n_test: int = 48
    """held-out questions (every measurement uses all of them)"""
    samples: int = 64
    """samples per question for Pass@K / Maj@K (K = 1, 2, 4, ..., samples)"""
    temperature: float = 0.7
    """sampling temperature of the evaluation (the paper's)"""
    grpo_steps: int = 8
    """GRPO steps"""
    dpo_steps: int = 8
    """on-policy DPO steps (up to prompts_per_step pairs, from at most 2 draws, per step)"""
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
    examples: int = 4
    """example greedy replies recorded per measurement"""
    bootstrap: int = 2000
    """bootstrap resamples of the questions for the intervals over questions"""
    arms: tuple = ("grpo", "dpo-on-policy")
    """the trained models compared with the base model"""


BUDGETS = {
    "cpu": Budget(),
    "gpu": Budget(world="llm-gpu", max_new_tokens=64, budgets_considered=(32, 64, 96, 128), n_test=256,
                  grpo_steps=100, dpo_steps=100, prompts_per_step=16, group_size=8, lr=2e-5, lora_r=16),
    "tiny": Budget(max_new_tokens=6, budgets_considered=(4, 6), n_test=4, samples=2, grpo_steps=1, dpo_steps=1,
                   prompts_per_step=2, group_size=2, examples=2, bootstrap=50),
}

ARMS = ("grpo", "dpo-on-policy")
MODELS = ("base", *ARMS)


def task_of(b):
    """The question mix of budget `b`."""
    parts = tuple(WordsTask(digits=d, template=b.template, max_new_tokens=b.max_new_tokens) for d in b.digits)
    return parts[0] if len(parts) == 1 else MixedTask(parts)


def world(b):
    """The LLM preset every run of budget `b` trains in."""
    p = llm_preset(b.world, model=b.model, task=task_of(b), llm={"lora_r": b.lora_r})
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


def cut_flags(rollout, stops):
    """(B,) True where a reply of `sampling.sample` did not end with a stop token: the budget cut it."""
    last = rollout.input_ids[torch.arange(len(rollout)), rollout.prompt_len + rollout.response_lengths - 1]  # (B,)
    return ~torch.isin(last, torch.as_tensor(stops, device=last.device))  # (B,)


@torch.no_grad()
def greedy(policy, tokenizer, test, budget, examples=0):
    """Greedy accuracy, cut share, reply length and parse shares on `test` at `budget` new tokens."""
    r = sample(policy, tokenizer, test, greedy=True, max_new_tokens=budget)
    right = rule_reward(r.problems, r.texts)  # (n,)
    out = {"greedy": right.mean().item(), "greedy_cut": cut_flags(r, stop_ids(policy, tokenizer)).float().mean().item(),
           "reply_chars": float(np.mean([len(t) for t in r.texts])), **parse_shares(r.texts)}
    if examples:
        out["examples"] = [{"question": p.prompt, "answer": p.answer, "reply": t, "right": bool(ok)}
                           for p, t, ok in list(zip(r.problems, r.texts, right.tolist()))[:examples]]
    return out


def tally(answers):
    """[[answer, count], ...] of one question's parsed answers, most frequent first (None: unparsed)."""
    counts = {}
    for a in answers:
        counts[a] = counts.get(a, 0) + 1
    return sorted(([a, c] for a, c in counts.items()), key=lambda x: (-x[1], str(x[0])))


def question_curves(t, answer, ks):
    """(Pass@K list, Maj@K list) of one question from its tally and right answer (exact estimators)."""
    answers = [a for a, c in t for _ in range(c)]
    n, c = len(answers), sum(c for a, c in t if a == answer)
    return [pass_at_k(n, c, k) for k in ks], [maj_at_k(answers, answer, k) for k in ks]


@torch.no_grad()
def measure(policy, tokenizer, test, b, seed):
    """One model on `test`: greedy as `greedy`, and `samples` sampled replies per question (sampling
    seed 10_000 + seed): their tallies, cut share and Pass@K / Maj@K curves (means over questions)."""
    common.phase(f"evaluating: greedy on {len(test)} questions, then {b.samples} samples of each")
    clock = common.Clock()
    out = greedy(policy, tokenizer, test, b.max_new_tokens, b.examples)
    torch.manual_seed(10_000 + seed)  # the seed's own noise, the same for each model of the seed
    ks, tallies, cut, tokens, curves = common.powers_of_two(b.samples), [], 0, 0, []
    for p in test:
        r = replies(policy, tokenizer, p, b.samples, b.max_new_tokens, b.temperature)
        tallies.append(tally([answer_of(p, t) for t in r.texts]))
        cut, tokens = cut + sum(r.cut), tokens + sum(r.tokens)
        curves.append(question_curves(tallies[-1], p.answer, ks))
    n = len(test) * b.samples
    out.update(sampled_cut=cut / n, sampled_tokens=tokens / n, tallies=tallies,
               pass_at_k=np.mean([c[0] for c in curves], 0).tolist(),
               maj_at_k=np.mean([c[1] for c in curves], 0).tolist(), **clock.read())
    return out


TRAINING = ("grpo_steps", "dpo_steps", "prompts_per_step", "group_size", "lr", "dpo_beta", "lora_r")
"""Budget fields that change a trained model's part only (a base model's part does not depend on them)."""
SUMMARY_ONLY = ("arms", "bootstrap")
"""Budget fields that change no part, only which parts are read and how they are summarised."""


class Parts:
    """OUT/real-model.parts/NAME.json: each finished unit of a run, reused by a run whose budget agrees on
    every field the unit depends on (a base model's part: on none of TRAINING)."""

    def __init__(self, folder, budget):
        kept = {k: v for k, v in asdict(budget).items() if k not in SUMMARY_ONLY}
        self.folder, self.budget = folder, json.loads(json.dumps(kept))

    def get(self, name, compute):
        path = os.path.join(self.folder, f"{name}.json")
        keys = [k for k in self.budget if not (name.endswith("base") or name == "base-budgets") or k not in TRAINING]
        if os.path.exists(path):
            with open(path) as f:
                part = json.load(f)
            stored = part.get("budget") or {}
            if any(stored.get(k) != self.budget[k] for k in keys):
                raise ValueError(f"{path} was made with another budget; move the folder away or choose another --out")
            return part["value"]
        value = compute()
        os.makedirs(self.folder, exist_ok=True)
        with open(path + ".new", "w") as f:
            json.dump({"budget": self.budget, "value": value}, f, allow_nan=False)
        os.replace(path + ".new", path)  # a kill leaves no half-written part
        return value


def train_and_measure(p, b, seed, arm, test, progress):
    """One arm trained from the pretrained weights on seed `seed`, and measured."""
    steps = b.grpo_steps if arm == "grpo" else b.dpo_steps
    common.phase(f"seed {seed}: {arm}, {steps} steps from the pretrained weights")
    r = train(method_of(arm), preset=p, steps=steps, seed=seed, progress=progress, eval_every=0)
    out = measure(r.policy, r.tokenizer, test, b, seed)
    out["curve"] = [{k: m[k] for k in ("step", "seconds", "accuracy", "response_len") if k in m} for m in r.metrics]
    out["train_wall_s"] = r.summary["seconds"]
    return out


def run(preset="auto", out="results", seeds=3, progress=True, **budget):
    """Run the experiment; write OUT/real-model.json and .png; return the result."""
    exp = common.begin("real-model", BUDGETS, preset, out, seeds, progress, budget)
    preset, b, say, clock = exp.preset, exp.budget, exp.say, exp.clock
    if b.samples < 2 or b.n_test < 2:
        raise ValueError(f"need samples >= 2 and n_test >= 2, got {b.samples}, {b.n_test}")
    if min(b.grpo_steps, b.dpo_steps) < 1:
        raise ValueError(f"grpo_steps and dpo_steps must be >= 1, got {b.grpo_steps}, {b.dpo_steps}")
    if not b.arms or any(a not in ARMS for a in b.arms):
        raise ValueError(f"arms must be some of {ARMS}, got {b.arms!r}")
    if b.max_new_tokens not in b.budgets_considered:
        raise ValueError(f"max_new_tokens {b.max_new_tokens} must be one of budgets_considered {b.budgets_considered}")
    p, parts = world(b), Parts(os.path.join(out, "real-model.parts"), b)
    lab = make_lab(p, 0)
    test = lab.test_problems[: b.n_test]
    sweep = parts.get("base-budgets", lambda: {str(n): greedy(lab.policy, lab.tokenizer, test, n)
                                               for n in b.budgets_considered})
    say("real-model base model, greedy: " + ", ".join(f"{n} tokens {v['greedy']:.3f} ({v['greedy_cut']:.0%} cut)"
                                                     for n, v in sweep.items()))
    per_seed = []
    for seed in range(seeds):
        row = {"seed": seed, "base": parts.get(f"seed{seed}-base", lambda: measure(lab.policy, lab.tokenizer, test,
                                                                                     b, seed))}
        for arm in b.arms:
            row[arm] = parts.get(f"seed{seed}-{arm}", lambda: train_and_measure(p, b, seed, arm, test, progress))
        per_seed.append(row)
        say(f"real-model seed {seed}: " + ", ".join(f"{m} greedy {row[m]['greedy']:.3f} Pass@{b.samples} "
                                                   f"{row[m]['pass_at_k'][-1]:.3f}" for m in ("base", *b.arms)))
    del lab
    questions = [{"question": q.prompt, "answer": q.answer} for q in test]
    result = summarise(per_seed, questions, sweep, preset, b, seeds, clock.read())
    return exp.finish(result, plot)


def per_question(per_seed, questions, model, key, ks):
    """(S, Q, K) array of one model's per-question Pass@K (key pass_at_k) or Maj@K (maj_at_k)."""
    i = 0 if key == "pass_at_k" else 1
    return np.array([[question_curves(t, q["answer"], ks)[i] for t, q in zip(s[model]["tallies"], questions)]
                     for s in per_seed])


def summarise(per_seed, questions, sweep, preset, b, seeds, seconds):
    """Means over seeds, each arm - base per K with its intervals, the verdicts at the primary K, the headline."""
    ks = common.powers_of_two(b.samples)
    result = {"experiment": "real-model", "preset": preset.name, "seeds": seeds, "budget": asdict(b), "k": ks,
              "arms": list(b.arms), "budgets_considered": sweep,
              "questions": questions, "mean": {}, "change": {}}
    models = ("base", *b.arms)
    for m in models:
        result["mean"][m], _ = common.mean_curves([s[m] for s in per_seed])
    curves = {m: {key: per_question(per_seed, questions, m, key, ks) for key in ("pass_at_k", "maj_at_k")} for m in models}
    for arm in b.arms:
        c = result["change"][arm] = {}
        for key in ("pass_at_k", "maj_at_k"):
            c[key] = [paired.compare(curves["base"][key][:, :, i], curves[arm][key][:, :, i], b.bootstrap)
                      for i in range(len(ks))]
        greedy_d = [s[arm]["greedy"] - s["base"]["greedy"] for s in per_seed]
        c["greedy"] = {"per_seed": greedy_d, **common.stats(greedy_d)}
    result["per_seed"] = per_seed
    result["seconds"] = seconds
    return derive(result)
