"""What minigrad does not have, said at the call: the torch names a learner's script may reach for beyond its scope.

The PyTorch rule says a PyTorch program either gives PyTorch's result or a clear error. A missing name would
otherwise fail as Python's bare "module 'minigrad' has no attribute 'compile'", which does not tell a learner
whether they mistyped or met the edge of the toolkit. So each package that mirrors a torch namespace (minigrad,
minigrad.nn, minigrad.functional, minigrad.optim, ...) ends with a module `__getattr__` that asks `refuse` here:
a name in GAPS gets one line saying minigrad does not have it and what to use instead; any other missing
name gets Python's usual AttributeError, pointing at the table of what is covered (docs/torch_names.md).
Module `__getattr__` runs only for names the module does not define, so nothing here slows a found name.

The line survives every form a program reaches a name by. `torch.nn.Conv2d` raises it as an AttributeError (so
`hasattr` still answers False); `from torch.nn import Conv2d` as an ImportError, since that statement would replace
an AttributeError by its own bare "cannot import name" (`refuse` asks which statement is reading). The names that
are modules in PyTorch (torch.onnx, torch.linalg, ... in MODULES) are importable `RefusedModule`s: `import
torch.onnx` at the top of a script that never exports runs, and each name read from one is refused in one line.
"""

from __future__ import annotations

import dis
import sys
import types
from typing import Any

CONVOLUTION = ("minigrad has no convolutions or pooling (it is built for sequence models); "
               "use PyTorch for images, or write a convolution from reshapes and matmul yourself")
COMPLEX = "minigrad has no complex numbers; minigpt's RoPE rotates pairs of real numbers instead (minigpt/model.py)"
SPARSE = "minigrad has no sparse tensors; use a dense tensor"
COMPILER = ("minigrad has no compiler: drop the call, the model runs eagerly as written "
            "(compiled CPU kernels for the fused ops come with pip install -e '.[fast]')")
AMP = "minigrad has no automatic mixed precision; train in float32 (or cast with x.half() yourself)"
DATA_PARALLEL = ("minigrad has no single-process DataParallel; run `mpiexec -n N` with "
                 "minigrad.distributed.DistributedDataParallel")
BATCH_NORM = ("minigrad has no BatchNorm for images (it has no convolutions); nn.BatchNorm1d normalises (N, C) "
              "and (N, C, L)")

# The names in GAPS that are modules in PyTorch: they import, and refuse each name read from them (RefusedModule).
MODULES: dict[str, tuple[str, ...]] = {
    "minigrad": ("accelerator", "amp", "backends", "distributions", "fft", "jit", "linalg", "multiprocessing", "onnx",
                 "profiler", "serialization", "sparse"),
    "minigrad.backends": ("cuda", "cudnn", "mps"),
    "minigrad.nn": ("parallel",),
    "minigrad.cuda": ("amp",),
    "minigrad.utils.data": ("distributed",),
}

BACKENDS = "minigrad has no backends settings (no TF32, no cuDNN): drop the line"

