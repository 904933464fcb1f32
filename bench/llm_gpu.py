"""A pretrained chat model trained with GRPO through `train()`: seconds per step, peak memory, accuracy before/after.

    python bench/llm_gpu.py --model smollm2 --task words:1 --steps 20 --n-test 32 --out OUT.json
    python bench/llm_gpu.py --model Qwen/Qwen2.5-0.5B-Instruct --task gsm8k --steps 30 --out OUT.json
scripts/gpu_check.py runs the first (its `llm` phase; its --dry-run the same on the CPU with a tiny budget).
The preset's question counts are fitted to the task (single-digit sums in words are 100 questions in all:
--n-test of them are held out, the rest are trained on). Writes one JSON object: the device, the preset's
precision, greedy accuracy on the held-out questions before and after (the same questions), the mean
reply length in characters, each step's batch reward, median seconds per step (the first step excluded:
it includes warm-up), and peak memory (`torch.cuda.max_memory_allocated` on a GPU, the process's peak
RSS on a CPU). With --fp32-steps N, N more GRPO steps from the start with float32 weights and bf16
autocast off give the same two figures without bf16. The file is written once the accuracy before is
known and again at the end, so a run stopped at its limit still says how far it got.
"""

import argparse
import dataclasses
import json
import os
import resource
import statistics
import sys
import time

import torch

from unified_rl.lab import make_lab
from unified_rl.rewards import rule_reward
from unified_rl.sampling import sample
from unified_rl.trainer import llm_preset, train


def greedy(policy, tokenizer, problems):
    """Greedy accuracy and mean reply length (characters) on `problems`."""
    with torch.no_grad():
        r = sample(policy, tokenizer, problems, greedy=True)
    right = rule_reward(r.problems, r.texts)
    return {"greedy": right.mean().item(), "reply_chars": sum(map(len, r.texts)) / len(r.texts)}


def peak_memory_gb(cuda):
    if cuda:
        return torch.cuda.max_memory_allocated() / 2**30
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux


def step_seconds(metrics):
    """Median seconds per step from the metric rows' cumulative clock, the first step excluded."""
    t = [m["seconds"] for m in metrics if "seconds" in m]
    gaps = [b - a for a, b in zip(t, t[1:])]
    return statistics.median(gaps) if gaps else (t[0] if t else None)


def align_tokenizer(model):
    """Where transformers' GGUF reader took another token for EOS than the model's config names (5.17 reads
    <|im_start|> for SmolLM2, 5.23 <|im_end|>), make the converted tokenizer's EOS and padding the model's
    EOS in its folder, as 5.23 writes them; returns what changed (None: nothing did, or not an alias)."""
    from unified_rl import llm

    if model.lower() not in llm.ALIASES:
        return None
    return align_tokenizer_in(llm.pretrained_folder(model))  # converts the GGUF file once


def align_tokenizer_in(folder):
    """align_tokenizer on a model folder."""
    from transformers import AutoConfig, AutoTokenizer

    tok, eos = AutoTokenizer.from_pretrained(folder), AutoConfig.from_pretrained(folder).eos_token_id
    if tok.eos_token_id == eos:
        return None
    was = tok.eos_token
    tok.eos_token = tok.pad_token = tok.convert_ids_to_tokens(eos)
    tok.save_pretrained(folder)
    return f"{folder}: EOS and padding {was!r} -> {tok.eos_token!r} (id {eos}, the model's)"


