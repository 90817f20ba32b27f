"""Build the course's website: one page per lecture, an index, the glossary, search; all in one folder.

Each lecture's page is its executed notebook (run by .ci/notebooks.py, as CI runs it, unless the notebooks are
given): the prose with its formulas typeset, the code, what it printed and the figures it drew, the backward
pass animation where a lecture draws one, the notebook to download, the lecture's exercises, and links to the
previous and the next lecture. The pages link to each other and to files beside them only, and the search runs on
an index loaded as a script, so the folder works from a web server, a USB stick or file://, with no network.
The whole course is also one printable page, course.html, printed to course.pdf on request (printable.py).
Bad input (a lecture that does not exist, a notebook that is damaged or not the lecture's, an output folder that
is a file or cannot be written) is a `SiteError`: one line, naming what is wrong. Read next: render.py.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from minigrad.tools.files import make_folder, write_file  # every file of the site: never through a link
from tutorials.site.exercises import exercises_html
from tutorials.site.printable import course_page, make_pdf
from tutorials.site.render import Markdown, code, outputs, pygments_css

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = ROOT / "tutorials"
STATIC = Path(__file__).resolve().parent / "static"
FONT = TUTORIALS / "fonts" / "NotoSansCJKsc-Course.otf"
RUNNER = ROOT / ".ci" / "notebooks.py"
# Reading speed for the index's estimates: Chinese prose, and code read closely.
CHARS_PER_MINUTE, CODE_LINES_PER_MINUTE = 400, 20


class SiteError(Exception):
    """Bad input for the site builder: the message is the one line the command line prints."""


@dataclass
class Page:
    """One built page: its file name, title, and the sections the search index holds."""

    file: str
    title: str
    sections: list[dict] = field(default_factory=list)

    def add(self, anchor: str, heading: str, text: str) -> None:
        if self.sections and self.sections[-1]["a"] == anchor:
            self.sections[-1]["x"] += "\n" + text
        else:
            self.sections.append({"p": self.file, "a": anchor, "t": heading, "x": text})


def lecture_paths(numbers: list[str] | None = None) -> list[Path]:
    """The lectures' files, all of them or those numbered `numbers` ("00", "3"); SiteError for one that is none."""
    paths = sorted(TUTORIALS.glob("[0-9][0-9]_*.py"))
    if numbers is None:
        return paths
    known = {p.name[:2]: p for p in paths}
    wanted = []
    for number in numbers:
        key = f"{int(number):02d}" if str(number).strip().isdigit() else str(number)
        if key not in known:
            raise SiteError(f"没有第 {number} 讲：讲次是 {'、'.join(known)}")
        wanted.append(key)
    return [p for p in paths if p.name[:2] in wanted]


def execute(numbers: list[str], quick: bool, work: Path) -> Path:
    """Run the lectures as notebooks with CI's runner; the folder that holds them (and their figures/)."""
    if not RUNNER.exists():
        raise SiteError(f"找不到 {RUNNER}：在仓库的检出里运行网站生成器，或者用 --notebooks 给出运行过的 Notebook")
    mode = "quick" if quick else "full"
    if subprocess.run([sys.executable, str(RUNNER), "--modes", mode, str(work), *numbers]).returncode != 0:
        raise SiteError("有一讲运行出错了（出错的那一格和它的 Traceback 在上面）：网站没有生成")
    return work / mode


def read_notebook(path: Path, lecture: Path):
    """The executed notebook of `lecture`; SiteError if it is missing, damaged, another lecture's or not run."""
    if not path.is_file():
        raise SiteError(f"{path.parent} 里没有 {lecture.stem} 运行过的 Notebook（{path.name}）")
    try:
        notebook = nbformat.read(path, as_version=4)
    # nbformat raises several kinds (not JSON, not a notebook, a version it does not know, bad text)
    except Exception as error:  # noqa: BLE001
        raise SiteError(f"{path} 读不成 Notebook（{type(error).__name__}: {' '.join(str(error).split())[:120]}）："
                        f"用 .ci/notebooks.py 重新运行 {lecture.name}") from None
    title = re.search(r"^# # (.+)$", lecture.read_text(encoding="utf-8"), re.M)
    first = next((c.source for c in notebook.cells if c.cell_type == "markdown"), "")
    if title and title[1].strip() not in first:
        raise SiteError(f"{path} 不是 {lecture.name} 运行出来的 Notebook（它的第一格文字不是“{title[1].strip()}”）")
    if not any(c.get("outputs") for c in notebook.cells if c.cell_type == "code"):
        raise SiteError(f"{path} 还没有运行过（没有一格有输出）：用 .ci/notebooks.py 运行 {lecture.name}")
    return notebook


