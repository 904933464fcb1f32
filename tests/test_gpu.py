"""The CUDA path: tests that run on a GPU (marked gpu), and their CPU twins on a simulated CUDA device.

The tests marked `gpu` run on DEVICE: CUDA (they skip without a GPU; scripts/gpu_check.py runs them with
UNIFIED_RL_REQUIRE_GPU=1, which makes a missing GPU a failure), or the CPU with
UNIFIED_RL_GPU_TEST_DEVICE=cpu (gpu_check's dry run: the same code, the device swapped; what only CUDA
has skips there). Their training starts from a model that scores (bench/gpu_phases.scoring_lab): the
untrained tiny model answers nothing right, so no weight moves and no preference pair exists. The
unmarked tests run everywhere on tests/_cuda_sim.py's simulated CUDA: tensors that say they are on
cuda:0, an op that mixes them with CPU tensors refused, each host sync counted with whose it is.
"""

import contextlib
import copy
import dataclasses
import json
import math
import os
import sys
import warnings
from pathlib import Path

import pytest
import torch

from _cuda_sim import SimulatedCuda, tag
from unified_rl import sampling, words, worlds
from unified_rl.advantages import decoupled
from unified_rl.methods import METHODS
from unified_rl.models import ValueModel
from unified_rl.presets import get_preset
from unified_rl.rewards import rule_reward
from unified_rl.sampling import sample, token_logp
from unified_rl.trainer import llm_preset, make_lab, train

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from gpu_phases import scoring_lab  # noqa: E402

DEVICE = os.environ.get("UNIFIED_RL_GPU_TEST_DEVICE", "cuda")
CUDA = torch.cuda.is_available() and DEVICE == "cuda"
if os.environ.get("UNIFIED_RL_REQUIRE_GPU") == "1" and not torch.cuda.is_available():
    raise RuntimeError(f"UNIFIED_RL_REQUIRE_GPU=1 but torch {torch.__version__} sees no CUDA device")

cuda_only = pytest.mark.skipif(not CUDA, reason="needs a real CUDA device (the CPU twin runs on a simulated one)")
PAIRS = ("dpo", "ipo", "simpo", "orpo")
LONG = get_preset("tiny").with_(model={"n_positions": 64})  # room for a 7-token prompt and 30 new tokens


def on_device(test):
    """Marked gpu, and skipped where DEVICE is CUDA and this machine has none."""
    return pytest.mark.gpu(pytest.mark.skipif(DEVICE == "cuda" and not torch.cuda.is_available(),
                                              reason="needs CUDA (no GPU on this machine)")(test))


def note(**values):
    """Record a measurement for gpu_check's report (GPU_CHECK_NOTES, one JSON object a line)."""
    path = os.environ.get("GPU_CHECK_NOTES")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


@pytest.fixture(scope="module")
def start_lab():
    """The scoring lab on DEVICE: each test trains a copy of it."""
    return scoring_lab(DEVICE)


def _moved(lab, before):
    return sum(not torch.equal(a, b) for a, b in zip(before, lab.policy.parameters()))


# ------------------------------------------------------------------ on the device (a GPU, or the CPU in the dry run)

@on_device
@pytest.mark.parametrize("method", ("grpo", "gdpo", "ppo") + PAIRS)
def test_each_kind_of_method_moves_the_weights_on_the_device(start_lab, method):
    """Two steps from a model that scores: a non-zero gradient (GRPO's groups differ) and, for the pair
    methods, pairs found (a batch without one raises); every weight stays float32, finite, on the device."""
    lab = copy.deepcopy(start_lab)
    before = [p.detach().clone() for p in lab.policy.parameters()]
    run = train(method, lab=lab, steps=2, progress=False, eval_every=0)
    assert run.summary["device"].startswith(DEVICE)
    assert all(p.device.type == DEVICE and p.dtype == torch.float32 for p in lab.policy.parameters())
    assert all(torch.isfinite(p).all() for p in lab.policy.parameters())
    assert _moved(lab, before) == len(before), "a weight did not move: a zero gradient"
    first = run.metrics[0]
    if method in PAIRS:
        assert first["accuracy"] == 0.5  # B chosen (right) rows and B rejected (wrong) ones: pairs were built
    else:
        assert 0 < first["accuracy"] < 1 and first["coef_std"] > 0  # right and wrong samples, a non-zero advantage



