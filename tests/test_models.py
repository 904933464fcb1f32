"""Policy, value and reward models: built from config, saved and loaded, padding-aware."""

import pytest
import torch

from unified_rl.models import (
    ModelConfig, ValueModel, build_policy, load_policy, pick_device, save_checkpoint,
)
from unified_rl.tokenizer import load_tokenizer

SMALL = ModelConfig(n_layer=1, n_embd=32, n_head=2, n_positions=48)


def test_build_policy(tok):
    m = build_policy(tok, ModelConfig())
    c = m.config
    assert (c.vocab_size, c.n_layer, c.n_embd, c.n_head, c.n_positions) == (len(tok), 2, 64, 4, 64)
    assert c.resid_pdrop == c.embd_pdrop == c.attn_pdrop == 0.0
    assert c.eos_token_id == tok.eos_token_id and c.pad_token_id == tok.pad_token_id
    assert 90_000 < sum(p.numel() for p in m.parameters()) < 120_000
    with pytest.raises(ValueError, match="n_head"):
        build_policy(tok, ModelConfig(n_embd=30, n_head=4))


def test_checkpoint_round_trip(tok, tmp_path, batch):
    torch.manual_seed(0)
    m = build_policy(tok, SMALL)
    save_checkpoint(m, tok, tmp_path)
    back = load_policy(tmp_path, device="cpu")
    tok2 = load_tokenizer(tmp_path)
    assert tok2("47+85=")["input_ids"] == tok("47+85=")["input_ids"]
    with torch.no_grad():
        a = m(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits
        b = back(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits
    assert torch.equal(a, b)


def test_pick_device():
    assert pick_device("cpu") == torch.device("cpu")
    assert pick_device().type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA"):
            pick_device("cuda")


def unpadded(model, batch, i):
    """Run row i alone, without any padding: the reference for padded batches."""
    keep = batch.attention_mask[i].bool()
    ids = batch.input_ids[i][keep][None]
    return model(ids, torch.ones_like(ids))[0]


def test_value_model_is_padding_aware_copy(tok, batch):
    torch.manual_seed(0)
    policy = build_policy(tok, SMALL)
    v = ValueModel.from_policy(policy)
    torch.nn.init.normal_(v.head.weight)
    assert v.backbone.wte.weight is not policy.transformer.wte.weight
    assert torch.equal(v.backbone.wte.weight, policy.transformer.wte.weight)
    with torch.no_grad():
        values = v(batch.input_ids, batch.attention_mask)  # (B, L)
        assert values.shape == batch.input_ids.shape
        for i in range(len(batch)):
            keep = batch.attention_mask[i].bool()
            assert (values[i][keep] - unpadded(v, batch, i)).abs().max() <= 1e-5
    fresh = ValueModel.from_config(policy.config)
    assert (fresh(batch.input_ids, batch.attention_mask) == 0).all()  # zero head at start


def test_value_model_save_load(tok, batch, tmp_path):
    torch.manual_seed(1)
    v = ValueModel.from_policy(build_policy(tok, SMALL))
    torch.nn.init.normal_(v.head.weight)
    save_checkpoint(v, tok, tmp_path)
    back = ValueModel.from_pretrained(tmp_path)
    with torch.no_grad():
        assert torch.equal(back(batch.input_ids, batch.attention_mask),
                           v(batch.input_ids, batch.attention_mask))