def run_times() -> dict[str, tuple[str, str]]:
    """The measured run times in tutorials/README.md's table: file name -> (quick, full)."""
    table = re.findall(r"^\| `(\d\d_\w+\.py)` \| ([^|]+) \| ([^|]+) \|$",
                       (TUTORIALS / "README.md").read_text(encoding="utf-8"), re.M)
    return {name: (quick.strip(), full.strip()) for name, quick, full in table}


def reads_records_of(path: Path) -> list[str]:
    """The lectures whose ladder records this one reads (as .ci/notebooks.py finds them)."""
    return sorted(set(re.findall(r"""ladder\.ensure\(\s*["'](\d\d)["']""", path.read_text(encoding="utf-8"))))


def reading_minutes(notebook) -> int:
    chars = sum(len(re.findall(r"[\u4e00-\u9fff]|[A-Za-z]+", c.source)) for c in notebook.cells
                if c.cell_type == "markdown")
    lines = sum(c.source.count("\n") + 1 for c in notebook.cells if c.cell_type == "code")
    return max(1, math.ceil(chars / CHARS_PER_MINUTE + lines / CODE_LINES_PER_MINUTE))


def link_target(pages: set[str]):
    """Map a link in the course's Markdown to the site: other lectures, the glossary, the index; else None."""
    def target(href: str) -> str | None:
        if re.match(r"^(https?:|mailto:|#)", href):
            return href
        name, _, anchor = href.partition("#")
        name = Path(name).name
        page = {"术语表.md": "glossary.html", "README.md": "index.html"}.get(name, name.removesuffix(".py") + ".html")
        return (page + (f"#{anchor}" if anchor else "")) if page in pages else None
    return target


def pager(nav: list[tuple[str, str]], current: str) -> str:
    """The links to the previous and the next page in the course's order, at the end of a page (as a book has)."""
    files = [file for file, _ in nav]
    k = files.index(current)
    parts = []
    if k > 0:
        file, name = nav[k - 1]
        parts.append(f'<a class="previous" rel="prev" href="{file}">← 上一页：{html.escape(name)}</a>')
    if k + 1 < len(nav):
        file, name = nav[k + 1]
        parts.append(f'<a class="next" rel="next" href="{file}">下一页：{html.escape(name)} →</a>')
    return f'<nav class="pager">{"".join(parts)}</nav>'


def layout(title: str, body: str, nav: list[tuple[str, str]], current: str, toc: str = "") -> str:
    """A whole page: the sidebar (search, the pages, this page's contents), the body, and the previous/next links."""
    links = "\n".join(f'<li{" class=current" if file == current else ""}><a href="{file}">{html.escape(name)}</a></li>'
                      for file, name in nav)
    body += "\n" + pager(nav, current)
    return f"""<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<link rel="stylesheet" href="static/site.css"><link rel="stylesheet" href="static/pygments.css">
</head><body>
<nav class="sidebar">
<p class="home"><a href="index.html">从反向传播到 GPT</a></p>
<input id="search" type="search" placeholder="搜索全站…" aria-label="搜索">
<ol id="results"></ol>
<ul class="pages">
{links}
</ul>
{toc}
</nav>
<main>
{body}
</main>
<script src="search-index.js"></script><script src="static/search.js"></script>
</body></html>
"""


def contents(headings: list[tuple[int, str, str, str]]) -> str:
    """The page's contents: its second-level headings, formulas and code as the page shows them."""
    items = "".join(f'<li><a href="#{anchor}">{shown}</a></li>' for level, _, anchor, shown in headings if level == 2)
    return f'<div class="toc"><p>本讲目录</p><ul>{items}</ul></div>' if items else ""


