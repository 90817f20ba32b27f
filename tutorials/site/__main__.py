"""The command line: python -m tutorials.site OUT_DIR [--notebooks DIR] [--pdf] [NN ...].

Quick mode under TUTORIAL_QUICK=1 (the lectures' outputs as the quick runs give them), full mode otherwise.
`--pdf` prints the whole course to OUT_DIR/course.pdf with headless Chromium. Bad input is one line (exit 2).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tutorials.site.build import SiteError, build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tutorials.site", description="把课程生成一个离线可用的网站")
    parser.add_argument("out", type=Path, help="网站写到这个目录（打开其中的 index.html）")
    parser.add_argument("--notebooks", type=Path, help="已经运行过的 Notebook 所在目录（如 .ci/notebooks.py 的 "
                                                       "OUT_DIR/quick），给了就不再运行各讲")
    parser.add_argument("--pdf", action="store_true", help="再用 Chromium 把整门课打印成 OUT_DIR/course.pdf")
    parser.add_argument("lectures", nargs="*", help="只生成这几讲，如 00 01（默认：全部）")
    args = parser.parse_intermixed_args(argv)
    start = time.time()
    try:
        pages = build(args.out, args.notebooks, args.lectures or None, pdf=args.pdf)
    except SiteError as error:
        print(f"python -m tutorials.site: 错误：{error}", file=sys.stderr)
        return 2
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(f"网站：{len(pages)} 页，{size / 2**20:.1f} MiB，用时 {time.time() - start:.0f} 秒",
          f"-> {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
