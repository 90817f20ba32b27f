"""The course's website (tutorials/site/): built from an executed lecture, then opened in headless Chromium.

The build runs lecture 00 in quick mode as CI does (.ci/notebooks.py) into tmp_path and builds the site from that
notebook (`--notebooks`), so no lecture runs twice. Without the [site] extra the tests skip; without Chromium,
chromedriver and selenium, the browser test skips (Debian: apt-get install chromium chromium-driver).
In the browser, with the network switched off, every page must: load every image, draw its Chinese text with the
shipped font (the web font, not one installed on the machine), show its formulas as MathML that takes up space,
request nothing but files in the site's folder, and have every link inside the site point to a page (and anchor)
that exists. The search box must find a lecture's section.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

for module in ("markdown_it", "mdit_py_plugins", "latex2mathml", "pygments", "nbformat", "nbclient", "jupytext"):
    pytest.importorskip(module, reason="the site needs the extra: pip install -e '.[site]'")

from tutorials.site.build import build  # noqa: E402
from tutorials.site.exercises import exercises_html, read_stubs  # noqa: E402

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
    assert {p.name for p in pages} == {"00_autograd.html", "glossary.html", "index.html"}
    return out


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
            fonts = used_fonts(driver, "main h1, main h2, main p")
            assert any(f["familyName"] == "Noto Sans CJK SC" and f["isCustomFont"] for f in fonts), (name, fonts)
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
