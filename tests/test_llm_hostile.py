"""The pretrained-model path of the command line on hostile ground, on tiny Llama and Qwen2 models (seconds):
each case of a user's bad input or a fault ends in one line and a non-zero exit, or in the right result.

Precision (a dtype the CPU cannot train in, bf16 full fine-tuning without float32 masters, NaN weights
saved as complete), run folders that say which world they belong to (evaluate reads the run's own task
and model; a LoRA adapter names its base portably and is rebuilt when the model cache is gone; a run
folder copied elsewhere evaluates and resumes), the model cache (its conversion says so and is atomic, a
damaged entry is named with the command that rebuilds it), and messages that are whole."""

import copy
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import warnings

import pytest
import torch
from _tiny_llm import bpe_tokenizer, save_tiny, tiny_model
from safetensors.torch import load_file
from test_hostile_cli import outcome  # one line and a non-zero exit, asserted

from unified_rl import llm, runs, words
from unified_rl.methods import METHODS

TINY = ["--task", "words:1", "--micro-batch", "3", "--quiet"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    return {kind: str(save_tiny(kind, root / kind)) for kind in ("llama", "qwen2")}


@pytest.fixture(autouse=True)
def small(monkeypatch):
    """Every run here is tiny: the llm-cpu preset cut to 2 questions x 2 replies of 6 tokens, 4 held out;
    a random model's replies are scored right by their length's parity (so every reward has a signal)."""
    from unified_rl import presets
    p = presets.PRESETS["llm-cpu"]
    monkeypatch.setitem(presets.PRESETS, "llm-cpu", p.with_(
        rl={"prompts_per_step": 2, "group_size": 2, "frozen_samples": 2}, task={"max_new_tokens": 6}, n_test=4,
        eval_problems=4, k_problems=2, k_samples=2))
    monkeypatch.setattr(words.WordProblem, "parse", lambda self, text: self.answer if len(text) % 2 else None)
    monkeypatch.delenv("UNIFIED_RL_MAX_STEPS", raising=False)


def weights(folder):
    return load_file(os.path.join(folder, "model.safetensors"))


def test_float16_on_the_cpu_is_refused_before_anything_is_made(folders, tmp_path):
    out = tmp_path / "run"
    msg = outcome("train", "grpo", "--model", folders["llama"], *TINY, "--steps", "1", "--dtype", "float16",
                  "--out", out)
    assert msg and "cannot train in float16" in msg and "float32 or bfloat16" in msg
    assert not out.exists()


def test_bf16_full_fine_tuning_keeps_float32_masters_and_says_so(folders, tmp_path, capsys):
    """In bfloat16 with no float32 copy a step at lr 5e-6 rounds almost every update away (0.97 % of
    SmolLM2's weights changed); with float32 masters nearly every weight moves."""
    out = tmp_path / "run"
    assert outcome("train", "sft", "--model", folders["llama"], *TINY, "--steps", "1", "--dtype", "bfloat16",
                   "--out", out) is None
    assert "keeps float32 master weights" in capsys.readouterr().err
    before, after = weights(folders["llama"]), weights(out / "checkpoint")
    assert {t.dtype for t in after.values()} == {torch.float32}
    dense = [k for k in before if "embed_tokens" not in k]  # an embedding row moves only if its token was read
    moved = sum(int((after[k] != before[k]).sum()) for k in dense) / sum(before[k].numel() for k in dense)
    assert moved > 0.99, moved


def test_a_run_whose_gradient_is_not_finite_stops_in_one_line_and_saves_nothing(folders, tmp_path, monkeypatch):
    m = METHODS["grpo"]
    huge = dataclasses.replace(m, coefficient=lambda step: 1.0 + 3e38 * step.batch.mask)  # finite, but its gradient is not
    monkeypatch.setitem(METHODS, "grpo", huge)
    out = tmp_path / "run"
    msg = outcome("train", "grpo", "--model", folders["llama"], *TINY, "--steps", "2", "--save-every", "1",
                  "--out", out)
    assert msg and "step 1: the policy's gradient is not finite" in msg
    assert not runs.is_complete(out)


def test_an_update_that_makes_the_weights_nan_stops_the_run_in_one_line(folders, tmp_path, monkeypatch):
    """float16 weights on the CPU, let through: AdamW's eps underflows to 0 in float16 and one update makes
    every weight NaN (the case the refusal above prevents); the run stops there, in one line, saving nothing."""
    resolve = llm.resolve_dtype
    lenient = lambda name, device="cpu": torch.float16 if name in ("float16", torch.float16) else resolve(name, device)  # noqa: E731
    monkeypatch.setattr(llm, "resolve_dtype", lenient)
    monkeypatch.setattr(llm, "weights_dtype", lambda cfg, device: lenient(cfg.dtype, device))
    out = tmp_path / "run"
    msg = outcome("train", "sft", "--model", folders["llama"], *TINY, "--steps", "2", "--save-every", "1",
                  "--dtype", "float16", "--out", out)
    assert msg and "step 1: the update made the policy's weights non-finite" in msg
    assert not runs.is_complete(out)


def test_weights_that_are_not_finite_are_never_saved_as_a_complete_run(folders, tmp_path):
    from unified_rl.trainer import train
    out = tmp_path / "run"
    run = train("grpo", model=folders["qwen2"], task="words:1", steps=1, progress=False, out=str(out), eval_every=0)
    before = sorted((p, os.path.getmtime(out / p)) for p in runs.manifest(str(out)))
    with torch.no_grad():
        next(run.policy.parameters())[0, 0] = float("nan")
    with pytest.raises(ValueError, match=r"weights are not finite \(model\.embed_tokens\.weight holds NaN"):
        runs.save_run(run)
    assert sorted((p, os.path.getmtime(out / p)) for p in runs.manifest(str(out))) == before
    assert runs.is_complete(out)


@pytest.mark.parametrize("lora", [False, True])
def test_evaluate_reads_the_runs_own_task_and_model(folders, tmp_path, lora):
    """Without --preset a run's checkpoint is evaluated on its own questions (its preset and task from
    summary.json: 4 held-out sums in words), full or LoRA; another preset is refused in one line."""
    out = tmp_path / "run"
    assert outcome("train", "grpo", "--model", folders["qwen2"], *TINY, "--task", "words:2", "--steps", "1",
                   *(["--lora-r", "2"] if lora else []), "--out", out) is None
    summary = json.loads((out / "summary.json").read_text())
    assert summary["world"]["kind"] == "pretrained" and summary["task"]["type"] == "WordsTask"
    assert outcome("evaluate", out / "checkpoint", "--k", "1", "--out", tmp_path / "e.json") is None
    result = json.loads((tmp_path / "e.json").read_text())
    assert result["preset"] == "llm-cpu" and result["problems"] == 4
    assert result["accuracy"] == summary["eval"]["accuracy"]  # the same questions, the same model
    msg = outcome("evaluate", out / "checkpoint", "--preset", "cpu", "--k", "1", "--out", tmp_path / "e2.json")
    assert msg and "was trained with preset llm-cpu" in msg and "leave --preset out" in msg
    assert not (tmp_path / "e2.json").exists()


def test_a_chat_model_and_a_lab_model_are_not_evaluated_on_each_others_questions(folders, tmp_path):
    msg = outcome("evaluate", folders["llama"], "--preset", "tiny", "--k", "1", "--out", tmp_path / "e.json")
    assert msg and "is a chat model" in msg and "llm-cpu" in msg
    assert outcome("evaluate", folders["llama"], "--k", "1", "--problems", "1", "--out", tmp_path / "e.json") is None
    assert json.loads((tmp_path / "e.json").read_text())["preset"] == "llm-cpu"  # by the checkpoint's kind


@pytest.fixture
def alias(monkeypatch, tmp_path, folders):
    """An alias `tiny` whose 'GGUF file' converts to the tiny Qwen2 model, like smollm2's (counted)."""
    calls = []
    monkeypatch.setenv("UNIFIED_RL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(llm.ALIASES, "tiny", ("tiny_pkg", "tiny.gguf", "tiny-q4"))
    monkeypatch.setattr(llm, "gguf_file", lambda a: os.path.join(folders["qwen2"], "tiny.gguf"))

    def convert(path, out):
        calls.append(out)
        tmp = out + ".new"
        shutil.copytree(folders["qwen2"], tmp)
        os.rename(tmp, out)
        return out

    monkeypatch.setattr(llm, "convert_gguf", convert)
    return calls


def test_a_lora_run_names_its_base_portably_and_travels(alias, tmp_path):
    """The adapter names the alias, not the cache's path: with the cache deleted, and with the run folder
    moved to another place, evaluate and --resume rebuild the base from the package and carry on."""
    out = tmp_path / "run"
    assert outcome("train", "grpo", "--model", "tiny", *TINY, "--lora-r", "2", "--steps", "1", "--out", out) is None
    config = json.loads((out / "checkpoint" / "adapter_config.json").read_text())
    assert config["base_model_name_or_path"] == str(tmp_path / "cache" / "llm" / "tiny-q4") and len(alias) == 1
    shutil.rmtree(tmp_path / "cache")
    moved = tmp_path / "elsewhere" / "run"
    shutil.copytree(out, moved)
    shutil.rmtree(out)
    assert outcome("evaluate", moved / "checkpoint", "--k", "1", "--out", tmp_path / "e.json") is None
    assert len(alias) == 2  # converted again
    shutil.rmtree(tmp_path / "cache")
    assert outcome("train", "grpo", "--model", "tiny", *TINY, "--lora-r", "2", "--steps", "2", "--resume",
                   "--out", moved) is None
    assert len(alias) == 3 and json.loads((moved / "summary.json").read_text())["steps_done"] == 2


def test_an_old_adapter_naming_another_machines_cache_loads_by_its_alias(alias, tmp_path):
    out = tmp_path / "run"
    assert outcome("train", "grpo", "--model", "tiny", *TINY, "--lora-r", "2", "--steps", "1", "--out", out) is None
    path = out / "checkpoint" / "adapter_config.json"
    config = json.loads(path.read_text())
    path.write_text(json.dumps({**config, "base_model_name_or_path": "/home/someone/.cache/unified_rl/llm/tiny-q4"}))
    assert outcome("evaluate", out / "checkpoint", "--k", "1", "--out", tmp_path / "e.json") is None


def test_a_damaged_cache_entry_is_named_with_the_command_that_rebuilds_it(alias, tmp_path):
    out = tmp_path / "run"
    llm.pretrained_folder("tiny")
    entry = tmp_path / "cache" / "llm" / "tiny-q4"
    with open(entry / "model.safetensors", "r+b") as f:
        f.truncate(100)
    msg = outcome("train", "grpo", "--model", "tiny", *TINY, "--steps", "1", "--out", out)
    assert msg and "a damaged model cache entry" in msg and f"rm -r {entry}" in msg
    shutil.rmtree(entry)  # as it says: the next run converts it again
    assert outcome("train", "grpo", "--model", "tiny", *TINY, "--steps", "1", "--out", out) is None


def test_the_conversion_says_so_and_a_cache_deleted_meanwhile_is_one_line(monkeypatch, tmp_path, capsys):
    """convert_gguf as it runs, with transformers' GGUF reader replaced by the tiny model: it says what it
    does; the cache removed while it runs is one line, and nothing half-written is left."""
    pytest.importorskip("gguf")
    pytest.importorskip("accelerate")
    import transformers
    cache = tmp_path / "cache"
    out = cache / "llm" / "tiny-q4"
    out.parent.mkdir(parents=True)

    class Reader:
        @staticmethod
        def from_pretrained(folder, gguf_file=None, **kw):
            model = tiny_model("llama", bpe_tokenizer())
            save = model.save_pretrained

            def save_then_lose_the_cache(*args, **kwargs):
                save(*args, **kwargs)
                shutil.rmtree(cache)  # the user deletes the cache while the conversion writes it

            model.save_pretrained = save_then_lose_the_cache
            return model

    monkeypatch.setattr(llm, "AutoModelForCausalLM", Reader)
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda *a, **k: bpe_tokenizer())
    with pytest.raises(ValueError, match="could not save the converted model into the cache") as e:
        llm.convert_gguf(str(tmp_path / "x.gguf"), str(out))
    assert "\n" not in str(e.value) and not out.exists()
    assert "converting x.gguf to float32 into the model cache" in capsys.readouterr().err


def test_an_unknown_model_type_is_whole_sentences(folders, tmp_path):
    bad = tmp_path / "unknown"
    shutil.copytree(folders["llama"], bad)
    config = json.loads((bad / "config.json").read_text())
    (bad / "config.json").write_text(json.dumps({**config, "model_type": "nosuchmodel"}))
    msg = outcome("train", "grpo", "--model", bad, *TINY, "--steps", "1", "--out", tmp_path / "run")
    assert msg and "does not recognize this architecture." in msg
    assert msg.endswith(".") or msg.endswith(" …"), msg  # cut between sentences or words, not in a word


def test_lora_loads_show_no_warning_the_user_cannot_act_on(folders, tmp_path):
    from unified_rl.trainer import train
    out = tmp_path / "run"
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # transformers' deprecation notice peft triggers
        train("grpo", model=folders["qwen2"], task="words:1", steps=1, progress=False, out=str(out), eval_every=0,
              llm={"lora_r": 2})
        llm.load_pretrained(out / "checkpoint")


def test_the_run_folder_says_its_size_and_what_only_resume_reads(folders, tmp_path, capsys):
    out = tmp_path / "run"
    assert outcome("train", "grpo", "--model", folders["llama"], *TINY, "--steps", "1", "--out", out) is None
    line = capsys.readouterr().out.strip().splitlines()[-1]
    state = os.path.getsize(out / "state.pt")
    assert f"of which state.pt {state / 1e6:.1f} MB" in line and "read only by --resume" in line


# --- LoRA's rank, and its checkpoint loading offline --------------------------------------------------

SMOLLM2 = dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
               num_key_value_heads=3, tie_word_embeddings=True)