@on_device
@pytest.mark.parametrize("bf16,tol", [("0", 1e-3), ("1", 5e-2)])
def test_sampled_logp_matches_forward(monkeypatch, bf16, tol):
    """The KV-cached incremental pass and one full pass agree to kernel float error (bf16's is larger)."""
    monkeypatch.setenv("UNIFIED_RL_BF16", bf16)
    lab = make_lab("tiny", seed=0, device=DEVICE)
    torch.manual_seed(0)
    r = sample(lab.policy, lab.tokenizer, lab.rl_problems[:8], group_size=4)
    assert r.input_ids.device.type == DEVICE and r.logp.device.type == DEVICE and r.logp.dtype == torch.float32
    with torch.no_grad():
        logp = token_logp(lab.policy, r.input_ids, r.attention_mask) * r.mask  # (B, T)
    assert logp.dtype == torch.float32
    torch.testing.assert_close(r.logp, logp, atol=tol, rtol=tol)


@on_device
@cuda_only
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


def sampler_syncs(cuda, n_tokens=30):
    """(tokens decoded, the package's host syncs, everyone else's) while `sample` draws 8 x 4 rows from an
    untrained model (it rarely ends early). On a GPU, CUDA's sync debug mode sees every sync and each warning
    names the file that raised it; elsewhere the simulated CUDA device counts them (UNIFIED_RL_BF16=0 set)."""
    if not cuda:
        lab = on_simulated_cuda(make_lab(LONG, seed=0, device="cpu"))
        torch.manual_seed(0)
        with SimulatedCuda() as sim:
            r = sample(lab.policy, lab.tokenizer, lab.rl_problems[:8], group_size=4, max_new_tokens=n_tokens)
        assert sim.mixed == []
        return r.input_ids.shape[1] - r.prompt_len, sim.count("package"), len(sim.syncs) - sim.count("package")
    lab = make_lab(LONG, seed=0, device="cuda")
    sample(lab.policy, lab.tokenizer, lab.rl_problems[:8], group_size=4, max_new_tokens=8)  # warm-up
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = sample(lab.policy, lab.tokenizer, lab.rl_problems[:8], group_size=4, max_new_tokens=n_tokens)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    syncs = [w for w in caught if "synchroniz" in str(w.message).lower()]
    ours = [w for w in syncs if f"{os.sep}unified_rl{os.sep}" in w.filename]
    return r.input_ids.shape[1] - r.prompt_len, len(ours), len(syncs) - len(ours)


@on_device
def test_sampler_does_not_sync_every_token(monkeypatch):
    """The package's own host syncs are the every-8-tokens check plus a few at the start (the prompt's copies
    to the GPU) and the end (the trim, the copies back for decoding); transformers' are counted apart."""
    monkeypatch.setenv("UNIFIED_RL_BF16", "0" if not CUDA else os.environ.get("UNIFIED_RL_BF16", "1"))
    decoded, ours, others = sampler_syncs(CUDA)
    note(decoded_tokens=decoded, package_syncs=ours, other_syncs=others)
    assert decoded >= 16, "the fresh model ended early: the check needs long decodes"
    assert ours <= math.ceil(decoded / sampling.CUDA_DONE_CHECK_EVERY) + 8, (decoded, ours)


@on_device
def test_gpu_preset_is_bigger_and_harder_than_cpu():
    gpu, cpu, name = get_preset("gpu"), get_preset("cpu"), "gpu"
    assert gpu.task.digits > cpu.task.digits
    assert gpu.model.n_embd * gpu.model.n_layer > cpu.model.n_embd * cpu.model.n_layer
    lab = make_lab(name, seed=0, device=DEVICE)
    torch.manual_seed(0)
    r = sample(lab.policy, lab.tokenizer, lab.rl_problems[:64], group_size=8)  # one RL batch of the preset
    assert r.input_ids.device.type == DEVICE and len(r) == 512


