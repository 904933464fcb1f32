"""A teacher as the reward (parts opd, gkd, dft; rows opd, gkd, sdft, opsd, dft, self-distill; data/teachers.py)
and TR-DPO's synced pi_ref, each against its peer's own code (TRL 1.16) where the loss is a function of the
sampled tokens.

TRL's code runs unchanged on one fixed ragged float64 batch (prompts of one width, so no left padding enters
either side): IW-OPD's `_compute_iw_opd_loss` (on-policy distillation at gamma 0 and IW-OPD's position weights at
0.5), SDFT's sampled-token loss with its trainer's reduction, IW-OPD's sparse top-1 divergence (GKD on the sampled
token's coin: at beta = 1 everywhere, at 0 < beta < 1 where the teacher's top token is the sampled one, and
measurably not elsewhere, which the gkd page says), SFTTrainer's `loss_type="dft"` (its fused LM head handed
float64 log-probs, as tests/test_trl_losses.py hands GRPO's), and SyncRefModelCallback replayed on the run's own
weights. The parameter gradient of each TRL loss equals eq 5's surrogate's under the row's coefficient to 1e-10
of its largest entry; each planted slip (the log-ratio the wrong way round, a teacher reward without its
stop-gradient, DFT's weight differentiated, GKD's beta and 1 - beta swapped, TR-DPO's alpha on the wrong model
or its tau off by one) is caught far above that. The teacher is loaded read-only and never changes.
"""

import copy
import dataclasses
import hashlib
import os
import random
import types
from collections import defaultdict

import pytest
import torch

from _killed import killed
from unified_rl import distributed, loop, verify
from unified_rl.data import PreferencePairs, teachers
from unified_rl.lab import make_lab
from unified_rl.methods import METHODS
from unified_rl.paradigm import step_from_tensors, surrogate_loss
from unified_rl.parts import ADVANTAGES, POLICY_TERMS
from unified_rl.presets import get_preset
from unified_rl.sampling import Rollout, token_logp
from unified_rl.trainer import train

TOL = 1e-10  # relative to the largest gradient entry; float64 round-off is ~1e-15
SLIP = 1e-3
NEW_ROWS = ("opd", "gkd", "sdft", "opsd", "dft", "self-distill")


@pytest.fixture(scope="module")
def world():
    """The tiny lab's model in float64 (moved off its start), a teacher (another copy, moved), a ragged batch."""
    torch.manual_seed(0)
    lab = make_lab("tiny", seed=0)
    policy = lab.policy.double()
    with torch.no_grad():
        for p in policy.parameters():
            p.add_(0.3 * torch.randn_like(p))
    teacher = copy.deepcopy(policy).requires_grad_(False)
    with torch.no_grad():
        for p in teacher.parameters():
            p.add_(0.3 * torch.randn_like(p))
    tok = lab.tokenizer
    problems = lab.rl_problems[:6]
    P = len(tok(problems[0].prompt, add_special_tokens=False)["input_ids"]) + 1  # BOS + the prompt, one width
    g = torch.Generator().manual_seed(1)
    alphabet = [tok.convert_tokens_to_ids(c) for c in "0123456789+=;"]
    lengths = [2, 5, 1, 6, 3, 6]  # 6: cut at the budget, no EOS
    L = P + max(lengths)
    ids = torch.full((len(problems), L), tok.pad_token_id, dtype=torch.long)
    att = torch.zeros_like(ids)
    for i, (p, n) in enumerate(zip(problems, lengths)):
        resp = [alphabet[int(j)] for j in torch.randint(0, len(alphabet), (n,), generator=g)]
        resp = resp if n == 6 else resp[:-1] + [tok.eos_token_id]
        row = [tok.bos_token_id] + tok(p.prompt, add_special_tokens=False)["input_ids"] + resp
        ids[i, :len(row)], att[i, :len(row)] = torch.tensor(row), 1
    mask = (att[:, 1:] * (torch.arange(1, L) >= P)).double()
    batch = Rollout(ids, att, mask, torch.zeros_like(mask), [""] * len(problems), problems, 1, P)
    with torch.no_grad():
        teacher_logits = teacher(input_ids=ids, attention_mask=att).logits.double()
    return dict(lab=lab, policy=policy, teacher=teacher, batch=batch, P=P, teacher_logits=teacher_logits)