"""SmolLM2-135M-Instruct's shape (its converted config.json): 134,515,008 parameters"""


def test_a_rank_smollm2_cannot_use_is_refused_from_its_config_alone():
    """--lora-r 100000 on SmolLM2 grew to 22.8 GiB and was killed without a word: its layers' largest smaller
    dimension is 576, and r=100000 would train 30.5 billion adapter parameters. Counted on the meta device
    (shapes, no memory); the count at r=8 is the one bench/results.json measured with peft (2,442,240)."""
    from transformers import AutoModelForCausalLM, LlamaConfig

    from unified_rl import lora
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(LlamaConfig(**SMOLLM2))
    assert sum(p.numel() for p in model.parameters()) == 134_515_008
    layers = lora.adapted_layers(model)
    assert lora.adapter_parameters(layers, 8) == 2_442_240
    with pytest.raises(ValueError, match=r"LoRA rank 100000 \(--lora-r\) is more than llama's layers can use.* "
                                         r"the largest here is 576; rank 100000 would train 30,528,000,000"):
        lora.check_rank(layers, 100_000, "llama")
    assert lora.check_rank(layers, 576, "llama") == 576 * 305_280  # the largest rank any layer can use


@pytest.mark.parametrize("kind", ["llama", "qwen2"])
def test_the_adapters_size_is_peft_s_and_the_config_gives_the_models(folders, kind):
    """lora.adapter_parameters counts what peft makes (its trainable parameters), from the loaded model
    and from config.json alone, at the smallest, a middle and the largest usable rank (32, hidden_size)."""
    from unified_rl import lora
    _, base = llm.load_pretrained(folders[kind])
    for r in (1, 3, 32):
        made = llm.add_lora(copy.deepcopy(base), r=r)
        trainable = sum(p.numel() for p in made.parameters() if p.requires_grad)
        assert lora.adapter_parameters(lora.adapted_layers(base), r) == trainable
        assert lora.check_config(folders[kind], r, torch.float32) == trainable


