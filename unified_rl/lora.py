"""LoRA (peft): adapters on every linear layer but the LM head, pi_ref as the adapter switched off, the
rank a model's layers can use, the memory an adapter takes to train, and how it is saved (its base is
named by `llm.base_reference`).

A rank above a layer's smaller dimension, min(in_features, out_features), adds parameters and no
expressive power (B A then has full rank already): `check_rank` refuses one above every adapted
layer's, and one whose parameters with their gradients and AdamW's two moments would not fit the
memory this machine has free, before the adapter (or, from a model's config, the model) is made.
"""

import contextlib
import importlib
import warnings

import torch

LORA_TARGETS = "all-linear"  # every linear layer but the LM head (peft's name for it)
BYTES_PER_PARAMETER = 16
"""a float32 adapter parameter in training: itself, its gradient and AdamW's two moments, 4 bytes each"""


def adapted_layers(model):
    """(name, in_features, out_features) of the layers LoRA's "all-linear" adapts: every Linear but the
    output embedding (peft's rule)."""
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    return [(name, m.in_features, m.out_features) for name, m in model.named_modules()
            if isinstance(m, torch.nn.Linear) and m is not head]


def adapter_parameters(layers, r) -> int:
    """Parameters of rank-r adapters on `layers`: A is r x in, B is out x r."""
    return sum(r * (n_in + n_out) for _, n_in, n_out in layers)


def available_memory(device="cpu"):
    """Bytes free for a new allocation on `device` (a GPU's free memory; on the CPU, MemAvailable, or a
    container's limit left if lower), or None where it cannot be read."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0]
    free = []
    try:
        with open("/proc/meminfo") as f:
            free += [int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:")]
    except OSError:
        pass
    for limit, used in (("memory.max", "memory.current"), ("memory/memory.limit_in_bytes",
                                                            "memory/memory.usage_in_bytes")):
        try:
            with open(f"/sys/fs/cgroup/{limit}") as a, open(f"/sys/fs/cgroup/{used}") as b:
                free.append(int(a.read()) - int(b.read()))
        except (OSError, ValueError):  # no such cgroup file, or "max" (no limit)
            pass
    return min(free) if free else None


def _gb(n):
    return f"{n / 2**30:.1f} GiB"


def check_rank(layers, r, what="the model", base_bytes=0, device="cpu"):
    """ValueError (one line) for a LoRA rank `r` that `layers` cannot use or this machine cannot hold.

    `base_bytes`: the base weights' bytes when they are not loaded yet (a check from the config).
    """
    if isinstance(r, bool) or not isinstance(r, int) or r < 1:
        raise ValueError(f"LoRA rank must be a whole number >= 1, got {r!r}")
    if not layers:
        raise ValueError(f"{what} has no linear layer for LoRA to adapt")
    n = adapter_parameters(layers, r)
    need = n * BYTES_PER_PARAMETER + base_bytes
    usable = max(min(n_in, n_out) for _, n_in, n_out in layers)
    if r > usable:
        raise ValueError(f"LoRA rank {r} (--lora-r) is more than {what}'s layers can use: a rank above a "
                         f"layer's smaller dimension min(in_features, out_features) adds parameters and no "
                         f"expressive power, and the largest here is {usable}; rank {r} would train {n:,} "
                         f"adapter parameters (at least {_gb(need)} of memory). Use --lora-r {usable} or less "
                         "(8 to 64 is usual)")
    free = available_memory(device)
    if free is not None and need > free:
        base = f" + the base weights {_gb(base_bytes)}" if base_bytes else ""
        raise ValueError(f"LoRA rank {r} (--lora-r) does not fit in memory: {what}'s adapter of {n:,} parameters "
                         f"needs at least {_gb(need)} ({BYTES_PER_PARAMETER} bytes each with its gradient and "
                         f"AdamW's two moments{base}) and {torch.device(device).type} memory has {_gb(free)} "
                         "free; use a smaller --lora-r")
    return n


def check_config(folder, r, dtype, device="cpu", shards=1, what=None):
    """check_rank from the model folder's config.json alone, before its weights are read (the model
    is built on the meta device: shapes, no memory); nothing if the config cannot be read (the load
    that follows says why). `what` names the model (its model_type if not given)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    try:
        config = AutoConfig.from_pretrained(folder, local_files_only=True)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config)
    except Exception:  # an unknown architecture, a damaged config: the load reports it in its own words
        return None
    base = sum(p.numel() for p in model.parameters()) * torch.empty(0, dtype=dtype).element_size()
    what = what or getattr(config, "model_type", None) or "the model"
    return check_rank(adapted_layers(model), r, what, base // shards, device)


def save_adapter(model, tokenizer, path, state_dict=None):
    """Save a LoRA policy's adapter and tokenizer into `path`. Its embeddings are never adapted nor
    resized, so peft's check of the base's vocabulary (a hub look-up and two warnings when the base is
    not a local folder) is not made."""
    model.save_pretrained(path, save_embedding_layers=False,
                          **({"state_dict": state_dict} if state_dict is not None else {}))
    tokenizer.save_pretrained(path)


def _peft():
    try:
        return importlib.import_module("peft")
    except ImportError:
        raise ValueError("LoRA needs the package 'peft': pip install 'unified_rl[llm]'") from None


@contextlib.contextmanager
def _peft_quiet():
    """transformers' FutureWarning that peft triggers on every LoRA load (`is_gradient_checkpointing` is
    deprecated): the user can do nothing about it, so it is not shown (a red box in a notebook)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        yield


def add_lora(model, r=8, alpha=16):
    """The model with LoRA adapters on every linear layer but the LM head; only they train.

    Dropout is 0, so the policy that samples is exactly the one whose log-probs are differentiated. A rank
    the layers cannot use, or whose adapter would not fit in memory, is refused before peft allocates it.
    """
    peft = _peft()
    check_rank(adapted_layers(model), r, getattr(model.config, "model_type", None) or "the model",
               device=next(model.parameters()).device)
    config = peft.LoraConfig(r=r, lora_alpha=alpha, lora_dropout=0.0, target_modules=LORA_TARGETS,
                             task_type="CAUSAL_LM")
    with _peft_quiet():
        return peft.get_peft_model(model, config)


class AdapterDisabled(torch.nn.Module):
    """pi_ref of a LoRA run: the policy's own model with its adapter switched off.

    It holds the policy without registering it, so it adds no parameters to the run's state (the
    base weights never change: they are the checkpoint's) and `requires_grad_(False)` on it leaves
    the adapter trainable. Each forward runs in eval mode (no dropout, a KV cache even under
    gradient checkpointing) and restores the policy's mode after.
    """

    def __init__(self, peft_model):
        super().__init__()
        object.__setattr__(self, "_policy", peft_model)
        anchor = next(peft_model.parameters())
        # `sample` finds a model's device through its parameters: an empty one on the policy's device
        self._anchor = torch.nn.Parameter(anchor.new_empty(0), requires_grad=False)

    @property
    def config(self):
        return self._policy.config

    def forward(self, *args, **kwargs):
        policy = self._policy
        was_training = policy.training
        policy.eval()
        try:
            with policy.disable_adapter():
                return policy(*args, **kwargs)
        finally:
            policy.train(was_training)