@on_device
def test_value_model_saved_on_the_device_loads_on_cpu(tmp_path):
    """Every load maps tensors to where they are asked for, so a GPU run's checkpoint opens on a laptop."""
    lab = make_lab("tiny", seed=0, device=DEVICE)
    vm = ValueModel.from_policy(lab.policy).to(DEVICE)
    with torch.no_grad():
        vm.head.bias.fill_(0.5)
    vm.save_pretrained(tmp_path)
    back = ValueModel.from_pretrained(tmp_path, device="cpu")
    assert all(p.device.type == "cpu" for p in back.parameters())
    assert back.head.bias.item() == 0.5



# ------------------------------------------------------------------ everywhere: a simulated CUDA device on the CPU

def on_simulated_cuda(lab):
    """A copy of `lab` whose weights are tagged as CUDA tensors and whose device is cuda:0."""
    lab = copy.deepcopy(lab)
    tag(lab.policy, lab.ref)
    return dataclasses.replace(lab, device=torch.device("cuda", 0))


@pytest.fixture(scope="module")
def cpu_lab():
    """The scoring lab on the CPU, its policy 5 SFT steps past pi_ref as after some training (so a method that
    distils from pi_ref has a signal too); each simulated test trains a copy of it."""
    lab = scoring_lab("cpu")
    train("sft", lab=lab, steps=5, progress=False, eval_every=0)
    return lab


def test_gdpo_weights_live_on_the_rewards_device():
    """GDPO sums each reward column's advantage with its weights: on a GPU the weights must be there too."""
    rewards = torch.tensor([[1., 0.], [0., 0.], [1., 1.], [1., 0.]])
    with SimulatedCuda() as sim:
        on_gpu = rewards.to("cuda")
        for weights in (None, [1.0, 0.5]):
            adv = decoupled(on_gpu, group_size=2, weights=weights)
            assert adv.device.type == "cuda"
            torch.testing.assert_close(adv, decoupled(rewards, group_size=2, weights=weights), check_device=False)
    assert sim.mixed == []


@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_steps_on_a_simulated_cuda_device(monkeypatch, cpu_lab, method):
    """Two steps of each method on a simulated GPU: no op mixes a CUDA tensor with a CPU one (GPU's
    RuntimeError), and every weight moves (the start scores: a non-zero gradient, pairs to prefer)."""
    monkeypatch.setenv("UNIFIED_RL_BF16", "0")  # the bf16 twin is below; autocast would ask CUDA for its device
    lab = on_simulated_cuda(cpu_lab)
    before = [p.detach().clone() for p in lab.policy.parameters()]
    with SimulatedCuda() as sim:
        train(method, lab=lab, steps=2, progress=False, eval_every=0)
    assert sim.mixed == []
    assert _moved(lab, before) == len(before)


@contextlib.contextmanager
def bf16_on_the_cpu(monkeypatch):
    """sampling.autocast's CUDA branch, taken on the CPU: a bf16-capable device, CUDA autocast mapped to the CPU's."""
    real = torch.autocast
    monkeypatch.setenv("UNIFIED_RL_BF16", "1")
    monkeypatch.setattr(sampling, "_bf16_ok", lambda index: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch, "autocast", lambda device_type, **kw: real("cpu" if device_type == "cuda" else
                                                                          device_type, **kw))
    yield


def test_bf16_autocast_on_a_simulated_cuda_keeps_float32_weights_and_log_probs(monkeypatch, cpu_lab):
    with bf16_on_the_cpu(monkeypatch), SimulatedCuda() as sim:
        lab = on_simulated_cuda(cpu_lab)
        assert sampling.autocast(lab.device).fast_dtype == torch.bfloat16
        before = [p.detach().clone() for p in lab.policy.parameters()]
        for method in ("grpo", "ppo", "dpo"):
            train(method, lab=lab, steps=2, progress=False, eval_every=0)
        r = sample(lab.policy, lab.tokenizer, lab.rl_problems[:4], group_size=2)
        logp = token_logp(lab.policy, r.input_ids, r.attention_mask)
    assert sim.mixed == [] and logp.dtype == torch.float32 and r.logp.dtype == torch.float32
    assert all(p.dtype == torch.float32 for p in lab.policy.parameters()) and _moved(lab, before) == len(before)
    torch.testing.assert_close(r.logp, logp * r.mask, atol=0.1, rtol=0.1)  # bf16's error, not a wrong token


