"""Our GRPO against TRL's `GRPOTrainer`: seconds per optimizer step, and the first-step gradient.

    python bench/trl_compare.py [--steps 5] [--rounds 2] [--preset cpu] [--widths 64,256]
Needs the `bench` extra (`pip install -e ".[bench]"`). Nothing is downloaded: our GPT-2 is built
from the preset's config and trained by our SFT (the cached checkpoint, `save_pretrained`), and TRL
loads it from that folder (HF_HUB_OFFLINE=1) with a local `datasets.Dataset` of the same questions.

Speed, both sides alike: the same model, prompts per step, group size, completion length, beta,
learning rate, clip epsilon and temperature; gradient checkpointing off on both (TRL's config turns
it on by default); one log row per step on both (our trainer's metrics row, TRL's logging_steps=1);
the median of per-step times with the first step excluded on both; rounds alternate the two
trainers. It is measured at the preset's width and at a wider model (same depth and task), where
the model's own arithmetic, not either framework's per-step overhead, takes most of a step. Our
step is also split into its phases (sampling, reference log-probs, forward + backward + step).

Agreement: where the settings coincide (TRL's loss_type="grpo" averages each sequence over its
tokens, group std scaling, k3 KL, epsilon clip), TRL's own `_compute_loss` is called on a batch we
construct, next to our `coefficients.grpo` + `paradigm.surrogate_loss` on the same batch; the
parameter gradients are compared. TRL divides by (std + 1e-4), our default eps is 1e-6: the result
is given both with our default and with eps=1e-4, which isolates float error.
"""

import argparse
import json
import os
import statistics
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import torch

from unified_rl import coefficients
from unified_rl.kl import k3
from unified_rl.models import build_policy
from unified_rl.paradigm import surrogate_loss
from unified_rl.presets import get_preset
from unified_rl.rewards import rule_reward
from unified_rl.sampling import sample, token_logp
from unified_rl.task import parse_answer
from unified_rl.tokenizer import build_tokenizer, load_tokenizer
from unified_rl.trainer import make_lab, train


def save_model(preset, path, seed=0):
    """Our fresh GPT-2 and tokenizer, written where TRL can load them by path."""
    tok = build_tokenizer()
    torch.manual_seed(seed)
    build_policy(tok, preset.model).save_pretrained(path)
    tok.save_pretrained(path)
    return path


def median_step(ends):
    """Median seconds per step from the clock at the end of each step, the first step excluded
    (it pays one-time costs: allocations, kernel choices); the same rule for both trainers."""
    if len(ends) < 3:
        raise ValueError(f"{len(ends)} step times: need >= 3 to drop the first and take a median")
    return statistics.median(b - a for a, b in zip(ends, ends[1:]))


def ours_seconds_per_step(preset, path, steps, seed=0):
    lab = make_lab(preset, seed=seed, init=path)
    run = train("grpo", lab=lab, steps=steps, progress=False, eval_every=0, seed=seed)
    return median_step([m["seconds"] for m in run.metrics]), lab


def ours_phases(lab, repeats=3):
    """Median seconds of each phase of one of our GRPO steps, replayed with the package's functions."""
    cfg = lab.preset.rl
    opt = torch.optim.AdamW(lab.policy.parameters(), lr=cfg.lr)
    out = {"sampling": [], "reward": [], "ref_logp": [], "forward_backward_step": []}
    for _ in range(repeats):
        t0 = time.perf_counter()
        problems = lab.rl_problems[: cfg.prompts_per_step]
        batch = sample(lab.policy, lab.tokenizer, problems, group_size=cfg.group_size)
        t1 = time.perf_counter()
        rewards = rule_reward(batch.problems, batch.texts)
        t2 = time.perf_counter()
        with torch.no_grad():
            logp_ref = token_logp(lab.ref, batch.input_ids, batch.attention_mask) * batch.mask
        t3 = time.perf_counter()
        logp = token_logp(lab.policy, batch.input_ids, batch.attention_mask) * batch.mask  # (B, T)
        coef = coefficients.grpo(rewards, cfg.group_size, logp, logp_ref, batch.mask, cfg.beta)
        loss = surrogate_loss(logp, coef, batch.mask)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(lab.policy.parameters(), 1.0)
        opt.step()
        t4 = time.perf_counter()
        for k, a, b in (("sampling", t0, t1), ("reward", t1, t2), ("ref_logp", t2, t3),
                        ("forward_backward_step", t3, t4)):
            out[k].append(b - a)
    return {k: round(statistics.median(v), 4) for k, v in out.items()}


def _trl_config(preset, out_dir, steps, max_new):
    from trl import GRPOConfig

    cfg = preset.rl
    return GRPOConfig(
        output_dir=out_dir, max_steps=steps, learning_rate=cfg.lr, beta=cfg.beta, epsilon=cfg.clip_eps,
        num_generations=cfg.group_size, per_device_train_batch_size=cfg.prompts_per_step * cfg.group_size,
        gradient_accumulation_steps=1, steps_per_generation=1, num_iterations=1,
        max_completion_length=max_new, temperature=cfg.temperature, top_k=0, top_p=1.0,
        loss_type="grpo", scale_rewards="group", max_grad_norm=1.0, warmup_steps=0,
        lr_scheduler_type="constant", weight_decay=0.0, use_cpu=not torch.cuda.is_available(),
        bf16=False, fp16=False, report_to="none", save_strategy="no", logging_steps=1,
        gradient_checkpointing=False,  # TRL turns it on by default; our trainer never recomputes
        disable_tqdm=True, seed=0, remove_unused_columns=False,
    )


