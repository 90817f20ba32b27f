"""graphviz's two optional pieces, in every combination: the `dot` program (which draws) and the graphviz Python
package (which only gives `draw` a Digraph for Jupyter to show). With `dot`, with or without the package, the
picture is made; without `dot`, the DOT text is written and one line says what to install, and lecture 00 goes on
(in Chinese) instead of crashing. The site, built from lecture 00 run as a notebook, holds the pictures.

`dot` is a fake on PATH (graphviz_helpers.fake_dot) so that every combination runs on every machine.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from graphviz_helpers import SVG, child_env, fake_dot, png_bytes

import minigrad as mg

ROOT = Path(__file__).resolve().parent.parent
COMBINATIONS = [pytest.param(dot, package, id=f"{'dot' if dot else 'no dot'}, {'package' if package else 'no package'}")
                for dot in (True, False) for package in (True, False)]


def small_graph():
    a = mg.tensor([1.0, -2.0], requires_grad=True)
    b = mg.tensor([0.5, 3.0], requires_grad=True)
    return ((a * b).tanh() + a).sum()


def arrange(tmp_path, monkeypatch, have_dot, have_package):
    """This process as a machine with (or without) `dot` on PATH and the graphviz package."""
    if have_package:
        pytest.importorskip("graphviz")
    else:
        monkeypatch.setitem(sys.modules, "graphviz", None)  # `import graphviz` raises ImportError
    monkeypatch.setenv("PATH", str(fake_dot(tmp_path / "bin").parent if have_dot else tmp_path / "empty"))


@pytest.mark.parametrize(("have_dot", "have_package"), COMBINATIONS)
def test_draw_makes_the_picture_or_says_in_one_line_what_to_install(tmp_path, monkeypatch, capsys, have_dot,
                                                                    have_package):
    arrange(tmp_path, monkeypatch, have_dot, have_package)
    L = small_graph()
    graph = mg.viz.draw(L, tmp_path / "graph", format="png")
    written = mg.viz.draw_to_file(L, tmp_path / "other.svg")
    err = capsys.readouterr().err
    assert (graph is not None) == have_package  # the package gives a Digraph to show inline, nothing more
    if have_dot:
        assert (tmp_path / "graph.png").read_bytes() == png_bytes() and written.read_bytes() == SVG
        assert err == ""
    else:
        assert not (tmp_path / "graph.png").exists() and (tmp_path / "graph.dot").read_text() == mg.viz.to_dot(L)
        assert written == tmp_path / "other.dot"
        lines = err.strip().splitlines()
        assert len(lines) == 2 and all("apt install graphviz" in line and "pip" not in line for line in lines), err


@pytest.mark.parametrize(("have_dot", "have_package"), COMBINATIONS)
def test_backward_frames_in_every_combination(tmp_path, monkeypatch, capsys, have_dot, have_package):
    pytest.importorskip("PIL")
    arrange(tmp_path, monkeypatch, have_dot, have_package)
    frames = mg.viz.backward_frames(small_graph(), tmp_path / "frames")
    assert {p.suffix for p in frames} == ({".png"} if have_dot else {".dot"})
    assert (tmp_path / "frames" / "backward.gif").exists() == have_dot
    assert len(capsys.readouterr().err.strip().splitlines()) == (0 if have_dot else 1)


@pytest.mark.parametrize(("script", "said"), [
    ("#!/bin/sh\necho 'Error: <stdin>: syntax error in line 1' >&2\nexit 1\n",
     "failed (exit status 1: Error: <stdin>: syntax error in line 1)"),
    ("#!/no/such/interpreter\n", "cannot run"),
    ("#!/bin/sh\nexit 0\n", "failed (exit status 0: no output)"),
], ids=["dot fails", "dot cannot run", "dot draws nothing"])
def test_a_broken_dot_writes_the_dot_text_and_says_why_in_one_line(tmp_path, monkeypatch, capsys, script, said):
    monkeypatch.setenv("PATH", str(fake_dot(tmp_path / "bin", script).parent))
    L = small_graph()
    written = mg.viz.draw_to_file(L, tmp_path / "graph.png")
    assert written == tmp_path / "graph.dot" and not (tmp_path / "graph.png").exists()
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and said in err and str(tmp_path / "bin" / "dot") in err, err


def run_lecture_00(tmp_path, have_dot, have_package):
    env = child_env(ROOT, fake_dot(tmp_path / "bin").parent if have_dot else None, not have_package, tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    result = subprocess.run([sys.executable, str(ROOT / "tutorials" / "00_autograd.py")], cwd=work, env=env,
                            capture_output=True, text=True, timeout=600)
    return result, work / "figures"


@pytest.mark.slow
@pytest.mark.parametrize(("have_dot", "have_package"), COMBINATIONS)
def test_lecture_00_draws_or_says_what_to_install_and_goes_on(tmp_path, have_dot, have_package):
    result, figures = run_lecture_00(tmp_path, have_dot, have_package)
    assert result.returncode == 0, result.stderr[-3000:]
    told = [line for line in result.stdout.splitlines() if "apt install graphviz" in line]
    if have_dot:
        for name in ("00_graph", "00_chain_rule", "00_tanh_derivative_4"):
            assert (figures / f"{name}.png").read_bytes() == png_bytes()
        assert (figures / "00_tanh_derivative_graphs.png").exists() and (figures / "00_backward_frames").is_dir()
        assert told == [] and "说明" not in result.stdout
    else:
        assert len(told) == 1 and told[0].startswith("说明：没有 Graphviz 的 `dot` 程序"), told  # said once, in Chinese
        assert (figures / "00_graph.dot").exists() and not (figures / "00_graph.png").exists()
        assert re.search(r"figures/00_tanh_derivative_4\.dot", result.stdout)
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_the_site_builds_with_dot_and_without_the_package(tmp_path):
    """The state after `pip install -e '.[site]'` plus `apt install graphviz`: the site used to end "no site was
    built" here, because lecture 00 crashed."""
    for module in ("markdown_it", "mdit_py_plugins", "latex2mathml", "pygments", "nbformat", "nbclient", "jupytext"):
        pytest.importorskip(module, reason="the site needs the extra: pip install -e '.[site]'")
    env = child_env(ROOT, fake_dot(tmp_path / "bin").parent, True, tmp_path)
    site = tmp_path / "site"
    result = subprocess.run([sys.executable, "-m", "tutorials.site", str(site), "00"], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    page = (site / "00_autograd.html").read_text(encoding="utf-8")
    assert 'src="images/00_autograd/backward.gif"' in page
    assert (site / "images" / "00_autograd" / "backward.gif").exists()
