"""One training loop for every method: it knows no algorithm (minGPT's rule, Spinning Up's loss).

Each step asks the method's data source for a batch, `wiring.prepare` for its scores, logp_ref,
advantages and extra-loss targets, and the method's coefficient for GC, then minimises
`paradigm.surrogate_loss(logp, coef, mask)`, whose gradient is eq 5, plus the method's extra loss
(PPO's value model) if it has one. Metrics are logged per step; with an output folder the complete
run state is saved every `save_every` steps (runs.py), so a run can resume bit for bit.
"""

import time
from dataclasses import dataclass, field

import torch
from tqdm.auto import tqdm

from . import distributed, evaluation, fsdp, runs
from .data import samplers, teachers
from .kl import k3
from .paradigm import surrogate_loss
from .rewards import rule_reward
from .wiring import coefficient_of, policy_logp, prepare, response_only, step_of


@dataclass
class Run:
    """What `train` returns: the trained policy, its metrics and summary."""

    method: str
    lab: object  # the run's Lab: the caller's, or one built for the run
    metrics: list = field(default_factory=list)
    summary: dict = field(default_factory=dict)
    out: str = None
    state: object = field(default=None, repr=False)  # runs.ResumeState: what a resume needs, at the last step

    @property
    def policy(self):
        return self.lab.policy

    @property
    def tokenizer(self):
        return self.lab.tokenizer


