"""Notebook 10's helpers: the numbers they tabulate are the package's."""
import json
import math

import pytest

import torch

from unified_rl.kl import study as kl_study
from unified_rl.course import nb_policy_gradient as nb_policy
from unified_rl.methods import METHODS
from unified_rl.trainer import make_lab
from unified_rl.sampling import sample


def test_std_weights_closed_forms():
    G = 8
    ks, with_std, without = nb_policy.std_weights(G)
    for k, a, b in zip(ks, with_std, without):
        p = k / G
        assert math.isclose(b, 2 * k * (G - k) / G, rel_tol=1e-12)
        assert math.isclose(a, 2 * math.sqrt(G * (G - 1) * p * (1 - p)), rel_tol=1e-4)  # eps = 1e-6 in the std


def test_tables():
    text = nb_policy.method_table(METHODS, ["grpo", "dapo"])
    assert "`DynamicSampling`" in text and "`OverlongReward`" in text and text.count("\n") == 3
    table = kl_study.match_table(kl_study.one_token(*kl_study.random_case(V=4)[::2])[0])
    md = nb_policy.kl_markdown(table, ["zero", "-grad KL(pi_ref || pi)"])
    assert md.count("**") == 4  # k1's zero and k3's forward KL: equal to round-off, in bold
    # read as a table of 3 columns on every row: a KL's "||" left bare would split its cell in two
    html = pytest.importorskip("markdown_it").MarkdownIt("commonmark").enable("table").render(md)
    assert html.count("<table>") == 1 and html.count("</th>") == 3 and "KL(pi_ref || pi)" in html


def test_one_update_moves_sequence_ratios_less_than_token_ratios():
    torch.manual_seed(0)  # the tiny model is built at random
    lab = make_lab("tiny", seed=0)
    batch = sample(lab.policy, lab.tokenizer, lab.rl_problems[:4], group_size=4)
    scores = torch.tensor([1.0, 0.0] * 8)
    tokens, seqs = nb_policy.one_update_ratios(lab, batch, scores, lr=1e-2)
    assert len(seqs) == len(batch) and len(tokens) == int(batch.mask.sum())
    assert seqs.log().std() < tokens.log().std() and (tokens != 1).any()


def test_raw_grad_norms_are_the_surrogates_gradient_norms_before_the_clip():
    torch.manual_seed(0)
    lab = make_lab("tiny", seed=0)
    batch = sample(lab.policy, lab.tokenizer, lab.rl_problems[:4], group_size=4)
    scores = torch.tensor([1.0, 0.0, 0.0, 1.0] * 4)
    norms = nb_policy.raw_grad_norms(lab, batch, scores, METHODS, ["dr-grpo", "rloo"])
    assert all(p.grad is None or not p.grad.any() for p in lab.policy.parameters())  # left as found
    from unified_rl.paradigm import step_from_tensors, surrogate_loss
    from unified_rl.wiring import policy_logp
    logp = policy_logp(lab.policy, batch)
    step = step_from_tensors(logp, batch.mask, lab.preset.rl, scores=scores, group_size=4,
                             hp=METHODS["rloo"].hparams)
    surrogate_loss(logp, METHODS["rloo"].coefficient(step), batch.mask).backward()
    want = torch.cat([p.grad.flatten() for p in lab.policy.parameters() if p.grad is not None]).norm().item()
    assert math.isclose(norms["rloo"], want, rel_tol=1e-6)
    L = METHODS["dr-grpo"].hparams.max_len  # at pi = pi_ref RLOO's GC is Dr. GRPO's times L k/(k-1) exactly
    assert math.isclose(norms["rloo"], norms["dr-grpo"] * L * 4 / 3, rel_tol=1e-5)


def test_findings_are_computed_from_the_result():
    """Every arm gets its verdict from the course's rule (readings), none is left out, no sign count stands in
    for one; the table describes mean +- std; a planted number or a planted gain changes what is printed."""
    from unified_rl.experiments import common
    result = common.load_shipped("policy-family")
    text, table = "\n".join(nb_policy.findings(result)), nb_policy.comparison_table(result)
    for arm in result["arms"][1:]:
        assert f"`{arm}` − `grpo`" in text, arm  # every arm is accounted for, none left out
        _, mean, std = nb_policy.versus(result, arm)
        assert f"| {mean:+.3f} ± {std:.3f} |" in table, arm
    assert "every seed" not in text and " ahead" not in text and "behind" not in text
    planted = {**result, "table": dict(result["table"])}
    planted["table"]["dapo"] = {**result["table"]["dapo"], "samples_per_step": {"mean": 512.0}}
    assert "512 samples per step" in "\n".join(nb_policy.findings(planted))
    gained = json.loads(json.dumps(result))  # GSPO 0.1 above GRPO on every seed, the same 0.1 each time
    for s in gained["per_seed"]:
        s["runs"]["gspo"]["accuracy"] = s["runs"]["grpo"]["accuracy"] + 0.1
    assert "**raised** (1 of 11): `gspo` − `grpo`." in "\n".join(nb_policy.findings(gained))
