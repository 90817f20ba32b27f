"""The crossing recipe (tutorials/crossing.py): its flags are `minigpt train`'s, a 5-step version of it runs, and
its shipped record (tutorials/records/crossing.json) has the schema lecture 07 §2 reads.
Read next: test_scaling.py.
"""

import pytest

from minigpt.cli import build_parser
from tutorials import crossing


def test_the_recipe_parses_as_minigpt_train_flags():
    argv = crossing.command("out/x", threads=1)
    assert argv[1:4] == ["-m", "minigpt", "train"]
    args = build_parser().parse_args(argv[3:])  # from "train" on
    assert args.n_layer == crossing.RECIPE["n-layer"] and args.n_embd == crossing.RECIPE["n-embd"]
    assert args.block_size == 64  # the yardstick's windows: a shorter context could not score them
    assert args.max_iters == crossing.RECIPE["max-iters"] and args.lr == crossing.RECIPE["lr"]
    shown = crossing.shell_command().split()
    assert build_parser().parse_args(shown[3:]).batch_size == crossing.RECIPE["batch-size"]


def test_a_five_step_piece_of_the_recipe_runs(tmp_path):
    """The quick-mode piece: the same recipe and schedule, cut after a few steps."""
    metrics = crossing.run(tmp_path / "run", max_iters=5, eval_interval=5, eval_iters=1,
                           lr_decay_iters=crossing.RECIPE["max-iters"])
    evals = crossing.evaluations(metrics)
    assert [m["iter"] for m in evals] == [0, 5]
    assert evals[-1]["val_loss"] < evals[0]["val_loss"]
    assert (tmp_path / "run" / "model.safetensors").exists()


def test_a_failing_run_raises_with_its_message(tmp_path):
    with pytest.raises(RuntimeError, match="exit status"):
        crossing.run(tmp_path / "run", max_iters=5, n_embd=97)  # 97 channels do not split into 3 heads


@pytest.mark.skipif(not crossing.RECORD.exists(), reason="no crossing record shipped")
def test_the_crossing_record_has_its_schema_and_crosses():
    record = crossing.load_record()
    assert {"command", "settings", "cpu", "wall_seconds", "tokens_per_s", "yardstick", "evaluations"} <= set(record)
    y = record["yardstick"]
    assert y["nats"] < y["ngram_nats"]  # below the 5-gram ...
    assert y["gap_vs_ngram"] < -2 * y["gap_vs_ngram_err"]  # ... by more than two standard errors (as 07 asserts)
    assert record["settings"] == crossing.RECIPE  # the record is of this very recipe


def test_lecture_07_shows_the_recipe_it_runs():
    """The command printed in lecture 07 §2's text is the recipe, flag for flag (so the two cannot drift apart)."""
    text = (crossing.RECORD.parents[1] / "07_summary.py").read_text(encoding="utf-8")
    shown = text.split("# ```bash\n# python -m minigpt train", 1)[1].split("# ```", 1)[0]
    shown = "python -m minigpt train" + shown.replace("\\\n#", " ")
    assert shown.split() == crossing.shell_command().split()


def test_the_readme_shows_the_recipe_and_its_recorded_score():
    readme = (crossing.RECORD.parents[2] / "benchmarks" / "README.md").read_text(encoding="utf-8")
    shown = readme.split("```bash\npython -m minigpt train --out-dir out/crossing", 1)[1].split("```", 1)[0]
    shown = "python -m minigpt train --out-dir out/crossing" + shown.replace("\\\n", " ")
    assert shown.split() == crossing.shell_command().split()
    if crossing.RECORD.exists():
        assert f"**{crossing.load_record()['yardstick']['nats']:.3f}**" in readme
