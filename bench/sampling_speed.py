"""Sampling throughput: `unified_rl.sampling.sample` against `model.generate` on the same batch.

    python bench/sampling_speed.py [--preset cpu] [--repeats 5]
Both sample the same left-padded prompts with a KV cache, temperature 1, and stop a row at EOS;
throughput counts generated tokens (EOS included, padding excluded) per second, median of repeats.
"""

import argparse
import json
import statistics
import time

import torch

from unified_rl.models import build_policy, pick_device
from unified_rl.presets import get_preset
from unified_rl.sampling import _left_pad, sample
from unified_rl.task import make_splits
from unified_rl.tokenizer import build_tokenizer, encode_prompts


def _generated_tokens(resp, eos):
    """Tokens up to and including each row's first EOS. resp: (B, N)."""
    is_eos = resp == eos
    first = torch.where(is_eos.any(-1), is_eos.float().argmax(-1) + 1, torch.full_like(resp[:, 0], resp.shape[1]))
    return int(first.sum())


def measure(preset="cpu", repeats=5, seed=0, device=None):
    """Median tokens/s of both samplers, and their ratio, for one batch of the preset's RL step."""
    preset = get_preset(preset)
    device = pick_device(device)
    tok = build_tokenizer()
    torch.manual_seed(seed)
    model = build_policy(tok, preset.model).to(device).eval()
    problems, _ = make_splits(preset.task, preset.rl.prompts_per_step, 0, seed=seed)
    G = preset.rl.group_size
    max_new = max(len(p.solution) for p in problems) + 5
    ids, att = _left_pad(encode_prompts(tok, [p.prompt for p in problems]), tok.pad_token_id, device)
    ids, att = ids.repeat_interleave(G, 0), att.repeat_interleave(G, 0)  # (B, P)

    def ours():
        r = sample(model, tok, problems, group_size=G, max_new_tokens=max_new)
        return int(r.mask.sum())

    @torch.no_grad()
    def hf():
        out = model.generate(input_ids=ids, attention_mask=att, do_sample=True, temperature=1.0, top_k=0,
                             max_new_tokens=max_new, eos_token_id=tok.eos_token_id,
                             pad_token_id=tok.pad_token_id)
        return _generated_tokens(out[:, ids.shape[1]:], tok.eos_token_id)

    rates = {"ours": [], "generate": []}
    ours(), hf()  # warm-up
    for _ in range(repeats):
        for name, fn in (("ours", ours), ("generate", hf)):  # interleaved: load drifts hit both
            if device.type == "cuda":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            n = fn()
            if device.type == "cuda":
                torch.cuda.synchronize()
            rates[name].append(n / (time.perf_counter() - t0))
    med = {k: statistics.median(v) for k, v in rates.items()}
    return {"preset": preset.name, "device": str(device), "batch": len(ids), "max_new_tokens": max_new,
            "repeats": repeats, "ours_tokens_per_s": round(med["ours"], 1),
            "generate_tokens_per_s": round(med["generate"], 1),
            "speedup_vs_generate": round(med["ours"] / med["generate"], 3)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="cpu")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    print(json.dumps(measure(args.preset, args.repeats), indent=2))


if __name__ == "__main__":
    main()
