"""Our GRPO against TRL's `GRPOTrainer` on a real chat model (SmolLM2-135M-Instruct, CPU): seconds
per step, samples/s, our step's phases, and the parameter gradient of one batch.

    python bench/trl_smollm2.py [--model smollm2] [--steps 3] [--rounds 7] [--modes lora,full] [--no-agreement]
Needs the `bench` and `llm` extras. Nothing is downloaded: `smollm2` is the offline alias
(`unified_rl.llm.pretrained_folder`: the cached safetensors folder), and TRL loads that same folder
by path (HF_HUB_OFFLINE=1), with our tokenizer and a local `datasets.Dataset` of the same questions.

Both sides alike (SETTINGS): the words task (single-digit sums, `WordsTask(digits=1)`) as chat
prompts through the tokenizer's template (TRL: a conversational dataset; ours: `encode_problems`),
2 prompts x 4 samples of at most 16 new tokens per step, the same lr, beta (> 0, so a reference is
used), clip epsilon and temperature, one update per batch, no warm-up, float32; LoRA with the same
rank, alpha and target modules (pi_ref: the adapter disabled, on both), or full fine-tuning (pi_ref:
a second copy, on both); gradient checkpointing off on both; the whole batch in one forward on both
(no micro-batches). Timing as in trl_compare.py: the clock at each step's end, the median of the
differences (first step excluded); rounds alternate the two trainers (which goes first alternates too),
and the ratio of medians is quoted with a 90 % bootstrap interval over rounds and the min/max of each
round's own ratio, beside seconds per generated token (the replies' lengths differ between runs).
Our step's phases and their roof: llm_roof.py.
"""

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
from unittest import mock
from dataclasses import dataclass

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

from trl_compare import median_step, timed_train  # noqa: E402
from unified_rl import coefficients, sampling  # noqa: E402
from unified_rl.kl import k3  # noqa: E402
from unified_rl.llm import LORA_TARGETS, pretrained_folder  # noqa: E402
from unified_rl.paradigm import surrogate_loss  # noqa: E402
from unified_rl.rewards import rule_reward  # noqa: E402
from unified_rl.sampling import sample  # noqa: E402
from unified_rl.trainer import llm_preset, make_lab, train  # noqa: E402
from unified_rl.wiring import policy_logp  # noqa: E402
from unified_rl.words import WordsTask, parse_lenient  # noqa: E402


@dataclass(frozen=True)
class Settings:
    """What both trainers are given."""

    prompts: int = 2
    group: int = 4
    max_new: int = 16
    lr: float = 5e-6
    beta: float = 0.04
    clip_eps: float = 0.2
    temperature: float = 1.0
    lora_r: int = 8
    lora_alpha: int = 16


SETTINGS = Settings()


def our_preset(folder, s=SETTINGS, lora=True, checkpointing=False):
    """The llm-cpu preset on `folder` with the settings `s` (no micro-batches)."""
    return llm_preset("llm-cpu", model=folder, task=WordsTask(digits=1, max_new_tokens=s.max_new),
                      llm={"lora_r": s.lora_r if lora else 0, "lora_alpha": s.lora_alpha, "micro_batch": 0,
                           "grad_checkpointing": checkpointing, "dtype": "float32"}).with_(
        rl={"prompts_per_step": s.prompts, "group_size": s.group, "lr": s.lr, "beta": s.beta,
            "clip_eps": s.clip_eps, "temperature": s.temperature})


def ours_seconds_per_step(folder, s, lora, steps):
    """(median s/step, mean reply length in tokens, EOS included) of our trainer."""
    run = train("grpo", preset=our_preset(folder, s, lora), steps=steps, progress=False, eval_every=0)
    return median_step([m["seconds"] for m in run.metrics]), statistics.mean(m["response_len"] for m in run.metrics)