def test_sampler_checks_for_finished_rows_every_8_tokens_on_a_simulated_cuda(monkeypatch):
    """The package's host syncs while sampling 30 tokens: one "all ended?" check after every 8th token and 3
    at the end (the trim, the tokens and lengths copied back once each), not one per token as on the CPU.
    transformers' own attention-mask check (a padding mask's .all() before each forward) adds one per
    token, and README says so."""
    monkeypatch.setenv("UNIFIED_RL_BF16", "0")
    decoded, ours, others = sampler_syncs(cuda=False)
    assert decoded == 30, "the untrained model ended early: the check needs long decodes"
    checks = decoded // sampling.CUDA_DONE_CHECK_EVERY  # after tokens 8, 16 and 24
    assert checks <= ours <= checks + 3, ours
    assert others >= decoded - 1, "transformers no longer syncs per token: update README"


def test_the_gpu_tests_start_from_a_model_that_scores(cpu_lab):
    """Why the tests train from the scoring lab: from the untrained tiny model every sample is wrong (GRPO's
    advantage is 0 everywhere, DPO finds no pair); after the scoring lab's 40 SFT steps groups are mixed."""
    for lab, mixed in ((make_lab("tiny", seed=0, device="cpu"), False), (cpu_lab, True)):
        torch.manual_seed(0)
        r = sample(lab.policy, lab.tokenizer, lab.rl_problems[:16], group_size=4)
        right = rule_reward(r.problems, r.texts).view(16, 4).sum(1)
        n_mixed = int(((right > 0) & (right < 4)).sum())
        assert (n_mixed >= 4) if mixed else (right.sum() == 0), (n_mixed, r.texts[:8])


@pytest.fixture(scope="module")
def tiny_chat(tmp_path_factory):
    from _tiny_llm import save_tiny
    return str(save_tiny("qwen2", tmp_path_factory.mktemp("tiny") / "qwen2"))


@pytest.mark.parametrize("lora_r", [4, 0])
def test_a_chat_model_in_bf16_steps_on_a_simulated_cuda_device(monkeypatch, tiny_chat, lora_r):
    """llm-gpu's path on a simulated GPU: bf16 weights under LoRA (float32 master weights without it),
    bf16 autocast, micro-batches; no op mixes devices, the trained weights keep their dtype and move."""
    monkeypatch.setattr(words.WordProblem, "parse", lambda self, text: self.answer if len(text) % 2 else None)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    monkeypatch.setattr(worlds, "pick_device", lambda prefer=None: torch.device(prefer or "cuda"))
    p = llm_preset("llm-gpu", model=tiny_chat, task="words:1", llm={"micro_batch": 3, "lora_r": lora_r}).with_(
        rl={"prompts_per_step": 2, "group_size": 2, "frozen_samples": 4}, task={"max_new_tokens": 6}, n_test=4,
        n_rl=8, n_sft=8, eval_problems=4)
    with bf16_on_the_cpu(monkeypatch):
        lab = make_lab(p.with_(llm={"dtype": "bfloat16"}), device="cpu")  # what dtype auto is on a bf16 GPU
        lab = dataclasses.replace(lab, device=torch.device("cuda", 0))
        tag(lab.policy, lab.ref)
        trained = [q for q in lab.policy.parameters() if q.requires_grad]
        before = [q.detach().clone() for q in trained]
        with SimulatedCuda() as sim:
            for method in ("grpo", "ppo", "dpo"):
                train(method, lab=lab, steps=2, progress=False, eval_every=0)
    assert sim.mixed == []
    assert all(q.dtype == torch.float32 for q in trained)
    frozen = {q.dtype for q in lab.policy.parameters() if not q.requires_grad}
    assert frozen == ({torch.bfloat16} if lora_r else set())
    assert _moved_of(trained, before) == len(trained)


def _moved_of(params, before):
    return sum(not torch.equal(a, b) for a, b in zip(before, params))