# module -> {missing name: why, and what to use instead}
GAPS: dict[str, dict[str, str]] = {
    "minigrad": {
        **dict.fromkeys(["conv1d", "conv2d", "conv3d", "max_pool2d", "avg_pool1d"], CONVOLUTION),
        **dict.fromkeys(["complex64", "complex128", "cfloat", "cdouble", "complex", "view_as_complex",
                         "view_as_real", "polar"], COMPLEX),
        **dict.fromkeys(["sparse_coo_tensor", "sparse_csr_tensor", "sparse"], SPARSE),
        **dict.fromkeys(["compile", "jit"], COMPILER),
        **dict.fromkeys(["autocast", "amp"], AMP),
        "bfloat16": "minigrad has no bfloat16 (NumPy has none); use float16 or float32",
        "fft": "minigrad has no fft module; NumPy's numpy.fft works on x.numpy() (without gradients)",
        "linalg": "minigrad has no linalg module; mg.matmul, mg.norm and mg.einsum cover a transformer's needs",
        "backends": BACKENDS,
        "distributions": "minigrad has no distributions module; mg.multinomial, mg.randn and mg.rand draw samples",
        "histogram": "minigrad has no histogram; numpy.histogram(x.numpy()) gives the counts and the bin edges",
        "profiler": "minigrad has no profiler; Python's cProfile, or time.perf_counter around a step, measures it",
        "accelerator": "minigrad has no accelerator module; use device = mg.device('cuda' if "
                       "mg.cuda.is_available() else 'cpu')",
        "onnx": "minigrad has no ONNX export; save the weights with mg.save(model.state_dict(), path) (safetensors)",
        "multiprocessing": "minigrad has no multiprocessing; run `mpiexec -n N python script.py` with "
                           "minigrad.distributed for one process per worker",
        "serialization": "minigrad has no pickle allow-lists: mg.load reads safetensors and never unpickles, so drop "
                         "the safe_globals block and call mg.load(path)",
    },
    "minigrad.nn": {
        **dict.fromkeys(["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d",
                         "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool2d", "Upsample"], CONVOLUTION),
        **dict.fromkeys(["BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"], BATCH_NORM),
        **dict.fromkeys(["DataParallel", "parallel"], DATA_PARALLEL),
    },
    "minigrad.functional": {
        **dict.fromkeys(["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "max_pool1d",
                         "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool2d", "interpolate", "unfold",
                         "fold"], CONVOLUTION),
    },
    "minigrad.Tensor": {
        "histogram": "minigrad has no histogram; numpy.histogram(x.numpy()) gives the counts and the bin edges",
        "pin_memory": "minigrad has no pinned memory; drop .pin_memory(): x.to('cuda') copies from ordinary memory",
        "unique": "minigrad has no unique; numpy.unique(x.numpy()) gives the values (unique has no gradient)",
        "t_": "minigrad has no in-place t_; use x = x.t()",
    },
    "minigrad.nn.Module": {
        "compile": COMPILER,
        **dict.fromkeys(["register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook"],
                        "minigrad has no module hooks; call what the hook would inside forward, or use "
                        "tensor.register_hook for gradients"),
    },
    "minigrad.nn.utils": {
        **dict.fromkeys(["parameters_to_vector", "vector_to_parameters"],
                        "minigrad has no parameters_to_vector; mg.cat([p.reshape(-1) for p in parameters]) builds it"),
    },
    "minigrad.backends": dict.fromkeys(["cuda", "cudnn", "mps"], BACKENDS),
    "minigrad.nn.utils.rnn": dict.fromkeys(
        ["pack_padded_sequence", "pad_packed_sequence", "pack_sequence", "PackedSequence"],
        "minigrad has no packed sequences; pad the batch with pad_sequence and mask (or ignore_index) the padding"),
    "minigrad.cuda": {
        "amp": AMP,
        "is_bf16_supported": "minigrad has no bfloat16 (NumPy has none); use float16 or float32",
        **dict.fromkeys(["set_device", "synchronize"],
                        "minigrad has no device management (it uses CuPy's current GPU); use mg.cuda.is_available() "
                        "and device='cuda'"),
    },
    "minigrad.utils.data": {
        "distributed": "minigrad has no DistributedSampler; under mpiexec give each rank its own slice of the indices "
                       "(Subset(dataset, indices[rank::world_size]))",
        **dict.fromkeys(["IterableDataset", "get_worker_info"],
                        "minigrad has no iterable datasets or worker processes; use a map-style Dataset "
                        "(__getitem__ and __len__) with minigrad.utils.data.DataLoader"),
    },
    "minigrad.optim.lr_scheduler": {
        "ReduceLROnPlateau": "minigrad has no ReduceLROnPlateau; lower the rate yourself with optim.set_lr when the "
                             "validation loss stalls, or use CosineAnnealingLR",
    },
    "minigrad.optim": {
        "LBFGS": "minigrad has no LBFGS; use optim.SGD, optim.Adam or optim.AdamW",
        "RMSprop": "minigrad has no RMSprop; use optim.Adam (RMSprop with momentum on the mean) or optim.SGD",
        "Adagrad": "minigrad has no Adagrad; use optim.Adam or optim.SGD",
        "Adadelta": "minigrad has no Adadelta; use optim.Adam or optim.SGD",
    },
}


def refuse(module: str, name: str) -> AttributeError | ImportError:
    """The error for `module.name` that minigrad does not define: why, and what to use instead, in one line.

    An AttributeError, so that `hasattr` answers False; but an ImportError with the same line when the name is
    read by `from module import name`, which would otherwise replace the AttributeError by its own bare
    "cannot import name" and lose the reason."""
    parent, _, child = module.rpartition(".")
    why = GAPS.get(module, {}).get(name) or (GAPS.get(parent, {}).get(child) if module in refused_modules() else None)
    torch_name = module.replace("minigrad.functional", "torch.nn.functional").replace("minigrad", "torch", 1)
    if why is not None:
        message = f"{torch_name}.{name}: {why}"
        return ImportError(message, name=module) if _read_by_from_import() else AttributeError(message)
    if name.startswith("_") and module in ("minigrad.Tensor", "minigrad.nn.Module"):  # Python's own probes
        return AttributeError(f"{module.rpartition('.')[2]!r} object has no attribute {name!r}")
    owner = "object" if module in ("minigrad.Tensor", "minigrad.nn.Module") else "module"
    return AttributeError(f"{owner} {module!r} has no attribute {name!r} (the torch names minigrad covers are listed "
                          "in docs/torch_names.md)")


def _read_by_from_import() -> bool:
    """Whether the name being refused is read by a `from module import name` statement: the frame that asked the
    module's `__getattr__` (which asked `refuse`, which asks here) is running Python's IMPORT_FROM instruction."""
    try:
        frame = sys._getframe(3)
    except ValueError:  # refuse() called from near the top of the stack: no statement is importing
        return False
    code = frame.f_code.co_code
    return 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] == _IMPORT_FROM


_IMPORT_FROM = dis.opmap["IMPORT_FROM"]


class RefusedModule(types.ModuleType):
    """A torch module minigrad does not have (torch.onnx, torch.linalg, ...). It imports, so that `import
    torch.onnx` at the top of a script that never exports costs nothing; each name read from it is refused in
    one line, by attribute (`mg.onnx.export`) and by `from minigrad.onnx import export` alike."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # Python's own probes (__path__, __file__): a plain answer, no refusal
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        raise refuse(self.__name__, name)


def refused_modules() -> list[str]:
    """The full names of the refused modules: every name of MODULES under its parent."""
    return [f"{parent}.{child}" for parent, children in MODULES.items() for child in children]


def register_refused_modules() -> None:
    """Make each refused module importable (in sys.modules) and an attribute of its parent, as an import would.
    Called once, at the end of minigrad/__init__.py, when every parent exists."""
    for full_name in refused_modules():
        parent, _, child = full_name.rpartition(".")
        module = sys.modules.get(full_name) or RefusedModule(full_name, GAPS[parent][child])
        sys.modules[full_name] = module
        setattr(sys.modules[parent], child, module)