def trl_trainer(folder, s, lora, out_dir, steps):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    lab_preset = our_preset(folder, s, lora)
    problems = lab_preset.task.splits(lab_preset.n_rl, lab_preset.n_test, seed=lab_preset.seed)[0]
    data = Dataset.from_dict({"prompt": [[{"role": r, "content": c} for r, c in p.messages] for p in problems],
                              "answer": [p.answer for p in problems]})

    def correct(prompts, completions, answer, **kw):  # the rule our WordProblem.parse applies (lenient)
        return [float(parse_lenient(c[0]["content"]) == a) for c, a in zip(completions, answer)]

    cfg = GRPOConfig(
        output_dir=out_dir, max_steps=steps, learning_rate=s.lr, beta=s.beta, epsilon=s.clip_eps,
        num_generations=s.group, per_device_train_batch_size=s.prompts * s.group,
        gradient_accumulation_steps=1, steps_per_generation=1, num_iterations=1,
        max_completion_length=s.max_new, temperature=s.temperature, top_k=0, top_p=1.0,
        loss_type="grpo", scale_rewards="group", max_grad_norm=1.0, warmup_steps=0,
        lr_scheduler_type="constant", weight_decay=0.0, use_cpu=not torch.cuda.is_available(),
        bf16=False, fp16=False, report_to="none", save_strategy="no", logging_steps=1,
        gradient_checkpointing=False, disable_tqdm=True, seed=0, remove_unused_columns=False)
    peft_config = None
    if lora:
        from peft import LoraConfig

        peft_config = LoraConfig(r=s.lora_r, lora_alpha=s.lora_alpha, lora_dropout=0.0,
                                 target_modules=LORA_TARGETS, task_type="CAUSAL_LM")  # as llm.add_lora
    from unified_rl.tokenizer import load_tokenizer

    return GRPOTrainer(model=folder, reward_funcs=correct, args=cfg, train_dataset=data,
                       processing_class=load_tokenizer(folder), peft_config=peft_config)


def trl_seconds_per_step(folder, s, lora, steps):
    with tempfile.TemporaryDirectory() as out_dir:
        trainer = trl_trainer(folder, s, lora, out_dir, steps)
        seconds = timed_train(trainer)
    lengths = [r["completions/mean_length"] for r in trainer.state.log_history if "completions/mean_length" in r]
    return seconds, statistics.mean(lengths) if lengths else None


def ratio_interval(ours, theirs, draws=2000, seed=0):
    """90 % bootstrap interval of median(theirs) / median(ours), rounds resampled as pairs."""
    rng, k = random.Random(seed), len(ours)
    vals = []
    for _ in range(draws):
        idx = [rng.randrange(k) for _ in range(k)]
        vals.append(statistics.median(theirs[i] for i in idx) / statistics.median(ours[i] for i in idx))
    vals.sort()
    return [round(vals[int(0.05 * draws)], 3), round(vals[int(0.95 * draws) - 1], 3)]


def speed(folder, s, lora, steps, rounds):
    """Seconds per step (and per generated token) of both trainers in alternating rounds, their ratio
    with a 90 % bootstrap interval over rounds and the min/max of each round's own ratio.

    Rounds alternate which trainer goes first (ours-TRL, TRL-ours, ...), so a load that drifts
    during a round pair slows each side first as often as second; the load average is recorded
    before every run."""
    per = {"ours": [], "trl": []}
    lengths, load = {"ours": [], "trl": []}, []
    sides = (("ours", ours_seconds_per_step), ("trl", trl_seconds_per_step))
    for r in range(rounds):
        for side, fn in sides if r % 2 == 0 else sides[::-1]:
            load.append(round(os.getloadavg()[0], 2))
            sec, length = fn(folder, s, lora, steps)
            per[side].append(sec)
            lengths[side].append(length)
    ours, theirs = per["ours"], per["trl"]
    o, t = statistics.median(ours), statistics.median(theirs)
    rows = s.prompts * s.group
    # seconds per generated token: a step's seconds / the tokens its replies held (EOS included)
    tok = {k: [sec / (rows * n) for sec, n in zip(per[k], lengths[k]) if n] for k in per}
    paired = [b / a for a, b in zip(ours, theirs)]  # each round's own ratio (adjacent runs)
    row = {"ours_seconds_per_step": round(o, 3), "trl_seconds_per_step": round(t, 3),
           "ours_samples_per_second": round(rows / o, 3), "trl_samples_per_second": round(rows / t, 3),
           "per_round": {k: [round(x, 3) for x in v] for k, v in per.items()},
           # replies are sampled, so their lengths (and the work of a step) differ between runs
           "mean_reply_tokens_per_round": {k: [v if v is None else round(v, 2) for v in x] for k, x in lengths.items()},
           "grpo_step_speedup_vs_trl": round(t / o, 3),
           "speedup_interval_90": ratio_interval(ours, theirs),
           "per_round_ratio": [round(x, 3) for x in paired],
           "per_round_ratio_min_max": [round(min(paired), 3), round(max(paired), 3)],
           "load_average_per_run": load}
    if len(tok["ours"]) == rounds and len(tok["trl"]) == rounds:
        row["ms_per_generated_token"] = {k: round(1e3 * statistics.median(v), 2) for k, v in tok.items()}
        row["speedup_per_generated_token"] = round(statistics.median(tok["trl"]) / statistics.median(tok["ours"]), 3)
        row["speedup_per_generated_token_interval_90"] = ratio_interval(tok["ours"], tok["trl"])
    return row


