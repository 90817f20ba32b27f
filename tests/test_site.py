"""The course's website (tutorials/site/): built from an executed lecture, then opened in headless Chromium.

The build runs lecture 00 in quick mode as CI does (.ci/notebooks.py) into tmp_path and builds the site from that
notebook (`--notebooks`), so no lecture runs twice. Without the [site] extra the tests skip; without Chromium,
chromedriver and selenium, the browser test skips (Debian: apt-get install chromium chromium-driver).
In the browser, with the network switched off, every page must: load every image, draw the Chinese text of every
kind of block (prose, headings, code, program output, tables, hints, the previous/next links) with the shipped font
(the web font, never one installed on the machine, and no character left without a glyph), show its formulas as
MathML that takes up space, request nothing but files in the site's folder, and have every link inside the site
point to a page (and anchor) that exists. The search box must find a lecture's section, and the whole course prints
to a PDF with the course's font embedded. Bad input to the builder is one line; those tests need no lecture run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

for module in ("markdown_it", "mdit_py_plugins", "latex2mathml", "pygments", "nbformat", "nbclient", "jupytext"):
    pytest.importorskip(module, reason="the site needs the extra: pip install -e '.[site]'")

import nbformat  # noqa: E402

from tutorials.site.__main__ import main  # noqa: E402
from tutorials.site.build import SiteError, build  # noqa: E402
from tutorials.site.exercises import exercises_html, read_stubs  # noqa: E402
from tutorials.site.printable import browser, make_pdf  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A site of lecture 00 (quick mode), the index and the glossary."""
    notebooks = tmp_path_factory.mktemp("notebooks")
    run = subprocess.run([sys.executable, str(ROOT / ".ci" / "notebooks.py"), "--one", "quick", str(notebooks), "00"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    out = tmp_path_factory.mktemp("site")
    pages = build(out, notebooks=notebooks, numbers=["00"], quick=True)
    assert {p.name for p in pages} == {"00_autograd.html", "glossary.html", "index.html", "course.html"}
    return out


def fake_notebooks(folder: Path, lectures: dict[str, str]) -> Path:
    """Executed-looking notebooks for `lectures` ({"00": "00_autograd"}): each lecture's title, a printed line of
    Chinese and English, and a Chinese comment in its code: enough to build pages from without running anything."""
    folder.mkdir(parents=True, exist_ok=True)
    v4 = nbformat.v4
    for number, stem in lectures.items():
        title = next(line[4:] for line in (ROOT / "tutorials" / f"{stem}.py").read_text(encoding="utf-8").splitlines()
                     if line.startswith("# # "))
        notebook = v4.new_notebook(cells=[
            v4.new_markdown_cell(f"# {title}\n\n正文：第 {number} 讲。\n\n## 一节\n\n这一节的文字。"),
            v4.new_code_cell("x = 1  # 中文注释\nprint(x)",
                             outputs=[v4.new_output("stream", text="快速版 | 中文字体：有\n")]),
        ])
        nbformat.write(notebook, folder / f"{stem}.ipynb")
    return folder


LECTURES_00_01 = {"00": "00_autograd", "01": "01_next_token"}


def test_the_site_holds_everything_it_shows(site):
    page = (site / "00_autograd.html").read_text(encoding="utf-8")
    assert "反向传播从零开始" in page and 'class="highlight"' in page  # the prose and the code
    assert page.count("<math") > 20 and 'class="tex"' not in page  # every formula became MathML
    assert len(re.findall(r'<img src="images/00_autograd/cell\d+-\d+\.png"', page)) >= 3  # the figures
    assert (site / "notebooks" / "00_autograd.ipynb").exists() and 'href="notebooks/00_autograd.ipynb"' in page
    assert 'id="ex-0.1"' in page and "central_difference" in page  # the exercises
    if shutil.which("dot"):  # the frames are drawn by Graphviz
        assert 'src="images/00_autograd/backward.gif"' in page and (site / "images/00_autograd/backward.gif").exists()
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "阅读时间" in index and "10 秒" in index  # lecture 00's measured quick run time, from the README
    for path in site.rglob("*.html"):  # nothing to fetch from elsewhere: no remote src, stylesheet or script
        assert not re.search(r"""(src|<link[^>]*href)\s*=\s*["']?(https?:)?//""", path.read_text(encoding="utf-8"))
    sections = json.loads((site / "search-index.js").read_text(encoding="utf-8").split("=", 1)[1].rstrip(";\n"))
    assert any(s["p"] == "glossary.html" for s in sections) and any("sum_to" in s["x"] for s in sections)


def test_every_page_links_to_the_previous_and_the_next(tmp_path):
    out = tmp_path / "site"
    build(out, notebooks=fake_notebooks(tmp_path / "nb", LECTURES_00_01), numbers=["00", "01"], quick=True)
    order = ["index.html", "00_autograd.html", "01_next_token.html", "glossary.html"]
    for k, name in enumerate(order):
        page = (out / name).read_text(encoding="utf-8")
        pager = re.search(r'<nav class="pager">(.*?)</nav>', page, re.S)[1]
        previous = re.findall(r'rel="prev" href="([^"]+)"', pager)
        following = re.findall(r'rel="next" href="([^"]+)"', pager)
        assert previous == order[k - 1:k] and following == order[k + 1:k + 2], (name, pager)
        assert all((out / target).exists() for target in previous + following)


def test_the_whole_course_is_one_printable_page(tmp_path):
    out = tmp_path / "site"
    pages = build(out, notebooks=fake_notebooks(tmp_path / "nb", LECTURES_00_01), numbers=["00", "01"], quick=True)
    assert out / "course.html" in pages
    course = (out / "course.html").read_text(encoding="utf-8")
    assert course.index("00 反向传播从零开始") < course.index("01 猜下一个词") and 'href="course.html"' in \
        (out / "index.html").read_text(encoding="utf-8")
    ids = re.findall(r'\bid="([^"]+)"', course)
    assert len(ids) == len(set(ids)), "an anchor repeated in the one page"
    assert all(f'id="{target}"' in course for target in re.findall(r'href="#([^"]+)"', course))
    css = (out / "static" / "site.css").read_text(encoding="utf-8")
    assert "@media print" in css and "nav.sidebar" in css.split("@media print")[1]


@pytest.mark.parametrize("case", ["lecture 99", "damaged notebook", "foreign notebook", "notebook never run",
                                  "no notebook", "notebooks folder missing", "output is a file",
                                  "output under a file"])
def test_bad_input_to_the_builder_is_one_line(tmp_path, capsys, case):
    notebooks = fake_notebooks(tmp_path / "nb", {"00": "00_autograd"})
    out, lectures = tmp_path / "site", ["00"]
    if case == "lecture 99":
        lectures = ["99"]
    elif case == "damaged notebook":
        (notebooks / "00_autograd.ipynb").write_text('{"cells": [', encoding="utf-8")
    elif case == "foreign notebook":
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 别的东西")]),
                       notebooks / "00_autograd.ipynb")
    elif case == "notebook never run":
        notebook = nbformat.read(notebooks / "00_autograd.ipynb", as_version=4)
        notebook.cells[1].outputs = []
        nbformat.write(notebook, notebooks / "00_autograd.ipynb")
    elif case == "no notebook":
        (notebooks / "00_autograd.ipynb").unlink()
    elif case == "notebooks folder missing":
        notebooks = tmp_path / "nowhere"
    elif case == "output is a file":
        out.write_text("not a folder", encoding="utf-8")
    elif case == "output under a file":
        (tmp_path / "file").write_text("", encoding="utf-8")
        out = tmp_path / "file" / "site"
    with pytest.raises(SiteError):
        build(out, notebooks=notebooks, numbers=lectures, quick=True)
    assert main([str(out), "--notebooks", str(notebooks), *lectures]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("python -m tutorials.site: 错误：") and "\n" not in err and "Traceback" not in err, err
    assert re.search(r"[\u4e00-\u9fff]", err.split("错误：", 1)[1])


def test_a_read_only_output_folder_is_one_line(tmp_path, capsys):
    out = tmp_path / "site"
    out.mkdir()
    out.chmod(0o555)
    try:
        if os.access(out, os.W_OK):
            pytest.skip("this user writes into read-only folders (root)")
        assert main([str(out), "--notebooks", str(fake_notebooks(tmp_path / "nb", {"00": "00_autograd"})), "00"]) == 2
        assert "写不进去" in capsys.readouterr().err
    finally:
        out.chmod(0o755)


def test_hints_fold_under_their_exercise():
    path = ROOT / "tutorials" / "exercises" / "lecture03.py"
    _, stubs = read_stubs(path)
    assert [s.number for s in stubs][:3] == ["3.1", "3.2", "3.3"] and "softmax" in stubs[0].code
    hints = {"3.2": ["先算 q @ k 的转置", "别忘了除以 √d"]}
    html, text = exercises_html(path, "03", hints_of=lambda n: hints.get(n, []))
    assert html.count('<details class="hint">') == 2 and "别忘了除以 √d" in html
    assert html.index("提示 2") < html.index('id="ex-3.3"')  # under 3.2, before 3.3
    html, _ = exercises_html(path, "03", hints_of=lambda n: [])
    assert '<details class="hint">' not in html


def test_the_pages_fold_the_hints_that_check_hint_gives():
    from tutorials.exercises.hints import hints_for

    html, _ = exercises_html(ROOT / "tutorials" / "exercises" / "lecture03.py", "03")
    shown = [hint for n in ("3.1", "3.2", "3.3", "3.4", "3.5", "3.6") for hint in hints_for(n)]
    assert len(shown) >= 6 and html.count('<details class="hint">') == len(shown)
    assert all(hint.split("\n")[0][:20] in html for hint in shown)


def chromium():
    """A headless Chromium through chromedriver with its performance log on, or a reason to skip."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="the browser test needs selenium (extra [site])")
    binary = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver_binary = shutil.which("chromedriver")
    if not binary or not driver_binary:
        pytest.skip("no Chromium or chromedriver (Debian: apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--host-resolver-rules=MAP * ~NOTFOUND", "--no-proxy-server"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_binary))
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions",
                           {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0})
    return driver


def used_fonts(driver, selector: str) -> list[dict]:
    """The fonts Chromium really drew the element's text with (CSS.getPlatformFontsForNode)."""
    driver.execute_cdp_cmd("DOM.enable", {})
    driver.execute_cdp_cmd("CSS.enable", {})
    root = driver.execute_cdp_cmd("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
    node = driver.execute_cdp_cmd("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    return driver.execute_cdp_cmd("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]


# The kinds of block a page has, each checked on its first element with Chinese text of its own.
BLOCKS = ["main h1", "main h2", "main p", "main li", "pre.out", ".highlight pre span", "td", "details.hint summary",
          "details.hint p", ".statement", "nav.pager a", "figcaption", "nav.sidebar a"]
CHINESE_JS = "/[\\u2e80-\\u9fff\\uf900-\\ufaff\\ufe10-\\ufe4f\\uff00-\\uffef]/g"


def fonts_of_every_block(driver) -> list[tuple[str, list[dict], int]]:
    """(block, the fonts Chromium drew its own text with, how many Chinese characters that text has) for each kind
    of block on the page that holds Chinese text."""
    driver.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")  # show the hints
    driver.execute_async_script("const done = arguments[0]; document.fonts.ready.then(() => done())")
    found = []
    for k, selector in enumerate(BLOCKS):
        chinese = driver.execute_script(f"""
            const own = e => [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join("");
            const e = [...document.querySelectorAll(arguments[0])].find(e => ({CHINESE_JS}).test(own(e)));
            if (!e) return 0;
            e.setAttribute("data-probe", "{k}");
            return own(e).match({CHINESE_JS}).length;""", selector)
        if chinese:
            found.append((selector, used_fonts(driver, f'[data-probe="{k}"]'), chinese))
    return found


def test_every_page_works_offline_in_chromium(site):
    driver = chromium()
    try:
        pages = sorted(site.glob("*.html"))
        for page in pages:
            driver.get(page.as_uri())
            driver.execute_async_script("const done = arguments[0]; document.fonts.ready.then(() => done())")
            name = page.name
            images = driver.execute_script(
                "return [...document.images].map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0])")
            broken = [src for src, ok in images if not ok]
            assert not broken, f"{name}: images that did not load: {broken}"
            for block, fonts, chinese in fonts_of_every_block(driver):
                course = [f for f in fonts if f["familyName"] == "Noto Sans CJK SC" and f["isCustomFont"]]
                drawn = sum(f["glyphCount"] for f in course)
                assert drawn >= chinese, f"{name}, {block}: {chinese} Chinese characters, {drawn} in the course font"
                others = [f for f in fonts if "CJK" in f["familyName"] and not f["isCustomFont"]]
                assert not others, (name, block, fonts)
            loaded = driver.execute_script("return [...document.fonts].filter(f => f.status == 'loaded')"
                                           ".map(f => f.family)")
            assert any("Course CJK" in family for family in loaded), (name, loaded)
            if name[:2].isdigit():
                images_shown = [src for src, _ in images if src.endswith(".png")]
                assert len(images_shown) >= 3, name
                maths = driver.execute_script("return [...document.querySelectorAll('math')]"
                                              ".map(m => m.getBoundingClientRect().width)")
                assert len(maths) > 20 and all(width > 0 for width in maths), f"{name}: formulas not drawn"
            links = driver.execute_script("return [...document.querySelectorAll('a[href]')].map(a => a.href)")
            for link in links:
                url = urlparse(link)
                if url.scheme in ("http", "https", "mailto"):
                    continue  # a link out, followed only when clicked
                assert url.scheme == "file", f"{name}: {link}"
                target = Path(unquote(url.path))
                assert target.exists() and site in target.parents, f"{name}: broken link {link}"
                if url.fragment and target.suffix == ".html":
                    assert f'id="{unquote(url.fragment)}"' in target.read_text(encoding="utf-8"), \
                        f"{name}: no anchor for {link}"
        # The search box finds a lecture's section (the index loads as a script, so this works from file://).
        driver.get((site / "index.html").as_uri())
        driver.find_element("id", "search").send_keys("sum_to")
        hits = driver.execute_script("return [...document.querySelectorAll('#results a')].map(a => a.href)")
        assert any("00_autograd.html#" in hit for hit in hits), hits
        requests = [json.loads(entry["message"])["message"] for entry in driver.get_log("performance")]
        urls = {event["params"]["request"]["url"] for event in requests
                if event["method"] == "Network.requestWillBeSent"}
        outside = [url for url in urls if not url.startswith(("file://", "data:"))]
        assert not outside, f"requests left the site's folder: {outside}"
        assert any(url.endswith("NotoSansCJKsc-Course.otf") for url in urls)  # the log did see the page's files
    finally:
        driver.quit()


def test_every_character_the_pages_show_is_in_the_course_font(site):
    from matplotlib.ft2font import FT2Font

    font = {chr(code) for code in FT2Font(str(site / "static" / "NotoSansCJKsc-Course.otf")).get_charmap()}
    for page in site.glob("*.html"):
        text = re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8"))
        missing = {ch for ch in text if ord(ch) >= 0x2E80 and not ch.isspace()} - font
        assert not missing, f"{page.name}: characters with no glyph in the course font: {''.join(sorted(missing))}"


def test_the_course_prints_to_a_pdf_with_the_course_font_embedded(site):
    if browser() is None:
        pytest.skip("no Chromium (Debian: apt-get install chromium)")
    pdf = make_pdf(site).read_bytes()
    assert pdf.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page\b", pdf)) >= 5
    assert re.search(rb"/FontFile[23]?\b", pdf) and b"NotoSansCJK" in pdf, "the course's font is not embedded"
