"""Where our GRPO step and TRL's differ on a real model: each phase timed on the same batch, both ways.

    python bench/llm_phases.py [--model smollm2] [--lora] [--repeats 3]
On one batch of trl_smollm2.py's settings (2 chat prompts x 4 samples, <= 16 new tokens, float32):
sampling by our `sample` against `model.generate` as TRL calls it (do_sample, temperature 1, top_k
0, the same stop ids, no position ids), in generated tokens per second; the reference's log-probs and
the policy's forward + backward by our `policy_logp` + `surrogate_loss` against TRL's own
`_get_per_token_logps_and_entropies` + `_compute_loss`, in seconds. Interleaved repeat by repeat,
medians, the first repeat a warm-up.
"""

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import trl_smollm2 as ts  # noqa: E402
from unified_rl import coefficients  # noqa: E402
from unified_rl.llm import pretrained_folder  # noqa: E402
from unified_rl.paradigm import surrogate_loss  # noqa: E402
from unified_rl.sampling import sample, stop_ids  # noqa: E402
from unified_rl.trainer import make_lab  # noqa: E402
from unified_rl.wiring import policy_logp  # noqa: E402


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def measure(model="smollm2", lora=True, repeats=3, s=ts.SETTINGS):
    folder = pretrained_folder(model)
    lab = make_lab(ts.our_preset(folder, s, lora))
    policy, tok, G = lab.policy, lab.tokenizer, s.group
    problems = lab.rl_problems[: s.prompts]
    batch = sample(policy, tok, problems, group_size=G)
    P = batch.prompt_len
    ids, att = batch.input_ids[:, :P], batch.attention_mask[:, :P]  # (B, P) the same left-padded prompts
    stops = stop_ids(policy, tok)
    rewards = (torch.arange(len(batch)) % 3 == 0).float()
    with torch.no_grad():
        logp_ref = policy_logp(lab.ref, batch, response_only=True)
    with tempfile.TemporaryDirectory() as out_dir:
        trainer = ts.trl_trainer(folder, s, lora, out_dir, 1)
        trainer.model.load_state_dict(policy.state_dict())
        trainer.current_gradient_accumulation_steps = 1
        r = rewards.view(-1, G)
        inputs = {"prompt_ids": ids, "prompt_mask": att, "completion_ids": batch.input_ids[:, P:],
                  "completion_mask": batch.attention_mask[:, P:],
                  "advantages": ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-4)).view(-1),
                  "ref_per_token_logps": logp_ref[:, P - 1:], "num_items_in_batch": batch.mask.sum()}
        full = torch.cat([ids, batch.input_ids[:, P:]], 1), torch.cat([att, batch.attention_mask[:, P:]], 1)
        keep = batch.input_ids.shape[1] - P

        @torch.no_grad()
        def generate():
            policy.eval()
            out = policy.generate(input_ids=ids, attention_mask=att, do_sample=True, temperature=s.temperature,
                                  top_k=0, top_p=1.0, max_new_tokens=s.max_new, eos_token_id=stops,
                                  pad_token_id=tok.pad_token_id)
            policy.train()
            resp = out[:, P:]
            ended = torch.isin(resp, torch.tensor(stops))
            first = torch.where(ended.any(-1), ended.float().argmax(-1) + 1, torch.full_like(resp[:, 0], resp.shape[1]))
            return int(first.sum())

        def ours_fb():
            policy.zero_grad(set_to_none=True)
            logp = policy_logp(policy, batch, response_only=True)
            coef = coefficients.grpo(rewards, G, logp, logp_ref, batch.mask, s.beta, logp_old=logp.detach(),
                                     clip_eps=s.clip_eps)
            surrogate_loss(logp, coef, batch.mask).backward()

        def trl_fb():
            trainer.model.zero_grad(set_to_none=True)
            trainer._compute_loss(trainer.model, inputs).backward()

        def ours_ref():
            with torch.no_grad():
                policy_logp(lab.ref, batch, response_only=True)

        def trl_ref():
            ctx = trainer.model.disable_adapter() if lora else contextlib.nullcontext()
            ref = trainer.model if lora else trainer.ref_model
            with torch.no_grad(), ctx:
                trainer._get_per_token_logps_and_entropies(ref, *full, keep)

        jobs = {"sampling_ours": lambda: int(sample(policy, tok, problems, group_size=G).mask.sum()),
                "sampling_generate": generate, "ref_logp_ours": ours_ref, "ref_logp_trl": trl_ref,
                "forward_backward_ours": ours_fb, "forward_backward_trl": trl_fb}
        secs = {k: [] for k in jobs}
        tokens = {"sampling_ours": [], "sampling_generate": []}
        for i in range(repeats + 1):
            for k, fn in jobs.items():
                dt, n = _timed(fn)
                if i:  # the first round is a warm-up
                    secs[k].append(dt)
                    if k in tokens:
                        tokens[k].append(n / dt)
    med = {k: round(statistics.median(v), 3) for k, v in secs.items()}
    rate = {k: round(statistics.median(v), 1) for k, v in tokens.items()}
    return {"model": model, "mode": "lora" if lora else "full", "repeats": repeats, "seconds": med,
            "tokens_per_second": rate, "prompt_len": P, "rows": len(batch),
            "trl_over_ours": {p: round(med[f"{p}_trl" if p != "sampling" else "sampling_generate"]
                                       / med[f"{p}_ours"], 3) for p in ("sampling", "ref_logp", "forward_backward")}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--lora", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(json.dumps(measure(args.model, args.lora, args.repeats), indent=2))


if __name__ == "__main__":
    main()
