"""minigrad: a tensor reverse-mode autograd engine on NumPy (and CuPy on a GPU), written to be read.

    import minigrad as mg
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad  # tensor([2., 4., 6.])

Three layers, each a folder, and the engine that runs them. Reading order:
1. The engine: tensor/ (Tensor, the first class; tensor/tensor.py), function.py (Function, one op), autograd.py
   (the backward pass in two steps), grad_mode.py (no_grad), higher_order.py (create_graph: backward on tensors).
2. ops/: the primitives, one class per op with forward and backward side by side (start at ops/elementwise.py).
3. fused/: the hand-derived ops (softmax, cross-entropy, layer norm, GELU, embedding, dropout, attention), each
   beside its composed twin (fused/twins.py) and the kernels that implement it faster (fused/kernels/).
4. Built on them: functional.py (F, the losses included), nn/, optim/, then gradcheck.py, serialization.py, viz/.

What sits at the top level, and why: each file here is either a step of the engine above, or one public name's
home that nothing in the layers depends on. backend.py is the devices (NumPy, CuPy, the strict stand-in) and
nothing else; cuda.py is `mg.cuda`, PyTorch's spelling for "is a GPU here?". dtypes.py (type promotion),
factories.py (mg.zeros, ...), random.py (the seed) and mathops.py (mg.exp, mg.sum, ...: torch.* functions)
make tensors or name their methods. anomaly.py (mg.detect_anomaly) and gradcheck.py check the engine from
outside, through its one hook. runtime/ holds the process-wide speed settings (threads, host memory): they
change how fast, never what, so they stay apart from the math. testing/ and viz/ serve tests and drawings.
"""

from minigrad import cuda, distributed, mathops, nn, optim, utils, viz
from minigrad import dtypes as _dtypes
from minigrad.anomaly import AnomalyError, detect_anomaly
from minigrad.autograd import enable_grad, grad, is_grad_enabled, no_grad, set_grad_enabled
from minigrad.dtypes import (
    double,
    dtype,
    finfo,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
)
from minigrad.factories import (
    arange,
    bernoulli,
    eye,
    full,
    full_like,
    linspace,
    multinomial,
    normal,
    ones,
    ones_like,
    rand,
    randint,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from minigrad.function import Function
from minigrad.functional import cat, concat, stack, where
from minigrad.grad_mode import inference_mode
from minigrad.gradcheck import GradcheckError, gradcheck, gradgradcheck
from minigrad.mathops import *  # noqa: F403  (mg.exp, mg.sum, mg.maximum, ...: the torch.* functions)
from minigrad.random import Generator, manual_seed
from minigrad.runtime import get_num_threads, keep_freed_host_memory, set_num_threads
from minigrad.serialization import CheckpointError, load, load_metadata, save
from minigrad.tensor import ShapeError, Tensor

__all__ = [
    "AnomalyError", "CheckpointError", "Function", "GradcheckError", "ShapeError", "Tensor", "arange", "cat", "concat",
    "cuda", "detect_anomaly", "distributed", "enable_grad", "eye", "full", "full_like", "get_num_threads", "grad",
    "gradcheck",
    "gradgradcheck", "is_grad_enabled", "linspace",
    "load", "load_metadata", "manual_seed", "nn", "no_grad", "ones", "ones_like", "optim", "randn", "randn_like",
    "save", "set_grad_enabled", "set_num_threads", "stack", "tensor", "viz", "where", "zeros", "zeros_like",
]
__all__ += mathops.__all__
__all__ += [
    "Generator", "bernoulli", "double", "dtype", "finfo", "float16", "float32", "float64", "get_default_dtype", "half",
    "iinfo", "inference_mode", "int8", "int16", "int32", "int64", "long", "multinomial", "normal", "rand", "randint",
    "randperm", "set_default_dtype", "short", "uint8", "utils",
]

# PyTorch's dtype aliases that share a name with a Python builtin: attributes of the package (mg.float, mg.int,
# mg.bool), kept out of __all__ so that `from minigrad import *` never shadows float, int or bool.
float = float32  # noqa: A001
int = int32  # noqa: A001
bool = _dtypes.bool_  # noqa: A001
__version__ = "0.1.0"

# Freed arrays stay in the heap for the next step instead of costing page faults (see runtime/memory.py).
keep_freed_host_memory()


def __getattr__(name: str) -> object:
    """A torch name minigrad does not have fails here, in one line saying so and what to use instead."""
    from minigrad.utils.missing import refuse

    raise refuse(__name__, name)
