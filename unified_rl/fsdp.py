"""FSDP2 for a pretrained model that does not fit one device: `fully_shard` per decoder layer.

`LLMConfig.fsdp` under torchrun shards the policy (and the full fine-tuning reference) over the ranks:
each rank keeps a 1/N slice of every weight, gradient and optimizer state (DTensors on dim 0); a
forward pass all-gathers one layer at a time and the backward pass reduce-scatters its gradients
(averaged over the ranks, as distributed.average_gradients does for the unsharded parameters).

Sampling decodes a different number of tokens on each rank (a rank stops when its own rows end), so
it runs on gathered weights (`gathered`): with per-layer all-gathers, one rank would wait for another
that had stopped (measured: a deadlock). Saving gathers full tensors (`full_state_dict`); loading
keeps each rank's slice of them (`load_state_dict`, `load_optimizer_state`).
Reference: https://docs.pytorch.org/docs/stable/distributed.fsdp.fully_shard.html
"""

import contextlib

import torch

from . import distributed


def _is_dtensor(t):
    return hasattr(t, "full_tensor") and hasattr(t, "placements")


def sharded(model) -> bool:
    """Whether `model` (or the policy a LoRA pi_ref runs) holds FSDP2-sharded weights."""
    model = getattr(model, "_policy", model)
    return any(_is_dtensor(p) for p in model.parameters())


def decoder_layers(model):
    """The model's repeated blocks: the classes transformers names in `_no_split_modules` (LlamaDecoderLayer...)."""
    names = set()
    for m in model.modules():  # a LoRA policy (peft) wraps the transformers model that names them
        names |= set(getattr(m, "_no_split_modules", None) or [])
    layers = [m for m in model.modules() if type(m).__name__ in names]
    if not layers:
        raise ValueError(f"fsdp: found no decoder layers in {type(model).__name__} (no _no_split_modules); "
                         "train it without fsdp")
    return layers


def shard(policy, ref):
    """(policy, ref) sharded over the ranks, from rank 0's weights; a LoRA reference (the adapter off) follows."""
    from torch.distributed.fsdp import fully_shard

    if not distributed.launched():
        raise ValueError("fsdp shards a model over the ranks of a torchrun launch; run under torchrun "
                         "(README, 'Beyond one machine') or leave fsdp off")
    distributed.same_start(policy, ref)
    for model in (policy, ref):
        if not any(True for _ in model.parameters()) or hasattr(model, "_policy"):
            continue  # a LoRA pi_ref holds no weights of its own: it runs the sharded policy
        for layer in decoder_layers(model):
            fully_shard(layer)
        fully_shard(model)
    return policy, ref


def _fsdp_modules(model):
    model = getattr(model, "_policy", model)  # llm.AdapterDisabled: the policy it runs
    return [m for m in model.modules() if hasattr(m, "unshard") and hasattr(m, "set_reshard_after_forward")]


@contextlib.contextmanager
def gathered(model):
    """Full weights on every rank while sampling: no collective runs until the block ends."""
    mods = _fsdp_modules(model) if distributed.active() else []
    for m in mods:
        m.set_reshard_after_forward(False)
        m.unshard()
    try:
        yield
    finally:
        for m in mods:
            m.reshard()
            m.set_reshard_after_forward(True)


def full_state_dict(module):
    """module.state_dict() with every sharded tensor gathered whole (a collective under FSDP2)."""
    return {k: (v.full_tensor() if _is_dtensor(v) else v) for k, v in module.state_dict().items()}


def _like(target, full):
    """`full` as target's shard when target is a DTensor (each rank keeps its own slice), else `full`."""
    if not _is_dtensor(target):
        return full
    from torch.distributed.tensor import distribute_tensor

    return distribute_tensor(full.to(target.device, target.dtype), target.device_mesh, target.placements,
                             src_data_rank=None)


def load_state_dict(module, state):
    """module.load_state_dict(state) of full tensors, each rank keeping its slice of the sharded ones."""
    own = module.state_dict()
    module.load_state_dict({k: _like(own[k], v) if k in own else v for k, v in state.items()})


def optimizer_state(opt):
    """opt.state_dict() with every sharded tensor gathered whole."""
    state = opt.state_dict()
    state["state"] = {i: {k: (v.full_tensor() if _is_dtensor(v) else v) for k, v in s.items()}
                      for i, s in state["state"].items()}
    return state


def load_optimizer_state(opt, state):
    """opt.load_state_dict(state) of full tensors, each rank keeping its slice where the parameter is sharded."""
    opt.load_state_dict(state)
    for group in opt.param_groups:
        for p in group["params"]:
            if _is_dtensor(p):
                s = opt.state.get(p, {})
                for k, v in s.items():
                    if torch.is_tensor(v) and not _is_dtensor(v) and v.shape == p.shape:
                        s[k] = _like(p, v)
