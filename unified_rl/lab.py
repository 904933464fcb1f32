"""The world a run trains in: the preset's questions, a tokenizer, the policy and its frozen reference.

`make_lab` builds one from a preset and, optionally, a checkpoint; a checkpoint is checked before it
is trusted (its config and weights load, its tokenizer is there and fits the model's vocabulary), so
a broken one is a one-line error rather than a run that silently scores 0.
"""

import copy
import os
import random
from dataclasses import dataclass

import numpy as np
import torch

from .llm import lab_models
from .models import build_policy, check_source, load_policy, pick_device
from .presets import get_preset
from .task import ALPHABET, make_splits
from .tokenizer import build_tokenizer, load_tokenizer


def seed_everything(seed):
    """Seed Python's, NumPy's and torch's global RNGs (CUDA's included)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


@dataclass
class Lab:
    """The world a run trains in: questions, tokenizer, the policy and its frozen reference."""

    preset: object
    tokenizer: object
    policy: torch.nn.Module
    ref: torch.nn.Module  # frozen copy of the starting policy: pi_sft / pi_ref
    device: torch.device
    seed: int
    sft_problems: list
    rl_problems: list
    test_problems: list


def check_tokenizer_fits(tokenizer, policy, where):
    """Raise a ValueError if `tokenizer` cannot be the one `policy` was trained with."""
    vocab = policy.get_input_embeddings().weight.shape[0]
    if len(tokenizer) > vocab:
        raise ValueError(f"{where}: the tokenizer has {len(tokenizer)} tokens but the model only {vocab}; "
                         "they do not belong together")
    ids = tokenizer(ALPHABET, add_special_tokens=False)["input_ids"]
    if tokenizer.unk_token_id is not None and tokenizer.unk_token_id in ids:
        raise ValueError(f"{where}: the tokenizer cannot write the task's characters {ALPHABET!r}")
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


def make_lab(preset="auto", seed=0, init=None, device=None):
    """Questions from the preset's split, and a policy: `init` (a checkpoint path) or a fresh one."""
    preset = get_preset(preset)
    device = pick_device(device)
    if device.type == "cpu" and preset.name in ("cpu", "tiny") and "OMP_NUM_THREADS" not in os.environ:
        # a 100K-parameter model gains nothing from a second thread, and on busy cores (Binder, a
        # laptop running JupyterLab) two threads fighting made notebooks 3-10x slower; set
        # OMP_NUM_THREADS to choose otherwise
        torch.set_num_threads(1)
    if hasattr(preset.task, "splits"):  # a task in words (words.py)
        train_pool, test = preset.task.splits(preset.n_rl, preset.n_test, seed=preset.seed)
    else:
        train_pool, test = make_splits(preset.task, preset.n_rl, preset.n_test, seed=preset.seed)
    if preset.llm is not None:  # a pretrained chat model; pi_ref as llm.prepare_policy makes it
        tokenizer, policy, ref = lab_models(init, preset.llm, device)
        check_tokenizer_fits(tokenizer, policy, init or preset.llm.model)
        return Lab(preset, tokenizer, policy, ref, device, seed,
                   train_pool[: preset.n_sft], train_pool, test)
    if init is None:
        tokenizer = build_tokenizer()
        policy = build_policy(tokenizer, preset.model)
    else:
        tokenizer, policy = load_checkpoint(init)
    policy.to(device)
    ref = copy.deepcopy(policy).eval().requires_grad_(False)
    return Lab(preset, tokenizer, policy, ref, device, seed,
               train_pool[: preset.n_sft], train_pool, test)
