"""Hostile input to every command, in families the other tests do not try: empty and dangling paths, the launcher's
and the terminal's environment (PMI_SIZE=abc, PYTHONIOENCODING=ascii, MPLBACKEND=nonsense), a full stdout, Ctrl-C
outside minigpt, the course's progress file, and the site's notebooks. Each is one line (or a run that goes on),
never a traceback or a wait. The round's whole list, with what each did before, is in the branch's report.
"""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from checkpoint_helpers import TEXT, write_checkpoint

from minigpt import checkpoint
from minigpt.cli import main

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
TINY = ["--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "8", "--batch-size", "4",
        "--eval-iters", "1", "--max-iters", "2", "--threads", "1"]
FULL = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
SITE = ("markdown_it", "mdit_py_plugins", "latex2mathml", "pygments", "nbformat")


@pytest.fixture(autouse=True)
def _fresh_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "input.txt").write_text(TEXT)


def status_of(argv):
    """main(argv)'s exit status, also when argparse exits by itself."""
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


def one_line(capsys, status, expected=2):
    err = capsys.readouterr().err
    assert status == expected, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err  # (after a newline that ends the
    return err  # line a Ctrl-C cut short)


def run(argv, env=None, stdout=subprocess.PIPE, **kwargs):
    return subprocess.run([sys.executable, "-m", *argv], env={**ENV, **(env or {})}, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=300, **kwargs)


# ------------------------------------------------------------------------------------------------------
# Paths
@pytest.mark.parametrize("argv", [["train", "--out-dir", ""], ["train", "--data", " "], ["sample", "--out-dir", ""],
                                  ["draw", "--out", ""]])
def test_an_empty_path_is_refused_not_taken_for_the_current_folder(tmp_path, capsys, argv):
    """`--out-dir "$OUT"` with OUT unset once trained into the current folder."""
    assert "is empty: give a path" in one_line(capsys, status_of(argv))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["input.txt"]


@pytest.mark.parametrize("target", ["/nonexistent/place", "loop"])
def test_an_out_dir_that_is_a_dangling_link_says_so(tmp_path, capsys, target):
    (tmp_path / "loop").symlink_to(target)
    status = main(["train", "--data", "input.txt", "--out-dir", "loop", *TINY])
    assert f"--out-dir loop is a symbolic link to {target}, which leads to no folder" in one_line(capsys, status)


def test_draw_into_a_folder_that_is_a_file_names_the_file(tmp_path, capsys):
    write_checkpoint(tmp_path / "out", 2)
    status = main(["draw", "--out-dir", "out", "--format", "dot", "--out", "input.txt/graphs/g.dot"])
    err = one_line(capsys, status, expected=1)
    assert "not a folder, and a folder is needed here: 'input.txt'" in err


def test_recover_keeps_a_users_own_tmp_file(tmp_path):
    write_checkpoint(tmp_path / "out", 2)
    (tmp_path / "out" / ".notes.tmp").write_text("mine")
    (tmp_path / "out" / ".model.safetensors.123.abcd1234.tmp").write_text("debris of a crash")
    checkpoint.recover(tmp_path / "out")
    assert (tmp_path / "out" / ".notes.tmp").read_text() == "mine"
    assert not (tmp_path / "out" / ".model.safetensors.123.abcd1234.tmp").exists()


# ------------------------------------------------------------------------------------------------------
# Numbers and the environment
def test_eval_iters_is_bounded(capsys):
    status = main(["train", "--data", "input.txt", "--out-dir", "o", *TINY, "--eval-iters", "100000000"])
    assert "eval_iters must be at most 10000, got 100000000" in one_line(capsys, status)


