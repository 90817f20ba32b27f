"""`minigrad.utils`: helpers around the engine, as `torch.utils`; data.py holds Dataset and DataLoader."""

from minigrad.utils import data

__all__ = ["data"]
