"""The four ways a machine can hold graphviz's two pieces, made on purpose: `fake_dot` puts a `dot` program on PATH
(a Python script that checks it was given DOT text and answers with a small real PNG, an SVG or a PDF), and the
graphviz Python package is hidden in this process with `monkeypatch.setitem(sys.modules, "graphviz", None)`, or in
a child process by `hiding_package`, a folder to put first on PYTHONPATH whose `graphviz` fails to import.

Read next: test_graphviz_combinations.py.
"""

from __future__ import annotations

import os
import stat
import struct
import sys
import zlib
from pathlib import Path


def png_bytes(width: int = 6, height: int = 4) -> bytes:
    """A valid RGB PNG, all white (what Pillow and matplotlib's imread can open)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff\xff\xff" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


SVG = b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="6" height="4"></svg>\n'
DOT_SCRIPT = """#!{python}
import sys
source = sys.stdin.read()
if not source.startswith("digraph") or len(sys.argv) != 2 or not sys.argv[1].startswith("-T"):
    sys.exit("fake dot: expected DOT text on stdin and one -Tformat argument")
answers = {{"png": {png!r}, "svg": {svg!r}, "pdf": b"%PDF-1.4 fake"}}
sys.stdout.buffer.write(answers[sys.argv[1][2:]])
"""


def fake_dot(folder: Path, script: str | None = None) -> Path:
    """A `dot` program in `folder` (put `folder` on PATH); `script` replaces the one that draws."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "dot"
    path.write_text(script or DOT_SCRIPT.format(python=sys.executable, png=png_bytes(), svg=SVG))
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def hiding_package(folder: Path) -> Path:
    """A folder that, first on a child's PYTHONPATH, makes `import graphviz` fail as if it were not installed."""
    package = folder / "graphviz"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text('raise ImportError("No module named \'graphviz\' (hidden by the test)")\n')
    return folder


def child_env(root: Path, dot_folder: Path | None, hide_package: bool, tmp_path: Path) -> dict[str, str]:
    """The environment of a child process: `dot` on PATH only from `dot_folder`, and the package hidden or not."""
    path = [str(dot_folder)] if dot_folder is not None else [str(tmp_path / "no-programs-here")]
    python_path = ([str(hiding_package(tmp_path / "hide"))] if hide_package else []) + [str(root)]
    return {**os.environ, "PATH": os.pathsep.join(path), "PYTHONPATH": os.pathsep.join(python_path),
            "OPENBLAS_NUM_THREADS": "1", "TUTORIAL_QUICK": "1"}
