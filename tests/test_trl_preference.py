"""TRL 1.16's own DPO and KTO loss code against the package's coefficients and objectives, in float64.

TRL's side is its trainers' `_compute_loss` (dpo_trainer.py, kto_trainer.py) on a batch we build: ragged
replies of 1 to 8 tokens, right-padded, chosen rows then rejected rows (KTO: labelled rows and their
mismatched KL rows). The package's side is the registered Method's coefficient and objective, with the
settings `trl_preference` maps TRL's config to, and the package's own log-probs (`sampling.token_logp`);
the gradient of eq 5's surrogate must equal the gradient of TRL's loss, parameter by parameter, and
minus our objective must equal TRL's loss value.

Two cases per loss: pi_ref equal to the policy (every log-ratio 0: a run's first step) and pi_ref moved
away from it (later steps). DPO and KTO are offline, so there is no pi_old: "on- and off-policy" for them
is these two. TRL's fused LM head computes log-probs in float32 whatever the model's dtype; so that its
loss code is compared at float64 round-off, the tests replace that head by a plain float64
log-softmax and make float64 torch's default dtype while it runs (exo_pair builds its label smoothing
as a tensor of the default dtype); its loss code is untouched. With TRL's own head the agreement is
float32's (checked once).
Negative controls: the other log-ratio convention (sums vs per-token means), and the coefficient scaled
by 1.01, must each fail. Needs the bench extra (make test installs it); skips without TRL.
"""

import contextlib
import copy
import os
import types

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
trl = pytest.importorskip("trl", reason="TRL is in the bench extra: pip install -e '.[bench]' (make test has it)")

from unified_rl import trl_preference as TP  # noqa: E402
from unified_rl.coefficients.dpo_losses import LOSS_TYPES  # noqa: E402
from unified_rl.lab import make_lab  # noqa: E402
from unified_rl.methods import METHODS  # noqa: E402
from unified_rl.paradigm import Step, TensorBatch, surrogate_loss  # noqa: E402
from unified_rl.presets import RLConfig  # noqa: E402
from unified_rl.sampling import token_logp  # noqa: E402

B, P, T = 4, 3, 12  # pairs, prompt tokens, row length
CHOSEN, REJECTED = [3, 5, 8, 1], [6, 1, 4, 8]  # reply lengths: ragged, some longer chosen, some shorter
TOL = 1e-12


def float64_head(model):
    """model(..., labels, fused_lm_head=True) answered by a plain float64 log-softmax, the fields TRL reads."""
    forward = type(model).forward

    def head(self, input_ids=None, attention_mask=None, labels=None, fused_lm_head=False, **kwargs):
        kwargs.pop("use_cache", None)
        if not fused_lm_head:
            return forward(self, input_ids=input_ids, attention_mask=attention_mask, labels=labels, **kwargs)
        logits = forward(self, input_ids=input_ids, attention_mask=attention_mask, **kwargs).logits[:, :-1]
        target = labels[:, 1:]
        keep = target != -100
        logp_all = torch.log_softmax(logits, -1)  # (B, L-1, V)
        logp = logp_all.gather(-1, target.clamp(min=0)[..., None]).squeeze(-1) * keep
        return types.SimpleNamespace(log_probs=logp, entropy=-(logp_all.exp() * logp_all).sum(-1).detach(),
                                     mean_logits=logits.mean(-1).detach(), is_top1=logits.argmax(-1) == target,
                                     log_sum_sq_probs=None, aux_loss=None)
    model.forward = types.MethodType(head, model)


@contextlib.contextmanager
def float64_constants():
    """torch's default dtype float64 while TRL's loss runs: exo_pair's torch.tensor(label_smoothing) is otherwise
    float32, and its log(1 - eps) and log(eps) carry float32 round-off (1e-8 relative in the gradient)."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(before)


@pytest.fixture(scope="module")
def models():
    """The tiny preset's GPT-2 in float64, moved from its start; pi_ref: moved again, or an equal copy."""
    torch.manual_seed(0)
    lab = make_lab("tiny", seed=0)
    policy = lab.policy.double()
    with torch.no_grad():
        for p in policy.parameters():
            p.add_(0.3 * torch.randn_like(p))
    moved = copy.deepcopy(policy).requires_grad_(False)
    with torch.no_grad():
        for p in moved.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return lab.tokenizer, policy, {"ref_moved": moved, "ref_equal": copy.deepcopy(policy).requires_grad_(False)}


