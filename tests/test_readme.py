"""The README as a new user meets it: its two commands work in that order in one folder, CI runs its test command
word for word, its Python blocks compile as the interactive prompt reads them and run as pasted, the sample it shows
is as long as the command above it asks for, and its PyTorch program runs with only the imports changed."""

import code
import os
import re
import runpy
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(language):
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def test_ci_runs_the_readme_test_command_as_written():
    command = next(block.strip() for block in blocks("bash") if "pytest" in block)
    assert command == 'pip install -e ".[test]" && python -m pytest -q'  # no GPU, no PyTorch: a CPU machine's fit
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert any(line.strip() == command for line in ci)


def test_ci_runs_the_readme_test_command_first_without_the_oracle_or_the_extras():
    """A new user's machine has only the test extra: CI runs the README's command there before it installs
    PyTorch, numba or MPI, so a test that needs one of them but does not say so fails in CI."""
    command = 'pip install -e ".[test]" && python -m pytest -q'
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.strip().startswith("#")]
    first_run = next(i for i, line in enumerate(lines) if line == command)
    before = lines[:first_run]
    assert any("venv" in line for line in before), "the README's command runs in a fresh virtual environment"
    installs = [line for line in before if "pip install" in line]
    assert not [line for line in installs if re.search(r"torch|\[(fast|mpi|notebooks|oracle)\]", line)], installs


@pytest.mark.slow
def test_the_readme_commands_in_order_leave_the_command_tests_passing(tmp_path):
    """`minigpt train`, then the tests, in one folder (the README's order): the run's out/ changes no test.

    The training is short and small; the folder it leaves (out/ with a checkpoint) is what matters. The command
    tests then run with that folder as their working directory, importing this checkout's code."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    small = ["--max-iters", "5", "--eval-interval", "5", "--eval-iters", "1", "--n-layer", "1", "--n-head", "2",
             "--n-embd", "16", "--block-size", "16", "--threads", "1"]
    subprocess.run([sys.executable, "-m", "minigpt", "train", *small], cwd=tmp_path, env=env, check=True,
                   capture_output=True)
    assert (tmp_path / "out" / "manifest.json").is_file()
    tests = [str(ROOT / "tests" / name) for name in ("test_cli.py", "test_tang.py", "test_train.py")]
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-m", "not slow", "-p", "no:cacheprovider",
                             *tests], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:]


def test_the_readme_names_what_the_test_extra_installs():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    names = [re.match(r"[A-Za-z0-9_.-]+", requirement).group(0) for requirement in extras["test"]]
    assert not {"jupytext", "nbformat", "nbclient", "ipykernel"} & set(names)  # the Jupyter stack: `notebooks`
    said = README.split("Run the tests", 1)[1].split("```", 1)[0].lower()
    assert all(name.lower() in said for name in names), said


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_what_the_commands_and_the_tutorials_leave_in_the_checkout_is_ignored():
    left = ["out/model.safetensors", "out-tang/model.safetensors", "figures/00_graph.png", "graph.svg",
            "gpt_graph.svg", "mlp_graph.svg", "tutorials/00_autograd.ipynb", "tutorials/figures/01_bigram.png",
            "tutorials/out/tutorial07/model.safetensors", "tutorials/.ipynb_checkpoints/00_autograd-checkpoint.py"]
    result = subprocess.run(["git", "check-ignore", "--no-index", *left], cwd=ROOT, capture_output=True, text=True)
    assert sorted(result.stdout.split()) == sorted(left)


def test_the_oracle_step_installs_the_cpu_only_wheel():
    step = next(block.strip() for block in blocks("bash") if "install torch" in block)
    assert step == "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"


@pytest.mark.parametrize("index", [0, 1])
def test_the_tour_runs_as_pasted(index, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the first block draws graph.svg (or graph.dot without graphviz's program)
    script = tmp_path / "tour.py"
    script.write_text(blocks("python")[index], encoding="utf-8")
    namespace = runpy.run_path(str(script))
    if index == 0:
        assert (tmp_path / "graph.svg").exists() or (tmp_path / "graph.dot").exists()
    else:
        assert namespace["logits"].shape == (4, 64, namespace["tok"].vocab_size)
    capsys.readouterr()


def test_the_pytorch_program_runs_with_only_its_imports_changed(tmp_path, monkeypatch, capsys):
    block = next(block for block in blocks("python") if block.startswith("import minigrad as torch"))
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "program.py"
    script.write_text(block, encoding="utf-8")
    namespace = runpy.run_path(str(script))
    assert namespace["loss"].item() < 0.3  # it learned the sign of a sum
    assert set(namespace["torch"].load(tmp_path / "model.pt")) == set(namespace["model"].state_dict())
    capsys.readouterr()


class _Prompt(code.InteractiveConsole):
    """Python's interactive prompt as a paste meets it: each line is compiled as it arrives, and an indented block
    ends only at a blank line (a dedented line right after one is a SyntaxError). Nothing is run."""

    def __init__(self) -> None:
        super().__init__()
        self.errors = []

    def runcode(self, code):
        pass

    def showsyntaxerror(self, *args, **kwargs):
        self.errors.append(repr(sys.exc_info()[1]))


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_every_python_block_can_be_pasted_into_the_interactive_prompt(index):
    prompt = _Prompt()
    for line in blocks("python")[index].splitlines():
        prompt.push(line)
    prompt.push("")  # the Enter that ends a paste
    assert prompt.errors == []


def test_the_sample_shown_is_the_prompt_and_300_characters():
    command = next(block for block in blocks("bash") if "minigpt sample" in block)
    prompt = re.search(r'--prompt "([^"]*)"', command).group(1)
    new_tokens = int(re.search(r"--max-new-tokens (\d+)", command).group(1))
    shown = README.split(command + "```\n\n```\n", 1)[1].split("```", 1)[0]
    assert shown.startswith(prompt) and len(shown) == len(prompt) + new_tokens + 1  # and print's newline


def test_the_notebooks_extra_installs_a_notebook_to_open_the_lectures_in():
    """`.[notebooks]` once installed jupytext and a kernel but no interface: the command in tutorials/README.md
    that opens a lecture needs one."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    names = [re.match(r"[A-Za-z0-9_.-]+", requirement).group(0) for requirement in extras["notebooks"]]
    assert "notebook" in names or "jupyterlab" in names
    tutorials = (ROOT / "tutorials" / "README.md").read_text(encoding="utf-8")
    assert 'pip install -e ".[notebooks]"' in tutorials and "jupyter notebook tutorials/00_autograd.ipynb" in tutorials
