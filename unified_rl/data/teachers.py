"""Teachers: a model that never trains, whose log-probs of the batch's tokens a distillation method reads.

`RLConfig.teacher` names it: "ref" (pi_ref, the frozen start; with LoRA the policy with its adapter off: no second
model), "policy" (pi_theta as the batch's updates begin, without gradient: the stop-gradient of self-distillation)
or a checkpoint folder (a run's checkpoint, or a pretrained model), loaded once per run, read-only (`load`).
`RLConfig.teacher_sees` says what the teacher reads before the response: the prompt, or the question's reference
answer or solution as well (the privileged context of SDFT, arXiv 2601.19897, and OPSD, arXiv 2601.18734): in the
lab's task before the question ("132;47+85="), in a chat prompt after it, TRL SDFT's "{prompt}\\n\\n{context}".
`of_batch` runs once per batch (wiring.prepare) into `Step.teacher_logp` (None for pi_ref shown the prompt, whose
log-probs the Step holds already as logp_ref).
"""

import dataclasses
import os

import torch

from ..sampling import _left_pad, _pad_id, token_logp
from ..tokenizer import encode_problems

CONTEXT = {"answer": "Reference answer: {answer}", "solution": "Reference solution:\n{solution}"}
"""The privileged context a chat teacher reads after the question."""


def reads_teacher(method) -> bool:
    """Whether one of the method's parts reads a teacher's log-probs (registered with teacher=True)."""
    comp = getattr(method, "composition", None)
    return comp is not None and any(p.extra.get("teacher") for p in comp.parts.values())


def check(cfg, sharded=False):
    """ValueError, in one line, for a teacher setting that cannot work."""
    if cfg.teacher == "policy" and cfg.teacher_sees == "prompt":
        raise ValueError("teacher='policy' with teacher_sees='prompt' is the policy itself: every distillation "
                         "coefficient would be 0; show it the answer or the solution (teacher_sees), or name "
                         "another teacher")
    if cfg.teacher not in ("ref", "policy") and not os.path.isdir(cfg.teacher):
        raise ValueError(f"teacher {cfg.teacher!r} is neither 'ref', 'policy' nor a checkpoint folder")


def load(lab):
    """The lab with its teacher loaded (a checkpoint folder: frozen, in eval mode), or as it was."""
    cfg = lab.preset.rl
    check(cfg)
    if cfg.teacher in ("ref", "policy"):
        return lab
    tokenizer, model = lab.world.load(cfg.teacher, lab.device)
    if tokenizer.get_vocab() != lab.tokenizer.get_vocab():
        raise ValueError(f"teacher {cfg.teacher}: its tokenizer is not the policy's, so their log-probs of the "
                         "same tokens cannot be compared")
    return dataclasses.replace(lab, teacher=model.eval().requires_grad_(False))


def model_of(lab):
    """The teacher model of a run: the loaded checkpoint, else pi_theta or pi_ref as `RLConfig.teacher` says."""
    cfg = lab.preset.rl
    if lab.teacher is not None:
        return lab.teacher
    if cfg.teacher == "policy":
        return lab.policy
    if cfg.teacher == "ref":
        return lab.ref
    raise ValueError(f"the teacher {cfg.teacher!r} is not loaded (train() loads it: data.teachers.load)")


def shown(problem, sees):
    """The problem as the teacher reads it: unchanged, or with its reference answer or solution."""
    if sees == "prompt":
        return problem
    if getattr(problem, "messages", None):
        *before, (role, question) = problem.messages
        context = CONTEXT[sees].format(answer=problem.answer, solution=problem.solution)
        return dataclasses.replace(problem, messages=(*before, (role, f"{question}\n\n{context}")))
    context = problem.answer if sees == "answer" else problem.solution
    return dataclasses.replace(problem, prompt=f"{context};{problem.prompt}")


def reprompted(tokenizer, batch, sees):
    """(input_ids, attention_mask, prompt width) of the batch's responses after the teacher's prompts."""
    if sees == "prompt":
        return batch.input_ids, batch.attention_mask, batch.prompt_len
    ids, att = _left_pad(encode_problems(tokenizer, [shown(p, sees) for p in batch.problems]), _pad_id(tokenizer),
                         batch.input_ids.device)  # (B, P')
    P = batch.prompt_len
    return (torch.cat([ids, batch.input_ids[:, P:]], 1), torch.cat([att, batch.attention_mask[:, P:]], 1),
            ids.shape[1])


def of_batch(method, lab, batch, logp_ref):
    """Step.teacher_logp of a batch: None where the method reads no teacher, or where the teacher is pi_ref shown
    the prompt and logp_ref is computed already (the View reads pi_ref's log-probs then: no second pass)."""
    if not reads_teacher(method):
        return None
    cfg = lab.preset.rl
    if cfg.teacher == "ref" and cfg.teacher_sees == "prompt" and lab.teacher is None and logp_ref is not None:
        return None
    return teacher_logp(lab, batch)


@torch.no_grad()
def teacher_logp(lab, batch):
    """(B, T) the teacher's log-prob of each response token of `batch`, 0 off the response; no gradient."""
    cfg = lab.preset.rl
    check(cfg)
    ids, att, width = reprompted(lab.tokenizer, batch, cfg.teacher_sees)
    start = width - 1 if lab.world.response_only else 0  # a pretrained LLM projects the response positions only
    logp = token_logp(model_of(lab), ids, att, start=start)  # (B, width - 1 + R)
    return logp[:, width - batch.prompt_len:] * batch.mask  # the response's targets where the batch has them
