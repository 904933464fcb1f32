"""bfloat16 on the CPU for a real model's step: what it saves, and what it changes.

    python bench/llm_cpu_bf16.py [--model smollm2] [--modes lora,full] [--repeats 4] [--out bench/llm_cpu_bf16.json]
The batch is trl_smollm2.py's (2 chat prompts x 4 samples, <= 16 new tokens). Each repeat times our
step's phases -- sampling (prefill + decoding), the reference's log-probs, the policy's forward +
backward -- once in float32 and once under `torch.autocast("cpu", dtype=torch.bfloat16)` (the
weights stay float32, as on a GPU), alternating which goes first, on the same batch; then the
model's weight matmuls alone (llm_roof.py's chain) at decoding's rows (8) and at a pass's rows, in
both dtypes. What bf16 changes: the reply tokens' log-probs (max |difference|, against the size of
the float32 log-probs) and the parameter gradient (max over tensors of max|g_bf16 - g_fp32| / max|g_fp32|),
beside how often a sampled token differs when both samplers draw with the same uniforms.
The package computes in float32 on the CPU (`sampling.autocast`); this measures whether it should not.
"""

import contextlib
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import trl_smollm2 as ts  # noqa: E402
from llm_roof import Chain, _sig, per_mode_cli  # noqa: E402
from unified_rl import coefficients  # noqa: E402
from unified_rl.llm import pretrained_folder  # noqa: E402
from unified_rl.paradigm import surrogate_loss  # noqa: E402
from unified_rl.sampling import sample  # noqa: E402
from unified_rl.trainer import make_lab  # noqa: E402
from unified_rl.wiring import policy_logp  # noqa: E402

DTYPES = ("float32", "bfloat16")


def context(dtype):
    """The forward passes' compute dtype: float32 (no autocast) or bf16 autocast on the CPU."""
    if dtype == "float32":
        return contextlib.nullcontext()
    return torch.autocast("cpu", dtype=torch.bfloat16)


def policy_gradient(lab, s, batch, logp_ref, dtype):
    """(reply log-probs, parameter gradient) of eq 21's GRPO surrogate on `batch`, its forward in `dtype`."""
    rewards = (torch.arange(len(batch)) % 3 == 0).float()
    lab.policy.zero_grad(set_to_none=True)
    with context(dtype):
        logp = policy_logp(lab.policy, batch, response_only=True)  # (B, T)
    coef = coefficients.grpo(rewards, s.group, logp, logp_ref, batch.mask, s.beta, logp_old=logp.detach(),
                             clip_eps=s.clip_eps)
    surrogate_loss(logp, coef, batch.mask).backward()
    return logp.detach(), {n: p.grad.clone() for n, p in lab.policy.named_parameters() if p.grad is not None}


