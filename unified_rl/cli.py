"""Command line: the same code path as the notebooks.

    python -m unified_rl methods
    python -m unified_rl train METHOD --preset cpu --out runs/grpo
    python -m unified_rl evaluate runs/grpo/checkpoint --samples 64 --k 1,4,16,64 --out eval.json
"""

import argparse
import contextlib
import json
import os
import sys
import time

from . import catalogue  # what the parser and `methods` show, read without importing torch
from .cli_args import Parser, at_least, check_writable, folder, ks, temperature

EPILOG = """examples:
  python -m unified_rl train sft  --preset cpu --out runs/sft      # ~1 min on a laptop CPU
  python -m unified_rl train grpo --preset cpu --out runs/grpo     # starts from the cached SFT model
  python -m unified_rl evaluate runs/grpo/checkpoint --k 1,4,16 --out runs/grpo/eval.json
  torchrun --standalone --nproc_per_node 2 -m unified_rl train grpo --preset tiny --out runs/grpo-2ranks

Every method other than sft starts, unless --init says otherwise, from an SFT checkpoint trained
with the same preset and cached in $UNIFIED_RL_CACHE (default ~/.cache/unified_rl). A run folder
is saved every few steps and never overwritten unless --overwrite is given; --resume continues it
exactly where it stopped. Files the run did not write (an eval.json put in its folder) are always
kept, and --overwrite refuses a folder that holds any. The run folder: docs/ARCHITECTURE.md.
Under torchrun (or accelerate launch --multi_gpu) each process is one rank of a data-parallel run
and rank 0 alone writes OUT (README, "Beyond one machine")."""


def build_parser():
    known = catalogue.load()  # the registries' names, from catalogue.json in a fresh process
    methods, presets, experiments = ([row["name"] for row in known[k]] for k in ("methods", "presets",
                                                                                   "experiments"))
    parts = {axis: [n for p_ in rows for n in (p_["name"], *p_["aliases"])] for axis, rows in known["parts"].items()}
    labs = [row["name"] for row in known["presets"] if row["kind"] == "lab"]
    p = Parser(prog="python -m unified_rl", formatter_class=argparse.RawDescriptionHelpFormatter,
               description=f"Train and evaluate {len(methods)} post-training methods (DeepSeekMath's SFT, "
                           "RFT, online RFT, DPO, PPO, GRPO and those after them: `methods` lists them) "
                           "through one gradient (DeepSeekMath eq 5).", epilog=EPILOG)
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    p.commands = sub.choices
    sub.add_parser("methods", help="list the methods: data source, reward, gradient coefficient")
    t = sub.add_parser("train", help="train one method (or a composition of parts) and evaluate it on held-out "
                                     "questions")
    t.add_argument("method", nargs="?", choices=methods, metavar="METHOD",
                   help=f"one of: {', '.join(methods)}; optional with --advantage and --policy")
    add_composition(t, parts)
    t.add_argument("--preset", default="auto", choices=[*presets, "auto"], help="cpu, gpu, or auto (gpu if CUDA) [auto]")
    t.add_argument("--init", help="checkpoint to start from (default: cached SFT model; sft starts from scratch)")
    t.add_argument("--steps", type=at_least(0), help="optimizer steps (default: the preset's)")
    t.add_argument("--seed", type=at_least(0), default=0, help="random seed [0]")
    t.add_argument("--out", required=True, type=folder, help="folder for summary.json, metrics.jsonl, checkpoint/")
    t.add_argument("--resume", action="store_true", help="continue the run saved in OUT where it stopped "
                   "(the same settings; --init is refused: the run continues from its own checkpoint)")
    t.add_argument("--overwrite", action="store_true", help="replace a run already in OUT (only a run folder "
                   "holding nothing but the run's own files)")
    t.add_argument("--save-every", type=at_least(1), help="steps between saves of OUT (default: the preset's eval_every)")
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    t.add_argument("--model", help="a pretrained chat model: smollm2 (offline), a folder or a hub name "
                                   "(preset llm-cpu, or llm-gpu with CUDA, unless --preset says)")
    t.add_argument("--task", help="with --model: words, words:DIGITS, gsm8k or gsm8k:FILE.jsonl [the preset's]")
    t.add_argument("--lora-r", type=at_least(0), help="with --model: LoRA rank, 0 for full fine-tuning (switching "
                                                    "between them switches the preset's learning rate too)")
    t.add_argument("--micro-batch", type=at_least(0), help="with --model: rows per forward-backward (0: all)")
    t.add_argument("--dtype", choices=["auto", "float32", "bfloat16", "float16", "float64"],
                   help="with --model: the weights' dtype")
    t.add_argument("--grad-checkpointing", action="store_true", help="with --model: recompute activations")
    t.add_argument("--fsdp", action="store_true", help="with --model under torchrun: shard the model over the ranks "
                                                      "(FSDP2, per decoder layer)")
    e = sub.add_parser("evaluate", help="greedy accuracy, Pass@K and Maj@K of a checkpoint")
    e.add_argument("checkpoint", help="a folder saved by train (OUT/checkpoint) or any causal LM path")
    e.add_argument("--preset", default="auto", choices=[*presets, "auto"],
                   help="which held-out questions [auto: a run's own, read from its summary.json; else by the "
                        "checkpoint's kind: a chat model llm-cpu/llm-gpu, the lab's model cpu/gpu]")
    e.add_argument("--samples", type=at_least(1), default=None, help="samples per question (default: the largest k)")
    e.add_argument("--k", type=ks, default=[1, 4, 16], help="comma-separated K values [1,4,16]")
    e.add_argument("--temperature", type=temperature, default=0.7, help="sampling temperature [0.7]")
    e.add_argument("--problems", type=at_least(1), default=None, help="held-out questions for Pass/Maj@K")
    e.add_argument("--seed", type=at_least(0), default=0, help="seed of the sampled answers [0]")
    e.add_argument("--out", required=True, type=folder, help="JSON file to write")
    r = sub.add_parser("reproduce", help="run one of the paper's §5.2 experiments end to end")
    r.add_argument("name", choices=experiments, metavar="NAME", help=f"one of: {', '.join(experiments)}")
    r.add_argument("--preset", default="auto", choices=[*labs, "auto"],
                   help="cpu, gpu, or auto [auto]")
    r.add_argument("--seeds", type=at_least(1), default=3, help="independent seeds, for the spread [3]")
    r.add_argument("--out", required=True, type=folder, help="folder for NAME.json and NAME.png")
    r.add_argument("--overwrite", action="store_true", help="replace an existing OUT/NAME.json")
    r.add_argument("--quiet", action="store_true", help="no progress bars")
    return p


