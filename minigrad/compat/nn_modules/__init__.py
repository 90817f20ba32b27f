"""`minigrad.nn.modules`, as `torch.nn.modules`: PyTorch's paths to the module classes, for the programs that import
them from there (`from torch.nn.modules.loss import CrossEntropyLoss`). Each file here only re-exports classes
written in ../../nn/ (or ../); a learner reads them there. minigrad/nn/__init__.py registers them under
PyTorch's paths (minigrad.nn.modules, minigrad.nn.modules.loss, ...).
"""

from minigrad.compat.nn_modules import (
    activation,
    batchnorm,
    container,
    dropout,
    linear,
    loss,
    module,
    normalization,
    rnn,
    sparse,
    transformer,
)
from minigrad.compat.nn_modules.activation import *  # noqa: F403
from minigrad.compat.nn_modules.batchnorm import *  # noqa: F403
from minigrad.compat.nn_modules.container import *  # noqa: F403
from minigrad.compat.nn_modules.dropout import *  # noqa: F403
from minigrad.compat.nn_modules.linear import *  # noqa: F403
from minigrad.compat.nn_modules.loss import *  # noqa: F403
from minigrad.compat.nn_modules.module import *  # noqa: F403
from minigrad.compat.nn_modules.normalization import *  # noqa: F403
from minigrad.compat.nn_modules.rnn import *  # noqa: F403
from minigrad.compat.nn_modules.sparse import *  # noqa: F403
from minigrad.compat.nn_modules.transformer import *  # noqa: F403

PARTS = (activation, batchnorm, container, dropout, linear, loss, module, normalization, rnn, sparse, transformer)
__all__ = [name for part in PARTS for name in part.__all__]