def one_repeat(lab, s, problems, dtype, seed):
    """({phase: seconds}, the batch, its reply log-probs, the gradient) of one step's passes in `dtype`."""
    t = {}
    torch.manual_seed(seed)
    with torch.no_grad(), context(dtype):
        t0 = time.perf_counter()
        batch = sample(lab.policy, lab.tokenizer, problems, group_size=s.group, max_new_tokens=s.max_new)
        t["sampling"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        logp_ref = policy_logp(lab.ref, batch, response_only=True)  # (B, T)
        t["ref_logp"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    logp, grad = policy_gradient(lab, s, batch, logp_ref, dtype)
    t["forward_backward"] = time.perf_counter() - t0
    return t, batch, logp, grad


def changes(lab, s, batch, grad32, logp32):
    """What bf16 changes on one float32-sampled batch: its log-probs and its gradient."""
    with torch.no_grad():
        logp_ref = policy_logp(lab.ref, batch, response_only=True)
    logp, grad = policy_gradient(lab, s, batch, logp_ref, "bfloat16")
    m = batch.mask.bool()
    return {"logp_max_abs_diff": (logp - logp32)[m].abs().max().item(),
            "logp_mean_abs_diff": (logp - logp32)[m].abs().mean().item(),
            "logp_mean_abs_float32": logp32[m].abs().mean().item(),
            "gradient_max_rel_diff": ts.rel(grad, grad32)}


def same_uniforms_token_agreement(lab, s, problems, seed=0):
    """Rows whose replies are identical, and each row's first differing reply token (None: none), when
    float32 and bf16 sample with the same generators (the same uniforms)."""
    out = {}
    for dtype in DTYPES:
        gens = [torch.Generator().manual_seed(seed + i) for i in range(len(problems))]
        with torch.no_grad(), context(dtype):
            out[dtype] = sample(lab.policy, lab.tokenizer, problems, group_size=s.group, max_new_tokens=s.max_new,
                                generators=gens)
    a, b = out["float32"], out["bfloat16"]
    P = a.prompt_len
    n = min(a.input_ids.shape[1], b.input_ids.shape[1]) - P
    first_diff = [next((t for t in range(n) if a.input_ids[r, P + t] != b.input_ids[r, P + t]), None)
                  for r in range(len(a))]
    return {"rows": len(a), "rows_identical": sum(t is None for t in first_diff) if n else 0,
            "first_differing_token": first_diff}


def chain_seconds(cfg, rows, repeats):
    """Median seconds of the weight-matmul chain at each of `rows`, float32 and bf16 weights alike."""
    chains = {d: Chain(cfg, dtype=getattr(torch, d)) for d in DTYPES}
    out = {}
    for m in rows:
        times = {d: [] for d in DTYPES}
        for i in range(repeats + 1):  # the first is a warm-up: a dtype's first matmuls pick their kernels
            for d in DTYPES:
                c = chains[d]
                xs = {k: torch.randn(m, k, dtype=getattr(torch, d)) for k in {w.shape[0] for w in c.w[0]}}
                t0 = time.perf_counter()
                for layer in c.w:
                    for w in layer:
                        xs[w.shape[0]] @ w
                if i:
                    times[d].append(time.perf_counter() - t0)
        med = {d: statistics.median(v) for d, v in times.items()}
        out[str(m)] = {**{d: _sig(v) for d, v in med.items()}, "bf16_speedup": _sig(med["float32"] / med["bfloat16"])}
    return out


def measure(model="smollm2", lora=True, repeats=4, s=ts.SETTINGS):
    lab = make_lab(ts.our_preset(pretrained_folder(model), s, lora))
    problems = lab.rl_problems[: s.prompts]
    load = [round(x, 2) for x in os.getloadavg()]
    one_repeat(lab, s, problems, "float32", 0)  # warm-up
    one_repeat(lab, s, problems, "bfloat16", 0)
    secs = {d: {} for d in DTYPES}
    tokens = {d: [] for d in DTYPES}
    for i in range(repeats):
        for d in (DTYPES if i % 2 == 0 else DTYPES[::-1]):
            t, batch, _, _ = one_repeat(lab, s, problems, d, i)
            tokens[d].append(int(batch.mask.sum()))
            for k, v in t.items():
                secs[d].setdefault(k, []).append(v)
    phases = {}
    for k in secs["float32"]:
        f, b = statistics.median(secs["float32"][k]), statistics.median(secs["bfloat16"][k])
        phases[k] = {"float32_s": _sig(f), "bfloat16_s": _sig(b), "bf16_speedup": _sig(f / b),
                     "float32_each": [_sig(x) for x in secs["float32"][k]],
                     "bfloat16_each": [_sig(x) for x in secs["bfloat16"][k]]}
    _, batch, logp32, grad32 = one_repeat(lab, s, problems, "float32", 123)
    P = batch.prompt_len
    return {"model": model, "mode": "lora" if lora else "full", "rows": len(batch), "repeats": repeats,
            "torch_threads": torch.get_num_threads(), "load_average_at_start": load,
            "cpu_bf16_instructions": _cpu_flags(), "reply_tokens_per_repeat": tokens, "phases": phases,
            "matmul_chain_seconds": chain_seconds(lab.policy.config, [len(batch), len(batch) * (P + s.max_new)],
                                                  repeats),
            "what_bf16_changes": changes(lab, s, batch, grad32, logp32),
            "sampling_same_uniforms": same_uniforms_token_agreement(lab, s, problems),
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()]}


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return []
    return sorted(x for x in flags if "bf16" in x or x.startswith("amx"))


if __name__ == "__main__":
    per_mode_cli(measure, __doc__, repeats=4)
