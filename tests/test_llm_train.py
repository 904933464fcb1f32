"""Every method of METHODS trains a tiny Llama / Qwen2 chat model one step through the same train();
the run folder's checkpoint loads with from_pretrained (a LoRA run's adapter too, and merged); the
CLI takes --model and --task."""

import json

import pytest
import torch
from _tiny_llm import save_tiny
from transformers import AutoModelForCausalLM

from unified_rl import llm, words
from unified_rl.cli import main
from unified_rl.methods import METHODS
from unified_rl.sampling import token_logp
from unified_rl.trainer import llm_preset, train

TINY = {"micro_batch": 3}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    return {kind: str(save_tiny(kind, root / kind)) for kind in ("llama", "qwen2")}


@pytest.fixture
def coin_parser(monkeypatch):
    """A random model's replies are never right: score about half of them right by their length's
    parity, so every data source has pairs and every reward a signal (the rule is not under test)."""
    monkeypatch.setattr(words.WordProblem, "parse",
                        lambda self, text: self.answer if len(text) % 2 else None)


def _preset(folder, **llm_changes):
    return llm_preset("llm-cpu", model=folder, task="words:1", llm={**TINY, **llm_changes}).with_(
        rl={"prompts_per_step": 2, "group_size": 2, "frozen_samples": 4}, sft={"batch_size": 4},
        task={"max_new_tokens": 6}, n_test=4, eval_problems=4)


@pytest.mark.parametrize("kind", ["llama", "qwen2"])
@pytest.mark.parametrize("name", list(METHODS))
def test_every_method_trains_a_chat_model_one_step(name, kind, folders, coin_parser):
    run = train(name, preset=_preset(folders[kind], lora_r=4 if kind == "qwen2" else 0), steps=1,
                progress=False, eval_every=0)
    row = run.metrics[-1]
    assert row["step"] == 1 and row["response_len"] > 0
    assert all(v == v for v in row.values() if isinstance(v, float))  # no NaN


def _logits(model, ids):
    with torch.no_grad():
        return model(input_ids=ids).logits


def test_full_run_checkpoint_loads_with_from_pretrained(folders, tmp_path, coin_parser):
    run = train("grpo", preset=_preset(folders["llama"]), steps=2, progress=False, out=str(tmp_path / "r"))
    loaded = AutoModelForCausalLM.from_pretrained(tmp_path / "r" / "checkpoint")
    ids = torch.tensor([[5, 6, 7, 8]])
    assert torch.allclose(_logits(loaded, ids), _logits(run.policy, ids), atol=1e-6)
    start = AutoModelForCausalLM.from_pretrained(folders["llama"])
    assert not torch.allclose(_logits(start, ids), _logits(run.policy, ids), atol=1e-6)  # it trained


def test_lora_run_saves_its_adapter_resumes_and_merges(folders, tmp_path, coin_parser):
    out = tmp_path / "lora"
    preset = _preset(folders["qwen2"], lora_r=4)
    run = train("grpo", preset=preset, steps=2, progress=False, out=str(out), seed=1, eval_every=0)
    assert llm.is_adapter(out / "checkpoint")
    ids = torch.tensor([[5, 6, 7, 8]])
    adapter = AutoModelForCausalLM.from_pretrained(out / "checkpoint")  # transformers reads the adapter
    assert torch.allclose(_logits(adapter, ids), _logits(run.policy, ids), atol=1e-6)
    merged = llm.merge_lora(out / "checkpoint", tmp_path / "merged")
    assert torch.allclose(_logits(AutoModelForCausalLM.from_pretrained(merged), ids),
                          _logits(run.policy, ids), atol=1e-5)
    with pytest.raises(ValueError, match="already holds"):
        llm.merge_lora(out / "checkpoint", merged)
    # killed after 1 step and resumed, the run ends as the uninterrupted one
    part = tmp_path / "part"
    train("grpo", preset=preset, steps=1, progress=False, out=str(part), seed=1, eval_every=0)
    resumed = train("grpo", preset=preset, steps=2, progress=False, out=str(part), seed=1, resume=True,
                    eval_every=0)
    for a, b in zip(resumed.metrics, run.metrics):
        assert {k: v for k, v in a.items() if k != "seconds"} == {k: v for k, v in b.items() if k != "seconds"}
    assert torch.equal(_logits(resumed.policy, ids), _logits(run.policy, ids))


def test_lora_run_keeps_the_base_weights_as_reference(folders, coin_parser):
    run = train("grpo", preset=_preset(folders["qwen2"], lora_r=4), steps=2, progress=False, lr=1e-2,
                eval_every=0)
    base = AutoModelForCausalLM.from_pretrained(folders["qwen2"])
    ids = torch.tensor([[5, 6, 7, 8, 9]])
    att = torch.ones_like(ids)
    with torch.no_grad():
        ref, want = token_logp(run.lab.ref, ids, att), token_logp(base, ids, att)
        pol = token_logp(run.policy, ids, att)
    assert (ref - want).abs().max() < 1e-5 and (pol - want).abs().max() > 1e-5


def test_cli_trains_a_model_by_folder(folders, tmp_path, capsys, coin_parser):
    out = tmp_path / "cli"
    main(["train", "grpo", "--model", folders["llama"], "--task", "words:1", "--steps", "1", "--out", str(out),
          "--micro-batch", "4", "--quiet"])
    assert "held-out greedy accuracy" in capsys.readouterr().out
    assert (out / "checkpoint" / "config.json").is_file()


def test_cli_errors_are_one_line(folders, tmp_path, capsys):
    for argv, words_ in ((["--model", str(tmp_path / "none" / "a" / "b")], "no checkpoint"),
                         (["--model", folders["llama"], "--task", "maths"], "unknown task"),
                         (["--preset", "cpu", "--model", folders["llama"]], "llm-cpu")):
        with pytest.raises(SystemExit) as e:
            main(["train", "grpo", *argv, "--steps", "1", "--out", str(tmp_path / "x"), "--quiet"])
        err = capsys.readouterr().err
        assert e.value.code != 0 and words_ in str(e.value.code) + err
        assert "Traceback" not in err


@pytest.mark.parametrize("dtype", ["bfloat16"])  # float16 is refused on the CPU (test_llm_hostile.py)
def test_half_precision_weights_train_float32_adapters(dtype, folders, coin_parser):
    run = train("grpo", preset=_preset(folders["llama"], lora_r=4, dtype=dtype), steps=1, progress=False,
                eval_every=0)
    kinds = {n: p.dtype for n, p in run.policy.named_parameters()}
    assert {d for n, d in kinds.items() if "lora_" in n} == {torch.float32}
    assert {d for n, d in kinds.items() if "lora_" not in n} == {getattr(torch, dtype)}
    assert run.metrics[-1]["response_len"] > 0


def test_cli_evaluates_a_chat_model(folders, tmp_path, capsys):
    out = tmp_path / "eval.json"
    main(["evaluate", folders["qwen2"], "--preset", "llm-cpu", "--k", "1,2", "--problems", "2", "--out", str(out)])
    result = json.loads(out.read_text())
    assert result["problems"] == 36 and result["k_problems"] == 2 and set(result["pass_at_k"]) == {"1", "2"}
