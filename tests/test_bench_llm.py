"""The real-model benchmarks' code paths (bench/trl_smollm2.py, bench/llm_memory.py, their keys in
bench/run.py) on a tiny random Llama in seconds: what SmolLM2's run measures, not its numbers. The
TRL parts skip where TRL is not installed (the `bench` extra; CI installs only `test` and `llm`)."""

import dataclasses
import os
import sys

import pytest
from _tiny_llm import save_tiny

pytest.importorskip("peft")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))

import llm_memory  # noqa: E402
import trl_smollm2  # noqa: E402

SMALL = dataclasses.replace(trl_smollm2.SETTINGS, max_new=6, lora_r=4)


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return str(save_tiny("llama", tmp_path_factory.mktemp("tiny") / "llama"))


def test_gradient_agreement_with_trl_and_its_negative_control(llama):
    pytest.importorskip("trl")
    # a random model moved far from pi_ref, and a large beta: the KL part of GC is a fifth of it
    a = trl_smollm2.gradient_agreement(llama, dataclasses.replace(SMALL, beta=0.5), noise=1.0)
    assert a["kl_share"] > 0.05 and a["max_rel_diff_trl_defaults"] > 1e-3  # TRL's extra KL term shows
    assert a["params_compared"] >= 10 and a["rows"] == SMALL.prompts * SMALL.group and a["no_left_padding"]
    assert a["max_rel_diff_kl_correction_off_same_eps"] < 1e-4  # every setting equal: float error
    assert a["max_rel_diff_with_extra_k3_term"] < 1e-4  # TRL's defaults, its extra KL term added to ours
    assert a["max_rel_diff_mismatched_rewards"] > 0.1  # the same check on mismatched rewards fails
    assert a["max_rel_diff_every_row_whole"] < 1e-4  # our whole-row passes agree too
    # each float32 gradient against the same batch's float64 one: float error, and not zero (they differ)
    assert set(a["float32_error_vs_float64"]) == {"ours_shared_prompt", "ours_every_row_whole", "trl"}
    assert all(0 < e < 1e-4 for e in a["float32_error_vs_float64"].values())


def test_agreement_sees_a_wrong_setting(llama, monkeypatch):
    """Our side with a doubled beta (TRL keeps SMALL.beta) must not agree: the check can fail."""
    pytest.importorskip("trl")
    real = trl_smollm2.coefficients.grpo

    def doubled_beta(rewards, G, logp, logp_ref, mask, beta, **kw):
        return real(rewards, G, logp, logp_ref, mask, 2 * beta, **kw)

    monkeypatch.setattr(trl_smollm2.coefficients, "grpo", doubled_beta)
    a = trl_smollm2.gradient_agreement(llama, dataclasses.replace(SMALL, beta=0.5), noise=1.0)
    assert a["max_rel_diff_kl_correction_off_same_eps"] > 1e-3


def test_speed_side_by_side_through_run_py(llama):
    pytest.importorskip("trl")
    import run

    res = run.run(only=("llm-trl",), llm_model=llama, llm_steps=3, llm_modes=("lora", "full"), llm_rounds=3)
    t = res["llm_trl"]
    assert "reason" not in t and set(res["llm_grpo_step_speedup_vs_trl"]) == {"lora", "full"}
    for row in t["by_mode"].values():
        assert row["ours_seconds_per_step"] > 0 and row["trl_seconds_per_step"] > 0
        assert len(row["per_round"]["ours"]) == len(row["per_round"]["trl"]) == 3
        assert len(row["load_average_per_run"]) == 6 and len(row["per_round_ratio"]) == 3
        assert all(0 < n <= trl_smollm2.SETTINGS.max_new for side in row["mean_reply_tokens_per_round"].values() for n in side)
        lo, hi = row["speedup_interval_90"]
        assert lo <= row["grpo_step_speedup_vs_trl"] <= hi
        assert row["per_round_ratio_min_max"] == [min(row["per_round_ratio"]), max(row["per_round_ratio"])]
        assert row["speedup_per_generated_token"] > 0
    assert set(res["llm_grpo_step_speedup_interval_90"]) == {"lora", "full"}
    assert res["llm_trl_agreement"] < 1e-4
    assert "SmolLM2 lora" in run.table(res)


