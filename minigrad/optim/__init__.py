"""`minigrad.optim`: optimizers and learning-rate schedules, as in `torch.optim`.

optimizer.py holds the base class (parameter groups, state, state_dict); sgd.py and adam.py the
update rules; schedules.py the learning-rate schedules as functions, lr_scheduler.py as PyTorch's scheduler
objects; checkpoint.py writes optimizer state as safetensors + JSON. A training step reads:

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""

from minigrad.optim import lr_scheduler
from minigrad.optim.adam import Adam, AdamW
from minigrad.optim.checkpoint import flatten_state_dict, unflatten_state_dict
from minigrad.optim.optimizer import Optimizer
from minigrad.optim.schedules import constant_with_warmup, cosine_with_warmup, linear_with_warmup, set_lr
from minigrad.optim.sgd import SGD

__all__ = [
    "SGD", "Adam", "AdamW", "Optimizer", "constant_with_warmup", "cosine_with_warmup", "flatten_state_dict",
    "linear_with_warmup", "lr_scheduler", "set_lr", "unflatten_state_dict",
]


def __getattr__(name: str) -> object:
    """A torch name minigrad does not have fails here, in one line saying so and what to use instead."""
    from minigrad.compat.missing import refuse

    raise refuse(__name__, name)