def rows(tok, lengths, seed):
    """(ids, attention, completion mask) of right-padded rows: a prompt of P tokens, then a reply."""
    g = torch.Generator().manual_seed(seed)
    n = len(lengths)
    ids = torch.randint(3, len(tok), (n, T), generator=g)
    att, comp = torch.zeros(n, T, dtype=torch.long), torch.zeros(n, T, dtype=torch.long)
    for i, k in enumerate(lengths):
        att[i, : P + k], comp[i, P: P + k] = 1, 1
        ids[i, P + k:] = tok.pad_token_id
    return ids, att, comp


def pair_batch(tok):
    ids, att, comp = rows(tok, CHOSEN + REJECTED, seed=1)
    ids[B:, :P] = ids[:B, :P]  # a pair answers one prompt
    return {"input_ids": ids, "attention_mask": att, "completion_mask": comp}


def grads(model):
    return {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}


def rel(a, b):
    """max over parameters of |a - b|, relative to b's largest entry."""
    scale = max(v.abs().max().item() for v in b.values())
    assert scale > 0, "a zero gradient proves nothing"
    return max((a[n] - b[n]).abs().max().item() for n in b) / scale


def ours(name, policy, ref, inputs, settings, scores=None, scale=1.0):
    """(gradient of the registered Method's surrogate, its objective J) on TRL's rows, with settings."""
    m = METHODS[name]
    cfg_keys = {"dpo_beta"}
    cfg = RLConfig(**{k: v for k, v in settings.items() if k in cfg_keys})
    hp = type(m.hparams)(**{k: v for k, v in settings.items() if k not in cfg_keys})
    mask = inputs["completion_mask"][:, 1:].double()  # (2B, T-1) the reply's targets
    policy.zero_grad(set_to_none=True)
    logp = token_logp(policy, inputs["input_ids"], inputs["attention_mask"]) * mask
    with torch.no_grad():
        logp_ref = token_logp(ref, inputs["input_ids"], inputs["attention_mask"]) * mask
    step = Step(TensorBatch(mask), scores, logp, logp.detach(), logp_ref, None, cfg, hp)
    surrogate_loss(logp, scale * m.coefficient(step), mask).backward()
    return grads(policy), m.objective(step).item()


# ---------------------------------------------------------------- DPO

@pytest.fixture(scope="module")
def dpo_trainer(models, tmp_path_factory):
    from datasets import Dataset

    tok, policy, refs = models
    args = trl.DPOConfig(output_dir=str(tmp_path_factory.mktemp("dpo")), use_cpu=True, bf16=False, fp16=False,
                         report_to="none", gradient_checkpointing=False, save_strategy="no", disable_tqdm=True)
    data = Dataset.from_dict({"prompt": ["1+2="] * 2, "chosen": ["3"] * 2, "rejected": ["4"] * 2})
    trainer = trl.DPOTrainer(model=policy, ref_model=refs["ref_moved"], args=args, train_dataset=data,
                             processing_class=tok)
    trainer.model.train()
    return trainer


def trl_dpo(trainer, ref, inputs, loss_type, beta, label_smoothing=0.0, weights=None, own_head=False):
    """TRL's loss and its gradient, its config set the way DPOTrainer.__init__ reads a DPOConfig."""
    trainer.ref_model = ref
    for model in (trainer.model, ref):
        if own_head:  # TRL's own fused head (float32)
            model.__dict__.pop("forward", None)
            trl.trainer.utils.add_fused_lm_head(model, outputs=("log_probs", "entropy", "mean_logits", "is_top1"))
        else:
            float64_head(model)
    trainer.loss_types = list(loss_type) if isinstance(loss_type, list) else [loss_type]
    trainer.loss_weights = weights or [1.0] * len(trainer.loss_types)
    trainer.beta, trainer.label_smoothing = beta, label_smoothing
    trainer.model.zero_grad(set_to_none=True)
    with float64_constants():
        loss = trainer._compute_loss(trainer.model, inputs, False)
    loss.backward()
    return grads(trainer.model), loss.item()


DPO_CASES = [(t, 0.1 if t in ("robust", "exo_pair", "aot", "aot_unpaired") else 0.0) for t in LOSS_TYPES]