@pytest.mark.slow  # a fresh interpreter per mode, each importing torch and transformers
def test_memory_modes_build_the_reference_they_name(llama):
    """full: pi_ref is a second copy of every weight; lora: the adapter disabled, no weights of its own."""
    import torch

    held = torch.ones(200 * 2**20)  # 800 MiB in this process: a worker's peak must not include it
    held[::4096] = 2.0  # touch every page
    parent_peak = llm_memory._rss_mib()
    res = llm_memory.measure(llama, steps=2, modes=("full", "lora-ckpt"))
    assert all(r["process_peak_mib"] < parent_peak - 500 for r in res["rows"].values()), (parent_peak, res)
    del held
    full, lora = res["rows"]["full"], res["rows"]["lora-ckpt"]
    assert full["reference"] == "LlamaForCausalLM" and full["reference_params"] == full["trainable_params"]
    assert lora["reference"] == "AdapterDisabled" and lora["reference_params"] == 0
    assert 0 < lora["trainable_params"] < full["trainable_params"]
    assert full["process_peak_mib"] >= full["imports_mib"] > 100  # torch and transformers are in it
    assert set(res["over_full"]) == {"lora-ckpt"} and res["lora_over_full_peak_memory"] is None  # no "lora" run


def test_bad_mode_is_a_clear_error(llama):
    with pytest.raises(ValueError, match="unknown mode"):
        llm_memory.worker(llama, "qlora", 1)


@pytest.mark.parametrize("lora", [True, False])
def test_both_trainers_get_the_same_settings(llama, lora, tmp_path):
    """The fairness the comparison claims: one batch shape, lr, beta, clip, temperature and budget,
    the same LoRA adapters (rank, alpha, modules: the same trainable parameters) or full
    fine-tuning, and pi_ref made the same way (the adapter disabled, or a second copy)."""
    pytest.importorskip("trl")
    from unified_rl.trainer import make_lab

    preset = trl_smollm2.our_preset(llama, SMALL, lora)
    lab = make_lab(preset)
    trainer = trl_smollm2.trl_trainer(llama, SMALL, lora, str(tmp_path), 1)
    a, rl = trainer.args, preset.rl
    assert (a.learning_rate, a.beta, a.epsilon, a.temperature) == (rl.lr, rl.beta, rl.clip_eps, rl.temperature)
    assert (a.num_generations, a.per_device_train_batch_size) == (rl.group_size, rl.prompts_per_step * rl.group_size)
    assert a.max_completion_length == preset.task.max_new_tokens and not a.gradient_checkpointing
    assert preset.llm.grad_checkpointing is False and preset.llm.micro_batch == 0 and rl.beta > 0

    def trainable(model):
        return sorted((n.replace("base_model.model.", ""), p.numel()) for n, p in model.named_parameters()
                      if p.requires_grad)

    assert trainable(trainer.model) == trainable(lab.policy)
    if lora:
        assert trainer.ref_model is None and type(lab.ref).__name__ == "AdapterDisabled"
        ours, theirs = lab.policy.peft_config["default"], trainer.model.peft_config["default"]
        assert (ours.r, ours.lora_alpha, ours.lora_dropout, set(ours.target_modules)) == \
            (theirs.r, theirs.lora_alpha, theirs.lora_dropout, set(theirs.target_modules))
    else:
        assert trainer.ref_model is not None and lab.ref is not lab.policy


