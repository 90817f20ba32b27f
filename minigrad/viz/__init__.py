"""`minigrad.viz`: drawing computation graphs and plots (being written)."""
