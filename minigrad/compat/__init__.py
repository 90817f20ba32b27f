"""Compatibility: the names that exist so that PyTorch programs run, and that teach nothing new.

The torch.* spellings of the math methods (mathops.py: `mg.exp(x)` is `x.exp()`; moremath.py and tensor_functions.py
the rest of the everyday math; tensor_methods.py attaches their methods to Tensor from above), the scheduler objects
of `torch.optim.lr_scheduler` (lr_scheduler.py, computing with ../optim/schedules.py's formulas), `torch.utils.data`
(data.py, samplers.py), `torch.autograd` at its PyTorch path with PyTorch's custom Function (autograd.py),
`torch.device` (device.py), the legacy types `torch.LongTensor`, ... (legacy_types.py), how a tensor prints
(printing.py), more of `torch.nn.functional` (functional_more.py: pad, kl_div, batch_norm, the L1 losses) and of
`torch.nn` (losses.py, lazy.py's LazyLinear, batch_norm.py, nll_loss.py, rms_norm.py, multihead_attention.py,
transformer.py's nn.Transformer and its layers, recurrent.py's nn.RNN, nn.GRU, nn.LSTM and their cells), composed
from what the core has; `mg.cuda` (cuda.py); and the one-line refusals of the torch names minigrad does not have
(missing.py). They are reached through their PyTorch names (`mg.*`, `nn.*`, `optim.lr_scheduler`,
`minigrad.utils.data`); a learner need not open this folder. Its size is budgeted (tests/test_code_size.py): a new
name here is a decision.
"""