def rel(a, b):
    """Max over parameter tensors of max|a - b| / max|b|."""
    return max(((a[n] - b[n]).abs().max() / b[n].abs().max().clamp_min(1e-30)).item() for n in b)


def gradient_agreement(folder, s=SETTINGS, seed=0, noise=0.02):
    """Our eq-21 gradient vs TRL's `_compute_loss` on one constructed batch, full fine-tuning, float32.

    The policy is moved off pi_ref by Gaussian noise of `noise` x each tensor's std, so the KL term
    is not zero (`kl_mean`: the batch's mean k3; `kl_share`: max|beta * KL part of GC| / max|GC|).
    """
    preset = our_preset(folder, s, lora=False)
    lab = make_lab(preset, seed=seed)
    torch.manual_seed(seed)
    with torch.no_grad():  # move the policy a little off pi_ref so the KL term is not zero
        for p in lab.policy.parameters():
            p.add_(noise * p.std().nan_to_num(0.0) * torch.randn_like(p))
    batch = sample(lab.policy, lab.tokenizer, lab.rl_problems[: s.prompts], group_size=s.group)
    rewards = rule_reward(batch.problems, batch.texts)
    if (rewards.view(-1, s.group).std(1) == 0).any():  # give every group a spread to normalise
        rewards = (torch.arange(len(rewards)) % 3 == 0).float()
    P, G = batch.prompt_len, s.group
    with torch.no_grad():
        logp_ref = policy_logp(lab.ref, batch, response_only=True)  # (B, T)
    del lab.ref  # TRL's trainer holds its own copies: one fewer in memory
    with torch.no_grad():
        logp0 = policy_logp(lab.policy, batch, response_only=True)  # (B, T)
    m = batch.mask.bool()
    kl_coef = s.beta * torch.expm1(logp_ref - logp0)[m]  # eq 21's KL part of GC
    adv_max = (rewards.view(-1, G) - rewards.view(-1, G).mean(1, keepdim=True)).abs().max()
    kl_stats = {"kl_mean": k3(logp0[m], logp_ref[m]).mean().item(),
                "kl_share": (kl_coef.abs().max() / (kl_coef.abs().max() + adv_max)).item()}

    def ours(eps, k3_term=False, reward=rewards):
        lab.policy.zero_grad(set_to_none=True)
        logp = policy_logp(lab.policy, batch, response_only=True)  # (B, T)
        coef = coefficients.grpo(reward, G, logp, logp_ref.to(logp.dtype), batch.mask, s.beta, eps=eps,
                                 logp_old=logp.detach(), clip_eps=s.clip_eps)
        if k3_term:  # what TRL's KL importance weight adds to the coefficient
            coef = coef - s.beta * k3(logp.detach(), logp_ref) * batch.mask
        surrogate_loss(logp, coef, batch.mask).backward()
        return {n: p.grad.clone() for n, p in lab.policy.named_parameters()}

    with tempfile.TemporaryDirectory() as out_dir:
        trainer = trl_trainer(folder, s, False, out_dir, 1)
        model = trainer.model
        model.load_state_dict(lab.policy.state_dict())
        model.train()
        r = rewards.view(-1, G)
        adv = ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-4)).view(-1)  # TRL's formula
        inputs = {"prompt_ids": batch.input_ids[:, :P], "prompt_mask": batch.attention_mask[:, :P],
                  "completion_ids": batch.input_ids[:, P:], "completion_mask": batch.attention_mask[:, P:],
                  "advantages": adv, "ref_per_token_logps": logp_ref[:, P - 1:],
                  "num_items_in_batch": batch.mask.sum()}
        trainer.current_gradient_accumulation_steps = 1

        def theirs(kl_correction):
            trainer.args.use_bias_correction_kl = kl_correction
            model.zero_grad(set_to_none=True)
            trainer._compute_loss(model, inputs).backward()
            return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}

        trl_default, trl_plain = theirs(True), theirs(False)
        del trainer, model
    mismatched = rewards.view(-1, G).roll(1, dims=1).view(-1)  # each group's rewards on other rows
    result = {
        "max_rel_diff_trl_defaults": rel(ours(1e-6), trl_default),
        "max_rel_diff_kl_correction_off": rel(ours(1e-6), trl_plain),
        "max_rel_diff_kl_correction_off_same_eps": rel(ours(1e-4), trl_plain),
        "max_rel_diff_with_extra_k3_term": rel(ours(1e-4, k3_term=True), trl_default),
        # a negative control: the same comparison with the rewards moved to other rows of their group
        "max_rel_diff_mismatched_rewards": rel(ours(1e-4, reward=mismatched), trl_plain),
        "params_compared": len(trl_plain), "rows": len(batch), "dtype": "float32", **kl_stats,
        "no_left_padding": bool(batch.attention_mask[:, :P].all()),
        "measure": "max over parameter tensors of max|g_ours - g_trl| / max|g_trl|",
    }
    shared = ours(1e-4)
    with mock.patch.object(sampling, "_can_share", lambda model: False):  # every row whole, as TRL runs it
        rows = ours(1e-4)
    result["max_rel_diff_every_row_whole"] = rel(rows, trl_plain)
    # The same batch's gradient in float64 (a float64 model runs every row whole with grad on): how far
    # each float32 computation -- ours with the group's prompt shared, ours whole-row, TRL's -- is from it.
    lab.policy.double()
    exact = ours(1e-4, reward=rewards.double())
    result["float32_error_vs_float64"] = {"ours_shared_prompt": rel(shared, exact),
                                          "ours_every_row_whole": rel(rows, exact), "trl": rel(trl_plain, exact)}
    return result