def add_composition(t, parts):
    """train's flags that compose: replace a method's parts, or name one per axis (no METHOD)."""
    g = t.add_argument_group("composition", "replace METHOD's parts, or name one per axis without a METHOD "
                                            "(`methods` lists the parts)")
    g.add_argument("--advantage", choices=parts["advantage"], metavar="NAME", help="advantage estimator")
    g.add_argument("--policy", choices=parts["policy"], metavar="NAME", help="policy term (how the ratio weighs a token)")
    g.add_argument("--kl", choices=[*parts["kl"], "none"], metavar="NAME", help="KL term toward pi_ref, or none")
    g.add_argument("--kl-in", choices=["loss", "reward"], help="where the KL term sits [loss]")
    g.add_argument("--aggregation", choices=parts["aggregation"], metavar="NAME", help="how token terms become one number")
    g.add_argument("--mask", action="append", choices=parts["mask"], metavar="NAME", help="a token mask (repeatable)")
    g.add_argument("--term", action="append", choices=parts["term"], metavar="NAME",
                   help="a term beside the policy term in the loss, e.g. log_ratio_sq (repeatable)")
    g.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", type=setting,
                   help="a setting of the method or its preset section, e.g. --set clip_eps_high=0.28 (repeatable)")


def setting(text):
    """KEY=VALUE, the value read as JSON where it parses (0.28, true, null), else as a string."""
    key, eq, value = text.partition("=")
    if not eq or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key.strip(), json.loads(value)
    except ValueError:
        return key.strip(), {"none": None, "None": None, "True": True, "False": False}.get(value, value)


def _method(args):
    """The Method `train` runs: METHOD, or its recomposition with the --advantage/--policy/... parts given."""
    axes = {k: getattr(args, k) for k in ("advantage", "policy", "kl", "kl_in", "aggregation")}
    axes["masks"], axes["terms"] = args.mask, args.term
    if args.method is None and (axes["advantage"] is None or axes["policy"] is None):
        raise ValueError("give a METHOD, or --advantage and --policy (and optionally --kl, --aggregation, --mask, --term)")
    if all(v is None for v in axes.values()):
        return args.method
    from .methods import recompose
    return recompose(args.method, **axes)


def _write_json(path, obj):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2, allow_nan=False)


