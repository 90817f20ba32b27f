"""Nothing minigpt, minigrad or the course writes goes through a link, or lands outside the folder it was given.

A checkpoint folder shared as an archive may hold a symbolic link where a file belongs (`loss_curve.png ->
~/.bashrc`). Each test plants, at the name of one file that is written, a link to a file outside the folder (the
"victim", standing for ~/.bashrc), runs the writer, and checks that the victim is byte for byte as it was. A
training run refuses such a folder (or one holding a FIFO or a device) in one line before it writes anything; the
library's writers replace the link with a file of their own (minigrad/tools/files.py) instead of following it.
"""

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from checkpoint_helpers import TEXT, snapshot, write_checkpoint
from graphviz_helpers import fake_dot, png_bytes

import minigrad as mg
from minigpt import CharTokenizer, checkpoint
from minigpt.checkpoint import (
    COMMITTED,
    CONFIG,
    LOCK,
    LOSS_CURVE,
    MANIFEST,
    METRICS,
    MODEL,
    OPTIMIZER,
    PENDING,
    STATE,
    TOKENIZER,
)
from minigpt.cli import main
from minigpt.errors import ConfigError
from minigrad.tools.files import write_file

ROOT = Path(__file__).resolve().parent.parent
VICTIM = b"# the user's own ~/.bashrc: nothing minigpt does may change it\nexport EDITOR=vi\n"
TINY_FLAGS = ["--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "8", "--batch-size", "4",
              "--eval-iters", "1", "--eval-interval", "1"]
RUN_FILES = (MODEL, OPTIMIZER, TOKENIZER, CONFIG, STATE, METRICS, MANIFEST, LOCK, LOSS_CURVE)
FIFO = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


@pytest.fixture
def victim(tmp_path):
    path = tmp_path / "home" / ".bashrc"
    path.parent.mkdir()
    path.write_bytes(VICTIM)
    return path


