"""The two worlds a run trains in, chosen once from its preset (`world_of`): the lab's own GPT-2
(`LabWorld`) and a pretrained chat model (`PretrainedWorld`, when `Preset.llm` names one).

A world makes what differs between them: the lab's models (tokenizer, policy, pi_ref), where a run
starts, how a checkpoint is loaded for evaluation, and the loop's two flags (log-probs of the reply
only, micro-batches). The trainer, the CLI, `make_lab` and the loop ask the world instead of asking
which world they are in. A run's summary records its world and its task (`run_record`), so a
checkpoint is evaluated on its own questions (`preset_of_run`), whatever preset the caller guessed.
"""

import copy
import dataclasses
import json
import os
import sys
from dataclasses import dataclass
from typing import Any, ClassVar

from . import llm, task as _task, words as _words
from .models import build_policy, check_source, load_policy, pick_device
from .presets import PRESETS, LLMConfig, get_preset
from .tokenizer import build_tokenizer, load_tokenizer


def check_tokenizer_fits(tokenizer, policy, where):
    """Raise a ValueError if `tokenizer` cannot be the one `policy` was trained with."""
    vocab = policy.get_input_embeddings().weight.shape[0]
    if len(tokenizer) > vocab:
        raise ValueError(f"{where}: the tokenizer has {len(tokenizer)} tokens but the model only {vocab}; "
                         "they do not belong together")
    ids = tokenizer(_task.ALPHABET, add_special_tokens=False)["input_ids"]
    if tokenizer.unk_token_id is not None and tokenizer.unk_token_id in ids:
        raise ValueError(f"{where}: the tokenizer cannot write the task's characters {_task.ALPHABET!r}")
    eos = getattr(policy.config, "eos_token_id", None)
    if isinstance(eos, int) and tokenizer.eos_token_id != eos:
        raise ValueError(f"{where}: the tokenizer's EOS id {tokenizer.eos_token_id} is not the model's {eos}")


def load_checkpoint(path, device=None):
    """(tokenizer, policy) of a checkpoint folder or hub name, each checked; ValueError naming `path`."""
    check_source(path)
    tokenizer = load_tokenizer(path)
    policy = load_policy(path, device)
    check_tokenizer_fits(tokenizer, policy, path)
    return tokenizer, policy


def splits_of(preset):
    """(train pool, held-out questions) of a preset's task, deterministic under its split seed."""
    if hasattr(preset.task, "splits"):  # a task in words (words.py)
        return preset.task.splits(preset.n_rl, preset.n_test, seed=preset.seed)
    return _task.make_splits(preset.task, preset.n_rl, preset.n_test, seed=preset.seed)


@dataclass(frozen=True)
class LabWorld:
    """The lab's world: a GPT-2 built from the preset's ModelConfig, or a checkpoint of one; a method
    starts where its Method.init says (the cached SFT model, or scratch)."""

    preset: Any
    kind: ClassVar[str] = "lab"
    response_only: ClassVar[bool] = False  # the full computation: the lab's runs stay bit for bit as shipped
    micro_batch: ClassVar[int] = 0
    start: ClassVar[Any] = None  # no model of its own: the method's start (trainer.START_CHECKPOINT)

    def check(self, device=None):
        """Nothing to check before a run: the lab's settings are checked where they are read."""

    def check_fits(self, init):
        """Nothing to check: the lab's models are small."""

    def ready(self, init):
        """Nothing to build before the ranks join but the SFT cache, which the trainer builds."""

    def models(self, init, device):
        """(tokenizer, policy, pi_ref): a fresh GPT-2 (init None) or the checkpoint `init`; pi_ref a frozen copy."""
        if init is None:
            tokenizer = build_tokenizer()
            policy = build_policy(tokenizer, self.preset.model)
        else:
            tokenizer, policy = load_checkpoint(init)
        policy.to(device)
        return tokenizer, policy, copy.deepcopy(policy).eval().requires_grad_(False)

    def load(self, checkpoint, device=None):
        """(tokenizer, policy) of a checkpoint to evaluate."""
        return load_checkpoint(checkpoint, device)

    def record(self):
        return {"kind": self.kind}