def test_a_rank_the_layers_cannot_use_is_refused_before_anything_is_made(folders, tmp_path, monkeypatch):
    """The tiny models' layers are 32 wide at most: rank 33 and rank 100000 are refused in one line, from
    config.json, before the weights are read, the run folder or the adapter is made; rank 32 trains."""
    import peft
    _, base = llm.load_pretrained(folders["qwen2"])
    monkeypatch.setattr(peft, "get_peft_model", lambda *a, **k: pytest.fail("the adapter was allocated"))
    monkeypatch.setattr(llm, "load_pretrained", lambda *a, **k: pytest.fail("the weights were read"))
    for r in ("33", "100000"):
        out = tmp_path / f"run{r}"
        msg = outcome("train", "grpo", "--model", folders["llama"], *TINY, "--lora-r", r, "--steps", "1",
                      "--out", out)
        assert msg and f"LoRA rank {r} (--lora-r) is more than llama's layers can use" in msg, msg
        assert "the largest here is 32" in msg and "Use --lora-r 32 or less" in msg and not out.exists()
    with pytest.raises(ValueError, match="the largest here is 32"):  # the Python API too, before peft
        llm.add_lora(base, r=33)
    monkeypatch.undo()
    assert outcome("train", "grpo", "--model", folders["llama"], *TINY, "--lora-r", "32", "--steps", "1",
                   "--out", tmp_path / "run32") is None


