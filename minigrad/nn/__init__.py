"""`minigrad.nn`: modules with parameters, as in `torch.nn`.

module.py holds `Module` and `Parameter` (registration, state_dict, train/eval, to(device));
layers.py the layers a GPT is built from; structure.py ModuleDict, Identity, Flatten, Unflatten and the softmax
modules; activations.py and losses.py the activation and loss modules; init.py the initialisers; utils/ gradient
clipping. From ../compat/ (PyTorch's names, composed from these): RMSNorm, MultiheadAttention, more losses and
norms, LazyLinear, the recurrent layers and the Transformer modules, all gathered with these under PyTorch's paths
(`torch.nn.modules.loss`, ...) in nn_modules/, whose names this package gives.

`minigrad.nn.functional` is `minigrad.functional` itself (one module object under two names, as in PyTorch), so
`import minigrad.nn.functional as F` and `from minigrad.nn import functional as F` both work.
"""

import sys

import minigrad.functional as functional
from minigrad.compat import nn_modules as modules
from minigrad.compat.nn_modules import *  # noqa: F403  (every module class, as torch.nn has them: see modules.PARTS)
from minigrad.nn import init, utils
from minigrad.nn.module import Parameter
from minigrad.nn.structure import Flatten, Unflatten

# Registered under its second name, so that `import minigrad.nn.functional` finds the same module object (as
# os.path is registered for posixpath) instead of looking for a file nn/functional.py.
sys.modules[__name__ + ".functional"] = functional
# torch.nn.modules' paths (`from torch.nn.modules.loss import CrossEntropyLoss`): compat/nn_modules/, under them.
sys.modules[__name__ + ".modules"] = modules
for _part in modules.PARTS:
    sys.modules[f"{__name__}.modules.{_part.__name__.rpartition('.')[2]}"] = _part

__all__ = [*modules.__all__, "Flatten", "Parameter", "Unflatten", "functional", "init", "modules", "utils"]


def __getattr__(name: str) -> object:
    """A torch name minigrad does not have fails here, in one line saying so and what to use instead."""
    from minigrad.compat.missing import refuse

    raise refuse(__name__, name)