@pytest.mark.parametrize("ref_name", ["ref_moved", "ref_equal"])
@pytest.mark.parametrize("loss_type,smoothing", DPO_CASES, ids=[c[0] for c in DPO_CASES])
def test_every_dpo_loss_type_equals_trls(loss_type, smoothing, ref_name, models, dpo_trainer):
    tok, policy, refs = models
    inputs, beta = pair_batch(tok), 0.2
    g_trl, loss_trl = trl_dpo(dpo_trainer, refs[ref_name], inputs, loss_type, beta, smoothing)
    settings = TP.dpo_from_trl(loss_type, beta, smoothing)
    g_ours, J = ours("dpo", policy, refs[ref_name], inputs, settings)
    assert rel(g_ours, g_trl) < TOL
    assert abs(-J - loss_trl) < TOL * max(1.0, abs(loss_trl))
    # negative controls: the other convention (sigmoid_norm: the summed sigmoid), and a 1 % larger GC
    other = ({**settings, "dpo_loss": "sigmoid", "dpo_norm": "sum"} if loss_type == "sigmoid_norm"
             else {**settings, "dpo_norm": {"sum": "mean", "mean": "sum"}[settings["dpo_norm"]]})
    assert rel(ours("dpo", policy, refs[ref_name], inputs, other)[0], g_trl) > 1e-4
    assert rel(ours("dpo", policy, refs[ref_name], inputs, settings, scale=1.01)[0], g_trl) > 1e-3


def test_trls_combined_losses_are_the_weighted_sum_of_gcs(models, dpo_trainer):
    """MPO's mix (TRL's docs): loss_type [sigmoid, bco_pair, sft], weights [0.8, 0.2, 1.0]: coefficients.dpo_weighted."""
    from unified_rl import coefficients, objectives

    tok, policy, refs = models
    inputs, beta, types_, weights = pair_batch(tok), 0.2, ["sigmoid", "bco_pair", "sft"], [0.8, 0.2, 1.0]
    g_trl, loss_trl = trl_dpo(dpo_trainer, refs["ref_moved"], inputs, types_, beta, weights=weights)
    terms = [(t, TP.dpo_from_trl(t)["dpo_norm"], w) for t, w in zip(types_, weights)]
    mask = inputs["completion_mask"][:, 1:].double()
    policy.zero_grad(set_to_none=True)
    logp = token_logp(policy, inputs["input_ids"], inputs["attention_mask"]) * mask
    with torch.no_grad():
        ref = token_logp(refs["ref_moved"], inputs["input_ids"], inputs["attention_mask"]) * mask
    args = (logp[:B], ref[:B], mask[:B], logp[B:], ref[B:], mask[B:], beta)
    cc, cr = coefficients.dpo_weighted(terms, *args)
    surrogate_loss(logp, 2 * torch.cat([cc, cr]), mask).backward()  # 2B rows, the loss a mean over B pairs
    assert rel(grads(policy), g_trl) < TOL
    assert abs(-objectives.dpo_weighted(terms, *args).item() - loss_trl) < TOL


def test_with_trls_own_float32_head_the_agreement_is_float32s(models, dpo_trainer):
    tok, policy, refs = models
    inputs = pair_batch(tok)
    g_trl, _ = trl_dpo(dpo_trainer, refs["ref_moved"], inputs, "sigmoid", 0.2, own_head=True)
    d = rel(ours("dpo", policy, refs["ref_moved"], inputs, TP.dpo_from_trl("sigmoid", 0.2))[0], g_trl)
    assert 1e-12 < d < 1e-5, d  # float32 round-off: above float64's, far below a wrong GC's 1e-3


def test_the_mapping_goes_both_ways():
    """Each TRL loss type maps to our settings and back; what TRL cannot express is named."""
    for t in LOSS_TYPES:
        s = TP.dpo_from_trl(t, 0.3, 0.1)
        hp = type(METHODS["dpo"].hparams)(**{k: v for k, v in s.items() if k != "dpo_beta"})
        options = TP.trl_dpo_options(hp, s["dpo_beta"])
        assert options["loss_type"] == t
        trl.DPOConfig(output_dir="unused", use_cpu=True, **options)  # TRL accepts what the map gives it
    hp = type(METHODS["dpo"].hparams)(dpo_loss="hinge", dpo_norm="mean")
    with pytest.raises(ValueError, match="no DPOConfig matches"):
        TP.trl_dpo_options(hp, 0.5)
    with pytest.raises(ValueError, match="combines losses"):
        TP.dpo_from_trl(["sigmoid", "sft"])
    with pytest.raises(ValueError, match="exo_pair needs label_smoothing"):
        TP.dpo_from_trl("exo_pair")  # TRL refuses it too
    assert TP.trl_dpo_options(METHODS["dpo"].hparams, 0.5) == {"loss_type": "sigmoid_norm", "beta": 0.5}