def test_an_adapter_that_does_not_fit_in_memory_is_refused_with_its_estimate(folders, tmp_path, monkeypatch):
    """With less memory free than the adapter's parameters, their gradients and AdamW's moments take (16
    bytes each) plus the base weights, the run is refused naming both figures, before anything is made."""
    from unified_rl import lora
    _, base = llm.load_pretrained(folders["llama"])
    n = lora.adapter_parameters(lora.adapted_layers(base), 8)
    base_bytes = sum(p.numel() * 4 for p in base.parameters())
    need = n * 16 + base_bytes
    monkeypatch.setattr(lora, "available_memory", lambda device="cpu": need - 1)
    out = tmp_path / "run"
    msg = outcome("train", "grpo", "--model", folders["llama"], *TINY, "--lora-r", "8", "--steps", "1", "--out", out)
    assert msg and f"LoRA rank 8 (--lora-r) does not fit in memory: llama's adapter of {n:,} parameters" in msg, msg
    assert f"needs at least {need / 2**30:.1f} GiB" in msg and "cpu memory has" in msg and not out.exists()
    monkeypatch.setattr(lora, "available_memory", lambda device="cpu": need)
    assert outcome("train", "grpo", "--model", folders["llama"], *TINY, "--lora-r", "8", "--steps", "1",
                   "--out", out) is None