def cmd_methods(args):
    known = catalogue.load()
    rows = [(m["name"], m["data_source"], m["reward"], m["gc"], m["paper"],
             m["summary"] + "".join(f"; {o['name']} = {' | '.join(o['choices'])}" for o in m["settings"]))
            for m in known["methods"]]
    head = ("method", "data source", "reward", "GC (advantage x policy x KL, aggregation)", "paper")
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(4)]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)) + "  paper")
    for r in rows:  # one aligned line per method, then what it does and its settings (the default first)
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + f"  {r[4]}\n{'':{widths[0]}}  {r[5]}")
    print("\nparts (train --advantage A --policy P --kl K --aggregation G composes any of them):")
    for axis, parts in known["parts"].items():  # one line per part: name (aliases), what it does, its settings
        if not parts:
            continue
        print(f"\n{axis}" + (" (the preference family's, composed in Python: parts.compose_pairs)"
                              if axis.startswith("pair_") else "") + ":")
        width = max(len(p["name"]) for p in parts)
        for p in parts:
            also = f" (also {', '.join(p['aliases'])})" if p["aliases"] else ""
            sets = f"; settings: {', '.join(p['settings'])}" if p["settings"] else ""
            print(f"  {p['name'].ljust(width)}  {p['summary']}{also}{sets}  [{p['cite']}]")


def cmd_train(args):
    _quiet_libraries()
    from . import distributed
    from .runs import check_out, hold
    from .trainer import ready_before_ranks, save_run, train
    from .worlds import world_of

    preset = _train_preset(args)
    world_of(preset).check()  # a dtype this device cannot train in: refused before anything is made
    method = _method(args)
    ready_before_ranks(method, preset, args.seed, args.init, args.resume, not args.quiet)
    distributed.init()  # under torchrun: this process is one rank (distributed.py); rank 0 alone writes OUT
    with contextlib.ExitStack() as held:
        def claim():  # before anything is created; from the training through the final save, one writer
            check_out(args.out, overwrite=args.overwrite, resume=args.resume)
            held.enter_context(hold(args.out))

        distributed.from_main(claim)
        run = train(method, preset=preset, steps=args.steps, seed=args.seed, init=args.init, out=args.out,
                    resume=args.resume, overwrite=args.overwrite, save_every=args.save_every,
                    progress=not args.quiet, **dict(args.set))
        lab = run.lab
        # seeded as `evaluate --seed` is, on the same questions: the two give the same numbers (in one
        # process; under torchrun each question has its own stream of the seed, on any number of ranks)
        evaluating = time.monotonic()
        run.summary["eval"] = _evaluate(lab.policy, lab.tokenizer, lab.test_problems, preset.k_problems,
                                        preset.k_samples, [k for k in (1, 4, 16) if k <= preset.k_samples],
                                        0.7, args.seed, args.quiet or not distributed.is_main())
        run.summary["eval"]["seconds"] = round(time.monotonic() - evaluating, 2)
        save_run(run)
    if not distributed.is_main():
        return
    ev = run.summary["eval"]
    print(f"{run.summary['method']}: held-out greedy accuracy {ev['accuracy']:.3f}, pass@1 {ev['pass_at_k']['1']:.3f}, "
          f"maj@{max(map(int, ev['maj_at_k']))} {ev['maj_at_k'][max(ev['maj_at_k'], key=int)]:.3f} "
          f"({timing(run.summary, len(run.metrics), time.monotonic() - args.started)}) -> {args.out} "
          f"({_sizes(args.out)})")


def timing(summary, steps, total):
    """The result line's seconds, each named: the training loop's, the final evaluation's, the whole command's."""
    # summary["seconds"] (loop.fit): wall time of the run's steps (a resumed run's earlier ones too), their
    # periodic greedy checks and saves included; not the SFT cache, the model's load, this evaluation or
    # the final save. `total`: from main's start, the imports included, to this line.
    def secs(x):
        return f"{x:.1f} s" if x < 10 else f"{x:.0f} s"
    return f"on {summary['device']}: {steps} training steps {secs(summary['seconds'])}, the evaluation " \
           f"{secs(summary['eval']['seconds'])}; this command {secs(total)} in all"


def _sizes(out):
    """The run folder's size, and the share of state.pt (what only --resume reads)."""
    from .runs import STATE, manifest

    def size(rel):
        path = os.path.join(out, rel)
        return os.path.getsize(path) if os.path.isfile(path) else 0

    total, state = sum(map(size, manifest(out) or [])), size(STATE)
    return f"{_bytes(total)}, of which {STATE} {_bytes(state)}: pi_ref, the optimizer and RNG states, read only " \
           "by --resume"


def _bytes(n):
    return f"{n / 1e9:.1f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.0f} kB"


def _train_preset(args):
    """The preset `train` runs: --preset, or for --model / --task an LLM preset with their changes."""
    from .presets import get_preset
    from .trainer import llm_preset

    llm = {k: v for k, v in (("lora_r", args.lora_r), ("micro_batch", args.micro_batch), ("dtype", args.dtype))
           if v is not None}
    if args.grad_checkpointing:
        llm["grad_checkpointing"] = True
    if args.fsdp:
        llm["fsdp"] = True
    if args.model is None and args.task is None and not llm:
        return get_preset(args.preset)
    return llm_preset(args.preset, args.model, args.task, llm)


