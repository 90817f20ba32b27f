"""The course as a website: `python -m tutorials.site OUT_DIR` (needs the extra: pip install -e ".[site]").

build.py runs the lectures as notebooks (or takes executed ones: --notebooks) and writes the pages; render.py
turns cells into HTML (formulas as MathML); exercises.py adds each lecture's exercises; static/ holds the style
and the search script. Read next: build.py.
"""
