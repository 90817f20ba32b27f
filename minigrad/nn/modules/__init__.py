"""`minigrad.nn.modules`, as `torch.nn.modules`: PyTorch's paths to the module classes, for the programs that import
them from there (`from torch.nn.modules.loss import CrossEntropyLoss`). Each file here only re-exports classes
written in ../ (or ../../compat/); a learner reads them there.
"""

from minigrad.nn.modules import (
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
from minigrad.nn.modules.activation import *  # noqa: F403
from minigrad.nn.modules.batchnorm import *  # noqa: F403
from minigrad.nn.modules.container import *  # noqa: F403
from minigrad.nn.modules.dropout import *  # noqa: F403
from minigrad.nn.modules.linear import *  # noqa: F403
from minigrad.nn.modules.loss import *  # noqa: F403
from minigrad.nn.modules.module import *  # noqa: F403
from minigrad.nn.modules.normalization import *  # noqa: F403
from minigrad.nn.modules.rnn import *  # noqa: F403
from minigrad.nn.modules.sparse import *  # noqa: F403
from minigrad.nn.modules.transformer import *  # noqa: F403

__all__ = [name for part in (activation, batchnorm, container, dropout, linear, loss, module, normalization, rnn, sparse,
                                                transformer)
           for name in part.__all__]
