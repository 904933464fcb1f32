"""One trainer for every method: it knows no algorithm (minGPT's rule, Spinning Up's loss).

Each step asks the method's data source for a batch, its reward for scores and its coefficient for
GC, then minimises `paradigm.surrogate_loss(logp, coef, mask)`, whose gradient is eq 5. PPO's value
model is the one extra loss, kept beside it. Metrics are logged per step; checkpoints save with
`save_pretrained` and resume.
"""

import copy
import json
import os
import random
import time
from dataclasses import dataclass, field

import numpy as np
import torch
from tqdm.auto import tqdm
from transformers.utils import logging as hf_logging

from . import evaluation
from .kl import k3
from .methods import get_method
from .models import build_policy, load_policy, pick_device, save_checkpoint
from .paradigm import Step, surrogate_loss
from .presets import get_preset
from .rewards import rule_reward
from .sampling import token_logp
from .task import make_splits
from .tokenizer import build_tokenizer, load_tokenizer


hf_logging.disable_progress_bar()  # saving/loading a 100K-parameter model needs no progress bar


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


@dataclass
class Lab:
    """The world a run trains in: questions, tokenizer, the policy and its frozen reference."""

    preset: object
    tokenizer: object
    policy: torch.nn.Module
    ref: torch.nn.Module  # frozen copy of the starting policy: pi_sft / pi_ref
    device: torch.device
    seed: int
    sft_problems: list
    rl_problems: list
    test_problems: list


def make_lab(preset="auto", seed=0, init=None, device=None):
    """Questions from the preset's split, and a policy: `init` (a checkpoint path) or a fresh one."""
    preset = get_preset(preset)
    device = pick_device(device)
    if device.type == "cpu" and preset.name in ("cpu", "tiny") and "OMP_NUM_THREADS" not in os.environ:
        # a 100K-parameter model gains nothing from a second thread, and on busy cores (Binder, a
        # laptop running JupyterLab) two threads fighting made notebooks 3-10x slower; set
        # OMP_NUM_THREADS to choose otherwise
        torch.set_num_threads(1)
    train_pool, test = make_splits(preset.task, preset.n_rl, preset.n_test, seed=preset.seed)
    if init is None:
        tokenizer = build_tokenizer()
        policy = build_policy(tokenizer, preset.model)
    else:
        tokenizer, policy = load_tokenizer(init), load_policy(init)
    policy.to(device)
    ref = copy.deepcopy(policy).eval().requires_grad_(False)
    return Lab(preset, tokenizer, policy, ref, device, seed,
               train_pool[: preset.n_sft], train_pool, test)


@dataclass
class Run:
    """What `train` returns: the trained policy, its metrics and summary."""

    method: str
    lab: Lab
    metrics: list = field(default_factory=list)
    summary: dict = field(default_factory=dict)
    out: str = None

    @property
    def policy(self):
        return self.lab.policy

    @property
    def tokenizer(self):
        return self.lab.tokenizer


