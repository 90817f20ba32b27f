"""Tools around the engine, off the core path: `gradcheck` and `gradgradcheck` (finite differences),
`detect_anomaly` (the op that first made a NaN), and `save` / `load` (safetensors, never pickle).

Each is reached through `mg.*`; none is needed to follow a gradient. Read next: gradcheck.py.
"""
