"""How far our GRPO step on a real model is from what one core can do: each phase's floating-point
work counted from the model's config and the batch's shapes, the matmul rate one core sustains on the
model's own weight shapes, and each phase's achieved fraction of that roof.

    python bench/llm_roof.py [--model smollm2] [--modes lora,full] [--repeats 3] [--out bench/llm_roof.json]
The batch is trl_smollm2.py's (2 chat prompts x 4 samples, <= 16 new tokens, float32). The roof of a
phase is the time its weight matmuls take alone, run as a chain through distinct weight tensors of
the model's shapes (so nothing stays in cache that would not in the model): the forward chain for
prefill, decoding, the reference and the vocabulary projection; forward + backward chains (input
gradients, and weight gradients under full fine-tuning only) for the policy's pass. Each repeat
times our phases and then the chains on the same shapes, so both see the same machine load. A
phase's fraction is its roof time / its measured time. AdamW has no matmul: its time and bytes.
"""

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import trl_smollm2 as ts  # noqa: E402
from unified_rl import coefficients  # noqa: E402
from unified_rl.llm import pretrained_folder  # noqa: E402
from unified_rl.models import position_ids_of  # noqa: E402
from unified_rl.paradigm import surrogate_loss  # noqa: E402
from unified_rl.sampling import _left_pad, _pad_id, sample  # noqa: E402
from unified_rl.tokenizer import encode_problems  # noqa: E402
from unified_rl.trainer import make_lab  # noqa: E402
from unified_rl.wiring import policy_logp  # noqa: E402


def linear_shapes(cfg):
    """(in, out) of each weight matrix of one decoder layer (Llama: q, k, v, o, gate, up, down)."""
    h, i = cfg.hidden_size, cfg.intermediate_size
    hd = getattr(cfg, "head_dim", None) or h // cfg.num_attention_heads
    q, kv = cfg.num_attention_heads * hd, cfg.num_key_value_heads * hd
    return [(h, q), (h, kv), (h, kv), (q, h), (h, i), (h, i), (i, h)]


def trunk_flops(cfg, tokens, context):
    """Forward FLOPs of the decoder layers for `tokens` positions attending to `context` keys each."""
    per_token = 2 * sum(k * n for k, n in linear_shapes(cfg))  # the weight matmuls
    hd = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    attention = 2 * 2 * context * cfg.num_attention_heads * hd  # q.k and the weighted sum of v
    return cfg.num_hidden_layers * tokens * (per_token + attention)


def head_flops(cfg, positions):
    """Forward FLOPs of the vocabulary projection at `positions` positions."""
    return 2 * positions * cfg.hidden_size * cfg.vocab_size


def work(cfg, n, G, P, R, lora):
    """{phase: forward-equivalent FLOPs} of one step: n prompts of width P, G samples of R tokens each."""
    B = n * G
    # reply-only passes (sampling.token_logp): each prompt once, then every row's reply
    ref = trunk_flops(cfg, n * P, P / 2) + trunk_flops(cfg, B * (R - 1), P + R / 2) + head_flops(cfg, B * R)
    policy = ref
    return {"prefill": trunk_flops(cfg, n * P, P / 2) + head_flops(cfg, n),
            "decoding": trunk_flops(cfg, B * (R - 1), P + R / 2) + head_flops(cfg, B * (R - 1)),
            "ref_logp": ref, "vocab_projection": head_flops(cfg, B * R),
            # backward: input gradients (x1), and weight gradients (x1) only where weights train
            "forward_backward": policy * (2 if lora else 3)}


