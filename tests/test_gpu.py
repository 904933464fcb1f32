"""CUDA checks: the gpu preset's path (bf16 autocast, a sampler that rarely syncs) on a real GPU.

Each test skips without CUDA; `scripts/gpu_check.sh` runs them with UNIFIED_RL_REQUIRE_GPU=1, which
turns a missing GPU into a failure instead.
"""

import os
import warnings

import pytest
import torch

from unified_rl import sampling
from unified_rl.models import ValueModel
from unified_rl.presets import get_preset
from unified_rl.sampling import sample, token_logp
from unified_rl.trainer import make_lab, train

if os.environ.get("UNIFIED_RL_REQUIRE_GPU") == "1" and not torch.cuda.is_available():
    raise RuntimeError(f"UNIFIED_RL_REQUIRE_GPU=1 but torch {torch.__version__} sees no CUDA device")

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA (no GPU on this machine)")]


def test_grpo_step_on_cuda():
    lab = make_lab("tiny", seed=0, device="cuda")
    before = [p.detach().clone() for p in lab.policy.parameters()]
    run = train("grpo", lab=lab, steps=1, progress=False, eval_every=0)
    assert run.summary["device"].startswith("cuda")
    assert all(p.is_cuda and p.dtype == torch.float32 for p in lab.policy.parameters())  # bf16 only inside autocast
    assert all(torch.isfinite(p).all() for p in lab.policy.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, lab.policy.parameters()))
    assert set(run.metrics[0]) >= {"reward", "kl", "coef_mean"}


@pytest.mark.parametrize("bf16,tol", [("0", 1e-3), ("1", 5e-2)])
def test_sampled_logp_matches_forward_on_cuda(monkeypatch, bf16, tol):
    """The KV-cached incremental pass and one full pass agree to kernel float error (bf16's is larger)."""
    monkeypatch.setenv("UNIFIED_RL_BF16", bf16)
    lab = make_lab("tiny", seed=0, device="cuda")
    torch.manual_seed(0)
    r = sample(lab.policy, lab.tokenizer, lab.rl_problems[:8], group_size=4)
    assert r.input_ids.is_cuda and r.logp.is_cuda and r.logp.dtype == torch.float32
    with torch.no_grad():
        logp = token_logp(lab.policy, r.input_ids, r.attention_mask) * r.mask  # (B, T)
    assert logp.dtype == torch.float32
    torch.testing.assert_close(r.logp, logp, atol=tol, rtol=tol)


def test_bf16_autocast_is_on_for_the_forward_passes():
    if not torch.cuda.is_bf16_supported():
        pytest.skip("this GPU has no native bf16")
    ctx = sampling.autocast("cuda")
    assert isinstance(ctx, torch.autocast) and ctx.fast_dtype == torch.bfloat16
    lab = make_lab("tiny", seed=0, device="cuda")
    ids = torch.ones(2, 5, dtype=torch.long, device="cuda")
    with ctx:
        assert lab.policy(input_ids=ids).logits.dtype == torch.bfloat16  # the LM head ran in bf16
    logp = token_logp(lab.policy, ids, torch.ones_like(ids))
    assert logp.dtype == torch.float32 and logp.requires_grad


def test_sampler_does_not_sync_every_token():
    """A fresh model rarely ends early, so 32 tokens are decoded: far fewer host syncs than tokens."""
    lab = make_lab("tiny", seed=0, device="cuda")
    problems = lab.rl_problems[:8]
    sample(lab.policy, lab.tokenizer, problems, group_size=4, max_new_tokens=8)  # warm-up
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = sample(lab.policy, lab.tokenizer, problems, group_size=4, max_new_tokens=30)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    syncs = [w for w in caught if "synchroniz" in str(w.message).lower()]
    decoded = r.input_ids.shape[1] - r.prompt_len
    assert decoded >= 16, "the fresh model ended early: the check needs long decodes"
    # every 8th token checks "all ended?"; prompt set-up and the final trim/decode add a few more
    assert len(syncs) <= decoded // sampling.CUDA_DONE_CHECK_EVERY + 8, [str(w.message) for w in syncs[:5]]


def test_gpu_preset_is_bigger_and_harder_than_cpu():
    gpu, cpu = get_preset("gpu"), get_preset("cpu")
    assert gpu.task.digits > cpu.task.digits
    assert gpu.model.n_embd * gpu.model.n_layer > cpu.model.n_embd * cpu.model.n_layer
    lab = make_lab("gpu", seed=0, device="cuda")
    torch.manual_seed(0)
    r = sample(lab.policy, lab.tokenizer, lab.rl_problems[:64], group_size=8)  # one RL batch of the preset
    assert r.input_ids.is_cuda and len(r) == 512


def test_value_model_saved_on_cuda_loads_on_cpu(tmp_path):
    """Every load maps tensors to where they are asked for, so a GPU run's checkpoint opens on a laptop."""
    lab = make_lab("tiny", seed=0, device="cuda")
    vm = ValueModel.from_policy(lab.policy).cuda()
    with torch.no_grad():
        vm.head.bias.fill_(0.5)
    vm.save_pretrained(tmp_path)
    back = ValueModel.from_pretrained(tmp_path, device="cpu")
    assert all(p.device.type == "cpu" for p in back.parameters())
    assert back.head.bias.item() == 0.5