def measure(model="smollm2", steps=3, rounds=7, modes=("lora", "full"), s=SETTINGS, agreement=True):
    """Speed per mode (lora: adapters on both sides; full: full fine-tuning on both), then agreement."""
    bad = [m for m in modes if m not in ("lora", "full")]
    if bad:
        raise ValueError(f"unknown mode(s) {bad}; choose lora or full")
    result = {"model": model, "steps": steps, "rounds": rounds, "settings": s.__dict__,
              "batch": s.prompts * s.group, "torch_threads": torch.get_num_threads(),
              "timing": "median seconds per optimizer step, first step excluded, both trainers"}
    try:
        import trl

        result["trl_version"] = trl.__version__
        folder = pretrained_folder(model)
    except (ImportError, ValueError) as e:
        result.update({"grpo_step_speedup_vs_trl": None, "trl_agreement": None,
                       "reason": f"{type(e).__name__}: {e} (pip install -e '.[bench,llm]')"})
        return result
    result["by_mode"] = {}
    for mode in modes:
        row = result["by_mode"][mode] = speed(folder, s, mode == "lora", steps, rounds)
        print(f"{model} {mode}: ours {row['ours_seconds_per_step']} s, TRL {row['trl_seconds_per_step']} s "
              f"per step -> {row['grpo_step_speedup_vs_trl']}x (90 % interval {row['speedup_interval_90']}, "
              f"rounds {row['per_round_ratio']})", flush=True)
    result["grpo_step_speedup_vs_trl"] = {m: r["grpo_step_speedup_vs_trl"] for m, r in result["by_mode"].items()}
    result["speedup_interval_90"] = {m: r["speedup_interval_90"] for m, r in result["by_mode"].items()}
    result["trl_agreement"] = gradient_agreement(folder, s) if agreement else None
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2", help="alias or local folder [smollm2]")
    ap.add_argument("--steps", type=int, default=3, help="steps per trainer and round (the first is not timed) [3]")
    ap.add_argument("--rounds", type=int, default=7, help="alternating rounds per mode [7]")
    ap.add_argument("--modes", default="lora,full", help="comma-separated: lora, full [lora,full]")
    ap.add_argument("--no-agreement", action="store_true", help="speed only: skip the gradient agreement")
    args = ap.parse_args()
    try:
        res = measure(args.model, args.steps, args.rounds, tuple(m for m in args.modes.split(",") if m),
                      agreement=not args.no_agreement)
    except ValueError as e:
        sys.exit(f"error: {e}")
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
