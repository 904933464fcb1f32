"""How much of SmolLM2-135M-Instruct one full fine-tuning step changes, by the weights' precision.

One SFT step of the llm-cpu preset (lr 5e-6, every weight gets a gradient) from the same weights in
three ways: float32; bfloat16 as the package trains it (float32 master weights, llm.weights_dtype); and
bfloat16 weights with no float32 copy (what the package did before). Reports the fraction of weights
that changed, overall and without the embedding (whose rows move only for tokens the batch read).
Writes the result, with the command and the load average, to --out (JSON).

    python bench/llm_precision.py --out bench/llm_precision.json
"""

import argparse
import json
import os
import sys

import torch

from unified_rl import llm
from unified_rl.trainer import train

ARMS = {"float32": ("float32", True), "bfloat16, float32 masters": ("bfloat16", True),
        "bfloat16, no float32 copy": ("bfloat16", False)}


def changed(before, after):
    """(fraction of all weights that changed, the same without the token embedding)."""
    moved = {k: int((after[k].float() != before[k].float()).sum()) for k in before}
    size = {k: before[k].numel() for k in before}
    dense = [k for k in before if "embed_tokens" not in k]
    return sum(moved.values()) / sum(size.values()), sum(moved[k] for k in dense) / sum(size[k] for k in dense)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    result = {"command": " ".join(["python", *sys.argv]), "load_average": os.getloadavg(),
              "threads": torch.get_num_threads(), "arms": {}}
    weights_dtype = llm.weights_dtype
    for name, (dtype, masters) in ARMS.items():
        llm.weights_dtype = weights_dtype if masters else (lambda cfg, device: llm.resolve_dtype(cfg.dtype, device))
        run = train("sft", model="smollm2", task="words", steps=1, seed=0, eval_every=0, progress=False,
                    llm={"dtype": dtype})
        before = run.lab.ref.state_dict()  # pi_ref: the starting weights, in the run's dtype
        after = run.policy.state_dict()
        total, dense = changed(before, after)
        result["arms"][name] = {"weights_dtype": str(next(run.policy.parameters()).dtype).removeprefix("torch."),
                                "changed": total, "changed_without_embedding": dense}
        print(name, result["arms"][name], flush=True)
        del run
    llm.weights_dtype = weights_dtype
    result["load_average_after"] = os.getloadavg()
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
