"""`torch.nn.modules.activation`'s path: the activation modules (../activations.py, ../structure.py) and
`MultiheadAttention` (../../compat/multihead_attention.py)."""

from minigrad.compat.multihead_attention import MultiheadAttention
from minigrad.nn.activations import ELU, GELU, LeakyReLU, ReLU, Sigmoid, SiLU, Softplus, Tanh
from minigrad.nn.structure import LogSoftmax, Softmax

__all__ = ["ELU", "GELU", "LeakyReLU", "LogSoftmax", "MultiheadAttention", "ReLU", "SiLU", "Sigmoid", "Softmax",
           "Softplus", "Tanh"]
