"""The `minigpt` command: sampling, one-line errors with exit status 2 (bad flags, bad input, a folder that holds
a checkpoint already), a run that must stop (exit status 1), and what a Unix tool does on signals: Ctrl-C and
SIGTERM save and exit with 128 + the signal's number, a closed pipe stops the output quietly.

Every test runs in a fresh temporary folder (the `_fresh_cwd` fixture below): a run's default out/ never leaks from
one test into another, or from the checkout into a test. Commands run as subprocesses import this checkout's code.
"""

import ast
import io
import os
import select
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
from checkpoint_helpers import snapshot, write_checkpoint

import minigrad as mg
from minigpt import checkpoint, data
from minigpt.cli import main
from minigpt.progress import PLAIN_INTERVAL_S, Progress
from minigpt.train import TrainConfig, train

TINY = dict(n_layer=2, n_head=2, n_embd=32, block_size=16, batch_size=8, eval_iters=2, warmup_iters=5)
TEXT = "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n" * 30
TINY_FLAGS = ["--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "8", "--batch-size", "4",
              "--eval-iters", "1"]
ROOT = Path(__file__).resolve().parent.parent
# One BLAS thread: small matrices gain nothing from more, and this machine may be busy. PYTHONPATH: a subprocess
# started in a temporary folder imports the minigpt of this checkout, as the tests themselves do.
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}


@pytest.fixture(autouse=True)
def _fresh_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A checkpoint folder of a tiny model trained for a few iterations."""
    folder = tmp_path_factory.mktemp("cli")
    (folder / "input.txt").write_text(TEXT, encoding="utf-8")
    train(TrainConfig(data=str(folder / "input.txt"), out_dir=str(folder / "out"), max_iters=20, lr=3e-3, **TINY))
    return folder


def test_sample_prints_the_prompt_and_its_continuation(trained, capsys):
    out_dir = str(trained / "out")
    assert main(["sample", "--out-dir", out_dir, "--prompt", "All:", "--max-new-tokens", "40", "--seed", "1"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("All:") and len(text) == len("All:") + 40 + 1  # and print's newline
    # the same seed, the same text; top-k and top-p are accepted
    assert main(["sample", "--out-dir", out_dir, "--prompt", "All:", "--max-new-tokens", "40", "--seed", "1"]) == 0
    assert capsys.readouterr().out == text
    assert main(["sample", "--out-dir", out_dir, "--prompt", "Be", "--max-new-tokens", "5", "--top-k", "3",
                 "--top-p", "0.9", "--temperature", "0"]) == 0
    assert capsys.readouterr().out.startswith("Be")


def test_an_empty_prompt_starts_from_a_new_line(trained, capsys):
    assert main(["sample", "--out-dir", str(trained / "out"), "--max-new-tokens", "30"]) == 0
    assert len(capsys.readouterr().out) == 30 + 1


def run(argv):
    """main(argv)'s exit status, also when argparse exits by itself."""
    try:
        return main(argv)
    except SystemExit as exit:
        return exit.code


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ("train --data {dir}/missing.txt", "missing.txt: no such file"),
        ("train --data {dir}/empty.txt", "empty.txt: the file is empty"),
        ("train --data {dir}/blank.txt", "blank.txt: the file holds only whitespace"),
        # a new run never replaces a trained one unless told to
        ("train --data {dir}/input.txt --out-dir {dir}/out", "holds a checkpoint (iteration 20): continue it with "
         "--resume, replace it with --overwrite, or choose another --out-dir"),
        ("train --out-dir {dir}/out --resume --overwrite", "argument --overwrite: not allowed with argument --resume"),
        ("train --seed -1", "argument --seed: must be 0 or more, got -1"),
        ("sample --out-dir {dir}/out --seed -1", "argument --seed: must be 0 or more, got -1"),
        ("train --data {dir}/input.txt --out-dir {dir}/input.txt", "--out-dir {dir}/input.txt is a file, not a folder"),
        ("sample --out-dir {dir}/input.txt", "input.txt: a file, not a checkpoint folder"),
        ("train --device tpu", "argument --device: must be cpu or cuda (or cuda:N for the GPU numbered N), got 'tpu'"),
        ("train --data {dir}/long.txt --block-size 100000 --out-dir {dir}/big", "of memory to train (most of it "
         "attention matrices, 4 layers of 3 (B, nh, T, T) = (12, 4, 100000, 100000)), more than the"),
        ("sample --out-dir {dir}/out --prompt Zebra", "character 'Z' at position 0 is not in the tokenizer's"),
        ("train --resume --out-dir {dir}/out --block-size 32",
         "--block-size 32 is larger than the checkpoint's block_size 16"),
        ("train --resume --out-dir {dir}/nowhere", "no checkpoint to resume"),
        ("sample --out-dir {dir}/nowhere", "no such folder"),
        ("train --n-layer zero", "argument --n-layer: invalid positive integer value: 'zero'"),
        ("train --dropout 1.5", "argument --dropout: must be in [0, 1)"),
        ("train --threads 100000000000000000000", "argument --threads: must be at most 1024, got 1000000000000000"),
        ("sample --out-dir {dir}/out --top-p 0", "argument --top-p: must be in (0, 1]"),
    ],
)
def test_bad_input_is_one_line_and_exit_status_2(trained, capsys, argv, message):
    (trained / "empty.txt").write_text("")
    (trained / "blank.txt").write_text(" \n\t\n")
    if "long.txt" in argv and not (trained / "long.txt").exists():
        (trained / "long.txt").write_text(TEXT * 420)  # long enough for a context of 100,000 characters
    before = snapshot(trained / "out")
    assert run(argv.format(dir=trained).split()) == 2
    err = capsys.readouterr().err
    assert message.format(dir=trained) in err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "strict" not in err  # the stand-in device of the tests is never offered to a user
    assert snapshot(trained / "out") == before  # nothing was overwritten
    assert not (trained / "big").exists()  # and a refused run wrote nothing