def lecture_page(path: Path, notebook, notebooks: Path, out: Path, pages: set[str]) -> tuple[str, Page, str]:
    """The HTML body of a lecture's page, its search sections, and its title."""
    stem = path.stem
    markdown = Markdown(link_target(pages))
    page = Page(f"{stem}.html", stem)
    anchor, heading, body = "top", stem, []
    images = out / "images" / stem
    for k, cell in enumerate(notebook.cells):
        if cell.cell_type == "markdown":
            seen = len(markdown.headings)
            body.append(f'<div class="md">{markdown.render(cell.source)}</div>')
            if len(markdown.headings) > seen:
                _, heading, anchor, _ = markdown.headings[-1]
            page.add(anchor, heading, cell.source)
        elif cell.cell_type == "code":
            body.append(f'<div class="cell">{code(cell.source)}'
                        f'{outputs(cell, images, f"cell{k:03d}", f"images/{stem}")}</div>')
            body.append(animation(cell.source, notebooks, stem, images))
            page.add(anchor, heading, cell.source)
    title = markdown.headings[0][1] if markdown.headings else stem
    page.title = title
    for section in page.sections:
        section["t"] = title if section["t"] == stem else f"{title} › {section['t']}"
    make_folder(out / "notebooks")
    write_file(out / "notebooks" / f"{stem}.ipynb", nbformat.writes(notebook) + "\n")
    download = (f'<p class="download"><a href="notebooks/{stem}.ipynb" download>下载这一讲的 Notebook（.ipynb，'
                f"含运行结果）</a> · 源文件 <code>tutorials/{path.name}</code></p>")
    exercises = TUTORIALS / "exercises" / f"lecture{stem[:2]}.py"
    extra = ""
    if exercises.exists():
        extra, text = exercises_html(exercises, stem[:2])
        page.add("exercises", f"练习：lecture{stem[:2]}.py", text)
        markdown.headings.append((2, f"练习：lecture{stem[:2]}.py", "exercises", f"练习：lecture{stem[:2]}.py"))
    if stem[:2] == "00":  # lecture 00's other exercise file: the learner's own engine
        more, text = exercises_html(TUTORIALS / "exercises" / "engine.py", "00", anchor="exercises-engine")
        extra += "\n" + more
        page.add("exercises-engine", "练习：engine.py", text)
        markdown.headings.append((2, "练习：engine.py", "exercises-engine", "练习：engine.py"))
    html_body = download + "\n".join(body) + extra
    return html_body, page, contents(markdown.headings)


def animation(source: str, notebooks: Path, stem: str, images: Path) -> str:
    """After the cell that draws the backward pass frame by frame, its animation (GIF) and slider page."""
    if "backward_frames(" not in source:
        return ""
    for folder in sorted((notebooks / "figures").glob(f"{stem[:2]}_*")):
        if (folder / "backward.gif").exists():
            make_folder(images)
            for name in ("backward.gif", "backward.html"):
                if (folder / name).exists():
                    write_file(images / name, (folder / name).read_bytes())
            slider = (f'，或<a href="images/{stem}/backward.html">用滑块一帧一帧地翻看</a>'
                      if (folder / "backward.html").exists() else "")
            return (f'<figure class="animation"><img src="images/{stem}/backward.gif" alt="反向传播的动画">'
                    f"<figcaption>反向传播的动画：梯度从 loss 出发，按拓扑序的逆序流回参数{slider}。</figcaption>"
                    "</figure>")
    return '<p class="note">（构建网站时没有 Graphviz 的 <code>dot</code>，所以没有反向传播的动画。）</p>'


def index_page(lectures: list[tuple[Path, object, str]], quick: bool, pdf: bool = False) -> tuple[str, Page]:
    times = run_times()
    order = [p.name[:2] for p, _, _ in lectures]
    rows = []
    for k, (path, notebook, title) in enumerate(lectures):
        before = order[k - 1:k]  # the lecture before it, in the course's order
        records = [n for n in reads_records_of(path) if n not in before]
        needs = "、".join(f'<a href="{next(p.stem for p, _, _ in lectures if p.name[:2] == n)}.html">第 {n} 讲</a>'
                         for n in before) or "无"
        if records:
            needs += f"（并读取第 {'、'.join(records)} 讲的记录）"
        quick_time, full_time = times.get(path.name, ("?", "?"))
        rows.append(f'<tr><td>{path.name[:2]}</td><td><a href="{path.stem}.html">{html.escape(title)}</a></td>'
                    f"<td>{needs}</td><td>约 {reading_minutes(notebook)} 分钟</td><td>{quick_time}</td>"
                    f'<td>{full_time}</td><td><a href="notebooks/{path.stem}.ipynb" download>.ipynb</a></td></tr>')
    mode = "快速版（TUTORIAL_QUICK=1）" if quick else "完整版"
    pdf_link = '，或者直接下载 <a href="course.pdf" download>course.pdf</a>（带着课程的字体）' if pdf else ""
    body = f"""<h1>从反向传播到 GPT：每个结论都是一个实验</h1>
<p>这门课的每一讲都是一个可以运行的 Python 文件。这里每一页是一讲运行后的样子：讲义、代码、它打印的结果和画的图，
页末是这一讲的练习。本站的运行结果来自{mode}；在自己的机器上运行见<a href="#run">下面</a>。</p>
<table class="lectures"><thead><tr><th>讲</th><th>标题</th><th>先修</th><th>阅读时间</th><th>运行时间（快速版）</th>
<th>运行时间（完整版）</th><th>Notebook</th></tr></thead><tbody>
{chr(10).join(rows)}
</tbody></table>
<p class="note">阅读时间按每分钟 {CHARS_PER_MINUTE} 字的讲义、{CODE_LINES_PER_MINUTE} 行代码估计；运行时间是 CI
在一台 2 核 Intel Xeon 云主机上实测的墙钟时间（见 <code>tutorials/README.md</code>）。
术语的写法见<a href="glossary.html">术语表</a>。</p>
<p>整门课也是一页，可以打印：<a href="course.html">course.html</a>{pdf_link}。</p>
<h2 id="run">在自己的机器上运行</h2>
<pre>pip install -e ".[viz]"
python tutorials/00_autograd.py                  # 完整版
TUTORIAL_QUICK=1 python tutorials/00_autograd.py # 快速版
python -m tutorials.exercises check 00           # 检查第 00 讲的练习</pre>
"""
    page = Page("index.html", "课程首页")
    page.add("top", "课程首页", "从反向传播到 GPT " + " ".join(t for _, _, t in lectures))
    return body, page