@dataclass(frozen=True)
class PretrainedWorld:
    """A pretrained chat model's world (llm.py): every method starts from the model (no SFT cache);
    log-probs skip the prompt's vocabulary projection; the batch runs in micro-batches."""

    preset: Any
    kind: ClassVar[str] = "pretrained"
    response_only: ClassVar[bool] = True

    @property
    def micro_batch(self):
        return self.preset.llm.micro_batch

    @property
    def start(self):
        return self.preset.llm.model

    def check(self, device=None):
        """ValueError, before anything is built, for a dtype this device cannot train in (llm.resolve_dtype)."""
        llm.resolve_dtype(self.preset.llm.dtype, pick_device(device))

    def check_fits(self, init):
        """ValueError, before the weights are read, for a LoRA rank above what the layers can use or whose
        training state would not fit the memory free (llm.check_lora)."""
        llm.check_lora(self.preset.llm, init)

    def ready(self, init):
        """Convert an alias's GGUF file into the cache now (before torchrun's ranks join)."""
        llm.pretrained_folder(init if init is not None else self.start)

    def models(self, init, device):
        """(tokenizer, policy, pi_ref) as llm.prepare_policy makes them, from `init` or the model."""
        tokenizer, policy, ref = llm.lab_models(init, self.preset.llm, device)
        check_tokenizer_fits(tokenizer, policy, init or self.start)
        return tokenizer, policy, ref

    def load(self, checkpoint, device=None):
        """(tokenizer, policy) of a checkpoint to evaluate: in the run's dtype where this device has it."""
        return llm.load_pretrained(checkpoint, llm.evaluation_dtype(self.preset.llm, device), device)

    def record(self):
        return {"kind": self.kind, "model": llm.portable(self.start)}


def world_of(preset):
    """The world a preset trains in: a pretrained chat model if it names one (Preset.llm), else the lab's."""
    preset = get_preset(preset)
    return LabWorld(preset) if preset.llm is None else PretrainedWorld(preset)


def pretrained_preset(preset="auto", model=None, task=None, changes=None):
    """The preset of a run on a pretrained chat model: `model` (alias, folder, hub name) and `task`
    (words, words:DIGITS, gsm8k:FILE) replace the preset's; `changes` (a dict) changes LLMConfig fields.
    With a model and preset "auto": llm-gpu where CUDA is, else llm-cpu."""
    import torch

    if preset == "auto" and (model is not None or task is not None):
        preset = "llm-gpu" if torch.cuda.is_available() else "llm-cpu"
    p = get_preset(preset)
    if world_of(p).kind != "pretrained":
        raise ValueError(f"preset {p.name!r} trains the lab's own model; use llm-cpu or llm-gpu for "
                         "--model / --task")
    if task is not None:
        p = p.with_(task=_words.task_from_spec(task) if isinstance(task, str) else task)
    changes = dict(changes or {})
    if model is not None:
        changes["model"] = os.fspath(model)
    was_lora = bool(p.llm.lora_r)
    p = p.with_(llm=changes) if changes else p
    if bool(p.llm.lora_r) != was_lora:  # lora_r switched full fine-tuning and LoRA: the learning rate too
        lr = p.llm.lora_lr if p.llm.lora_r else p.llm.full_lr
        p = p.with_(rl={"lr": lr}, sft={"lr": lr})
    return p


TASK_TYPES = (_task, _words)
"""The modules whose frozen dataclasses a run's recorded task may name (nothing else is rebuilt)."""