@pytest.fixture(autouse=True)
def _fresh_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def linked(path, victim):
    """A symbolic link at `path` to the victim."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(victim)
    return path


def replaced_not_followed(path, victim):
    """The link at `path` is now a file of its own, and the victim is as it was."""
    assert victim.read_bytes() == VICTIM
    assert not path.is_symlink() and path.is_file() and path.read_bytes() != VICTIM


def train_argv(tmp_path, out, *extra):
    (tmp_path / "input.txt").write_text(TEXT, encoding="utf-8")
    return ["train", "--data", str(tmp_path / "input.txt"), "--out-dir", str(out), *TINY_FLAGS, "--max-iters", "2",
            *extra]


def refused_in_one_line(capsys, status, *said):
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for text in said:
        assert text in err, err
    return err


# ------------------------------------------------------------------------------------------------------
# minigpt train: a folder whose files are links, FIFOs or devices is refused before anything is written
@pytest.mark.parametrize("name", RUN_FILES)
def test_a_new_run_refuses_a_link_in_its_folder_and_writes_nothing(tmp_path, victim, capsys, name):
    out = tmp_path / "out"
    linked(out / name, victim)
    status = main(train_argv(tmp_path, out, "--overwrite"))
    refused_in_one_line(capsys, status, f"{out / name}: a symbolic link to {victim}, not a regular file")
    assert victim.read_bytes() == VICTIM and [p.name for p in out.iterdir()] == [name]


@pytest.mark.parametrize("name", RUN_FILES)
def test_a_resume_refuses_a_link_in_its_folder_and_writes_nothing(tmp_path, victim, capsys, name):
    out = tmp_path / "out"
    write_checkpoint(out, 2, data_path=tmp_path / "input.txt")
    (out / name).unlink(missing_ok=True)
    linked(out / name, victim)
    before = snapshot(out)
    status = main([*train_argv(tmp_path, out)[:-2], "--max-iters", "3", "--resume"])
    # (config.json and the manifest are read before the folder is looked at: a link there is refused as damage)
    refused_in_one_line(capsys, status, name)
    assert victim.read_bytes() == VICTIM and snapshot(out) == before and (out / name).is_symlink()


@pytest.mark.parametrize("name", [MODEL, METRICS, MANIFEST])
def test_a_link_inside_committed_is_refused(tmp_path, victim, capsys, name):
    out = tmp_path / "out"
    write_checkpoint(out, 2, data_path=tmp_path / "input.txt")
    linked(out / COMMITTED / name, victim)
    status = main(train_argv(tmp_path, out, "--overwrite"))
    refused_in_one_line(capsys, status, f"{out / COMMITTED / name}: a symbolic link to {victim}")
    assert victim.read_bytes() == VICTIM


@pytest.mark.parametrize("name", [PENDING, COMMITTED])
def test_a_save_folder_that_is_a_link_or_a_file_is_refused(tmp_path, victim, capsys, name):
    out = tmp_path / "out"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / MODEL).write_bytes(VICTIM)
    out.mkdir()
    (out / name).symlink_to(outside)
    status = main(train_argv(tmp_path, out))
    refused_in_one_line(capsys, status, f"{out / name}: a directory (a symbolic link to {outside})")
    assert (outside / MODEL).read_bytes() == VICTIM and [p.name for p in outside.iterdir()] == [MODEL]
    (out / name).unlink()
    (out / name).write_bytes(b"")
    refused_in_one_line(capsys, main(train_argv(tmp_path, out)), f"{out / name}: a file, where a save keeps a folder")


@FIFO
@pytest.mark.parametrize("name", [LOCK, LOSS_CURVE, METRICS])
def test_a_fifo_in_the_folder_is_refused_at_once(tmp_path, capsys, name):
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / name)
    refused_in_one_line(capsys, main(train_argv(tmp_path, out)), f"{out / name}: a FIFO (named pipe), not a regular")


def test_a_device_in_the_folder_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    try:  # /dev/null's numbers; making a device node needs root (or CAP_MKNOD)
        os.mknod(out / LOSS_CURVE, 0o666 | 0o020000, os.makedev(1, 3))
    except (PermissionError, AttributeError, OSError):
        pytest.skip("cannot make a device node here")
    refused_in_one_line(capsys, main(train_argv(tmp_path, out)), f"{out / LOSS_CURVE}: a device, not a regular file")


def test_the_lock_is_never_opened_through_a_link_nor_written_into_another_name(tmp_path, victim):
    """Were a link to appear between the folder's check and the lock's opening, O_NOFOLLOW still refuses it; and a
    hard link (which no flag can tell) is refused by its count of names, before the PID is written into it."""
    from minigpt.preflight import only_run_in

    out = tmp_path / "out"
    out.mkdir()
    linked(out / LOCK, victim)
    with pytest.raises(ConfigError, match="cannot be the run's lock \\(a symbolic link\\)"), only_run_in(out):
        pass
    (out / LOCK).unlink()
    os.link(victim, out / LOCK)
    with pytest.raises(ConfigError, match="a file with 2 names, not the run's lock file"), only_run_in(out):
        pass
    assert victim.read_bytes() == VICTIM


def test_save_checkpoint_refuses_a_link_before_writing(tmp_path, victim):
    out = tmp_path / "out"
    write_checkpoint(out, 2)
    (out / METRICS).unlink()
    linked(out / METRICS, victim)
    before = snapshot(out)
    with pytest.raises(checkpoint.CheckpointError, match="metrics.jsonl: a symbolic link to"):
        write_checkpoint(out, 3)
    assert victim.read_bytes() == VICTIM and snapshot(out) == before and not (out / PENDING).exists()


# ------------------------------------------------------------------------------------------------------
# Every other writer replaces a link at its name, and leaves the link's target alone
def test_mg_save_and_the_tokenizer_replace_a_link(tmp_path, victim):
    mg.save({"w": mg.ones(2)}, linked(tmp_path / "w.safetensors", victim))
    replaced_not_followed(tmp_path / "w.safetensors", victim)
    CharTokenizer.from_text("abc").save(linked(tmp_path / "tokenizer.json", victim))
    replaced_not_followed(tmp_path / "tokenizer.json", victim)
    assert CharTokenizer.load(tmp_path / "tokenizer.json").chars == ["a", "b", "c"]


def test_the_loss_curve_replaces_a_link(tmp_path, victim):
    pytest.importorskip("matplotlib")
    from minigpt.evaluation import plot_losses

    plot_losses([{"iter": 1, "loss": 3.0, "lr": 1e-3}, {"iter": 2, "loss": 2.5, "lr": 1e-3}],
                linked(tmp_path / LOSS_CURVE, victim))
    replaced_not_followed(tmp_path / LOSS_CURVE, victim)
    assert (tmp_path / LOSS_CURVE).read_bytes()[:4] == b"\x89PNG"


def test_drawings_replace_a_link(tmp_path, victim, monkeypatch):
    pytest.importorskip("PIL")
    loss = (mg.tensor([1.0, 2.0], requires_grad=True).tanh() * 3).sum()
    mg.viz.draw_to_file(loss, linked(tmp_path / "graph.dot", victim))
    replaced_not_followed(tmp_path / "graph.dot", victim)
    monkeypatch.setenv("PATH", str(fake_dot(tmp_path / "bin").parent))
    mg.viz.draw_to_file(loss, linked(tmp_path / "graph.png", victim))
    replaced_not_followed(tmp_path / "graph.png", victim)
    frames = tmp_path / "frames"
    for name in ("frame_000.png", "backward.gif", "backward.html"):
        linked(frames / name, victim)
    mg.viz.backward_frames(loss, frames)
    for name in ("frame_000.png", "backward.gif", "backward.html"):
        replaced_not_followed(frames / name, victim)


def test_minigpt_draw_replaces_a_link_at_its_out_file(tmp_path, victim, capsys):
    write_checkpoint(tmp_path / "out", 2)
    target = linked(tmp_path / "gpt.dot", victim)
    assert main(["draw", "--out-dir", str(tmp_path / "out"), "--format", "dot", "--out", str(target)]) == 0
    replaced_not_followed(target, victim)


def test_the_course_writes_no_figure_guess_or_record_through_a_link(tmp_path, victim, monkeypatch):
    from tutorials import course, ladder
    from tutorials.exercises import coaching
    from tutorials.predictions import Predictions
    from tutorials.yardstick import Score

    figures = tmp_path / "figures"  # FIGURES is relative: the lectures' figures/ in the current folder
    fig, _ = course.plt.subplots()
    course.show_figure(fig, linked(figures / "plot.png", victim).name)
    replaced_not_followed(figures / "plot.png", victim)
    guesses = Predictions("00", folder=figures)
    linked(figures / "guesses_00.json", victim)
    guesses.guess("x", 1, "a number")
    replaced_not_followed(figures / "guesses_00.json", victim)
    for name in ("00.json", "00.npz"):
        linked(figures / "ladder" / name, victim)
    score = Score(losses=np.ones((2, 3)))
    rung = ladder.Rung("k", "名字", "00", 1, "counts", 0.1, score)
    ladder.record("00", [rung], type("Yardstick", (), {"fingerprint": "f"})())
    for name in ("00.json", "00.npz"):
        replaced_not_followed(figures / "ladder" / name, victim)
    state = linked(tmp_path / "progress.json", victim)
    monkeypatch.setenv(coaching.STATE_VARIABLE, str(state))
    with pytest.raises(ValueError, match="进度文件 .* 不是一个普通文件"):  # refused in one line, nothing written
        coaching.save_state({"hints": {"0.1": 1}, "revealed": [], "finals": {}})
    assert victim.read_bytes() == VICTIM and state.is_symlink()
    monkeypatch.setenv(coaching.STATE_VARIABLE, str(tmp_path / "progress-of-its-own.json"))
    coaching.save_state({"hints": {"0.1": 1}, "revealed": [], "finals": {}})
    assert coaching.load_state()["hints"] == {"0.1": 1}


def test_the_site_writes_no_page_image_or_asset_through_a_link(tmp_path, victim):
    for module in ("markdown_it", "mdit_py_plugins", "latex2mathml", "pygments", "nbformat"):
        pytest.importorskip(module, reason="the site needs the extra: pip install -e '.[site]'")
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    from tutorials.site.build import build

    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    image = new_output("display_data", data={"image/png": base64.b64encode(png_bytes()).decode()})
    lecture = (ROOT / "tutorials" / "00_autograd.py").read_text(encoding="utf-8")
    title = re.search(r"^# # (.+)$", lecture, re.M)[1]  # the site checks that a notebook is its lecture's
    cells = [new_markdown_cell(f"# {title}\n\n一段话。"), new_code_cell("x = 1", outputs=[image])]
    notebook = new_notebook(cells=cells)
    nbformat.write(notebook, notebooks / "00_autograd.ipynb")
    site = tmp_path / "site"
    names = ("index.html", "00_autograd.html", "search-index.js", "static/site.css", "static/pygments.css",
             "images/00_autograd/cell001-0.png", "notebooks/00_autograd.ipynb")
    for name in names:
        linked(site / name, victim)
    build(site, notebooks=notebooks, numbers=["00"], quick=True)
    for name in names:
        replaced_not_followed(site / name, victim)


# ------------------------------------------------------------------------------------------------------
# write_file itself: a failure leaves the old file whole, no temporary file, and an error that names the file
def test_a_failed_write_leaves_the_old_file_and_names_it(tmp_path, monkeypatch):
    path = tmp_path / "figure.png"
    path.write_bytes(b"old")

    def full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("minigrad.tools.files.os.replace", full)
    with pytest.raises(OSError, match=f"No space left on device: '{path}'"):
        write_file(path, b"new")
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["figure.png"]


def test_minigpt_draw_on_a_file_size_limit_leaves_no_empty_file(tmp_path):
    """A write that fails half-way (here RLIMIT_FSIZE, as a full disk would) leaves no 0-byte or partial .dot."""
    resource = pytest.importorskip("resource")
    write_checkpoint(tmp_path / "out", 2)
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048)); "
            "from minigpt.cli import main; sys.exit(main(sys.argv[1:]))")
    result = subprocess.run([sys.executable, "-c", code, "draw", "--out-dir", "out", "--format", "dot", "--out",
                             "gpt.dot"], cwd=tmp_path, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "File too large: 'gpt.dot'" in result.stderr and resource is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no gpt.dot, empty or not, and no temporary file
    assert json.loads((tmp_path / "out" / MANIFEST).read_text())["iter_num"] == 2