def _trl_trainer(preset, path, out_dir, steps, max_new):
    from datasets import Dataset
    from trl import GRPOTrainer

    tok = load_tokenizer(path)
    lab = make_lab(preset, init=path)
    # the lab's prompts start with BOS; TRL tokenizes the text, so BOS is written into it
    data = Dataset.from_dict({"prompt": [tok.bos_token + p.prompt for p in lab.rl_problems],
                              "answer": [p.answer for p in lab.rl_problems]})

    def correct(prompts, completions, answer, **kw):
        return [float(parse_answer(c) == a) for c, a in zip(completions, answer)]

    return GRPOTrainer(model=path, reward_funcs=correct, args=_trl_config(preset, out_dir, steps, max_new),
                       train_dataset=data, processing_class=tok)


def timed_train(trainer):
    """Train a TRL trainer with a clock at each step's end; its median seconds per step (median_step)."""
    from transformers import PrinterCallback, TrainerCallback

    class Clock(TrainerCallback):
        def __init__(self):
            self.times = []

        def on_step_end(self, args, state, control, **kw):
            self.times.append(time.perf_counter())

    clock = Clock()
    trainer.add_callback(clock)
    trainer.remove_callback(PrinterCallback)  # its per-step log dicts would bury the results
    trainer.train()
    return median_step(clock.times)


def trl_seconds_per_step(preset, path, steps, max_new):
    with tempfile.TemporaryDirectory() as out_dir:
        return timed_train(_trl_trainer(preset, path, out_dir, steps, max_new))


def gradient_agreement(preset, path, seed=0):
    """Max over parameter tensors of |g_ours - g_trl|_inf / |g_trl|_inf on one constructed batch."""
    cfg = preset.rl
    lab = make_lab(preset, seed=seed, init=path)
    torch.manual_seed(seed)
    with torch.no_grad():  # move the policy off pi_ref so the KL term is not zero
        for p in lab.policy.parameters():
            p.add_(0.02 * torch.randn_like(p))
    batch = sample(lab.policy, lab.tokenizer, lab.rl_problems[: cfg.prompts_per_step], group_size=cfg.group_size)
    rewards = rule_reward(batch.problems, batch.texts)
    if rewards.std() == 0:  # a fresh model is never right: give the groups a spread to normalise
        rewards = (torch.arange(len(rewards)) % 3 == 0).float()
    P, G = batch.prompt_len, cfg.group_size
    with torch.no_grad():
        logp_ref = token_logp(lab.ref, batch.input_ids, batch.attention_mask) * batch.mask  # (B, T)

    def ours(eps, k3_term=False):
        lab.policy.zero_grad(set_to_none=True)
        logp = token_logp(lab.policy, batch.input_ids, batch.attention_mask) * batch.mask  # (B, T)
        coef = coefficients.grpo(rewards, G, logp, logp_ref, batch.mask, cfg.beta, eps=eps,
                                 logp_old=logp.detach(), clip_eps=cfg.clip_eps)
        if k3_term:  # what TRL's KL importance weight adds: d/dlogp of ratio * k3 has an extra k3
            coef = coef - cfg.beta * k3(logp.detach(), logp_ref) * batch.mask
        surrogate_loss(logp, coef, batch.mask).backward()
        return {n: p.grad.clone() for n, p in lab.policy.named_parameters()}

    # TRL's side: its trainer, its _compute_loss, its advantage formula (grpo_trainer.py:
    # (r - group mean) / (group std + 1e-4)), on the same ids, masks and reference log-probs.
    with tempfile.TemporaryDirectory() as out_dir:
        trainer = _trl_trainer(preset, path, out_dir, 1, batch.input_ids.shape[1] - P)
        model = trainer.model
        model.load_state_dict(lab.policy.state_dict())
        model.train()
        r = rewards.view(-1, G)
        adv = ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-4)).view(-1)
        inputs = {"prompt_ids": batch.input_ids[:, :P], "prompt_mask": batch.attention_mask[:, :P],
                  "completion_ids": batch.input_ids[:, P:], "completion_mask": batch.attention_mask[:, P:],
                  "advantages": adv, "ref_per_token_logps": logp_ref[:, P - 1:],
                  "num_items_in_batch": batch.mask.sum()}
        trainer.current_gradient_accumulation_steps = 1  # set by Trainer.train(); no accumulation here

        def theirs(kl_correction):
            trainer.args.use_bias_correction_kl = kl_correction  # read by _compute_loss at call time
            model.zero_grad(set_to_none=True)
            trainer._compute_loss(model, inputs).backward()
            return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}

        trl_default, trl_plain = theirs(True), theirs(False)

    def rel(a, b):
        return max(((a[n] - b[n]).abs().max() / b[n].abs().max().clamp_min(1e-30)).item() for n in b)

    return {
        # TRL 1.x multiplies the k3 KL by the importance ratio (use_bias_correction_kl=True by
        # default); on-policy the ratio is 1 but its gradient adds beta * k3 to TRL's loss gradient,
        # a term eq 21 does not have
        "max_rel_diff_trl_defaults": rel(ours(1e-6), trl_default),
        "max_rel_diff_kl_correction_off": rel(ours(1e-6), trl_plain),
        "max_rel_diff_kl_correction_off_same_eps": rel(ours(1e-4), trl_plain),
        "max_rel_diff_with_extra_k3_term": rel(ours(1e-4, k3_term=True), trl_default),
        "params_compared": len(trl_plain), "rows": len(batch),
        "no_left_padding": bool(batch.attention_mask[:, :P].all()),
        "measure": "max over parameter tensors of max|g_ours - g_trl| / max|g_trl|",
    }


