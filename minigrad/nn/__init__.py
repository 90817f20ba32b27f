"""`minigrad.nn`: modules with parameters, as in `torch.nn`.

module.py holds `Module` and `Parameter` (registration, state_dict, train/eval, to(device));
layers.py the layers a GPT is built from; init.py the initialisers; utils.py gradient clipping.
"""

from minigrad.nn import init, utils
from minigrad.nn.layers import GELU, Dropout, Embedding, LayerNorm, Linear, ModuleList, ReLU, Sequential, Tanh
from minigrad.nn.module import Module, Parameter

__all__ = [
    "GELU", "Dropout", "Embedding", "LayerNorm", "Linear", "Module", "ModuleList", "Parameter", "ReLU",
    "Sequential", "Tanh", "init", "utils",
]