OFFLINE_LOAD = """
import socket, sys
def refuse(self, address, *a):
    sys.stderr.write(f"NETWORK {address}\\n")
    raise OSError("the network is unreachable here")
socket.socket.connect = refuse
import torch
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM, AutoTokenizer
model = AutoModelForCausalLM.from_pretrained(sys.argv[1])  # as README.md says
tokenizer = AutoTokenizer.from_pretrained(sys.argv[1])
ids = tokenizer("What is 3 + 4?", return_tensors="pt").input_ids
with torch.no_grad():
    save_file({"logits": model(ids).logits.contiguous(), "ids": ids}, sys.argv[2])
"""


def test_a_lora_checkpoint_loads_offline_with_plain_from_pretrained(alias, tmp_path, monkeypatch):
    """A LoRA run's checkpoint named its base `smollm2`, so `AutoModelForCausalLM.from_pretrained(checkpoint)`
    asked the hub for it (~23 s, then failed), and every save printed two peft warnings after the same
    look-up. Now: the save makes no network call and no warning; the folder, copied elsewhere, loads in a
    process whose network is cut (HF_HUB_OFFLINE, an unroutable proxy, connect() refused) with the adapter
    applied: its logits are load_pretrained's, and far from the base model's (the adapter is made large)."""
    from safetensors.torch import load_file, save_file
    tried = []

    def refuse(self, address, *a):
        tried.append(address)
        raise OSError("the network is unreachable here")

    out = tmp_path / "run"
    with monkeypatch.context() as m, warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        m.setattr("socket.socket.connect", refuse)
        assert outcome("train", "grpo", "--model", "tiny", *TINY, "--lora-r", "2", "--steps", "1", "--out", out) is None
    assert not tried and not [w for w in seen if "peft" in w.filename or "config file" in str(w.message)], \
        [str(w.message) for w in seen]
    adapter = out / "checkpoint" / "adapter_model.safetensors"
    weights = load_file(adapter)
    torch.manual_seed(0)
    save_file({k: v + torch.randn_like(v) for k, v in weights.items()}, adapter)  # an adapter that changes logits
    moved = tmp_path / "elsewhere" / "run"
    shutil.copytree(out, moved)
    shutil.rmtree(out)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HTTPS_PROXY": "http://10.255.255.1:9", "HTTP_PROXY":
           "http://10.255.255.1:9", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", OFFLINE_LOAD, str(moved / "checkpoint"), str(tmp_path / "l.st")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and "NETWORK" not in done.stderr, done.stderr[-3000:]
    plain = load_file(tmp_path / "l.st")
    _, ours = llm.load_pretrained(moved / "checkpoint")
    _, base = llm.load_pretrained("tiny")
    with torch.no_grad():
        ours, base = ours(plain["ids"]).logits, base(plain["ids"]).logits
    assert (plain["logits"] - ours).abs().max() < 1e-5
    assert (plain["logits"] - base).abs().max() > 1e-2