class Chain:
    """The model's weight matmuls alone: distinct tensors per layer, run forward (and backward)."""

    def __init__(self, cfg, dtype=torch.float32):
        g = torch.Generator().manual_seed(0)
        self.cfg = cfg
        self.w = [[torch.randn(k, n, generator=g, dtype=dtype) * k ** -0.5 for k, n in linear_shapes(cfg)]
                  for _ in range(cfg.num_hidden_layers)]
        self.head = torch.randn(cfg.hidden_size, cfg.vocab_size, generator=g, dtype=dtype) * 0.05

    def forward(self, m):
        """Seconds of one forward chain at m rows."""
        xs = {k: torch.randn(m, k) for k in {k for k, _ in linear_shapes(self.cfg)}}
        t = time.perf_counter()
        for layer in self.w:
            for w in layer:
                xs[w.shape[0]] @ w
        return time.perf_counter() - t

    def backward(self, m, weights):
        """Seconds of the backward matmuls at m rows: input gradients, weight gradients if `weights`."""
        dys = {n: torch.randn(m, n) for n in {n for _, n in linear_shapes(self.cfg)}}
        xs = {k: torch.randn(m, k) for k in {k for k, _ in linear_shapes(self.cfg)}}
        t = time.perf_counter()
        for layer in self.w:
            for w in layer:
                dys[w.shape[1]] @ w.T
                if weights:
                    xs[w.shape[0]].T @ dys[w.shape[1]]
        return time.perf_counter() - t

    def projection(self, m, backward=False, weights=False):
        x, dy = torch.randn(m, self.cfg.hidden_size), torch.randn(m, self.cfg.vocab_size)
        t = time.perf_counter()
        if not backward:
            x @ self.head
        else:
            dy @ self.head.T
            if weights:
                x.T @ dy
        return time.perf_counter() - t


def roof_seconds(chain, n, G, P, R, lora):
    """{phase: seconds its matmuls take alone}, once."""
    B = n * G
    fwd_prompt, fwd_tail, fwd_step = chain.forward(n * P), chain.forward(B * (R - 1)), chain.forward(B)
    head_resp, head_step, head_n = chain.projection(B * R), chain.projection(B), chain.projection(n)
    bwd = chain.backward(n * P, weights=not lora) + chain.backward(B * (R - 1), weights=not lora)
    head_bwd = chain.projection(B * R, backward=True, weights=not lora)
    return {"prefill": fwd_prompt + head_n, "decoding": (R - 1) * (fwd_step + head_step),
            "ref_logp": fwd_prompt + fwd_tail + head_resp, "vocab_projection": head_resp,
            "forward_backward": fwd_prompt + fwd_tail + head_resp + bwd + head_bwd}


