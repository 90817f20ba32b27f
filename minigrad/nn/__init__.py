"""`minigrad.nn`: modules with parameters, as in `torch.nn`.

module.py holds `Module` and `Parameter` (registration, state_dict, train/eval, to(device));
layers.py the layers a GPT is built from; structure.py ModuleDict, Identity, Flatten, Unflatten and the softmax
modules; activations.py and losses.py the activation and loss modules; init.py the initialisers; utils/ gradient
clipping and padding; modules/ PyTorch's paths to these classes (`torch.nn.modules.loss`, ...). From ../compat/
(PyTorch's names, composed from these): RMSNorm, MultiheadAttention, the losses and norms PyTorch programs ask for,
LazyLinear, the recurrent layers (RNN, GRU, LSTM and their cells) and the Transformer modules.

`minigrad.nn.functional` is `minigrad.functional` itself (one module object under two names, as in PyTorch), so
`import minigrad.nn.functional as F` and `from minigrad.nn import functional as F` both work.
"""

import sys

import minigrad.functional as functional
from minigrad.compat.batch_norm import BatchNorm1d, LazyBatchNorm1d
from minigrad.compat.lazy import LazyLinear
from minigrad.compat.losses import BCELoss, BCEWithLogitsLoss, HuberLoss, KLDivLoss, L1Loss, SmoothL1Loss
from minigrad.compat.multihead_attention import MultiheadAttention
from minigrad.compat.nll_loss import NLLLoss
from minigrad.compat.recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from minigrad.compat.rms_norm import RMSNorm
from minigrad.compat.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from minigrad.nn import init, modules, utils
from minigrad.nn.activations import ELU, GELU, LeakyReLU, ReLU, Sigmoid, SiLU, Softplus, Tanh
from minigrad.nn.layers import Dropout, Embedding, LayerNorm, Linear, ModuleList, Sequential
from minigrad.nn.losses import CrossEntropyLoss, MSELoss
from minigrad.nn.module import Module, Parameter
from minigrad.nn.structure import Flatten, Identity, LogSoftmax, ModuleDict, Softmax, Unflatten

# Registered under its second name, so that `import minigrad.nn.functional` finds the same module object (as
# os.path is registered for posixpath) instead of looking for a file nn/functional.py.
sys.modules[__name__ + ".functional"] = functional

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "CrossEntropyLoss", "Dropout", "ELU", "Embedding", "Flatten",
    "GELU", "GRU", "GRUCell", "HuberLoss", "Identity", "KLDivLoss", "L1Loss", "LSTM", "LSTMCell", "LayerNorm",
    "LazyBatchNorm1d", "LazyLinear", "LeakyReLU", "Linear", "LogSoftmax", "MSELoss", "Module", "ModuleDict",
    "ModuleList", "MultiheadAttention", "NLLLoss", "Parameter", "RMSNorm", "RNN", "RNNCell", "ReLU", "Sequential",
    "SiLU", "Sigmoid", "SmoothL1Loss", "Softmax", "Softplus", "Tanh", "Transformer", "TransformerDecoder",
    "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer", "Unflatten", "functional", "init",
    "modules", "utils",
]


def __getattr__(name: str) -> object:
    """A torch name minigrad does not have fails here, in one line saying so and what to use instead."""
    from minigrad.compat.missing import refuse

    raise refuse(__name__, name)