def fit_to_task(p, n_test=None):
    """`p` with its question counts within the task's: n_test held out (default: the preset's, or a third of the
    questions where the preset asks for more than there are), the rest (at most the preset's n_rl) to train
    on. ValueError if too few are left to train on."""
    pool, asked = getattr(p.task, "n_problems", None), n_test
    n_test = p.n_test if asked is None else asked
    if pool is None:  # a task read from a file (GSM8K): its own splits say what fits
        return p.with_(n_test=n_test, eval_problems=min(p.eval_problems, n_test), k_problems=min(p.k_problems, n_test))
    if asked is None and p.n_rl + n_test > pool:
        n_test = min(n_test, pool // 3)
    n_rl = min(p.n_rl, pool - n_test)
    if n_test < 1 or n_rl < p.rl.prompts_per_step:
        raise ValueError(f"the task has {pool} questions: {n_test} held out leaves {pool - n_test} to train on, "
                         f"fewer than the {p.rl.prompts_per_step} questions per step")
    return p.with_(n_test=n_test, n_rl=n_rl, n_sft=min(p.n_sft, n_rl), eval_problems=min(p.eval_problems, n_test),
                   k_problems=min(p.k_problems, n_test))


def configure(model, task, preset="auto", n_test=None, max_new_tokens=None, lora_r=None, prompts_per_step=None,
              group_size=None):
    """The run's preset: `preset`'s (llm-gpu where CUDA is, else llm-cpu) with the given changes, fitted to the task."""
    p = llm_preset(preset, model=model, task=task, llm=None if lora_r is None else {"lora_r": lora_r})
    rl = {k: v for k, v in (("prompts_per_step", prompts_per_step), ("group_size", group_size)) if v is not None}
    if rl:
        p = p.with_(rl=rl)
    if max_new_tokens is not None:
        p = p.with_(task=dataclasses.replace(p.task, max_new_tokens=max_new_tokens))
    return fit_to_task(p, n_test)


def _grpo(p, steps, seed, cuda):
    """GRPO for `steps` steps from the preset's model: (the Run, peak memory in GB)."""
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    r = train("grpo", preset=p, steps=steps, seed=seed, eval_every=0, progress=False)
    return r, peak_memory_gb(cuda)


def run(p, steps, seed=0, out=None, fp32_steps=0, task=None, aligned=None):
    """GRPO on preset `p` for `steps` steps: the measurements as a dict (also written to `out` as they come);
    `task` names the task in the record, `aligned` what align_tokenizer changed."""
    cuda = torch.cuda.is_available()
    t0 = time.perf_counter()
    lab = make_lab(p, seed)
    test = lab.test_problems[: p.n_test]
    res = {"model": p.llm.model, "task": task or type(p.task).__name__, "preset": p.name,
           "device": torch.cuda.get_device_name(0) if cuda else "cpu", "dtype": p.llm.dtype,
           "weights_dtype": str(next(lab.policy.parameters()).dtype), "lora_r": p.llm.lora_r, "steps": 0,
           "steps_asked": steps, "n_train": len(lab.rl_problems), "n_test": len(test),
           "prompts_per_step": p.rl.prompts_per_step, "group_size": p.rl.group_size,
           "max_new_tokens": p.task.max_new_tokens, "tokenizer_aligned": aligned,
           "before": greedy(lab.policy, lab.tokenizer, test)}
    del lab
    _write(out, res)
    r, peak = _grpo(p, steps, seed, cuda)
    res.update(steps=r.summary["step"], after=greedy(r.policy, r.tokenizer, test),
               reward_per_step=[m.get("reward") for m in r.metrics], seconds_per_step=step_seconds(r.metrics),
               train_seconds=r.summary["seconds"], peak_memory_gb=peak,
               peak_memory_kind="cuda max_memory_allocated" if cuda else "peak RSS")
    del r
    _write(out, res)
    if fp32_steps:
        old = os.environ.get("UNIFIED_RL_BF16")
        os.environ["UNIFIED_RL_BF16"] = "0"
        try:
            r, peak = _grpo(p.with_(llm={"dtype": "float32"}), fp32_steps, seed, cuda)
        finally:
            if old is None:
                del os.environ["UNIFIED_RL_BF16"]
            else:
                os.environ["UNIFIED_RL_BF16"] = old
        res["fp32"] = {"steps": r.summary["step"], "seconds_per_step": step_seconds(r.metrics), "peak_memory_gb": peak,
                       "weights_dtype": str(next(r.policy.parameters()).dtype)}
    res["wall_seconds"] = time.perf_counter() - t0
    _write(out, res)
    return res


def _write(out, res):
    if out:
        with open(f"{out}.tmp", "w") as f:
            json.dump(res, f, indent=2, allow_nan=False)
        os.replace(f"{out}.tmp", out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--task", default="words:1")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--preset", default="auto", help="llm-cpu, llm-gpu or auto (llm-gpu where CUDA is)")
    ap.add_argument("--n-test", type=int, help="held-out questions (default: the preset's, at most a third of the task's)")
    ap.add_argument("--max-new-tokens", type=int, help="reply budget (default: the task's)")
    ap.add_argument("--lora-r", type=int, help="LoRA rank (default: the preset's)")
    ap.add_argument("--prompts-per-step", type=int, help="questions per GRPO step (default: the preset's)")
    ap.add_argument("--group-size", type=int, help="replies per question (default: the preset's)")
    ap.add_argument("--fp32-steps", type=int, default=0, help="then this many steps in float32, bf16 off")
    ap.add_argument("--align-tokenizer", action="store_true", help="repair the converted alias's EOS token where this "
                    "transformers read it wrongly from the GGUF file (it rewrites the tokenizer in the model cache)")
    ap.add_argument("--out", required=True, help="JSON file to write")
    a = ap.parse_args(argv)
    if os.path.exists(a.out):
        sys.exit(f"llm_gpu: {a.out} exists; give a new file")
    try:
        aligned = align_tokenizer(a.model) if a.align_tokenizer else None
        if aligned:
            print(f"llm_gpu: aligned the tokenizer: {aligned}", flush=True)
        p = configure(a.model, a.task, a.preset, a.n_test, a.max_new_tokens, a.lora_r, a.prompts_per_step,
                      a.group_size)
        res = run(p, a.steps, out=a.out, fp32_steps=a.fp32_steps, task=a.task, aligned=aligned)
    except ValueError as e:
        sys.exit(f"llm_gpu: {e}")
    print(f"{a.model} on {a.task}: greedy {res['before']['greedy']:.3f} -> {res['after']['greedy']:.3f} after "
          f"{res['steps']} GRPO steps, {res['seconds_per_step']:.2f} s/step, peak {res['peak_memory_gb']:.2f} GB "
          f"({res['peak_memory_kind']})")


if __name__ == "__main__":
    main()