def gathered(logits, ids):
    """(B, T) log-softmax of `logits` (B, L, V) at each next token ids[:, 1:]."""
    return logits[:, :-1].log_softmax(-1).gather(-1, ids[:, 1:, None]).squeeze(-1)


def grads(policy, loss):
    return torch.autograd.grad(loss, [p for p in policy.parameters() if p.requires_grad])


def relative(a, b):
    scale = max(float(x.abs().max()) for x in b)
    return max(float((x - y).abs().max()) for x, y in zip(a, b)) / scale


def ours(w, name, teacher_logp, **settings):
    """The parameter gradient of eq 5's surrogate with METHODS[name]'s coefficient (its settings moved)."""
    m, b = METHODS[name], w["batch"]
    logp = token_logp(w["policy"], b.input_ids, b.attention_mask) * b.mask
    hp = dataclasses.replace(m.hparams, **settings)
    step = step_from_tensors(logp, b.mask, get_preset("tiny").rl, teacher_logp=teacher_logp * b.mask, hp=hp,
                             scores=torch.ones(len(b), dtype=torch.float64))
    return grads(w["policy"], surrogate_loss(logp, m.coefficient(step), b.mask))


def completion(w, logits=None):
    """TRL's view of the batch: the student's logits at the completion, its tokens and labels (-100 off it)."""
    b, P = w["batch"], w["P"]
    logits = w["policy"](input_ids=b.input_ids, attention_mask=b.attention_mask).logits if logits is None else logits
    tokens = b.input_ids[:, P:]
    labels = torch.where(b.mask[:, P - 1:].bool(), tokens, torch.full_like(tokens, -100))
    return logits[:, P - 1:-1], tokens, labels


def iw_opd(**attrs):
    """A bare IWOPDTrainer holding only what its loss methods read (TRL's own methods run on it)."""
    pytest.importorskip("trl", reason="TRL is in the bench extra")
    from trl.experimental.iw_opd import IWOPDTrainer
    t = object.__new__(IWOPDTrainer)
    t.__dict__.update(dict(temperature=1.0, iw_opd_epsilon=1e-8, loss_add_tail=True, reverse_kl_top_1_mode="sampled",
                           model=types.SimpleNamespace(training=True), _metrics=defaultdict(lambda: defaultdict(list))),
                      **attrs)
    return t


# ---------------------------------------------------------------- on-policy distillation: TRL's IW-OPD and SDFT

def trl_iw_opd(w, gamma):
    student, tokens, labels = completion(w)
    teacher = gathered(w["teacher_logits"], w["batch"].input_ids)[:, w["P"] - 1:]
    loss = iw_opd(iw_opd_gamma=gamma)._compute_iw_opd_loss(student, tokens, labels, teacher)
    return grads(w["policy"], loss)


@pytest.mark.parametrize("gamma", [0.0, 0.5])
def test_opd_is_trls_iw_opd_loss(world, gamma):
    teacher = gathered(world["teacher_logits"], world["batch"].input_ids)
    assert relative(ours(world, "opd", teacher, opd_gamma=gamma), trl_iw_opd(world, gamma)) < TOL


def test_opd_with_the_log_ratio_the_wrong_way_round_fails(world, monkeypatch):
    part = ADVANTAGES["opd"]
    monkeypatch.setitem(ADVANTAGES, "opd", dataclasses.replace(part, gc=lambda v: -part.gc(v)))  # log pi - log pi_T
    teacher = gathered(world["teacher_logits"], world["batch"].input_ids)
    assert relative(ours(world, "opd", teacher), trl_iw_opd(world, 0.0)) > SLIP


