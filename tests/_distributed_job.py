"""What tests/test_distributed.py runs on every rank of a torchrun launch (a script, not a test module).

    python -m torch.distributed.run --standalone --nproc_per_node 2 tests/_distributed_job.py MODE OUT ...

MODE all: every method on float64 labs from CKPT (the cpu preset's SFT model), the per-rank-normaliser
control on a few, the pretrained-model path on a tiny Llama (DDP against FSDP2, full and LoRA, a
resume under FSDP2), then the CLI (a run, a run killed after step 2 and resumed); ranks above 0
record every write they make under OUT/runs. MODE fail / stall: rank 1 raises or hangs at its second batch.
"""

import json
import os
import sys
import time

import torch

from _killed import killed

from unified_rl import cli, distributed, fsdp
from unified_rl.data import core
from unified_rl.lab import make_lab
from unified_rl.methods import METHODS
from unified_rl.trainer import train

WRITES = []
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
CONTROL = ("grpo", "dapo", "reinforce++", "ppo", "kto")
"""Methods also trained with each rank normalising by its own counts (what a plain DDP port does)."""


def settings(name):
    """A small float64 run of `name`: 3 steps of 4 questions x 4 samples (SFT: batches of 8)."""
    if METHODS[name].section == "sft":
        return dict(steps=3, batch_size=8)
    # a teacher equal to the starting policy (pi_ref shown the prompt alone) gives OPD no move and GKD a coefficient of
    # rounding noise (q - p between two equal models, which the ranks' smaller batches round otherwise): shown the answer
    extra = {"teacher_sees": "answer"} if name in ("opd", "gkd") else {}
    return dict(steps=3, prompts_per_step=4, group_size=4, frozen_samples=4, lr=1e-4, **extra)


def lab64(ckpt):
    lab = make_lab("cpu", 0, ckpt)
    lab.policy.double()
    lab.ref.double()
    return lab


def save(path, run):
    """The policy's full weights and the metrics of `run`, written by rank 0."""
    weights = fsdp.full_state_dict(run.policy)
    if distributed.is_main():
        torch.save({k: v.detach().cpu().clone() for k, v in weights.items()}, path + ".pt")
        with open(path + ".json", "w") as f:
            json.dump(run.metrics, f)


def equality(out, ckpt):
    for name in METHODS:
        save(os.path.join(out, name), train(name, lab=lab64(ckpt), progress=False, eval_every=0, **settings(name)))
    distributed.current().local_normalisers = True  # the classic bug: each rank normalises by its own counts
    for name in CONTROL:
        save(os.path.join(out, "control-" + name),
             train(name, lab=lab64(ckpt), progress=False, eval_every=0, **settings(name)))
    distributed.current().local_normalisers = False


def pretrained(out, folder):
    """GRPO on the tiny Llama: DDP and FSDP2 (uneven micro-batches: 3 groups of 2 over 2 ranks, 3 rows
    a micro-batch), full fine-tuning and LoRA; and an FSDP2 run killed after step 2 and resumed."""
    common = dict(preset="llm-cpu", model=folder, task="words", progress=False, eval_every=2,
                  prompts_per_step=3, group_size=2, lr=1e-3, beta=0.04)
    for tag, llm in (("ddp", {}), ("fsdp", {"fsdp": True}), ("ddp-lora", {"lora_r": 4}),
                     ("fsdp-lora", {"lora_r": 4, "fsdp": True})):
        save(os.path.join(out, tag), train("grpo", steps=3, llm={"dtype": "float64", "micro_batch": 3, **llm},
                                           **common))
    kw = dict(steps=4, save_every=1, llm={"dtype": "float64", "micro_batch": 3, "fsdp": True}, **common)
    save(os.path.join(out, "fsdp-full"), train("grpo", out=os.path.join(out, "runs", "fsdp-full"), **kw))
    killed(lambda: train("grpo", out=os.path.join(out, "runs", "fsdp-cut"), **kw))
    save(os.path.join(out, "fsdp-resumed"),
         train("grpo", out=os.path.join(out, "runs", "fsdp-cut"), resume=True, **kw))


def command_line(out, ckpt):
    runs = os.path.join(out, "runs")
    base = ["train", "grpo", "--preset", "tiny", "--steps", "4", "--quiet", "--save-every", "1"]
    cli.main(base + ["--init", ckpt, "--out", os.path.join(runs, "cli-full")])
    killed(lambda: cli.main(base + ["--init", ckpt, "--out", os.path.join(runs, "cli-cut")]))
    cli.main(base + ["--resume", "--out", os.path.join(runs, "cli-cut")])


def audit_writes(root):
    """Record every write this process makes under `root` (Python's audit events)."""
    root = os.path.realpath(root)

    def hook(event, args):
        path = None
        if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            mode, flags = args[1] or "", args[2] or 0
            if any(c in mode for c in "wax+") or flags & WRITE_FLAGS:
                path = args[0]
        elif event in ("os.mkdir", "os.rename", "os.remove", "os.rmdir", "shutil.rmtree", "os.symlink",
                       "os.truncate", "os.chmod", "os.utime", "fcntl.flock"):
            path = args[0]
        if isinstance(path, (str, bytes, os.PathLike)):
            path = os.path.realpath(os.fsdecode(path))
            if path == root or path.startswith(root + os.sep):
                WRITES.append([event, path])

    sys.addaudithook(hook)


def planted(kind):
    """Rank 1's second batch raises (fail) or never comes (stall)."""
    real, calls = core.PolicySamples.next_batch, [0]

    def broken(self):
        calls[0] += 1
        if calls[0] == 2:
            if kind == "fail":
                raise ValueError("a planted failure on this rank")
            time.sleep(600)
        return real(self)

    core.PolicySamples.next_batch = broken


def main():
    mode, out = sys.argv[1], sys.argv[2]
    distributed.init()
    rank = distributed.current().rank
    if mode in ("fail", "stall"):
        if rank == 1:
            planted(mode)
        cli.main(["train", "grpo", "--preset", "tiny", "--steps", "4", "--quiet", "--out", os.path.join(out, "runs", mode)])
        return
    ckpt, folder = sys.argv[3], sys.argv[4]
    if rank > 0:
        audit_writes(os.path.join(out, "runs"))
    t0 = time.time()
    equality(out, ckpt)
    t1 = time.time()
    pretrained(out, folder)
    t2 = time.time()
    command_line(out, ckpt)
    if rank > 0:
        with open(os.path.join(out, f"writes-rank{rank}.json"), "w") as f:
            json.dump(WRITES, f)
    if rank == 0:
        with open(os.path.join(out, "seconds.json"), "w") as f:
            json.dump({"equality": t1 - t0, "pretrained": t2 - t1, "cli": time.time() - t2}, f)


if __name__ == "__main__":
    main()