@pytest.mark.parametrize(("variables", "said"), [
    ({"PMI_SIZE": "abc"}, "PMI_SIZE='abc' is not a number of processes"),
    ({"PMI_SIZE": "0"}, "PMI_SIZE='0' is not a number of processes"),
    ({"PMI_SIZE": "-1"}, "PMI_SIZE='-1' is not a number of processes"),
    ({"PMI_SIZE": "2", "PMI_RANK": "7"}, "PMI_RANK='7' is not a rank of the 2 processes that PMI_SIZE says (0 to 1)"),
    ({"PMI_SIZE": "2", "PMI_RANK": "x"}, "PMI_RANK='x' is not a rank"),
])
@pytest.mark.parametrize("command", ["train", "sample"])
def test_launcher_variables_that_are_not_ranks_are_one_line(tmp_path, capsys, monkeypatch, variables, said, command):
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    write_checkpoint(tmp_path / "out", 2)
    argv = {"train": ["train", "--data", "input.txt", "--out-dir", "new", *TINY],
            "sample": ["sample", "--out-dir", "out", "--max-new-tokens", "3"]}[command]
    assert said in one_line(capsys, main(argv))
    assert not (tmp_path / "new").exists()


def test_a_matplotlib_that_cannot_load_costs_the_loss_curve_not_the_run(tmp_path):
    result = run(["minigpt", "train", "--data", "input.txt", "--out-dir", "o", *TINY], {"MPLBACKEND": "nonsense"},
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "note: no loss curve (matplotlib cannot be imported: Key backend: 'nonsense'" in result.stdout
    assert checkpoint.iteration(tmp_path / "o") == 2 and not (tmp_path / "o" / "loss_curve.png").exists()


# ------------------------------------------------------------------------------------------------------
# The terminal: an encoding without Chinese, a full stdout, Ctrl-C
def test_an_ascii_terminal_trains_into_a_chinese_folder(tmp_path):
    result = run(["minigpt", "train", "--data", "input.txt", "--out-dir", "模型", *TINY], {"PYTHONIOENCODING": "ascii"},
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "checkpoint in \\u6a21\\u578b" in result.stdout and checkpoint.iteration(tmp_path / "模型") == 2


@pytest.mark.parametrize("argv", [["tutorials.exercises", "list"], ["tutorials.yardstick", "score", "SHIPPED"]])
def test_an_ascii_terminal_is_told_to_use_utf_8(argv):
    argv = [str(ROOT / "tutorials" / "pretrained" / "shakespeare") if a == "SHIPPED" else a for a in argv]
    result = run(argv, {"PYTHONIOENCODING": "ascii"})
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "this terminal's encoding (ascii) cannot show Chinese: set PYTHONIOENCODING=utf-8" in result.stderr


@FULL
@pytest.mark.parametrize("argv", [
    ["minigpt", "sample", "--out-dir", "out", "--max-new-tokens", "40"],
    ["minigpt", "train", "--data", "input.txt", "--out-dir", "new", *TINY],
    ["minigpt", "draw", "--out-dir", "out", "--format", "dot", "--out", "g.dot"],
    ["tutorials.exercises", "list"],
], ids=["sample", "train", "draw", "exercises list"])
def test_a_full_stdout_is_one_line_that_names_it(tmp_path, argv):
    write_checkpoint(tmp_path / "out", 2)
    with open("/dev/full", "w") as full:
        result = run(argv, stdout=full, cwd=tmp_path)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "No space left on device" in result.stderr and ("<stdout>" in result.stderr or "标准输出" in result.stderr)


def test_ctrl_c_in_the_yardstick_and_the_check_is_one_line(monkeypatch, capsys):
    from tutorials import yardstick
    from tutorials.exercises import __main__ as exercises

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(yardstick, "score_checkpoint", interrupted)
    assert "python -m tutorials.yardstick score: 已中断" in one_line(capsys, yardstick.main(["score", "x"]), 130)
    monkeypatch.setattr(exercises, "print_reports", interrupted)
    assert "python -m tutorials.exercises: 已中断" in one_line(capsys, exercises.main(["check", "00"]), 130)


@pytest.mark.slow
def test_ctrl_c_during_sample_is_one_line():
    process = subprocess.Popen([sys.executable, "-m", "minigpt", "sample", "--out-dir",
                                str(ROOT / "tutorials" / "pretrained" / "shakespeare"), "--max-new-tokens", "100000",
                                "--threads", "1"], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout.read(40)  # it is writing
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130 and err.strip() == "minigpt sample: interrupted", err


# ------------------------------------------------------------------------------------------------------
# The course's progress file
@pytest.mark.parametrize(("make", "said"), [
    (lambda p: p.write_text("{hints"), "不是有效的 JSON（第 1 行第 2 列）"),
    (lambda p: p.write_text("[" * 100_000 + "]" * 100_000), "嵌套得太深"),
    (lambda p: p.write_text("[]"), "不是课程写的进度记录（应是一个 JSON 对象，这里是 list）"),
    (lambda p: p.write_text('{"hints": "x"}'), "不是课程写的进度记录（hints 应是"),
    (lambda p: p.write_text('{"hints": {"0.3": "x"}}'), "不是课程写的进度记录（hints 应是"),
    (lambda p: p.mkdir(), "不是一个普通文件"),
    pytest.param(os.mkfifo, "不是一个普通文件",
                 marks=pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")),
    (lambda p: p.symlink_to("/dev/zero"), "不是一个普通文件"),
], ids=["not JSON", "nested 100,000 deep", "a list", "hints a string", "a hint count a string", "a folder",
        "a FIFO", "/dev/zero"])
def test_a_hostile_progress_file_is_one_line(tmp_path, monkeypatch, capsys, make, said):
    from tutorials.exercises import __main__ as exercises
    from tutorials.exercises.coaching import STATE_VARIABLE

    make(tmp_path / "progress.json")
    monkeypatch.setenv(STATE_VARIABLE, str(tmp_path / "progress.json"))
    err = one_line(capsys, exercises.main(["check", "--hint", "0.3"]))
    assert f"进度文件 {tmp_path / 'progress.json'} " in err and said in err


# ------------------------------------------------------------------------------------------------------
# The site
def notebook(folder, cells):
    import nbformat
    from nbformat.v4 import new_notebook

    folder.mkdir(exist_ok=True)
    nbformat.write(new_notebook(cells=cells), folder / "00_autograd.ipynb")


@pytest.mark.parametrize("case", ["out a file", "notebook not JSON", "notebook a FIFO", "image not base64",
                                  "lecture 99", "lecture abc"])
def test_the_site_refuses_in_one_line(tmp_path, capsys, case):
    for module in SITE:
        pytest.importorskip(module, reason="the site needs the extra: pip install -e '.[site]'")
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_output

    from tutorials.site.__main__ import main as site

    nb, out, lecture = tmp_path / "nb", tmp_path / "site", "00"
    notebook(nb, [new_markdown_cell("# 标题")])
    if case == "out a file":
        out = tmp_path / "input.txt"
    elif case == "notebook not JSON":
        (nb / "00_autograd.ipynb").write_text("{not json")
    elif case == "notebook a FIFO":
        (nb / "00_autograd.ipynb").unlink()
        os.mkfifo(nb / "00_autograd.ipynb")
    elif case == "image not base64":
        notebook(nb, [new_code_cell("x", outputs=[new_output("display_data", data={"image/png": "!!!not base64"})])])
    else:
        lecture = case.split()[1]
    try:
        status = site([str(out), "--notebooks", str(nb), lecture])
    except SystemExit as stop:  # argparse's refusal, and build's own for a missing notebook
        status = stop.code if isinstance(stop.code, int) else (print(stop.code, file=sys.stderr) or 1)
    err = capsys.readouterr().err
    assert status in (1, 2) and "Traceback" not in err and err.strip(), err
    assert len(err.strip().splitlines()) <= 2, err  # argparse: its usage line, then the refusal
    assert (tmp_path / "input.txt").read_text() == TEXT
    if case.startswith("lecture"):
        assert f"没有第 {lecture} 讲" in err