def test_sdft_is_trls_sampled_token_self_distillation(world):
    pytest.importorskip("trl", reason="TRL is in the bench extra")
    from trl.experimental.sdft.sdft_trainer import DistillationLogits, SDFTTrainer
    t = object.__new__(SDFTTrainer)
    t.args = types.SimpleNamespace(distillation_mode="sampled_token", distillation_alpha=1.0, distillation_is_clip=None)
    t.accelerator = types.SimpleNamespace(gather=lambda x: x)
    t._log_self_distillation_metric = lambda mode, value: None
    student, tokens, labels = completion(world)
    logits = DistillationLogits(completion_ids=tokens, loss_mask=(labels != -100).long(), student_logits=student,
                                teacher_logits=world["teacher_logits"][:, world["P"] - 1:-1])
    loss = t._compute_self_distillation_loss(types.SimpleNamespace(training=True), {}, logits)
    teacher = gathered(world["teacher_logits"], world["batch"].input_ids)
    assert relative(ours(world, "sdft", teacher), grads(world["policy"], loss)) < TOL


# ---------------------------------------------------------------- GKD on the sampled token: IW-OPD's sparse top-1

def trl_top1(w, beta, teacher_logits):
    student, tokens, labels = completion(w)
    loss = iw_opd(beta=beta)._compute_local_sparse_top_1_divergence_loss(
        student, teacher_logits[:, w["P"] - 1:-1], tokens, labels)
    return grads(w["policy"], loss)


def on_the_sampled_token(w):
    """The teacher's logits with each sampled token made its top one by a margin of 2: TRL's top-1 support is then
    {o_t} (a margin that leaves q below TRL's tail clamp at 1 - 1e-7)."""
    logits, ids = w["teacher_logits"].clone(), w["batch"].input_ids
    at = logits[:, :-1].gather(-1, ids[:, 1:, None])
    logits[:, :-1].scatter_(-1, ids[:, 1:, None], torch.maximum(at, logits[:, :-1].amax(-1, keepdim=True) + 2.0))
    return logits


def test_gkd_at_beta_1_is_trls_sparse_top_1_reverse_kl(world):
    teacher = gathered(world["teacher_logits"], world["batch"].input_ids)
    assert relative(ours(world, "gkd", teacher, gkd_beta=1.0), trl_top1(world, 1.0, world["teacher_logits"])) < TOL


@pytest.mark.parametrize("beta", [0.3, 0.5])
def test_gkd_between_0_and_1_is_trls_where_the_teachers_top_token_was_sampled_and_not_elsewhere(world, beta):
    top = on_the_sampled_token(world)
    mine = ours(world, "gkd", gathered(top, world["batch"].input_ids), gkd_beta=beta)
    assert relative(mine, trl_top1(world, beta, top)) < TOL
    elsewhere = ours(world, "gkd", gathered(world["teacher_logits"], world["batch"].input_ids), gkd_beta=beta)
    assert relative(elsewhere, trl_top1(world, beta, world["teacher_logits"])) > SLIP  # TRL adds the teacher's top


def test_gkd_with_beta_and_1_minus_beta_swapped_fails(world, monkeypatch):
    part = POLICY_TERMS["gkd"]
    swapped = lambda v, adv, keep: part.gc(dataclasses.replace(v, hp=dataclasses.replace(  # noqa: E731
        v.hp, gkd_beta=1 - v.hp.gkd_beta)), adv, keep)
    monkeypatch.setitem(POLICY_TERMS, "gkd", dataclasses.replace(part, gc=swapped))
    top = on_the_sampled_token(world)
    assert relative(ours(world, "gkd", gathered(top, world["batch"].input_ids), gkd_beta=0.3),
                    trl_top1(world, 0.3, top)) > SLIP


# ---------------------------------------------------------------- DFT: TRL's SFTTrainer loss_type="dft"