def typed(value):
    """A task as JSON that says its type at every level: {"type": "WordsTask", "digits": 1, ...}."""
    if dataclasses.is_dataclass(value):
        return {"type": type(value).__name__, **{f.name: typed(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if isinstance(value, (tuple, list)):
        return [typed(v) for v in value]
    return value


def untyped(value, where):
    """The task `typed` recorded; ValueError naming `where` for a type this version does not have."""
    if isinstance(value, list):
        return tuple(untyped(v, where) for v in value)
    if not isinstance(value, dict):
        return value
    kinds = [getattr(m, value.get("type", ""), None) for m in TASK_TYPES]
    cls = next((k for k in kinds if isinstance(k, type) and dataclasses.is_dataclass(k)), None)
    if cls is None:
        raise ValueError(f"{where}: its task type {value.get('type')!r} is not one this version has")
    return cls(**{k: untyped(v, where) for k, v in value.items() if k != "type"})


def run_record(preset):
    """What a run's summary says of its world: {"world": {...}, "task": typed task}."""
    return {"world": world_of(preset).record(), "task": typed(preset.task)}


def summary_beside(checkpoint):
    """The summary of the run folder holding `checkpoint` (OUT/checkpoint -> OUT/summary.json), or None."""
    path = os.path.join(os.path.dirname(os.path.abspath(os.fspath(checkpoint))), "summary.json")
    if os.path.basename(os.path.normpath(os.fspath(checkpoint))) != "checkpoint" or not os.path.isfile(path):
        return None
    try:
        with open(path) as f:
            summary = json.load(f)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"{path} cannot be read ({type(e).__name__}): a damaged run folder") from None
    if not isinstance(summary, dict):
        raise ValueError(f"{path} is not a run's summary (not a mapping): a damaged run folder")
    return summary if isinstance(summary.get("config"), dict) else None  # no settings: judged by its kind


def preset_of_run(summary, where):
    """The preset a run trained in, rebuilt from its summary's settings (task, model, splits, budgets)."""
    config, base = summary["config"], PRESETS.get(summary.get("preset"))
    if base is None:
        raise ValueError(f"{where}: its preset {summary.get('preset')!r} is not one this version has")
    try:
        fields = {}
        for f in dataclasses.fields(base):
            v = config[f.name]
            if f.name == "task":
                v = untyped(summary["task"], where) if "task" in summary else type(base.task)(**v)
            elif f.name == "llm":
                v = LLMConfig(**v) if v is not None else None
            elif isinstance(v, dict):
                v = type(getattr(base, f.name))(**v)
            fields[f.name] = v
        return dataclasses.replace(base, **fields)
    except (KeyError, TypeError) as e:
        raise ValueError(f"{where}: its summary's settings do not fit this version ({type(e).__name__}: "
                         f"{e}); evaluate it with the version that trained it") from None


def checkpoint_kind(path):
    """"pretrained" for an alias, a LoRA adapter or a chat model (its tokenizer has a chat template), else "lab"."""
    p = os.fspath(path)
    if p.lower() in llm.ALIASES or llm.is_adapter(p) or os.path.isfile(os.path.join(p, "chat_template.jinja")):
        return "pretrained"
    try:
        with open(os.path.join(p, "tokenizer_config.json")) as f:
            return "pretrained" if json.load(f).get("chat_template") else "lab"
    except (OSError, ValueError, AttributeError):
        return "lab"


def evaluation_preset(checkpoint, preset="auto"):
    """(preset, how it was chosen) to evaluate `checkpoint` on: its run's own (summary.json beside it),
    refusing another --preset; else --preset, or with "auto" the world of the checkpoint's kind."""
    summary = summary_beside(checkpoint)
    if summary is not None:
        own = preset_of_run(summary, checkpoint)
        if preset != "auto" and preset != own.name:
            raise ValueError(f"{checkpoint} was trained with preset {own.name} ({describe(own)}); --preset "
                             f"{preset} would evaluate it on other questions: leave --preset out")
        return own, "its run's summary"
    kind = checkpoint_kind(checkpoint)
    if preset == "auto":
        import torch
        gpu = torch.cuda.is_available()
        name = ("llm-gpu" if gpu else "llm-cpu") if kind == "pretrained" else ("gpu" if gpu else "cpu")
        return get_preset(name), f"a {kind} checkpoint"
    chosen = get_preset(preset)
    if world_of(chosen).kind != kind:
        other = "llm-cpu or llm-gpu" if kind == "pretrained" else "cpu, gpu or tiny"
        raise ValueError(f"{checkpoint} is a {'chat model' if kind == 'pretrained' else 'lab model'} and preset "
                         f"{chosen.name} asks {'the lab' if kind == 'pretrained' else 'a chat model'}'s questions: "
                         f"use --preset {other} (or leave --preset out)")
    return chosen, "--preset"


def describe(preset):
    """One phrase: the preset's task and model."""
    model = f"model {preset.llm.model}" if preset.llm is not None else "the lab's GPT-2"
    t = preset.task
    task = (f"sums of {t.digits}-digit numbers" + (" in words" if preset.llm is not None else "")
            if hasattr(t, "digits") else f"GSM8K from {t.path or 'the hub'}" if hasattr(t, "instruction")
            else type(t).__name__)
    return f"{task}, {model}"


def say(text):
    """One line on stderr (a world's note on what it does with the user's settings)."""
    print(text, file=sys.stderr, flush=True)
