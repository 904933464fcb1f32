"""Does a preset's learning rate move SmolLM2-135M-Instruct? Full fine-tuning and LoRA, a few GRPO steps.

For each arm (full fine-tuning or LoRA, and a learning rate) the llm-cpu preset trains `--steps` GRPO
steps from the same weights (seed 0), then the trained policy is compared with the model it started
from on the same held-out questions: how many greedy replies changed, the mean |change| of the
per-token log-probs of the starting model's greedy replies (teacher-forced), and greedy accuracy.
Writes everything, with the command, to --out (JSON). One seed: what moves, not what is better.

    python bench/llm_lr.py --steps 2 --out bench/llm_lr.json
    python bench/llm_lr.py --steps 8 --arms full:5e-6,lora:2e-4 --out bench/llm_lr_8.json
"""

import argparse
import json
import sys
import time

import torch

from unified_rl.rewards import rule_reward
from unified_rl.sampling import rollout_from_texts, sample, token_logp
from unified_rl.trainer import train

ARMS = (("full", 0, 5e-6), ("lora", 8, 5e-6), ("lora", 8, 1e-4), ("lora", 8, 2e-4))
"""(kind, LoRA rank, learning rate): llm-cpu's own lr first, then LoRA at it and at larger ones"""


@torch.no_grad()
def replies(policy, tokenizer, problems):
    r = sample(policy, tokenizer, problems, greedy=True)
    return r.texts, rule_reward(r.problems, r.texts).mean().item()


@torch.no_grad()
def logp_of(policy, tokenizer, problems, texts):
    batch = rollout_from_texts(tokenizer, problems, texts)
    return token_logp(policy, batch.input_ids, batch.attention_mask) * batch.mask, batch.mask  # (B, T)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--questions", type=int, default=16)
    p.add_argument("--arms", default=",".join(f"{k}:{lr:g}" for k, _, lr in ARMS),
                   help="comma-separated KIND:LR (full or lora, LoRA at rank 8) [%(default)s]")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    arms = [(k, 8 if k == "lora" else 0, float(lr)) for k, lr in (a.split(":") for a in args.arms.split(","))]
    result = {"command": " ".join([sys.executable.rsplit("/", 1)[-1], *sys.argv]), "steps": args.steps,
              "threads": torch.get_num_threads(), "arms": []}
    for kind, r, lr in arms:
        t = time.time()
        run = train("grpo", model="smollm2", task="words", steps=args.steps, seed=0, eval_every=0, progress=False,
                    llm={"lora_r": r}, lr=lr)
        seconds = time.time() - t
        problems = run.lab.test_problems[:args.questions]
        base = run.lab.ref  # pi_ref: the starting model (a frozen copy, or LoRA's adapter switched off)
        before, acc_before = replies(base, run.tokenizer, problems)
        after, acc_after = replies(run.policy, run.tokenizer, problems)
        lp0, mask = logp_of(base, run.tokenizer, problems, before)
        lp1, _ = logp_of(run.policy, run.tokenizer, problems, before)
        arm = {"kind": kind, "lora_r": r, "lr": lr, "train_s": round(seconds, 1),
               "changed_replies": sum(a != b for a, b in zip(before, after)), "questions": len(problems),
               "mean_abs_dlogp": ((lp1 - lp0).abs().sum() / mask.sum()).item(),
               "accuracy_before": acc_before, "accuracy_after": acc_after,
               "batch_reward": [m["reward"] for m in run.metrics]}
        print(json.dumps(arm), flush=True)
        result["arms"].append(arm)
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
