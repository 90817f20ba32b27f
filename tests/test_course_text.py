"""What the lectures say about themselves stays true: how many exercises each has, and where its run time is.

Run times are measured once, in tutorials/README.md's table; a lecture's header points there instead of
repeating a figure that would go stale.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tutorials.exercises import LECTURES

TUTORIALS = Path(__file__).resolve().parent.parent / "tutorials"
FILES = sorted(TUTORIALS.glob("0[0-9]_*.py"))


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_a_lecture_counts_its_exercises_right(path):
    text = path.read_text(encoding="utf-8")
    counts = {int(n) for n in re.findall(r"(\d+) 道练习", text)}
    # a lecture without exercises of its own claims none
    assert counts == ({len(LECTURES[path.name[:2]])} if path.name[:2] in LECTURES else set()), (path.name, counts)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_a_lectures_header_points_to_the_readmes_run_times(path):
    header = path.read_text(encoding="utf-8").split("# %%\n", 1)[0]
    assert "**用时**：运行本讲的耗时见 `tutorials/README.md` 的表" in header, path.name
    assert not re.search(r"快速版约|完整版约", header), path.name  # a figure here would drift from the table
    readme = (TUTORIALS / "README.md").read_text(encoding="utf-8")
    assert f"| `{path.name}` |" in readme
