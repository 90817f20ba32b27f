"""Compatibility: the names that exist so that PyTorch programs run, and that teach nothing new.

The torch.* spellings of the math methods (mathops.py: `mg.exp(x)` is `x.exp()`), the scheduler objects of
`torch.optim.lr_scheduler` (lr_scheduler.py, computing with ../optim/schedules.py's formulas), `torch.utils.data`
(data.py), `nn.MultiheadAttention` (multihead_attention.py), `nn.NLLLoss` (nll_loss.py), `nn.RMSNorm`
(rms_norm.py), `nn.Transformer` and its layers (transformer.py) and `nn.RNN`, `nn.GRU`, `nn.LSTM` and their cells
(recurrent.py), composed from what the core has;
`mg.cuda` (cuda.py); and the one-line refusals of the torch names minigrad does not have (missing.py). They are
reached through their PyTorch names (`mg.*`, `nn.*`, `optim.lr_scheduler`, `minigrad.utils.data`); a learner need
not open this folder. Its size is budgeted (tests/test_code_size.py):
a new name here is a decision.
"""
