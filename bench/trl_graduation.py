"""Notebook 12's graduation, measured: TRL's GRPO loss built from `nb_real_model.trl_grpo_settings` of the
real-model experiment's own preset, on a left-padded batch that TRL pads, scores and normalises itself
(its rewards, its advantages), against our eq-21 gradient on the same replies.

    python bench/trl_graduation.py [--model smollm2] [--beta 0.0] [--out FILE.json]
Needs the `bench` and `llm` extras; nothing is downloaded (HF_HUB_OFFLINE=1, the cached SmolLM2 folder).

The replies are ours (`sampling.sample` on the experiment's mixed single- and two-digit sums, so the
prompts differ in length and TRL left-pads them); TRL receives them through its `rollout_func` hook
and from there runs its own path: `_generate_and_score_completions` (padding, reward functions, the
group advantage with its fixed eps 1e-4, pi_ref's log-probs where beta > 0) and `_compute_loss`. The
reward is a fixed rule on the reply's text that differs within almost every group (its length mod 5,
over 4), given to both sides, so that every advantage is at work; the comparison is of gradients.
The policy is moved off pi_ref by noise (so a beta > 0 term counts). Reported: max over parameter
tensors of max|g_ours - g_trl| / max|g_trl|, with our eps at 1e-6 (our setting) and at 1e-4 (TRL's),
and a control with the rewards moved to other rows of their group.
"""

import argparse
import json
import os
import sys
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import torch  # noqa: E402

from unified_rl import coefficients  # noqa: E402
from unified_rl.course import nb_real_model as nb12  # noqa: E402
from unified_rl.experiments import real_model  # noqa: E402
from unified_rl.llm import pretrained_folder  # noqa: E402
from unified_rl.paradigm import surrogate_loss  # noqa: E402
from unified_rl.sampling import sample  # noqa: E402
from unified_rl.tokenizer import load_tokenizer  # noqa: E402
from unified_rl.trainer import make_lab  # noqa: E402
from unified_rl.wiring import policy_logp  # noqa: E402


def text_reward(text):
    """A fixed rule on a reply's text, different within almost every group: its length mod 5, over 4."""
    return (len(text) % 5) / 4


def rel(a, b):
    """Max over parameter tensors of max|a - b| / max|b|."""
    return max(((a[n] - b[n]).abs().max() / b[n].abs().max().clamp_min(1e-30)).item() for n in b)


def measure(model="smollm2", beta=0.0, seed=0, noise=0.02):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    budget = real_model.BUDGETS["cpu"]
    preset = real_model.world(budget).with_(rl={"beta": beta}, llm={"model": pretrained_folder(model),
                                                                    "micro_batch": 0})
    lab = make_lab(preset, seed=seed)
    torch.manual_seed(seed)
    with torch.no_grad():  # the policy a little off pi_ref, so that a beta > 0 term is not zero
        for p in lab.policy.parameters():
            p.add_(noise * p.std().nan_to_num(0.0) * torch.randn_like(p))
    G, n = preset.rl.group_size, preset.rl.prompts_per_step
    problems = lab.test_problems[:n]
    batch = sample(lab.policy, lab.tokenizer, problems, group_size=G, temperature=preset.rl.temperature)
    P = batch.prompt_len
    rewards = torch.tensor([text_reward(t) for t in batch.texts])  # (B,)
    with torch.no_grad():
        logp_ref = policy_logp(lab.ref, batch, response_only=True)  # (B, T)

    def ours(eps, reward=rewards):
        lab.policy.zero_grad(set_to_none=True)
        logp = policy_logp(lab.policy, batch, response_only=True)  # (B, T)
        coef = coefficients.grpo(reward, G, logp, logp_ref, batch.mask, beta, eps=eps, logp_old=logp.detach(),
                                 clip_eps=preset.rl.clip_eps)
        surrogate_loss(logp, coef, batch.mask).backward()
        return {k: p.grad.clone() for k, p in lab.policy.named_parameters()}

    rows = [{"prompt": [{"role": r, "content": c} for r, c in p.messages], "answer": p.answer} for p in batch.problems]
    prompt_ids = [batch.input_ids[i, :P][batch.attention_mask[i, :P].bool()].tolist() for i in range(len(batch))]
    lengths = batch.response_lengths.tolist()
    completion_ids = [batch.input_ids[i, P:P + lengths[i]].tolist() for i in range(len(batch))]

    def rollout(prompts, trainer):  # our replies, handed to TRL's own scoring path
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "logprobs": None}

    def reward_fn(prompts, completions, **kw):
        return [text_reward(c[0]["content"]) for c in completions]

    folder = pretrained_folder(model)
    settings = nb12.trl_grpo_settings(preset, 1)
    with tempfile.TemporaryDirectory() as out_dir:
        cfg = GRPOConfig(output_dir=out_dir, report_to="none", save_strategy="no", disable_tqdm=True, seed=seed,
                         remove_unused_columns=False, **settings)
        trainer = GRPOTrainer(model=folder, reward_funcs=reward_fn, args=cfg, train_dataset=Dataset.from_list(rows),
                              processing_class=load_tokenizer(folder), rollout_func=rollout)
        trl_model = trainer.model
        trl_model.load_state_dict(lab.policy.state_dict())
        trl_model.train()
        trainer.current_gradient_accumulation_steps = 1  # set by Trainer.train(), which is not run here
        scored = trainer._generate_and_score_completions(rows)
        left_padded = int((scored["prompt_mask"] == 0).any(1).sum())
        trl_adv = scored["advantages"].detach().clone()
        trl_model.zero_grad(set_to_none=True)
        trainer._compute_loss(trl_model, scored).backward()
        theirs = {k: p.grad.clone() for k, p in trl_model.named_parameters() if p.grad is not None}
        del trainer, trl_model
    r = rewards.view(-1, G)
    adv_1e4 = ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-4)).view(-1)
    mismatched = r.roll(1, dims=1).view(-1)
    return {"model": model, "beta": beta, "rows": len(batch), "questions": n, "group_size": G,
            "rows_left_padded_by_trl": left_padded, "prompt_lengths": sorted({len(x) for x in prompt_ids}),
            "trl_advantages_vs_ours_eps_1e-4": (trl_adv - adv_1e4).abs().max().item(),
            "max_rel_diff_our_eps_1e-6": rel(ours(1e-6), theirs),
            "max_rel_diff_our_eps_1e-4": rel(ours(1e-4), theirs),
            "max_rel_diff_mismatched_rewards": rel(ours(1e-4, mismatched), theirs),
            "params_compared": len(theirs), "trl_settings": {k: v for k, v in settings.items()},
            "measure": "max over parameter tensors of max|g_ours - g_trl| / max|g_trl|",
            "torch_threads": torch.get_num_threads()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--beta", type=float, default=0.0, help="GRPO's beta [0.0: the experiment's]")
    ap.add_argument("--out", default=None, help="also write the JSON here")
    args = ap.parse_args()
    try:
        res = measure(args.model, args.beta)
    except (ImportError, ValueError) as e:
        sys.exit(f"error: {type(e).__name__}: {e} (pip install -e '.[bench,llm]')")
    text = json.dumps(res, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