def build(out: Path, notebooks: Path | None = None, numbers: list[str] | None = None,
          quick: bool | None = None, pdf: bool = False) -> list[Path]:
    """Build the site into `out`; returns the HTML pages written. Executes the lectures unless `notebooks`; with
    `pdf`, prints the whole course to `out`/course.pdf too (printable.py)."""
    quick = os.environ.get("TUTORIAL_QUICK") == "1" if quick is None else quick
    paths = lecture_paths(numbers)
    writable(out)
    if notebooks is None:
        with tempfile.TemporaryDirectory(prefix="site-notebooks-") as work:
            return build(out, execute([p.name[:2] for p in paths], quick, Path(work)), numbers, quick, pdf)
    if not notebooks.is_dir():
        raise SiteError(f"--notebooks {notebooks}：没有这个文件夹")
    read = {p: read_notebook(notebooks / f"{p.stem}.ipynb", p) for p in paths}
    try:
        built = _write_site(out, notebooks, paths, read, quick, pdf)
    except OSError as error:
        raise SiteError(f"网站写不进 {out}（{error.filename or out}：{error.strerror}）") from None
    if pdf:
        try:
            make_pdf(out)
        except RuntimeError as error:
            raise SiteError(str(error)) from None
    return built


def writable(out: Path) -> None:
    """SiteError unless `out` is, or can become, a folder the site can be written into."""
    if out.exists() and not out.is_dir():
        raise SiteError(f"输出目录 {out} 是一个文件，不是文件夹：换一个目录")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".site-write-test"
        probe.write_text("", encoding="utf-8")
        probe.unlink()
    except OSError as error:
        raise SiteError(f"输出目录 {out} 写不进去（{error.strerror}）：换一个可写的目录") from None


def _write_site(out: Path, notebooks: Path, paths: list[Path], read: dict, quick: bool, pdf: bool) -> list[Path]:
    """Write every page, the assets and the search index into `out`; the HTML pages written."""
    static = out / "static"
    make_folder(static)
    for asset in STATIC.iterdir():
        write_file(static / asset.name, asset.read_bytes())
    write_file(static / FONT.name, FONT.read_bytes())
    write_file(static / "LICENSE-font.txt", (FONT.parent / "LICENSE").read_bytes())
    write_file(static / "pygments.css", pygments_css())

    files = {f"{p.stem}.html" for p in paths} | {"index.html", "glossary.html"}
    built, pages, lectures = [], [], []
    for path in paths:
        notebook = read[path]
        body, page, toc = lecture_page(path, notebook, notebooks, out, files)
        lectures.append((path, notebook, page.title, body, toc))
        pages.append(page)
    nav = ([("index.html", "课程首页")] + [(f"{p.stem}.html", title) for p, _, title, _, _ in lectures]
           + [("glossary.html", "术语表")])
    for path, _, title, body, toc in lectures:
        built.append(out / f"{path.stem}.html")
        write_file(built[-1], layout(title, body, nav, built[-1].name, toc))

    glossary = Markdown(link_target(files))
    source = (TUTORIALS / "术语表.md").read_text(encoding="utf-8")
    body = glossary.render(source)
    glossary_page = Page("glossary.html", "术语表")
    glossary_page.add("top", "术语表", source)
    built.append(out / "glossary.html")
    write_file(built[-1], layout("术语表", body, nav, "glossary.html"))

    body, index = index_page([(p, nb, t) for p, nb, t, _, _ in lectures], quick, pdf)
    built.append(out / "index.html")
    write_file(built[-1], layout("从反向传播到 GPT", body, nav, "index.html"))

    sections = [s for page in [index, *pages, glossary_page] for s in page.sections]
    write_file(out / "search-index.js", "window.SEARCH_INDEX = " + json.dumps(sections, ensure_ascii=False) + ";\n")
    built.append(out / "course.html")
    write_file(built[-1], course_page([(title, body) for _, _, title, body, _ in lectures], quick))
    return built
