"""The README as a new user meets it: CI runs its test command word for word, its Python blocks run as pasted,
the sample it shows is as long as the command above it asks for, and the drawing hints say which piece is missing."""

import re
import runpy
import sys
from pathlib import Path

import pytest

import minigrad as mg

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(language):
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def test_ci_runs_the_readme_test_command_as_written():
    command = next(block.strip() for block in blocks("bash") if "pytest" in block)
    assert command == 'pip install -e ".[test]" && python -m pytest -q'  # no GPU, no PyTorch: a CPU machine's fit
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert command in ci


def test_the_oracle_step_installs_the_cpu_only_wheel():
    step = next(block.strip() for block in blocks("bash") if "install torch" in block)
    assert step == "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"


@pytest.mark.parametrize("index", [0, 1])
def test_the_tour_runs_as_pasted(index, tmp_path, monkeypatch, capsys):
    if index == 0:
        pytest.importorskip("graphviz")  # drawing needs the viz extra, as the block says
    monkeypatch.chdir(tmp_path)  # the first block draws graph.svg (or graph.dot without graphviz's program)
    script = tmp_path / "tour.py"
    script.write_text(blocks("python")[index], encoding="utf-8")
    namespace = runpy.run_path(str(script))
    if index == 0:
        assert (tmp_path / "graph.svg").exists() or (tmp_path / "graph.dot").exists()
    else:
        assert namespace["logits"].shape == (4, 64, namespace["tok"].vocab_size)
    capsys.readouterr()


def test_the_sample_shown_is_the_prompt_and_300_characters():
    command = next(block for block in blocks("bash") if "minigpt sample" in block)
    prompt = re.search(r'--prompt "([^"]*)"', command).group(1)
    new_tokens = int(re.search(r"--max-new-tokens (\d+)", command).group(1))
    shown = README.split(command + "```\n\n```\n", 1)[1].split("```", 1)[0]
    assert shown.startswith(prompt) and len(shown) == len(prompt) + new_tokens + 1  # and print's newline


def test_the_graphviz_hint_names_the_missing_python_package(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # as if not installed: importing it raises ImportError
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    written = mg.viz.draw_to_file((x * x).sum(), tmp_path / "graph.png")
    assert written == tmp_path / "graph.dot"
    message = capsys.readouterr().err
    assert "the graphviz Python package is missing: pip install graphviz" in message
    assert "no graphviz `dot` program found" not in message
