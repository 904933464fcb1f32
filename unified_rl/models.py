"""The lab's models: a small GPT-2 policy built from a config, plus value and reward models.

The policy is a plain `transformers.GPT2LMHeadModel` (nothing downloaded), so it saves and loads
with `save_pretrained` / `from_pretrained`, and `load_policy` accepts any causal LM path instead.
`ValueModel` (PPO's critic, DeepSeekMath eq 15-18) and `rewards.model.RewardModel` (§4.1.2's learned
reward) are a transformer backbone with a linear head (`_ScalarHeadModel`); they save the backbone
with `save_pretrained` and the head beside it.
References: https://huggingface.co/docs/transformers/model_doc/gpt2
"""

import copy
import json
import os
import threading
from dataclasses import dataclass

import torch
import torch.nn as nn
from transformers import AutoModel, AutoModelForCausalLM, GPT2Config, GPT2LMHeadModel

from . import distributed


@dataclass(frozen=True)
class ModelConfig:
    """Size of the GPT-2 policy."""

    n_layer: int = 2
    """transformer blocks"""
    n_embd: int = 64
    """width of the residual stream"""
    n_head: int = 4
    """attention heads per block (must divide n_embd)"""
    n_positions: int = 64
    """longest prompt + response, in tokens, the model can read"""


def pick_device(prefer=None) -> torch.device:
    """`prefer` if given (checked to exist), else CUDA (a torchrun rank's cuda:LOCAL_RANK) when available, else CPU."""
    if prefer is not None:
        device = torch.device(prefer)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device {prefer!r} was asked for but CUDA is not available")
        return device
    return distributed.device() or torch.device("cuda" if torch.cuda.is_available() else "cpu")


def position_ids_of(attention_mask: torch.Tensor) -> torch.LongTensor:
    """Positions that skip left padding: 0 at each row's first real token."""
    return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)  # (B, L)


def build_policy(tokenizer, cfg: ModelConfig = ModelConfig()) -> GPT2LMHeadModel:
    """A freshly initialised GPT-2 sized by `cfg` for `tokenizer`'s vocabulary; dropout 0."""
    if cfg.n_embd % cfg.n_head:
        raise ValueError(f"n_head={cfg.n_head} must divide n_embd={cfg.n_embd}")
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=cfg.n_positions,
        n_embd=cfg.n_embd,
        n_layer=cfg.n_layer,
        n_head=cfg.n_head,
        # dropout 0: the policy that samples is exactly the one whose log-probs we differentiate
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return GPT2LMHeadModel(config)


def _short(e, limit=300):
    """The first line of an exception's message, for a one-line error; a long one cut after its last whole
    sentence (or word) within `limit` characters, never inside a word."""
    lines = str(e).strip().splitlines()
    text = lines[0] if lines else ""
    if len(text) > limit:
        cut = text[:limit + 1]
        end = cut.rfind(". ")
        space = cut.rfind(" ")
        text = cut[:end + 1] if end > limit // 2 else (cut[:space] if space > 0 else cut[:limit]).rstrip(",;:") + " …"
    return f"{type(e).__name__}: {text}"


def check_source(name_or_path, what="a checkpoint"):
    """Raise a ValueError naming the problem unless `name_or_path` may hold a model (a folder or hub id).

    A folder must hold a config.json that parses; a missing path with more than one "/" (or one
    starting with "." or "/") cannot be a hub id, so it is reported as missing, not looked up online.
    """
    p = os.fspath(name_or_path)
    if os.path.isdir(p):
        if not os.listdir(p):
            raise ValueError(f"{p} is an empty folder, not {what}")
        cfg = os.path.join(p, "config.json")
        if not os.path.isfile(cfg):
            raise ValueError(f"{p} has no config.json, so it is not {what}")
        try:
            with open(cfg) as f:
                json.load(f)
        except (ValueError, UnicodeDecodeError) as e:
            raise ValueError(f"{cfg} is corrupted or truncated ({_short(e)})") from None
    elif os.path.exists(p):
        raise ValueError(f"{p} is a file; {what} is a folder")
    elif p.count("/") > 1 or p.startswith((".", "/", "~")) or os.sep in p.replace("/", ""):
        raise ValueError(f"no checkpoint at {p!r}")
    return p


_LOADING = threading.Lock()
"""transformers builds a model on its `meta` device inside a process-wide context: two threads loading at once
(ranks simulated as threads, distributed.simulate) get each other's empty weights, so one loads at a time."""


def load_policy(name_or_path, device=None):
    """Any causal LM by path or hub name (our checkpoints included), on `device`; ValueError if unloadable."""
    p = check_source(name_or_path)
    try:
        with _LOADING:
            model = AutoModelForCausalLM.from_pretrained(p)
    except Exception as e:  # truncated weights, an unreachable hub: one line naming what and where
        raise ValueError(f"could not load a model from {p!r}: {_short(e)}") from None
    return model.to(pick_device(device))


def save_checkpoint(model, tokenizer, path, state_dict=None):
    """Save a model (policy, ValueModel or RewardModel) and its tokenizer into `path`; state_dict: the
    model's full weights where it holds only a shard of them (FSDP2)."""
    model.save_pretrained(path, **({"state_dict": state_dict} if state_dict is not None else {}))
    tokenizer.save_pretrained(path)


class _ScalarHeadModel(nn.Module):
    """A transformer backbone with a linear head giving one number per position."""

    HEAD_FILE = "head.pt"

    def __init__(self, backbone: nn.Module):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Linear(backbone.config.hidden_size, 1)
        nn.init.zeros_(self.head.weight)  # start from a constant: no random preference at step 0
        nn.init.zeros_(self.head.bias)

    @classmethod
    def from_policy(cls, policy):
        """A copy of the policy's transformer (without its LM head) under a fresh head.

        A LoRA policy (peft) is unwrapped first: the copy keeps its adapters, which then train
        with the head while the copied base weights stay frozen."""
        model = policy.get_base_model() if hasattr(policy, "get_base_model") else policy
        return cls(copy.deepcopy(model.base_model))

    @classmethod
    def from_config(cls, config):
        """A freshly initialised backbone of the architecture in `config` (e.g. a GPT2Config)."""
        return cls(AutoModel.from_config(config))

    @classmethod
    def from_pretrained(cls, path, device=None):
        """Load what `save_pretrained` wrote."""
        model = cls(AutoModel.from_pretrained(path))
        head = torch.load(os.path.join(path, cls.HEAD_FILE), map_location="cpu", weights_only=True)
        model.head.load_state_dict(head)
        return model.to(pick_device(device))

    def save_pretrained(self, path):
        """Backbone with `save_pretrained` (config included), the head as a state dict beside it."""
        self.backbone.save_pretrained(path)
        torch.save(self.head.state_dict(), os.path.join(path, self.HEAD_FILE))

    def per_position(self, input_ids, attention_mask) -> torch.Tensor:
        """The head read at every position."""
        hidden = self.backbone(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids_of(attention_mask),
        ).last_hidden_state  # (B, L, H)
        return self.head(hidden).squeeze(-1)  # (B, L)


class ValueModel(_ScalarHeadModel):
    """PPO's critic: V at every position; values[:, t] is the value after reading tokens 0..t.

    So `values[:, :-1]` lines up with the targets `input_ids[:, 1:]`, i.e. with `mask` and `logp`.
    """

    def forward(self, input_ids, attention_mask) -> torch.Tensor:
        """(B, L) values."""
        return self.per_position(input_ids, attention_mask)
