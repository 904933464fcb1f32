"""The command line on bad input: one line saying what and where, a non-zero exit, no traceback; and
`evaluate --seed` giving the numbers `train` wrote in summary.json for the same checkpoint."""

import json
import os
import re
import subprocess
import sys
import time

import pytest
import torch

from unified_rl import cli
from unified_rl.models import ModelConfig, build_policy, save_checkpoint
from unified_rl.tokenizer import build_tokenizer


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    """A saved tiny policy with its tokenizer."""
    path = tmp_path_factory.mktemp("ckpt") / "checkpoint"
    torch.manual_seed(0)
    tok = build_tokenizer()
    save_checkpoint(build_policy(tok, ModelConfig(n_layer=1, n_embd=32, n_head=2, n_positions=32)), tok, path)
    return path


def copy_of(ckpt, tmp_path):
    import shutil
    dst = tmp_path / "ckpt"
    shutil.copytree(ckpt, dst)
    return dst


def error_of(*argv):
    """The one-line message `main` exits with (SystemExit's text), or None if it succeeded."""
    try:
        cli.main([str(a) for a in argv])
    except SystemExit as e:
        assert e.code != 0
        text = e.code if isinstance(e.code, str) else "exit status %s" % e.code
        assert "\n" not in text.strip()
        return text
    return None


def evaluate(path, tmp_path, *more):
    return error_of("evaluate", path, "--preset", "tiny", "--k", "1,2", "--out", tmp_path / "e.json", *more)


def test_broken_checkpoints_are_one_line_errors(ckpt, tmp_path):
    bad = copy_of(ckpt, tmp_path)
    text = open(bad / "config.json").read()
    (bad / "config.json").write_text(text[: len(text) // 2])
    assert "config.json is corrupted or truncated" in evaluate(bad, tmp_path)
    (bad / "config.json").write_text(text)
    with open(bad / "model.safetensors", "r+b") as f:
        f.truncate(os.path.getsize(bad / "model.safetensors") // 2)
    msg = evaluate(bad, tmp_path)
    assert "could not load a model from" in msg and str(bad) in msg
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "is an empty folder" in evaluate(empty, tmp_path)
    assert "no checkpoint at" in evaluate(tmp_path / "no" / "such" / "dir", tmp_path)


def test_a_checkpoint_without_its_tokenizer_is_refused(ckpt, tmp_path):
    bare = copy_of(ckpt, tmp_path)
    for f in os.listdir(bare):
        if f.startswith(("tokenizer", "special_tokens")):
            os.remove(bare / f)
    assert "has no tokenizer files" in evaluate(bare, tmp_path)


def test_a_tokenizer_of_another_vocabulary_is_refused(ckpt, tmp_path):
    other = copy_of(ckpt, tmp_path)
    build_tokenizer("0123456789+=;abcdefghij").save_pretrained(other)  # 10 more tokens than the model has
    assert "do not belong together" in evaluate(other, tmp_path)
    shifted = copy_of(ckpt, tmp_path / "b")
    build_tokenizer(";=+9876543210").save_pretrained(shifted)  # same size, ids of other characters
    assert evaluate(shifted, tmp_path) is None  # a same-size permutation cannot be told apart
    eos_moved = copy_of(ckpt, tmp_path / "c")
    cfg = json.load(open(eos_moved / "config.json"))
    json.dump({**cfg, "eos_token_id": 7}, open(eos_moved / "config.json", "w"))
    assert "EOS id" in evaluate(eos_moved, tmp_path)


def test_an_unreachable_hub_name_is_one_line(tmp_path, monkeypatch):
    import huggingface_hub.constants
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)  # fail at once, not after retries
    msg = evaluate("someone/no-such-model", tmp_path)
    assert "could not load a tokenizer from 'someone/no-such-model'" in msg


def test_counts_must_be_at_least_one(ckpt, tmp_path, capsys):
    for flag in ("--samples", "--problems"):
        assert error_of("evaluate", ckpt, flag, "0", "--out", tmp_path / "e.json") == "exit status 2"
        assert "expected a number >= 1, got 0" in capsys.readouterr().err


def test_train_refuses_bad_runs_before_training(tmp_path, monkeypatch):
    monkeypatch.setenv("UNIFIED_RL_MAX_STEPS", "-1")
    assert "UNIFIED_RL_MAX_STEPS must be a whole number >= 0" in error_of(
        "train", "sft", "--preset", "tiny", "--out", tmp_path / "a", "--quiet")
    monkeypatch.delenv("UNIFIED_RL_MAX_STEPS")
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "summary.json").write_text("{}")
    assert "is not a run folder" in error_of("train", "sft", "--preset", "tiny", "--out", tmp_path / "taken")
    assert "holds no saved run state" in error_of("train", "sft", "--preset", "tiny", "--out",
                                                  tmp_path / "taken", "--resume")


@pytest.mark.slow
def test_evaluate_with_the_seed_repeats_the_summary_and_says_what_it_counted(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "unified_rl", *map(str, args)], capture_output=True,
                              text=True, timeout=300, env={**os.environ, "UNIFIED_RL_MAX_STEPS": ""})
    out = tmp_path / "sft"
    r = run("train", "sft", "--preset", "tiny", "--seed", "2", "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    summary = json.load(open(out / "summary.json"))
    r = run("evaluate", out / "checkpoint", "--preset", "tiny", "--k", "1,4", "--seed", "2", "--out", tmp_path / "e.json")
    assert r.returncode == 0, r.stderr
    ev = json.load(open(tmp_path / "e.json"))
    for key in ("accuracy", "problems", "k_problems", "samples", "temperature", "seed"):
        assert ev[key] == summary["eval"][key], key
    assert ev["pass_at_k"] == summary["eval"]["pass_at_k"] and ev["maj_at_k"] == summary["eval"]["maj_at_k"]
    assert summary["eval_problems"] == 16 and ev["problems"] == 16  # what each figure was measured on
    again = run("train", "sft", "--preset", "tiny", "--out", out, "--quiet")
    assert again.returncode != 0 and "already holds a run" in again.stderr
    assert "Traceback" not in again.stderr and len(again.stderr.strip().splitlines()) == 1


def test_the_result_line_says_what_its_seconds_count(tmp_path, monkeypatch, capsys):
    """`train`'s line pairs each figure with what it measured: summary.json's `seconds` (the training
    loop) as the training steps', eval.seconds as the evaluation's, and the whole command's, which holds
    both; an evaluation made 1 s slower shows in its own figure."""
    real = cli._evaluate

    def slower(*args, **kwargs):
        time.sleep(1.0)
        return real(*args, **kwargs)
    monkeypatch.setattr(cli, "_evaluate", slower)
    monkeypatch.delenv("UNIFIED_RL_MAX_STEPS", raising=False)
    cli.main(["train", "sft", "--preset", "tiny", "--out", str(tmp_path / "run"), "--quiet"])
    line = capsys.readouterr().out.strip().splitlines()[-1]
    s = json.load(open(tmp_path / "run" / "summary.json"))

    def secs(x):
        return f"{x:.1f} s" if x < 10 else f"{x:.0f} s"
    said = re.search(r"\(on (\S+): (\d+) training steps (.+? s), the evaluation (.+? s); this command ([\d.]+) s in all\)",
                     line)
    assert said, line
    assert said.groups()[:4] == (s["device"], str(s["steps_done"]), secs(s["seconds"]), secs(s["eval"]["seconds"]))
    assert s["steps_done"] == 3 and s["eval"]["seconds"] >= 1.0
    assert float(said[5]) >= s["seconds"] + s["eval"]["seconds"] - 0.1  # the command's time holds both (rounding)