@pytest.mark.skipif(mg.cuda.is_available(), reason="a GPU is there")
def test_cuda_without_a_gpu_says_what_to_install(trained, capsys):
    assert main(["train", "--device", "cuda", "--data", str(trained / "input.txt")]) == 2
    assert "pip install -e '.[cuda12]'" in capsys.readouterr().err


def start_training(tmp_path, *flags):
    """`minigpt train` of a tiny model on TEXT into tmp_path/out, as a subprocess whose output we read."""
    data = tmp_path / "input.txt"
    data.write_text(TEXT, encoding="utf-8")
    argv = [sys.executable, "-u", "-m", "minigpt", "train", "--data", str(data), "--out-dir", str(tmp_path / "out"),
            "--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "8", "--batch-size", "4",
            "--eval-iters", "1", "--max-iters", "1000000", *flags]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)


def signal_when_training(process, signum):
    """Send `signum` once the run is iterating (its first evaluation comes just before); its stdout and stderr."""
    try:
        for line in process.stdout:
            if line.startswith("iter 0:"):
                break
        process.send_signal(signum)
        return process.communicate(timeout=60)
    finally:
        process.kill()


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_ctrl_c_and_sigterm_save_a_checkpoint_and_exit_128_plus_the_signal(tmp_path, signum, status):
    process = start_training(tmp_path, "--eval-interval", "1000000")
    stdout, stderr = signal_when_training(process, signum)
    assert process.returncode == status, stderr
    assert "Traceback" not in stderr
    assert "interrupted at iteration" in stdout and "--resume" in stdout
    out = tmp_path / "out"
    ckpt = checkpoint.load_checkpoint(out)  # complete and verified
    assert ckpt.state["iter_num"] >= 0 and ckpt.model_config.n_embd == 16
    assert (out / "loss_curve.png").exists()  # the curve up to the interruption, beside its checkpoint


def test_ctrl_c_before_an_overwriting_runs_first_save_keeps_the_old_checkpoint(tmp_path):
    out = tmp_path / "out"
    write_checkpoint(out, 200)  # a trained run, and a new one started over it by mistake
    before = snapshot(out)
    process = start_training(tmp_path, "--overwrite", "--eval-interval", "1000000")
    stdout, stderr = signal_when_training(process, signal.SIGINT)
    assert process.returncode == 130 and "Traceback" not in stderr, stderr
    assert snapshot(out) == before
    assert f"the checkpoint of iteration 200 in {out} is kept as it was" in stdout