def trl_dft(w):
    pytest.importorskip("trl", reason="TRL is in the bench extra")
    import tempfile
    import warnings
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer
    from trl.trainer.utils import FusedCausalLMOutput
    model = copy.deepcopy(w["policy"])
    b, tok = w["batch"], w["lab"].tokenizer
    data = Dataset.from_list([{"prompt": p.prompt, "completion": "0"} for p in b.problems])
    config = SFTConfig(output_dir=tempfile.mkdtemp(), loss_type="dft", report_to=[], use_cpu=True, bf16=False,
                       max_length=None, per_device_train_batch_size=len(b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = SFTTrainer(model=model, args=config, train_dataset=data, processing_class=tok)
    fused = trainer.model.forward

    def exact(*args, fused_lm_head=False, labels=None, **kw):  # TRL's fused head computes in float32
        if not fused_lm_head:
            return fused(*args, labels=labels, **kw)
        logits = trainer.model.__class__.forward(trainer.model, *args, **kw).logits[:, :-1]
        target = labels[:, 1:]
        keep = target != -100
        lp = logits.log_softmax(-1).gather(-1, target.clamp(min=0)[..., None]).squeeze(-1) * keep
        zero = torch.zeros_like(lp)
        return FusedCausalLMOutput(loss=None, log_probs=lp, entropy=zero, is_top1=zero, label_mask=keep)
    trainer.model.forward = exact
    target = torch.nn.functional.pad(b.mask, (1, 0)).bool()  # the positions whose token is a response target
    labels = torch.where(target, b.input_ids, torch.full_like(b.input_ids, -100))
    loss = trainer.compute_loss(trainer.model, {"input_ids": b.input_ids, "attention_mask": b.attention_mask,
                                                "labels": labels})
    return grads(model, loss)


def test_dft_is_trls_sft_dft_loss(world, monkeypatch):
    theirs = trl_dft(world)
    assert relative(ours(world, "dft", torch.zeros_like(world["batch"].mask)), theirs) < TOL
    part = POLICY_TERMS["dft"]  # the slip: the weight pi differentiated too, A pi (1 + log pi)
    monkeypatch.setitem(POLICY_TERMS, "dft", dataclasses.replace(
        part, gc=lambda v, adv, keep: part.gc(v, adv, keep) * (1 + v.logp)))
    assert relative(ours(world, "dft", torch.zeros_like(world["batch"].mask)), theirs) > SLIP


# ---------------------------------------------------------------- the model oracle on every new row

def test_every_new_row_passes_the_model_oracle_and_a_scaled_coefficient_fails_it(monkeypatch):
    lab = make_lab("tiny", seed=0)
    got = verify.model_oracle(lab.policy, lab.tokenizer, lab.rl_problems, methods=NEW_ROWS, relative=True)
    assert max(got.values()) < 1e-9, got
    for name in NEW_ROWS:
        m = METHODS[name]
        monkeypatch.setitem(METHODS, name, dataclasses.replace(m, coefficient=lambda s, c=m.coefficient: 1.01 * c(s)))
    scaled = verify.model_oracle(lab.policy, lab.tokenizer, lab.rl_problems, methods=NEW_ROWS, relative=True)
    assert min(scaled.values()) > 1e-3, scaled


def test_a_teacher_reward_without_its_stop_gradient_fails_the_model_oracle(monkeypatch):
    part = ADVANTAGES["opd"]

    def undetached(v):
        real = torch.Tensor.detach
        torch.Tensor.detach = lambda self: self
        try:
            return part.objective(v)
        finally:
            torch.Tensor.detach = real
    monkeypatch.setitem(ADVANTAGES, "opd", dataclasses.replace(part, objective=undetached))
    lab = make_lab("tiny", seed=0)
    assert verify.model_oracle(lab.policy, lab.tokenizer, lab.rl_problems, methods=["opd"], relative=True)["opd"] > SLIP


# ---------------------------------------------------------------- the teacher's log-probs and its prompt

def by_hand(model, tok, prompt_ids, batch, i):
    """Row i's response log-probs under `model` after `prompt_ids`, one unpadded sequence, positions from 0."""
    P = batch.prompt_len
    resp = batch.input_ids[i, P:][batch.attention_mask[i, P:].bool()]
    ids = torch.tensor([prompt_ids + resp.tolist()])
    with torch.no_grad():
        logp = model(input_ids=ids).logits[0, :-1].double().log_softmax(-1).gather(-1, ids[0, 1:, None]).squeeze(-1)
    return logp[len(prompt_ids) - 1:]


@pytest.mark.parametrize("sees", ["prompt", "answer"])
def test_the_teachers_log_probs_are_its_own_after_the_prompt_it_is_shown(world, sees):
    lab, b = world["lab"], world["batch"]
    lab = dataclasses.replace(lab, policy=world["policy"], teacher=world["teacher"],
                              preset=lab.preset.with_(rl={"teacher": "ref", "teacher_sees": sees}))
    got = teachers.teacher_logp(lab, b)
    tok = lab.tokenizer
    for i, p in enumerate(b.problems):
        text = p.prompt if sees == "prompt" else f"{p.answer};{p.prompt}"  # the lab's privileged context
        want = by_hand(world["teacher"], tok, [tok.bos_token_id] + tok(text, add_special_tokens=False)["input_ids"],
                       b, i)
        row = got[i, b.prompt_len - 1:][b.mask[i, b.prompt_len - 1:].bool()]
        assert torch.allclose(row, want, atol=1e-12, rtol=0), (i, sees)


def test_a_chat_teacher_reads_the_reference_answer_after_the_question(tmp_path):
    from _tiny_llm import save_tiny
    from unified_rl.sampling import sample
    from unified_rl.trainer import llm_preset
    folder = save_tiny("llama", str(tmp_path / "llama"))
    preset = llm_preset("llm-cpu", model=folder, task="words").with_(rl={"teacher_sees": "answer"})
    lab = make_lab(preset, seed=0)
    torch.manual_seed(0)
    batch = sample(lab.policy, lab.tokenizer, lab.rl_problems[:2], group_size=2, max_new_tokens=5)
    got = teachers.teacher_logp(lab, batch)
    tok = lab.tokenizer
    for i, p in enumerate(batch.problems):
        *before, (role, question) = p.messages
        msgs = [{"role": r, "content": c} for r, c in before] + [
            {"role": role, "content": f"{question}\n\nReference answer: {p.answer}"}]
        ids = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=True)
        ids = list(ids["input_ids"] if hasattr(ids, "keys") else ids)
        want = by_hand(lab.ref, tok, ids, batch, i)
        row = got[i, batch.prompt_len - 1:][batch.mask[i, batch.prompt_len - 1:].bool()]
        assert torch.allclose(row.double(), want, atol=1e-5, rtol=0), i


def sha(folder):
    with open(os.path.join(folder, "model.safetensors"), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_a_teacher_folder_is_loaded_read_only_and_never_changes(tmp_path):
    lab = make_lab("tiny", seed=0)
    with torch.no_grad():
        for p in lab.policy.parameters():
            p.add_(0.2 * torch.randn_like(p))
    folder = str(tmp_path / "teacher")
    lab.policy.save_pretrained(folder)
    lab.tokenizer.save_pretrained(folder)
    before = sha(folder)
    saved = {k: v.clone() for k, v in lab.policy.state_dict().items()}
    run = train("opd", preset="tiny", steps=3, lr=1e-2, teacher=folder, progress=False, eval_every=0)
    teacher = run.lab.teacher
    assert sha(folder) == before and not any(p.requires_grad for p in teacher.parameters())
    assert all(torch.equal(teacher.state_dict()[k], v) for k, v in saved.items())
    assert run.metrics[-1]["coef_zero_frac"] < 0.5  # the teacher gave a signal: the run was not a no-op


def test_opsds_teacher_is_the_policy_as_the_batch_began_shown_the_answer_without_gradient(monkeypatch):
    seen, real = [], loop.prepare

    def spy(m, lab, batch, extra=None):
        weights = copy.deepcopy(lab.policy)
        prep = real(m, lab, batch, extra)
        seen.append((weights, lab, batch, prep.teacher_logp))
        return prep
    monkeypatch.setattr(loop, "prepare", spy)
    train("opsd", preset="tiny", steps=3, lr=1e-2, progress=False, eval_every=0)
    for weights, lab, batch, got in seen:
        assert not got.requires_grad
        want = teachers.teacher_logp(dataclasses.replace(lab, policy=weights), batch)
        assert torch.equal(got, want)


@pytest.mark.parametrize("settings, says", [
    ({"teacher": "policy", "teacher_sees": "prompt"}, "is the policy itself"),
    ({"teacher": "no/such/folder"}, "neither 'ref', 'policy' nor a checkpoint folder"),
    ({"teacher_sees": "everything"}, "teacher_sees must be one of"),
])
def test_a_teacher_that_cannot_work_is_refused_in_one_line(settings, says):
    with pytest.raises(ValueError) as e:
        train("opd", preset="tiny", steps=1, progress=False, eval_every=0, **settings)
    assert says in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_a_teacher_of_another_vocabulary_is_refused_in_one_line(tmp_path):
    from _tiny_llm import save_tiny
    folder = save_tiny("llama", str(tmp_path / "llama"))
    with pytest.raises(ValueError) as e:
        train("opd", preset="tiny", steps=1, progress=False, eval_every=0, teacher=folder)
    assert "\n" not in str(e.value) and folder in str(e.value), str(e.value)


def test_gkds_batches_are_the_policys_with_probability_lambda():
    """The kinds of batch follow TRL's rule, random() <= lambda, drawn from the source's RNG (replayed here)."""
    from unified_rl.data import OnOrOffPolicy
    lab = make_lab("tiny", seed=5)
    lab = dataclasses.replace(lab, preset=lab.preset.with_(rl={"gkd_lambda": 0.5}))
    source = OnOrOffPolicy(lab)
    kinds = ["policy" if source.next_batch().budget is not None else "dataset" for _ in range(12)]
    rng, cfg, want = random.Random(5), lab.preset.rl, []
    for _ in range(12):
        on = rng.random() <= 0.5
        want.append("policy" if on else "dataset")
        n = cfg.prompts_per_step if on else cfg.prompts_per_step * cfg.group_size
        rng.sample(lab.rl_problems if on else lab.sft_problems, n)
    assert kinds == want and set(kinds) == {"policy", "dataset"}


# ---------------------------------------------------------------- TR-DPO: pi_ref synced every tau updates

def coin(rollout):
    return torch.randint(0, 2, (len(rollout),)).float()


DPO = dataclasses.replace(METHODS["dpo"], data_source=lambda lab: PreferencePairs(lab, coin))
SYNC = dict(preset="tiny", seed=2, lr=1e-2, progress=False, eval_every=0, ref_sync_steps=2, ref_sync_alpha=0.6)


def replay_with_trl(monkeypatch, steps, sync=None):
    """(the run, pi_ref as TRL's SyncRefModelCallback makes it from the run's start and its weights after each
    update), the callback called with TRL's own schedule (global_step) and arithmetic."""
    pytest.importorskip("trl", reason="TRL is in the bench extra")
    from trl.trainer import callbacks
    monkeypatch.setattr(callbacks, "AcceleratorState", lambda: types.SimpleNamespace(deepspeed_plugin=None))
    after, start = [], []
    real_check = loop.check_finite

    def spy(policy, step):  # runs after every optimizer update, before the loop's sync
        after.append(copy.deepcopy(policy))
        return real_check(policy, step)
    monkeypatch.setattr(loop, "check_finite", spy)
    real_fit = loop.fit

    def fit(m, lab, *a, **kw):
        start.append(copy.deepcopy(lab.ref))
        return real_fit(m, lab, *a, **kw)
    monkeypatch.setattr("unified_rl.trainer.fit", fit)
    if sync is not None:
        monkeypatch.setattr(loop, "sync_ref", sync)
    run = train(DPO, steps=steps, **SYNC)
    ref = start[-1]
    callback = callbacks.SyncRefModelCallback(ref_model=ref, accelerator=None)
    args = types.SimpleNamespace(ref_model_sync_steps=SYNC["ref_sync_steps"],
                                 ref_model_mixup_alpha=SYNC["ref_sync_alpha"])
    for step, policy in enumerate(after[-steps:], 1):
        callback.on_step_end(args, types.SimpleNamespace(global_step=step), None, model=policy)
    return run, ref


def flat(module):
    return torch.cat([p.detach().flatten() for p in module.parameters()])


def test_tr_dpos_reference_is_trls_sync_callback_replayed(monkeypatch):
    run, ref = replay_with_trl(monkeypatch, 5)
    assert torch.equal(flat(run.lab.ref), flat(ref))
    assert float((flat(run.lab.ref) - flat(make_lab("tiny", 2).ref)).abs().max()) > 1e-3  # it did move


@pytest.mark.parametrize("slip", ["alpha on the wrong model", "tau off by one"])
def test_a_slip_in_the_sync_fails_the_replay(slip, monkeypatch):
    @torch.no_grad()
    def wrong(lab, updates):
        cfg = lab.preset.rl
        if (updates + (slip == "tau off by one")) % cfg.ref_sync_steps:
            return
        a = 1 - cfg.ref_sync_alpha if slip == "alpha on the wrong model" else cfg.ref_sync_alpha
        for r, t in zip(lab.ref.parameters(), lab.policy.parameters()):
            r.mul_(1.0 - a).add_(t, alpha=a)
    run, ref = replay_with_trl(monkeypatch, 5, wrong)
    assert not torch.equal(flat(run.lab.ref), flat(ref))


def test_a_resumed_tr_dpo_run_ends_bit_for_bit_where_an_uninterrupted_one_ends(tmp_path):
    kw = dict(SYNC, steps=5, save_every=1, ref_sync_steps=2)
    full = train(DPO, out=str(tmp_path / "full"), **kw)
    assert isinstance(killed(lambda: train(DPO, out=str(tmp_path / "cut"), **kw), after=3), KeyboardInterrupt)
    resumed = train(DPO, out=str(tmp_path / "cut"), resume=True, **kw)
    assert torch.equal(flat(resumed.policy), flat(full.policy))
    assert torch.equal(flat(resumed.lab.ref), flat(full.lab.ref))


def test_two_simulated_ranks_sync_pi_ref_as_one_process():
    lab = make_lab("tiny", 0)
    lab.policy.double()
    lab.ref.double()
    m = dataclasses.replace(METHODS["grpo"], reward=lambda r: torch.tensor([float(len(t) % 2) for t in r.texts]))

    def trained():
        run = train(m, lab=copy.deepcopy(lab), steps=4, prompts_per_step=4, group_size=4, lr=1e-3, progress=False,
                    eval_every=0, ref_sync_steps=2, ref_sync_alpha=0.5)
        return {k: v.detach().clone() for k, v in run.lab.ref.state_dict().items()}
    with distributed.world_of_one():
        one = trained()
    two, other = distributed.simulate(trained, 2)
    gap = lambda a, b: max(float((a[k] - b[k]).abs().max()) for k in a)  # noqa: E731
    move = gap(one, lab.ref.state_dict())
    assert move > 1e-5 and gap(two, other) == 0.0 and gap(two, one) <= 1e-8 * move, (move, gap(two, one))


def test_a_sync_that_means_nothing_is_refused_in_one_line():
    for method, says in (("simpo", "reads no pi_ref"), ("sft", "unknown setting")):
        with pytest.raises(ValueError) as e:
            train(method, preset="tiny", steps=1, progress=False, eval_every=0, ref_sync_steps=2)
        assert says in str(e.value) and "\n" not in str(e.value), str(e.value)
    lab = make_lab("tiny", 0)
    lora_like = dataclasses.replace(lab, ref=torch.nn.Module(), preset=lab.preset.with_(rl={"ref_sync_steps": 2}))
    with pytest.raises(ValueError, match="not a copy of the policy's weights"):  # LoRA's pi_ref: the adapter off
        loop.check_ref_sync(METHODS["dpo"], lora_like)


@pytest.mark.parametrize("name", ["gkd", "opsd"])
def test_two_simulated_ranks_distil_as_one_process(name):
    """GKD's on- and off-policy batches (lambda 0.5: both kinds in 4 steps; its teacher pi_ref shown the answer, so
    not the starting policy) and OPSD's teacher (the policy shown the answer) on two simulated ranks end where one
    process ends."""
    lab = make_lab("tiny", 0)
    lab.policy.double()
    lab.ref.double()

    def trained():
        run = train(name, lab=copy.deepcopy(lab), steps=4, prompts_per_step=4, group_size=4, lr=1e-2, progress=False,
                    eval_every=0, gkd_lambda=0.5, teacher_sees="answer")
        return {k: v.detach().clone() for k, v in run.policy.state_dict().items()}
    with distributed.world_of_one():
        one = trained()
    two, other = distributed.simulate(trained, 2)
    gap = lambda a, b: max(float((a[k] - b[k]).abs().max()) for k in a)  # noqa: E731
    move = gap(one, lab.policy.state_dict())
    assert move > 1e-4 and gap(two, other) == 0.0 and gap(two, one) <= 1e-8 * move, (move, gap(two, one))