# ---------------------------------------------------------------- KTO

@pytest.fixture(scope="module")
def kto_trainer(models, tmp_path_factory):
    from datasets import Dataset

    tok, policy, refs = models
    args = trl.KTOConfig(output_dir=str(tmp_path_factory.mktemp("kto")), use_cpu=True, bf16=False, fp16=False,
                         report_to="none", gradient_checkpointing=False, save_strategy="no", disable_tqdm=True,
                         per_device_train_batch_size=2)
    data = Dataset.from_dict({"prompt": ["1+2="] * 2, "completion": ["3", "4"], "label": [True, False]})
    trainer = trl.KTOTrainer(model=policy, ref_model=refs["ref_moved"], args=args, train_dataset=data,
                             processing_class=tok)
    trainer.model.train()
    return trainer


LABELS = [True, False, True, True, False]


def kto_batch(tok):
    """B labelled rows, then the same prompts with the next row's reply (TRL's KL rows; our mismatched half)."""
    n = len(LABELS)
    ids, att, comp = rows(tok, [3, 6, 1, 8, 4], seed=2)
    kl_ids, kl_att, kl_comp = rows(tok, [6, 1, 8, 4, 3], seed=2)
    for i in range(n):  # prompt i with reply i + 1
        j = (i + 1) % n
        kl_ids[i, :P] = ids[i, :P]
        kl_ids[i, P:], kl_att[i, P:], kl_comp[i, P:] = ids[j, P:], att[j, P:], comp[j, P:]
    trl_inputs = {"input_ids": ids, "attention_mask": att, "completion_mask": comp,
                  "label": torch.tensor(LABELS), "KL_input_ids": kl_ids, "KL_attention_mask": kl_att,
                  "KL_completion_mask": kl_comp}
    ours_inputs = {"input_ids": torch.cat([ids, kl_ids]), "attention_mask": torch.cat([att, kl_att]),
                   "completion_mask": torch.cat([comp, kl_comp])}
    scores = torch.cat([torch.tensor(LABELS, dtype=torch.float64), torch.zeros(n, dtype=torch.float64)])
    return trl_inputs, ours_inputs, scores


@pytest.mark.parametrize("ref_name", ["ref_moved", "ref_equal"])
@pytest.mark.parametrize("loss_type", TP.KTO_LOSS_TYPES)
def test_every_kto_loss_type_equals_trls(loss_type, ref_name, models, kto_trainer):
    tok, policy, refs = models
    trl_inputs, ours_inputs, scores = kto_batch(tok)
    t = kto_trainer
    t.ref_model, t.loss_type, t.calculate_KL = refs[ref_name], loss_type, loss_type == "kto"
    t.beta, t.desirable_weight, t.undesirable_weight = 0.3, 1.5, 0.7
    for model in (t.model, t.ref_model):
        float64_head(model)
    t.model.zero_grad(set_to_none=True)
    with float64_constants():
        loss = t._compute_loss(t.model, trl_inputs, False)
    loss.backward()
    g_trl = grads(t.model)
    settings = TP.kto_from_trl(loss_type, 0.3, 1.5, 0.7)
    g_ours, J = ours("kto", policy, refs[ref_name], ours_inputs, settings, scores=scores)
    assert rel(g_ours, g_trl) < TOL
    assert abs(-J - loss.item()) < TOL
    other = {**settings, "kto_norm": "mean"}
    assert rel(ours("kto", policy, refs[ref_name], ours_inputs, other, scores=scores)[0], g_trl) > 1e-4
    assert rel(ours("kto", policy, refs[ref_name], ours_inputs, settings, scores=scores, scale=1.01)[0], g_trl) > 1e-3
    assert TP.trl_kto_options(type(METHODS["kto"].hparams)(**settings))["loss_type"] == loss_type