def test_ratio_interval_brackets_the_rounds():
    """Equal rounds give a point; two rounds twice as slow on our side widen it to include their ratio."""
    assert trl_smollm2.ratio_interval([2.0] * 5, [3.0] * 5) == [1.5, 1.5]
    lo, hi = trl_smollm2.ratio_interval([2.0, 2.0, 2.0, 4.0, 4.0], [3.0] * 5)
    assert lo == 0.75 and hi == 1.5  # resamples that draw a slow round 3 or more times (a third), and fewer


def test_rel_is_the_worst_tensor_relative_to_its_own_scale():
    import torch

    theirs = {"a": torch.tensor([1.0, -2.0]), "b": torch.tensor([100.0, 0.0])}
    ours = {"a": torch.tensor([1.0, -1.0]), "b": torch.tensor([101.0, 0.0])}
    assert trl_smollm2.rel(ours, theirs) == pytest.approx(0.5)  # a: |1| / 2; b: 1 / 100
    assert trl_smollm2.rel(theirs, theirs) == 0.0


def test_phases_of_both_on_one_batch(llama):
    pytest.importorskip("trl")
    import llm_phases

    r = llm_phases.measure(llama, lora=True, repeats=1, s=SMALL)
    assert set(r["trl_over_ours"]) == {"sampling", "ref_logp", "forward_backward"}
    assert all(v > 0 for v in r["seconds"].values()) and r["rows"] == SMALL.prompts * SMALL.group
    assert all(v > 0 for v in r["tokens_per_second"].values())


def test_roof_counts_the_matmul_work_torch_counts(llama):
    """The roof's FLOPs of a forward pass equal torch's own count of the model's matmuls."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import AutoModelForCausalLM

    import llm_roof

    model = AutoModelForCausalLM.from_pretrained(llama)
    ids = torch.randint(0, model.config.vocab_size, (3, 10))  # (3, 10)
    with FlopCounterMode(display=False) as counter:
        model(input_ids=ids)
    # torch counts the weight matmuls (attention runs in SDPA, which it does not count on the CPU)
    assert counter.get_total_flops() == llm_roof.trunk_flops(model.config, 30, 0) + llm_roof.head_flops(model.config, 30)
    assert llm_roof.trunk_flops(model.config, 30, 5) > llm_roof.trunk_flops(model.config, 30, 0)


def test_roof_phases_on_a_tiny_model_through_run_py(llama):
    import run

    res = run.run(only=("llm-roof",), llm_model=llama, llm_modes=("lora",))
    r = res["llm_roof"]["lora"]
    assert "SmolLM2 lora: each phase's fraction of the roof" in run.table(res)
    assert set(r["phases"]) == {"prefill", "decoding", "ref_logp", "vocab_projection", "forward_backward", "adamw"}
    for k, row in r["phases"].items():
        if k != "adamw":
            assert row["seconds"] > 0 and row["roof_seconds"] > 0 and row["fraction_of_roof"] > 0


def test_cpu_bf16_phases_and_what_it_changes_through_run_py(llama):
    """Both dtypes timed per phase, and bf16's change to log-probs and gradient measured against float32:
    an autocast that did nothing would show no change at all."""
    import run

    res = run.run(only=("llm-bf16",), llm_model=llama, llm_modes=("lora",))
    r = res["llm_cpu_bf16"]["lora"]
    assert set(r["phases"]) == {"sampling", "ref_logp", "forward_backward"}
    for row in r["phases"].values():
        assert row["float32_s"] > 0 and row["bfloat16_s"] > 0 and len(row["bfloat16_each"]) == r["repeats"]
    c = r["what_bf16_changes"]
    assert 0 < c["logp_max_abs_diff"] < 1 and 0 < c["gradient_max_rel_diff"] < 1
    same = r["sampling_same_uniforms"]
    assert same["rows"] == len(same["first_differing_token"]) == r["rows"]
    assert all(row["bf16_speedup"] > 0 for row in r["matmul_chain_seconds"].values())
