"""`minigrad.optim`: optimizers and learning-rate schedules (being written)."""