def _warmup(step, total):
    return min(1.0, (step + 1) / max(1, total // 10))


def _parts(step, coef):
    """The per-token and per-row values a step's metrics average (1-D, gathered over the ranks)."""
    m = step.batch.mask.bool()
    parts = {"coef": coef[m], "len": step.batch.mask.sum(-1)}
    if step.logp_ref is not None:
        # k3 averaged over the batch estimates KL(pi_theta || pi_ref) when the batch is sampled from
        # pi_theta; on a frozen source's samples (RFT, DPO) read it as a measure of drift
        parts["kl"] = k3(step.logp.detach()[m], step.logp_ref[m])
    ratio = (step.logp.detach() - step.logp_old)[m].exp()
    parts["clipped"] = ((ratio - 1).abs() > step.cfg.clip_eps).float()
    return parts


def _stats(parts):
    """The numbers that tell the story of a step (not the surrogate's value: it means nothing)."""
    c = parts["coef"]
    out = {"coef_mean": c.mean().item(), "coef_std": c.std().item() if c.numel() > 1 else 0.0,
           "coef_zero_frac": (c == 0).float().mean().item(), "response_len": parts["len"].mean().item()}
    if "kl" in parts:
        out["kl"] = parts["kl"].mean().item()
    out["clip_frac"] = parts["clipped"].mean().item()
    return out


def _whole(parts):
    """Every rank's parts joined in rank order, where each rank holds a share of the batch."""
    if not distributed.split():
        return parts
    every = distributed.gather({k: v.detach().cpu() for k, v in parts.items()})
    return {k: torch.cat([p[k] for p in every]) for k in parts}


def micro_batches(n_rows, size):
    """Row index ranges of at most `size` rows covering 0..n_rows-1 (size 0: one range)."""
    size = size or n_rows
    return [range(i, min(i + size, n_rows)) for i in range(0, n_rows, size)]


def _chunks(n_rows, size, policy):
    """micro_batches(n_rows, size); for an FSDP2 policy padded with repeats of the last (run at weight 0)
    so that every rank runs as many forward passes, each of which all-gathers the weights."""
    chunks = micro_batches(n_rows, size)
    if not fsdp.sharded(policy):
        return chunks
    return chunks + [chunks[-1]] * (distributed.greatest(len(chunks)) - len(chunks))


def batch_logp(policy, batch, size, grad, only_response=False):
    """(B, T) policy_logp of `batch` computed `size` rows at a time (without grad unless `grad`)."""
    chunks = _chunks(len(batch), size, policy)
    with torch.set_grad_enabled(grad):
        parts = [policy_logp(policy, batch.select(list(rows)), only_response) for rows in chunks]
    return torch.cat(parts[:len(micro_batches(len(batch), size))])


def accumulate(policy, batch, coef, size, only_response=False, weight=1.0):
    """Backpropagate surrogate_loss(logp, coef, mask) of the whole batch, `size` rows at a time.

    The surrogate averages over rows, so micro-batch k's loss is weighted by its share of the rows:
    sum_k n_k/B * mean_{i in k} = mean_i, and the accumulated gradient is the whole batch's.
    weight: a distributed rank's factor (distributed.part and .scaled); an FSDP2 padding repeat gets 0.
    """
    B, real = len(batch), len(micro_batches(len(batch), size))
    for k, rows in enumerate(_chunks(B, size, policy)):
        part = batch.select(list(rows))
        logp = policy_logp(policy, part, only_response)  # (b, T), with grad
        w = weight if k < real else 0.0
        (surrogate_loss(logp, coef[rows.start:rows.stop], part.mask) * (len(rows) / B) * w).backward()


def clip(policy, step):
    """Clip the policy's gradient at norm 1; ValueError if it is not finite (the weights are left as they were)."""
    try:
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0, error_if_nonfinite=True)
    except RuntimeError as e:
        if "non-finite" not in str(e):
            raise
        raise ValueError(f"step {step}: the policy's gradient is not finite (NaN or inf); the run stopped before "
                         "this update (a run folder keeps its last save)") from None


def check_finite(policy, step):
    """ValueError naming the first trainable weight the update made NaN or inf (float16's AdamW, whose eps
    underflows to 0, does it in one step): the run stops there instead of sampling from NaN."""
    bad = next((n for n, p in policy.named_parameters() if p.requires_grad and not bool(torch.isfinite(p).all())), None)
    if bad is not None:
        raise ValueError(f"step {step}: the update made the policy's weights non-finite ({bad} holds NaN or inf); "
                         "the run stopped (a run folder keeps its last save)")


def check_ref_sync(method, lab):
    """ValueError, in one line, where `ref_sync_steps` cannot apply: no pi_ref, or one that is no copy of the policy."""
    cfg = lab.preset.rl
    if method.section != "rl" or not cfg.ref_sync_steps:
        return
    what = f"ref_sync_steps={cfg.ref_sync_steps}"
    if not method.uses_ref:
        raise ValueError(f"{what}: {method.name} reads no pi_ref, so there is none to sync")
    if fsdp.sharded(lab.policy):
        raise ValueError(f"{what}: syncing an fsdp-sharded pi_ref is not supported; train it with fsdp off")
    mine, its = dict(lab.policy.named_parameters()), dict(lab.ref.named_parameters())
    if [(n, p.shape) for n, p in mine.items()] != [(n, p.shape) for n, p in its.items()]:
        raise ValueError(f"{what}: pi_ref is not a copy of the policy's weights (with LoRA it is the policy with "
                         "its adapter off), so it cannot be mixed with them")


@torch.no_grad()
def sync_ref(lab, updates):
    """TR-DPO (Gorbatovski et al., arXiv 2404.09656; TRL's SyncRefModelCallback): after update number `updates`,
    if it is a multiple of tau = ref_sync_steps, pi_ref <- alpha pi_theta + (1 - alpha) pi_ref, weight by weight."""
    cfg = lab.preset.rl
    if not cfg.ref_sync_steps or updates % cfg.ref_sync_steps:
        return
    for ref, theta in zip(lab.ref.parameters(), lab.policy.parameters(), strict=True):
        ref.mul_(1.0 - cfg.ref_sync_alpha).add_(theta, alpha=cfg.ref_sync_alpha)


def fit(m, lab, hp, steps, summary, eval_every=None, progress=True, out=None, save_every=None,
        resume=None, label=None):
    """Train `lab.policy` in place with method `m` for `steps` steps in all; returns a Run.

    summary: the run's summary so far (method, preset, seed, init, ...); `resume`: a state read by
    `runs.load_state`, to continue where it stopped; label: the progress bar's (default: the method).
    """
    preset, cfg = lab.preset, lab.preset.rl
    section = getattr(preset, m.section)
    lab = teachers.load(lab) if teachers.reads_teacher(m) else lab  # a teacher folder, read-only
    source = samplers.source_of(m, lab)  # the method's, or drawn by a stale or rounded copy of the policy
    check_ref_sync(m, lab)
    extra = m.extra_loss(lab) if m.extra_loss else None
    sharded = fsdp.sharded(lab.policy)
    if extra is not None and sharded:
        raise ValueError(f"{m.name}'s {getattr(extra, 'metric', 'extra loss')} model is not sharded by fsdp: "
                         "train it with fsdp off (every rank holds the whole model)")
    distributed.same_start(lab.policy, lab.ref, *([torch.nn.ParameterList(extra.parameters())] if extra else []))
    params = [{"params": lab.policy.parameters(), "lr": section.lr}]
    if extra is not None and list(extra.parameters()):
        params.append({"params": extra.parameters(), "lr": extra.lr})
    opt = torch.optim.AdamW(params, weight_decay=0.0)
    base_lrs = [g["lr"] for g in opt.param_groups]
    resume_state = runs.ResumeState(opt, source, m.reward, extra, lab)
    run = Run(m.name, lab, summary=dict(summary), out=out, state=resume_state)
    elapsed = 0.0
    if resume is not None:
        resume_state.restore(resume)
        run.metrics = list(resume["metrics"])
        elapsed = resume["seconds"]
    eval_every = eval_every if eval_every is not None else preset.eval_every
    save_every = save_every if save_every is not None else preset.eval_every
    epochs = getattr(section, "epochs", 1)
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs (updates per batch) must be a whole number >= 1, got {epochs!r}")
    micro, only_response = lab.world.micro_batch, response_only(lab)  # the world's flags (worlds.py)
    t0 = time.time() - elapsed
    bar = tqdm(range(resume_state.step, steps), desc=label or m.name, disable=not progress or not distributed.is_main(),
               leave=False)
    params = [p for g in opt.param_groups for p in g["params"]]
    for it in bar:
        for g, base in zip(opt.param_groups, base_lrs):
            g["lr"] = base * _warmup(it, steps)
        lab.policy.train()
        batch = source.next_batch().to(lab.device)
        distributed.hold_batch(batch)  # a share per rank, or the whole batch on every rank
        prep = prepare(m, lab, batch, extra)
        logp_old = None
        weight = distributed.scaled(distributed.part(len(batch)))  # 1.0 outside a distributed run
        chunked = 0 < micro < (distributed.greatest(len(batch)) if sharded else len(batch))
        for e in range(epochs):
            if chunked:  # log-probs first without grad, then forward-backward a micro-batch at a time
                logp = batch_logp(lab.policy, batch, micro, grad=False, only_response=only_response)
            else:
                logp = policy_logp(lab.policy, batch, only_response)  # (B, T)
            if logp_old is None:  # pi_old: the policy as it was when this batch's updates began
                logp_old = logp.detach()
            step = step_of(prep, logp, logp_old, cfg, hp)
            coef = coefficient_of(m, step)  # (B, T), detached
            opt.zero_grad(set_to_none=True)
            if chunked:
                accumulate(lab.policy, batch, coef, micro, only_response, weight)
                loss = None
            else:
                loss = surrogate_loss(logp, coef, batch.mask) * weight
            if extra is not None:
                extra_loss = extra.loss(step)  # its own normaliser is the whole batch's (distributed.total)
                loss = distributed.scaled(extra_loss) if loss is None else loss + distributed.scaled(extra_loss)
            if loss is not None:
                loss.backward()
            distributed.average_gradients(params)  # what DDP does; FSDP2 reduced its own in backward
            clip(lab.policy, it + 1)
            opt.step()
            if not sharded:  # an FSDP2 run's weights are checked whole when saved (runs.save_run)
                check_finite(lab.policy, it + 1)
            sync_ref(lab, it * epochs + e + 1)  # TR-DPO: pi_ref moves toward pi_theta every ref_sync_steps updates
        row = {"step": it + 1, "seconds": round(time.time() - t0, 3)}
        parts = _parts(step, coef)
        if m.reward is not None:  # the batch was sampled: how often its answers are right
            # over every row of the batch: for the pair methods half the rows are right by construction
            # (accuracy 0.5 whatever the policy), for KTO the mismatched rows that only give z0 count too,
            # for ReMax the greedy baseline rows: read it as the accuracy of what the step trained on
            parts["right"], parts["scores"] = rule_reward(batch.problems, batch.texts), prep.scores.float()
        parts = _whole(parts)
        if m.reward is not None:
            row["accuracy"], row["reward"] = parts["right"].mean().item(), parts["scores"].mean().item()
        row.update(_stats(parts))
        if extra is not None:
            row[getattr(extra, "metric", "extra_loss")] = distributed.total(extra_loss.detach()).item()
        if eval_every and ((it + 1) % eval_every == 0 or it + 1 == steps):
            row["eval_accuracy"] = evaluation.greedy_accuracy(
                lab.policy, lab.tokenizer, lab.test_problems[: preset.eval_problems])
            bar.set_postfix(acc=f"{row['eval_accuracy']:.3f}")
        run.metrics.append(row)
        resume_state.mark(it + 1)
        run.summary["seconds"] = round(time.time() - t0, 2)
        if out and save_every and (it + 1) % save_every == 0 and it + 1 < steps:
            runs.save_run(run)
    run.summary["seconds"] = round(time.time() - t0, 2)
    run.summary["step"] = resume_state.step
    if out:
        runs.save_run(run)
    return run