def _speed(preset, path, steps, rounds):
    """Seconds per step of both trainers on one model, in alternating rounds, and their ratio."""
    lab = make_lab(preset, init=path)
    max_new = max(len(p.solution) for p in lab.rl_problems[:1000]) + 5  # sample()'s own default
    ours, theirs = [], []
    for _ in range(rounds):
        s, lab = ours_seconds_per_step(preset, path, steps)
        ours.append(s)
        theirs.append(trl_seconds_per_step(preset, path, steps, max_new))
    ours_s, trl_s = statistics.median(ours), statistics.median(theirs)
    return {"n_embd": preset.model.n_embd, "n_layer": preset.model.n_layer,
            "parameters": sum(p.numel() for p in lab.policy.parameters()), "max_new_tokens": max_new,
            "ours_seconds_per_step": round(ours_s, 4), "trl_seconds_per_step": round(trl_s, 4),
            "per_round": {"ours": [round(x, 4) for x in ours], "trl": [round(x, 4) for x in theirs]},
            "grpo_step_speedup_vs_trl": round(trl_s / ours_s, 3), "ours_phases": ours_phases(lab)}


def measure(preset="cpu", steps=5, rounds=2, fresh=False, widths=(None, 256)):
    """Rounds alternate our trainer and TRL's, so a change in machine load hits both sides.

    Both start from the preset's cached SFT model (trained first if absent), where GRPO starts in the
    course: its samples end at EOS and some are right, so steps carry real gradients. fresh=True
    uses an untrained model instead (no SFT; every reward 0). widths: n_embd of each model compared
    (None: the preset's own); a wider model keeps the preset's depth, heads' width and task.
    """
    base = get_preset(preset)
    result = {"preset": base.name, "model": "fresh" if fresh else "sft", "steps": steps, "rounds": rounds,
              "batch": base.rl.prompts_per_step * base.rl.group_size,
              "timing": "median seconds per optimizer step, first step excluded, both trainers"}
    try:
        import trl

        result["trl_version"] = trl.__version__
    except ImportError as e:
        result["grpo_step_speedup_vs_trl"] = None
        result["trl_agreement"] = None
        result["reason"] = f"TRL is not installed ({e}); pip install -e '.[bench]'"
        return result
    result["by_width"] = {}
    for width in widths:
        p = base
        if width is not None and width != base.model.n_embd:
            head_dim = base.model.n_embd // base.model.n_head
            p = base.with_(model={"n_embd": width, "n_head": max(1, width // head_dim)})
        with tempfile.TemporaryDirectory() as tmp:
            if fresh:
                path = save_model(p, os.path.join(tmp, "model"))
            else:
                from unified_rl.cache import sft_checkpoint

                path = sft_checkpoint(p, progress=False)
            if width is None or width == base.model.n_embd:  # the gradient check needs one width only
                result["trl_agreement"] = gradient_agreement(p, path)
            row = result["by_width"][str(p.model.n_embd)] = _speed(p, path, steps, rounds)
            print(f"width {p.model.n_embd}: ours {row['ours_seconds_per_step']} s, TRL {row['trl_seconds_per_step']} s"
                  f" per step -> {row['grpo_step_speedup_vs_trl']}x", flush=True)
    first = result["by_width"][str(base.model.n_embd)] if str(base.model.n_embd) in result["by_width"] \
        else next(iter(result["by_width"].values()))
    result["grpo_step_speedup_vs_trl"] = first["grpo_step_speedup_vs_trl"]  # at the preset's width
    result["grpo_step_speedup_vs_trl_by_width"] = {w: r["grpo_step_speedup_vs_trl"] for w, r in result["by_width"].items()}
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="cpu")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--fresh", action="store_true", help="an untrained model instead of the cached SFT one")
    ap.add_argument("--widths", default="preset,256", help="n_embd of each model compared ('preset': its own)")
    args = ap.parse_args()
    widths = [None if w == "preset" else int(w) for w in args.widths.split(",")]
    print(json.dumps(measure(args.preset, args.steps, args.rounds, args.fresh, widths), indent=2))


if __name__ == "__main__":
    main()