def test_train_into_a_pipe_closed_early_stops_quietly_after_saving(tmp_path):
    """`minigpt train | head -1`: the run stops as on Ctrl-C, without a word, and exits as a Unix tool would."""
    process = start_training(tmp_path, "--eval-interval", "2")
    try:
        process.stdout.readline()
        process.stdout.close()  # the reader goes away
        stderr = process.stderr.read()
        process.wait(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 128 + signal.SIGPIPE and stderr == "", stderr
    assert checkpoint.load_checkpoint(tmp_path / "out").iter_num >= 0  # saved where it stopped, and complete


def test_sample_into_a_pipe_closed_early_is_quiet(trained):
    argv = [sys.executable, "-m", "minigpt", "sample", "--out-dir", str(trained / "out"), "--max-new-tokens", "200"]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        process.stdout.close()  # before it prints: `minigpt sample | head -c 0`
        stderr = process.stderr.read()
        process.wait(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 128 + signal.SIGPIPE and stderr == "", stderr


def test_a_diverging_run_stops_with_one_line_and_a_true_hint(trained, capsys):
    argv = ["train", "--data", str(trained / "input.txt"), "--out-dir", "diverged", *TINY_FLAGS, "--max-iters",
            "40", "--eval-interval", "20", "--lr", "1e308"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(argv) == 1
    assert [str(w.message) for w in caught] == []  # no NumPy RuntimeWarning on the way
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "training diverged" in err and "lower --lr (1e+308 here)" in err, err
    assert "--grad-clip" not in err  # clipping to 1 is the default already: the hint does not suggest it
    argv[argv.index("--out-dir") + 1] = "unclipped"
    assert main([*argv, "--grad-clip", "0"]) == 1
    assert "or clip the gradient norm with --grad-clip 1" in capsys.readouterr().err


def test_a_data_file_over_the_size_limit_is_refused_in_one_line(tmp_path, capsys):
    big = tmp_path / "big.txt"
    big.touch()
    os.truncate(big, data.MAX_DATA_BYTES + 1)  # sparse: no disk space, and never read
    assert main(["train", "--data", str(big)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{data.MAX_DATA_BYTES + 1:,} bytes, more than the" in err, err


def test_draw_loads_the_checkpoint_with_every_check_and_draws_its_graph(trained, tmp_path, capsys):
    out = tmp_path / "gpt.dot"
    assert main(["draw", "--out-dir", str(trained / "out"), "--collapse", "--format", "dot", "--out", str(out)]) == 0
    text = out.read_text()
    assert "rankdir=TB" in text and "transformer.h.0" in text and "transformer.h.1" in text
    assert f"wrote {out}" in capsys.readouterr().out
    assert run(["draw", "--out-dir", str(trained / "input.txt")]) == 2  # not a checkpoint folder: one line
    assert "a file, not a checkpoint folder" in capsys.readouterr().err


def test_the_engine_never_imports_the_model():
    """No arrow from minigrad up to minigpt: no import of it in any file under minigrad/, at any depth."""
    importers = []
    for path in sorted((ROOT / "minigrad").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            importers += [f"{path.relative_to(ROOT)}: {name}" for name in names if name.split(".")[0] == "minigpt"]
    assert importers == []
    code = "import sys, minigrad, minigrad.viz.__main__; print('minigpt' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=ENV).stdout
    assert out.strip() == "False"


def test_minigpt_has_no_import_circle():
    """Each module of minigpt imports only modules below it (config.py holds what preflight.py and train.py share)."""
    modules = {path.stem: path for path in (ROOT / "minigpt").glob("*.py") if path.stem != "__main__"}
    imports = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "minigpt":
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("minigpt."):
                found.add(node.module.split(".")[1])
        imports[name] = (found & set(modules)) - {"__init__"}

    def reaches(start, goal, seen=()):
        return any(m == goal or (m not in seen and reaches(m, goal, (*seen, m))) for m in imports[start])

    assert [name for name in imports if name != "__init__" and reaches(name, name)] == []
    assert "train" not in imports["preflight"] and "config" in imports["preflight"]


def test_python_dash_m_minigpt_shows_help():
    result = subprocess.run([sys.executable, "-m", "minigpt", "train", "--help"], capture_output=True, text=True,
                            env=ENV)
    assert result.returncode == 0
    for flag in ("--data", "--device", "--out-dir", "--resume", "--max-iters", "--eval-interval", "--batch-size",
                 "--block-size", "--n-layer", "--n-head", "--n-embd", "--dropout", "--lr", "--warmup-iters",
                 "--lr-decay-iters", "--grad-clip", "--weight-decay", "--seed", "--pos-encoding", "--norm-position"):
        assert flag in result.stdout
    said = " ".join(result.stdout.split())  # argparse wraps the lines
    # what Ctrl-C, SIGTERM and a closed pipe do, and what --overwrite keeps, as the tests above check
    assert "Ctrl-C or SIGTERM saves a checkpoint after the current step and exits (status 130 or 143" in said
    assert "a closed stdout (`minigpt train | head`), quietly, with status 141" in said
    assert "Ctrl-C before then keeps the old one as it was" in said


def test_max_iters_0_evaluates_the_untrained_model_and_says_it_wrote_no_checkpoint(trained, tmp_path, capsys):
    out = tmp_path / "zero"
    assert main(["train", "--data", str(trained / "input.txt"), "--out-dir", str(out), *TINY_FLAGS,
                 "--max-iters", "0"]) == 0
    said = capsys.readouterr().out
    assert "iter 0: train loss" in said
    assert "done: 0 iterations (--max-iters 0): the untrained model was evaluated; no checkpoint written" in said
    assert not checkpoint.exists(out)


def test_overwrite_lets_a_new_run_replace_a_checkpoint(trained, tmp_path):
    out = tmp_path / "out"
    write_checkpoint(out, 50)
    argv = ["train", "--data", str(trained / "input.txt"), "--out-dir", str(out), *TINY_FLAGS, "--max-iters", "1"]
    assert main(argv) == 2 and checkpoint.iteration(out) == 50  # refused, untouched
    assert main([*argv, "--overwrite"]) == 0
    assert checkpoint.load_checkpoint(out).iter_num == 1  # the new run's, at its first save


def test_off_a_terminal_progress_is_a_plain_line_every_few_seconds():
    lines, now = io.StringIO(), [0.0]
    bar = Progress(100, "train", terminal=False, out=lines, clock=lambda: now[0])
    for step in range(100):
        now[0] += 0.5  # a step every half second
        bar.set_postfix(loss=f"{3 - step / 100:.2f}")
        bar.update(1)
    said = lines.getvalue().splitlines()
    assert len(said) == 100 * 0.5 // PLAIN_INTERVAL_S  # one line each PLAIN_INTERVAL_S seconds
    assert said[0] == f"train 10/100 (10%) loss=2.91 [{PLAIN_INTERVAL_S:.0f} s]"


def test_sample_writes_the_text_as_it_is_generated(trained):
    """The first characters arrive long before the last: `minigpt sample | head -c 20` stops it early."""
    argv = [sys.executable, "-m", "minigpt", "sample", "--out-dir", str(trained / "out"), "--prompt", "All:",
            "--max-new-tokens", "100000", "--threads", "1"]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    try:
        ready, _, _ = select.select([process.stdout], [], [], 60)  # 100,000 characters take minutes
        assert ready, "nothing written within a minute"
        first = process.stdout.read(20)  # the prompt and the first piece, written at once
        assert first.startswith(b"All:") and len(first) == 20
        assert process.poll() is None  # still writing
        process.stdout.close()  # the reader goes, as head's does: a quiet stop
        stderr = process.stderr.read().decode()
        process.wait(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 128 + signal.SIGPIPE and stderr == "", stderr


def test_sample_in_pieces_is_the_same_text_as_generate_at_once(trained, capsys):
    from minigpt.cli import STREAM_EVERY

    model, tokenizer = checkpoint.load_model(str(trained / "out"))
    mg.manual_seed(3)
    once = tokenizer.decode(model.generate([tokenizer.encode("All:")], 3 * STREAM_EVERY + 5, temperature=0.8)[0])
    assert main(["sample", "--out-dir", str(trained / "out"), "--prompt", "All:", "--max-new-tokens",
                 str(3 * STREAM_EVERY + 5), "--seed", "3", "--threads", "2"]) == 0
    assert capsys.readouterr().out == once + "\n"
    assert mg.get_num_threads() == 2  # --threads is used


def test_a_bad_minigrad_kernels_value_is_one_line(trained):
    argv = [sys.executable, "-m", "minigpt", "sample", "--out-dir", str(trained / "out"), "--max-new-tokens", "5"]
    result = subprocess.run(argv, capture_output=True, text=True, env={**ENV, "MINIGRAD_KERNELS": "bogus"},
                            timeout=120)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "MINIGRAD_KERNELS must be 'numpy' or 'numba'" in result.stderr


def test_a_stop_does_not_wait_for_the_rest_of_a_long_step(tmp_path):
    """With many micro-batches a step, the signal is read between them: the half-made step is dropped, the run
    saved at the last whole step, promptly."""
    process = start_training(tmp_path, "--eval-interval", "1000000", "--grad-accum", "1024")
    started = time.monotonic()
    stdout, stderr = signal_when_training(process, signal.SIGTERM)
    assert process.returncode == 143, stderr
    assert time.monotonic() - started < 30  # 1024 micro-batches of this model take minutes on a busy machine
    assert checkpoint.load_checkpoint(tmp_path / "out").iter_num == 0


def test_grad_accum_is_bounded(trained, capsys):
    assert main(["train", "--data", str(trained / "input.txt"), "--out-dir", "big", "--grad-accum", "1000000000"]) == 2
    assert "grad_accum must be at most 1024" in capsys.readouterr().err


def test_a_second_run_into_a_busy_out_dir_is_refused(trained, tmp_path, capsys):
    from minigpt.preflight import only_run_in

    out = tmp_path / "busy"
    out.mkdir()
    with only_run_in(out):  # another run holds the folder
        status = main(["train", "--data", str(trained / "input.txt"), "--out-dir", str(out), *TINY_FLAGS,
                       "--max-iters", "2"])
    assert status == 2
    assert f"--out-dir {out} is in use by another run (process {os.getpid()})" in capsys.readouterr().err
    assert not (out / "model.safetensors").exists()
    assert main(["train", "--data", str(trained / "input.txt"), "--out-dir", str(out), *TINY_FLAGS,
                 "--max-iters", "2", "--eval-interval", "2"]) == 0  # free again
    assert not (out / ".lock").exists()


def test_a_closed_stdout_at_the_start_is_one_line(tmp_path):
    """`minigpt train >&-` once died in a traceback (sys.stdout is None); now one line on stderr, status 2."""
    argv = [sys.executable, "-m", "minigpt", "train", "--max-iters", "1", "--out-dir", str(tmp_path / "out")]
    result = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV, timeout=120,
                            preexec_fn=lambda: os.close(1))
    assert result.returncode == 2
    assert result.stderr == "minigpt: error: stdout is closed; send it to a file or to /dev/null instead\n"


@pytest.mark.parametrize(("rank", "said"), [("0", True), ("1", False)])
def test_a_refusal_under_mpiexec_is_said_by_rank_0_only(trained, capsys, monkeypatch, rank, said):
    """Every rank refuses a bad flag alike; the line once came N times."""
    monkeypatch.setenv("PMI_SIZE", "2")
    monkeypatch.setenv("PMI_RANK", rank)
    assert main(["train", "--data", str(trained / "input.txt"), "--out-dir", "big", "--grad-accum", "2000"]) == 2
    assert ("grad_accum must be at most 1024" in capsys.readouterr().err) == said
    assert run(["train", "--grad-accum", "0"]) == 2  # argparse's own refusals too
    assert ("must be a positive integer, got 0" in capsys.readouterr().err) == said
