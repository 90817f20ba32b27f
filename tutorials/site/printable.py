"""The whole course as one printable page (course.html), and that page printed to a PDF (course.pdf).

d2l-zh's readers have a PDF; ours get one from the same pages the site shows, so that the two never differ: the
lectures' bodies one after another under a title page and a table of contents, styled by the site's own CSS, whose
print rules (site.css, `@media print`) drop the sidebar, wrap long code and start each lecture on a new page.
Headless Chromium prints it (`make_pdf`), with the network off and the course's font embedded in the PDF, as it
embeds every web font it draws with. Without Chromium, course.html printed from any browser gives the same pages.
Read next: build.py.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def course_page(lectures: list[tuple[str, str]], quick: bool) -> str:
    """course.html: a title page, the contents, and each lecture's body (title, HTML) in its own <article>."""
    contents = "".join(f'<li><a href="#lecture-{k}">{html.escape(title)}</a></li>' for k, (title, _) in
                       enumerate(lectures))
    articles = "\n".join(f'<article class="lecture" id="lecture-{k}">\n{_without_ids(body, k)}\n</article>'
                         for k, (_, body) in enumerate(lectures))
    mode = "快速版（TUTORIAL_QUICK=1）" if quick else "完整版"
    return f"""<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8">
<title>从反向传播到 GPT：整门课</title>
<link rel="stylesheet" href="static/site.css"><link rel="stylesheet" href="static/pygments.css">
</head><body class="printable">
<main>
<section class="title-page">
<h1>从反向传播到 GPT：每个结论都是一个实验</h1>
<p>整门课，一讲接一讲：讲义、代码、它运行时打印的结果和画的图，以及每讲的练习。运行结果来自{mode}。</p>
<p class="note">网页版的每一页都在这个文件夹里（index.html）；这一页给打印用：浏览器的“打印 → 另存为 PDF”，
或者 <code>python -m tutorials.site 目录 --pdf</code> 生成 course.pdf。</p>
<h2>目录</h2>
<ol class="contents">{contents}</ol>
</section>
{articles}
</main>
</body></html>
"""


def _without_ids(body: str, k: int) -> str:
    """A lecture's body with its anchors made unique in the one page (each lecture has a section 练习, ...)."""
    body = re.sub(r'\bid="([^"]+)"', lambda m: f'id="l{k}-{m[1]}"', body)
    return re.sub(r'\bhref="#([^"]+)"', lambda m: f'href="#l{k}-{m[1]}"', body)


def browser() -> str | None:
    """A Chromium (or Chrome) on this machine, or None."""
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def make_pdf(out: Path, timeout: float = 600.0) -> Path:
    """Print `out`/course.html to `out`/course.pdf with headless Chromium (network off); RuntimeError, in one line,
    without a browser or when printing fails."""
    binary = browser()
    if binary is None:
        raise RuntimeError("生成 PDF 要 Chromium（Debian/Ubuntu：apt-get install chromium）；没有它时，"
                           "用浏览器打开 course.html，打印 → 另存为 PDF，得到的是同样的页面")
    pdf = out / "course.pdf"
    pdf.unlink(missing_ok=True)
    command = [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--host-resolver-rules=MAP * ~NOTFOUND", "--no-proxy-server", "--no-pdf-header-footer",
               "--run-all-compositor-stages-before-draw", "--virtual-time-budget=60000",
               f"--print-to-pdf={pdf}", (out / "course.html").resolve().as_uri()]
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"Chromium 打印 course.html 超过了 {timeout:g} 秒") from None
    if not pdf.exists() or pdf.stat().st_size == 0:
        last = (run.stderr.strip().splitlines() or ["（没有输出）"])[-1]
        raise RuntimeError(f"Chromium 没有打印出 course.pdf（退出码 {run.returncode}：{last[:160]}）")
    return pdf