def _evaluate(policy, tokenizer, problems, k_problems, samples, ks, temperature, seed, quiet=False):
    """evaluation.evaluate, saying first what it will take time on."""
    from .evaluation import evaluate
    if not quiet:
        n = min(k_problems, len(problems))
        print(f"evaluating: greedy on {len(problems)} questions, then sampling {samples} answers to each of "
              f"{n} for Pass@K / Maj@K (K = {', '.join(map(str, ks))})", file=sys.stderr, flush=True)
    return evaluate(policy, tokenizer, problems, k_problems, samples, ks, temperature, seed=seed)


def cmd_evaluate(args):
    check_writable(args.out)  # before the model is loaded and sampled, before transformers is imported
    _quiet_libraries()
    from .trainer import plain_load_error
    from .worlds import evaluation_preset, splits_of, world_of

    preset, chosen = evaluation_preset(args.checkpoint, args.preset)  # a run's own task and model
    samples = args.samples or max(args.k)
    try:
        _, test = splits_of(preset)
        tokenizer, policy = world_of(preset).load(args.checkpoint)
    except ValueError as e:
        raise plain_load_error(e) from None
    print(f"evaluating {args.checkpoint} on preset {preset.name}'s held-out questions ({chosen})", file=sys.stderr)
    result = _evaluate(policy, tokenizer, test, args.problems or preset.k_problems, samples, args.k,
                       args.temperature, args.seed)
    result["checkpoint"], result["preset"] = args.checkpoint, preset.name
    _write_json(args.out, result)
    print(json.dumps(result, indent=2))


def cmd_reproduce(args):
    _quiet_libraries()
    from .experiments import EXPERIMENTS
    from .presets import get_preset

    from .experiments.common import PHASES, check_result_free
    if int(os.environ.get("WORLD_SIZE", "1") or 1) > 1:
        raise ValueError("reproduce runs in one process (its experiments write their results themselves); "
                         "launch it without torchrun")
    check_result_free(args.name, args.out, args.overwrite)
    PHASES["on"] = not args.quiet  # each evaluation says what it samples, on stderr
    result = EXPERIMENTS[args.name](preset=get_preset(args.preset), out=args.out, seeds=args.seeds,
                                    progress=not args.quiet)
    print(json.dumps(result.get("headline", result), indent=2))


COMMANDS = {"methods": cmd_methods, "train": cmd_train, "evaluate": cmd_evaluate, "reproduce": cmd_reproduce}


class _NotRaised(Exception):
    """Stands for distributed.py's errors in a process that never imported it (`methods`)."""


def _distributed(name, default):
    """distributed.py's `name` if a command imported it (and so could have raised its errors), else `default`."""
    module = sys.modules.get(f"{__package__}.distributed")
    return default if module is None else getattr(module, name)


def _quiet_libraries():
    """For the commands that load models; `methods` and --help never import transformers."""
    from huggingface_hub.utils import logging as hub_logging
    from transformers.utils import logging as hf_logging
    hub_logging.set_verbosity_error()  # an unreachable hub is reported once, below, not per retry
    hf_logging.set_verbosity_error()  # a mismatched checkpoint is our one line, not transformers' report


def main(argv=None):
    started = time.monotonic()
    args = build_parser().parse_args(argv)
    args.started = started  # what `train`'s line counts as the whole command
    try:
        COMMANDS[args.command](args)
    except BrokenPipeError:  # `... | head` closed the pipe: not an error of ours
        sys.stderr.close()
    except _distributed("ElsewhereError", _NotRaised):  # rank 0 refused the run and said why, once
        sys.exit(1)
    except _distributed("PeerLost", _NotRaised) as e:  # another rank failed (its line says why) or stalled
        sys.exit(f"python -m unified_rl {args.command}: error: {e}")
    except ValueError as e:  # bad input found past argparse: one line, no traceback
        world = _distributed("current", lambda: None)()
        where = f" (rank {world.rank} of {world.size})" if world is not None and world.size > 1 else ""
        sys.exit(f"python -m unified_rl {args.command}: error{where}: {e}")
    except OSError as e:  # a full disk, a folder we may not write
        sys.exit(f"python -m unified_rl {args.command}: error: {e.strerror or e}"
                 + (f": {e.filename}" if e.filename else ""))
    except MemoryError:
        sys.exit(f"python -m unified_rl {args.command}: error: out of memory (try fewer --samples or "
                 "--problems, or a smaller preset)")
    except KeyboardInterrupt:
        sys.exit(f"python -m unified_rl {args.command}: interrupted")
    except RuntimeError as e:  # torch.OutOfMemoryError (a RuntimeError) on a GPU
        if "out of memory" not in str(e).lower():
            raise
        sys.exit(f"python -m unified_rl {args.command}: error: out of memory on the GPU (try fewer "
                 "--samples or --problems, or a smaller preset)")


if __name__ == "__main__":
    main()
