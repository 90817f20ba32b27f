"""`minigrad.nn`: modules with parameters, as in `torch.nn`.

module.py holds `Module` and `Parameter` (registration, state_dict, train/eval, to(device));
layers.py the layers a GPT is built from; activations.py and losses.py the activation and loss modules;
init.py the initialisers; utils.py gradient clipping.
"""

from minigrad.nn import init, utils
from minigrad.nn.activations import ELU, GELU, LeakyReLU, ReLU, Sigmoid, SiLU, Softplus, Tanh
from minigrad.nn.layers import Dropout, Embedding, LayerNorm, Linear, ModuleList, Sequential
from minigrad.nn.losses import CrossEntropyLoss, MSELoss
from minigrad.nn.module import Module, Parameter

__all__ = [
    "ELU", "GELU", "CrossEntropyLoss", "Dropout", "Embedding", "LayerNorm", "LeakyReLU", "Linear", "MSELoss",
    "Module", "ModuleList", "Parameter", "ReLU", "Sequential", "SiLU", "Sigmoid", "Softplus", "Tanh", "init",
    "utils",
]