def _warmup(step, total):
    return min(1.0, (step + 1) / max(1, total // 10))


def _stats(step_data, coef, cfg):
    """The numbers that tell the story of a step (not the surrogate's value: it means nothing)."""
    m = step_data.batch.mask.bool()
    c = coef[m]
    out = {"coef_mean": c.mean().item(), "coef_std": c.std().item() if c.numel() > 1 else 0.0,
           "coef_zero_frac": (c == 0).float().mean().item(),
           "response_len": step_data.batch.mask.sum(-1).mean().item()}
    if step_data.logp_ref is not None:
        # k3 averaged over the batch estimates KL(pi_theta || pi_ref) when the batch is sampled from
        # pi_theta; on a frozen source's samples (RFT, DPO) read it as a measure of drift
        out["kl"] = k3(step_data.logp.detach()[m], step_data.logp_ref[m]).mean().item()
    ratio = (step_data.logp.detach() - step_data.logp_old)[m].exp()
    out["clip_frac"] = ((ratio - 1).abs() > cfg.clip_eps).float().mean().item()
    return out


def train(method="grpo", preset="auto", steps=None, seed=0, init=None, out=None, progress=True,
          lab=None, eval_every=None, resume=False, _cap=True, **overrides):
    """Train `method` and return a Run. The notebooks and `python -m unified_rl train` share this path.

    init: a checkpoint to start from; by default SFT starts from scratch and every other method
    from the cached SFT checkpoint of the same preset. overrides change fields of the preset's
    RLConfig (or SFTConfig for sft), e.g. train("grpo", beta=0.0, group_size=4).
    $UNIFIED_RL_MAX_STEPS, if set, caps `steps` (the browser tests run every notebook this way);
    the cached SFT model is never capped.
    """
    m = get_method(method)
    preset = get_preset(preset if lab is None else lab.preset)
    is_sft = m.name == "sft"
    key = "sft" if is_sft else "rl"
    overrides = {**({} if is_sft else m.defaults), **overrides}  # the caller's word wins
    if overrides:
        preset = preset.with_(**{key: overrides})
    steps = steps if steps is not None else getattr(preset, key).steps
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    if _cap and os.environ.get("UNIFIED_RL_MAX_STEPS"):
        steps = min(steps, int(os.environ["UNIFIED_RL_MAX_STEPS"]))
    seed_everything(seed)
    if lab is None:
        if resume and out and os.path.isdir(os.path.join(out, "checkpoint")):
            init = os.path.join(out, "checkpoint")
        elif init is None and not is_sft:
            from .cache import sft_checkpoint
            init = sft_checkpoint(preset, seed=seed, progress=progress)
        lab = make_lab(preset, seed, init)
    lab.preset = preset
    cfg = preset.rl
    lr = preset.sft.lr if is_sft else cfg.lr
    source = m.data_source(lab)
    critic = m.critic(lab) if m.critic else None
    params = [{"params": lab.policy.parameters(), "lr": lr}]
    if critic:
        params.append({"params": critic.parameters(), "lr": cfg.value_lr})
    opt = torch.optim.AdamW(params, weight_decay=0.0)
    base_lrs = [g["lr"] for g in opt.param_groups]
    start = 0
    state_file = os.path.join(out, "checkpoint", "trainer_state.pt") if out else None
    if resume and state_file and os.path.exists(state_file):
        state = torch.load(state_file, weights_only=False)
        opt.load_state_dict(state["optimizer"])
        start = state["step"]
    run = Run(m.name, lab, out=out)
    eval_every = eval_every if eval_every is not None else preset.eval_every
    epochs = 1 if is_sft else cfg.epochs
    t0 = time.time()
    bar = tqdm(range(start, steps), desc=m.name, disable=not progress, leave=False)
    for it in bar:
        for g, base in zip(opt.param_groups, base_lrs):
            g["lr"] = base * _warmup(it, steps)
        lab.policy.train()
        batch = source.next_batch().to(lab.device)
        scores = m.reward(batch).to(lab.device) if m.reward else None
        logp_ref = None
        if m.name != "sft":
            with torch.no_grad():
                logp_ref = token_logp(lab.ref, batch.input_ids, batch.attention_mask) * batch.mask
        adv = m.advantage(lab, batch, scores, logp_ref, critic) if m.advantage else None
        logp_old = None
        for _ in range(epochs):
            logp = token_logp(lab.policy, batch.input_ids, batch.attention_mask) * batch.mask  # (B, T)
            if logp_old is None:  # pi_old: the policy as it was when this batch's updates began
                logp_old = logp.detach()
            step = Step(batch, scores, logp, logp_old, logp_ref, adv, cfg)
            coef = m.coefficient(step)  # (B, T), detached
            loss = surrogate_loss(logp, coef, batch.mask)
            if critic:
                value_loss = critic.loss(batch, batch.returns)
                loss = loss + value_loss
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(lab.policy.parameters(), 1.0)
            opt.step()
        row = {"step": it + 1, "seconds": round(time.time() - t0, 3)}
        row["accuracy"] = rule_reward(batch.problems, batch.texts).mean().item() if m.name != "sft" else None
        if scores is not None:
            row["reward"] = scores.float().mean().item()
        row.update(_stats(step, coef, cfg))
        if critic:
            row["value_loss"] = value_loss.item()
        if eval_every and ((it + 1) % eval_every == 0 or it + 1 == steps):
            row["eval_accuracy"] = evaluation.greedy_accuracy(
                lab.policy, lab.tokenizer, lab.test_problems[: preset.eval_problems])
            bar.set_postfix(acc=f"{row['eval_accuracy']:.3f}")
        run.metrics.append({k: v for k, v in row.items() if v is not None})
    run.summary = {"method": m.name, "preset": preset.name, "steps": steps, "seed": seed,
                   "seconds": round(time.time() - t0, 2), "device": str(lab.device),
                   "init": str(init) if init else None}
    if out:
        save_run(run, opt, steps)
    return run


def save_run(run, opt=None, step=None):
    """DIR/metrics.jsonl, DIR/summary.json and DIR/checkpoint/ (loads with from_pretrained)."""
    os.makedirs(run.out, exist_ok=True)
    ckpt = os.path.join(run.out, "checkpoint")
    save_checkpoint(run.lab.policy, run.lab.tokenizer, ckpt)
    if opt is not None:
        torch.save({"optimizer": opt.state_dict(), "step": step}, os.path.join(ckpt, "trainer_state.pt"))
    with open(os.path.join(run.out, "metrics.jsonl"), "w") as f:
        for row in run.metrics:
            f.write(json.dumps(row) + "\n")
    with open(os.path.join(run.out, "summary.json"), "w") as f:
        json.dump(run.summary, f, indent=2)
