"""The command line: python -m tutorials.site OUT_DIR [--notebooks DIR] [NN ...].

Quick mode under TUTORIAL_QUICK=1 (the lectures' outputs as the quick runs give them), full mode otherwise.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from minigpt.progress import write_out
from tutorials.site.build import build, lecture_paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tutorials.site", description="把课程生成一个离线可用的网站")
    parser.add_argument("out", type=Path, help="网站写到这个目录（打开其中的 index.html）")
    parser.add_argument("--notebooks", type=Path, help="已经运行过的 Notebook 所在目录（如 .ci/notebooks.py 的 "
                                                       "OUT_DIR/quick），给了就不再运行各讲")
    parser.add_argument("lectures", nargs="*", help="只生成这几讲，如 00 01（默认：全部）")
    args = parser.parse_intermixed_args(argv)
    known = [p.name[:2] for p in lecture_paths()]
    unknown = [n for n in args.lectures if n not in known]
    if unknown:
        print(f"python -m tutorials.site: 没有第 {'、'.join(unknown)} 讲：讲次是 {'、'.join(known)}", file=sys.stderr)
        return 2
    start = time.time()
    try:
        pages = build(args.out, args.notebooks, args.lectures or None)
    except (OSError, ValueError) as error:  # OUT_DIR a file, a notebook that is not JSON, an image not base64
        print(f"python -m tutorials.site: 没有生成网站：{error}", file=sys.stderr)
        return 1
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    try:
        write_out(f"网站：{len(pages)} 页，{size / 2**20:.1f} MiB，用时 {time.time() - start:.0f} 秒 "
                  f"-> {args.out / 'index.html'}\n")
    except OSError as error:  # stdout on a full disk: the site is built, and this says why its line is missing
        print(f"python -m tutorials.site: 网站已生成，但这一行写不出：{error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
