"""Moving weights between minigpt and nanoGPT / PyTorch, in the GPT-2 state_dict layout.

Our parameter names and shapes are nanoGPT's (`transformer.h.0.attn.c_attn.weight`, Linear weights
(out, in)), so the conversion is a renaming-free copy: no transposes are needed (Hugging Face's GPT-2
stores its Conv1D weights as (in, out) and would need them). Only the configurations nanoGPT itself can
express move across: learned positions and pre-LN; anything else is a clear error.
Read next: model.py, where the reading order ends; testing/torch_gpt.py is its PyTorch twin.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigpt.config import GPTConfig
from minigpt.model import GPT
from minigrad.tensor import Tensor


def _check_nanogpt_config(config: GPTConfig) -> None:
    problems = []
    if config.pos_encoding != "learned":
        problems.append(f"pos_encoding={config.pos_encoding!r} (nanoGPT has only 'learned')")
    if config.norm_position != "pre":
        problems.append(f"norm_position={config.norm_position!r} (nanoGPT has only 'pre')")
    if problems:
        raise ValueError("nanoGPT interop supports learned-position, pre-LN models; this config has "
                         + " and ".join(problems))


def _to_numpy(value: Any) -> np.ndarray:
    """A host NumPy array from a NumPy array, a minigrad Tensor or a PyTorch tensor (without importing torch)."""
    if isinstance(value, Tensor):
        return value.numpy()
    if hasattr(value, "detach"):  # a torch.Tensor
        return value.detach().cpu().numpy()
    return np.asarray(value)


def from_nanogpt(state_dict: dict[str, Any], config: GPTConfig, device: Any = None, dtype: Any = None) -> GPT:
    """A GPT with the weights of a nanoGPT / GPT-2 layout `state_dict` (values NumPy arrays, Tensors or torch tensors).

    nanoGPT's non-trained `attn.bias` causal-mask buffers are skipped. A missing or unexpected weight, or a
    shape mismatch, raises an error naming it. `dtype` (e.g. np.float64) and `device` convert the model.
    """
    _check_nanogpt_config(config)
    model = GPT(config)
    if dtype is not None or device is not None:
        model.to(device=device, dtype=dtype)
    weights = {name: _to_numpy(value) for name, value in state_dict.items()
               if not (name.endswith(".attn.bias") and name.startswith("transformer.h."))}
    if config.tie_weights and "lm_head.weight" in weights and "transformer.wte.weight" in weights:
        if not np.array_equal(weights["lm_head.weight"], weights["transformer.wte.weight"]):
            raise ValueError("from_nanogpt: config.tie_weights is True but lm_head.weight differs from "
                             "transformer.wte.weight")
    model.load_state_dict(weights, strict=True)
    return model


def to_nanogpt(model: GPT) -> dict[str, np.ndarray]:
    """The model's weights as host NumPy arrays named as nanoGPT / GPT-2 name them (lm_head.weight included)."""
    _check_nanogpt_config(model.config)
    return {name: tensor.numpy() for name, tensor in model.state_dict().items()}
