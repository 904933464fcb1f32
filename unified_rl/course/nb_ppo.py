"""Helpers for the PPO notebook (course/05_ppo.ipynb): what one PPO step costs next to a GRPO step.

PPO trains a value model V_psi beside the policy (DeepSeekMath §4.1.1: "typically a model of
comparable size as the policy model"); GRPO replaces it with the group's mean reward. Here both
methods run one real step of the shared trainer from the same SFT model on the same batch, and we
count their parameters and measure the peak tensor memory of that step:
- on a GPU with `torch.cuda.max_memory_allocated`;
- on a CPU with the profiler's allocation events (torch.profiler, profile_memory=True): every
  allocation and free of the CPU allocator, summed in time order, gives the peak.
The process's RSS would hide the difference at the lab's size (a few MB of tensors next to a few
hundred MB of libraries), so it is not used.
"""

import contextlib
import os
import time

import torch
from torch.profiler import ProfilerActivity, profile

from unified_rl.methods import Critic, get_method
from unified_rl.trainer import make_lab, train

MB = 2**20


def n_params(module):
    """Number of parameters of a module (a model, or a Critic)."""
    return sum(p.numel() for p in module.parameters())


def tensor_bytes(module):
    """Bytes of a module's parameters and buffers."""
    return sum(t.numel() * t.element_size() for t in (*module.parameters(), *module.buffers()))


@contextlib.contextmanager
def _quiet_stderr():
    """Silence file descriptor 2 (the profiler's C++ start/stop log lines), restore it after."""
    try:
        fd = os.dup(2)
    except OSError:  # no fd 2 to silence
        yield
        return
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(fd, 2)
            os.close(fd)


def _cpu_peak(prof):
    """Peak of (allocated - freed) bytes over the profiled span, from the allocator's events."""
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_ns())
    live = peak = 0
    for e in events:
        live += e.nbytes()  # > 0 for an allocation, < 0 for a free
        peak = max(peak, live)
    return peak


def peak_memory(fn, device):
    """(result of fn(), peak bytes of tensors allocated while it ran, above what was live before)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        start = torch.cuda.memory_allocated(device)
        out = fn()
        torch.cuda.synchronize(device)
        return out, torch.cuda.max_memory_allocated(device) - start
    prof = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
    with _quiet_stderr():
        prof.start()
    try:
        out = fn()
    finally:
        with _quiet_stderr():
            prof.stop()
    return out, _cpu_peak(prof)


def step_cost(method, preset, init, seed=0, **overrides):
    """One training step of `method` from the checkpoint `init`, through `trainer.train`, measured.

    Returns a dict: trainable and frozen parameter counts, `held` (bytes of the policy and pi_ref
    before the step), `peak_step` (peak bytes allocated during the step on top of those) and
    `peak` (their sum), and the step's wall-clock seconds (slower under the CPU profiler).
    """
    m = get_method(method)
    lab = make_lab(preset, seed, init)
    held = tensor_bytes(lab.policy) + tensor_bytes(lab.ref)
    n_critic = n_params(Critic(lab)) if m.critic else 0  # the critic train() builds, counted apart
    t0 = time.time()
    run, peak_step = peak_memory(
        lambda: train(m, lab=lab, steps=1, seed=seed, progress=False, eval_every=0, **overrides), lab.device)
    return {"method": m.name, "trainable": n_params(lab.policy) + n_critic, "frozen": n_params(lab.ref),
            "held": held, "peak_step": peak_step, "peak": held + peak_step,
            "seconds": time.time() - t0, "response_len": run.metrics[-1]["response_len"]}