def measured_seconds(lab, s, repeats=3):
    """({phase: median seconds} of our own code on one batch, {phase: median roof seconds}, the batch):
    each repeat times our phases, then the roof's chains on that batch's shapes (so a change in
    machine load hits both); the first repeat is a warm-up."""
    lora = hasattr(lab.policy, "disable_adapter")
    chain, roofs = Chain(lab.policy.config), []
    policy, tok, G = lab.policy, lab.tokenizer, s.group
    problems = lab.rl_problems[: s.prompts]
    ids, att = _left_pad(encode_problems(tok, problems), _pad_id(tok), "cpu")  # (n, P)
    opt = torch.optim.AdamW(policy.parameters(), lr=s.lr, weight_decay=0.0)
    lm_head = policy.get_output_embeddings()
    out = {k: [] for k in ("prefill", "sampling", "ref_logp", "vocab_projection", "forward_backward", "adamw")}
    batch = None
    for i in range(repeats + 1):
        t = {}
        with torch.no_grad():
            policy.eval()
            t0 = time.perf_counter()
            policy(input_ids=ids, attention_mask=att, position_ids=position_ids_of(att), use_cache=True,
                   logits_to_keep=1)  # as `sample` prefills: each prompt once
            t["prefill"] = time.perf_counter() - t0
            policy.train()
            t0 = time.perf_counter()
            batch = sample(policy, tok, problems, group_size=G, max_new_tokens=s.max_new)
            t["sampling"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            logp_ref = policy_logp(lab.ref, batch, response_only=True)  # (B, T)
            t["ref_logp"] = time.perf_counter() - t0
            R = batch.input_ids.shape[1] - batch.prompt_len
            hidden = torch.randn(len(batch), R, policy.config.hidden_size)  # (B, R, h)
            targets = batch.input_ids[:, batch.prompt_len:]  # (B, R)
            t0 = time.perf_counter()
            logits = lm_head(hidden)  # (B, R, V)
            logits.gather(-1, targets[..., None]).squeeze(-1) - logits.logsumexp(-1)  # as token_logp
            t["vocab_projection"] = time.perf_counter() - t0
        rewards = (torch.arange(len(batch)) % 3 == 0).float()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        logp = policy_logp(policy, batch, response_only=True)  # (B, T)
        coef = coefficients.grpo(rewards, G, logp, logp_ref, batch.mask, s.beta, logp_old=logp.detach(),
                                 clip_eps=s.clip_eps)
        surrogate_loss(logp, coef, batch.mask).backward()
        t["forward_backward"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        opt.step()
        t["adamw"] = time.perf_counter() - t0
        R = batch.input_ids.shape[1] - batch.prompt_len
        roof = roof_seconds(chain, s.prompts, G, batch.prompt_len, R, lora)
        if i:
            for k, v in t.items():
                out[k].append(v)
            t["decoding"] = t["sampling"] - t["prefill"]
            out.setdefault("decoding", []).append(t["decoding"])
            roofs.append(roof)
    med = {k: statistics.median(v) for k, v in out.items()}
    return med, {k: statistics.median(r[k] for r in roofs) for k in roofs[0]}, batch


def _sig(x):
    """`x` to 3 significant digits."""
    return float(f"{x:.3g}")


def measure(model="smollm2", lora=True, repeats=3, s=ts.SETTINGS):
    """Work, roof seconds, measured seconds and achieved fraction of each phase of one step."""
    lab = make_lab(ts.our_preset(pretrained_folder(model), s, lora))
    cfg = lab.policy.config
    load = [round(x, 2) for x in os.getloadavg()]
    secs, roof, batch = measured_seconds(lab, s, repeats)
    n, G, P = s.prompts, s.group, batch.prompt_len
    R = batch.input_ids.shape[1] - P
    flops = work(cfg, n, G, P, R, lora)
    trainable = sum(p.numel() for p in lab.policy.parameters() if p.requires_grad)
    phases = {}
    for k in flops:
        phases[k] = {"gflop": _sig(flops[k] / 1e9), "seconds": _sig(secs[k]),
                     "gflop_per_second": _sig(flops[k] / 1e9 / secs[k]), "roof_seconds": _sig(roof[k]),
                     "roof_gflop_per_second": _sig(flops[k] / 1e9 / roof[k]), "fraction_of_roof": _sig(roof[k] / secs[k])}
    phases["adamw"] = {"seconds": _sig(secs["adamw"]),
                       "bytes_touched_mb": round(trainable * 4 * 7 / 2**20, 1)}  # read p, g, m, v; write p, m, v
    return {"model": model, "mode": "lora" if lora else "full", "rows": len(batch), "prompt_width": P,
            "reply_width": R, "torch_threads": torch.get_num_threads(), "load_average_at_start": load,
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()], "repeats": repeats,
            "phases": phases,
            "note": "vocab_projection is part of ref_logp and forward_backward; decoding = sampling - prefill"}


def per_mode_cli(measure, doc, repeats):
    """The command line of a per-mode SmolLM2 benchmark: `measure(model, lora, repeats)` for each of
    --modes, printed as JSON and also written to --out."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--modes", default="lora,full")
    ap.add_argument("--repeats", type=int, default=repeats)
    ap.add_argument("--out", default=None, help="also write the result to this JSON file")
    args = ap.parse_args()
    res = {m: measure(args.model, m == "lora", args.repeats) for m in args.modes.split(",") if m}
    text = json.dumps(res, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    per_mode_cli(measure, __doc__, repeats=3)
