"""The record builders: the maintainer's scripts that make what the course ships, each run as a module.

    OPENBLAS_NUM_THREADS=1 python -m tutorials.builders.train_pretrained    # tutorials/pretrained/shakespeare/
    OPENBLAS_NUM_THREADS=1 python -m tutorials.builders.scaling_runs        # tutorials/records/scaling.json
    OPENBLAS_NUM_THREADS=1 python -m tutorials.builders.crossing_run        # tutorials/records/crossing.json
    python -m tutorials.builders.kneser_ney_run out/kneser-ney              # its record, pretrained/kneser_ney/
    OPENBLAS_NUM_THREADS=1 python -m tutorials.builders.ablation_staircase  # tutorials/records/ablation_full.json

They are the course's code, so they live in the course: each imports the tutorials module whose numbers it
records (scaling.py, crossing.py, kneser_ney.py, ablation.py). The lectures read the records and never run these.
Read next: the module docstring of the builder whose record a lecture cites.
"""
