"""Damaged and hostile checkpoint folders: every one is refused by `minigpt sample`, `minigpt draw` and
`minigpt train --resume` with exit status 2 and one line on stderr that names the file (and the field) at fault,
in well under a second, without a traceback, a wait on a FIFO, a read of /dev/zero, JSON nested past Python's
recursion limit, or an allocation the size of the config's claims.

Each case takes a fresh copy of one real checkpoint and damages one file. `rewrite` also updates the manifest,
as a stranger's folder would: then only the file's content, not its hash, can give it away.
"""

import json
import os
import pickle
import shutil
import signal
import time

import numpy as np
import pytest
from checkpoint_helpers import TEXT, read_json, rewrite, write_checkpoint

import minigrad as mg
from minigpt import checkpoint
from minigpt.checkpoint import CONFIG, MANIFEST, METRICS, MODEL, OPTIMIZER, STATE, TOKENIZER
from minigpt.cli import main
from minigrad.tools.serialization import to_bytes

ITER = 2


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    (folder / "input.txt").write_text(TEXT, encoding="utf-8")
    write_checkpoint(folder / "out", ITER, data_path=folder / "input.txt")
    return folder


@pytest.fixture
def out(pristine, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where `minigpt draw` would write its file (and does not)
    shutil.copytree(pristine / "out", tmp_path / "out")
    return tmp_path / "out"


def edit_json(name, change):
    """A damage: load `name`'s JSON, let `change` edit it in place, and write it back (manifest updated)."""
    def damage(out):
        value = read_json(out, name)
        change(value)
        rewrite(out, name, value)
    return damage


def replace_with(name, make):
    """A damage: put what `make(path)` creates where `name` was (the manifest unchanged)."""
    def damage(out):
        (out / name).unlink()
        make(out / name)
    return damage


def edit_tensors(name, change, metadata=None):
    """A damage: load `name`'s tensors (as NumPy arrays), let `change` edit the dict, and write them back."""
    def damage(out):
        tensors = {key: t.numpy() for key, t in mg.load(out / name).items()}
        old = mg.load_metadata(out / name)
        change(tensors)
        rewrite(out, name, to_bytes(tensors, metadata=old if metadata is None else metadata(old)))
    return damage


def with_metadata(key, value):
    return lambda old: {**old, key: value}


def setitem(path, value):
    """change(record) that sets record[a][b]... = value for the dotted `path`."""
    *parents, last = path.split(".")

    def change(record):
        for key in parents:
            record = record[key]
        record[last] = value
    return change


def delitem(path):
    *parents, last = path.split(".")

    def change(record):
        for key in parents:
            record = record[key]
        del record[last]
    return change


def sparse(path):
    """A file that claims 1.5 GB and takes no disk space."""
    path.touch()
    os.truncate(path, 3 * 2**29)


def raw(name, data):
    return lambda out: (out / name).write_bytes(data)


NESTED = b"[" * 100_000 + b"]" * 100_000  # valid JSON, 200 kB, past Python's recursion limit

FIFO = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
DEVICE = pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
ALL, RESUME = ("sample", "draw", "resume"), ("resume",)

# (id, damage, the commands that read the damaged part, what the message must say)
CASES = [
    # manifest.json: read first, bounded, and checked key by key
    ("manifest not JSON", raw(MANIFEST, b"{"), ALL, "manifest.json: not valid JSON"),
    ("manifest a list", raw(MANIFEST, b"[]"), ALL, "manifest.json: expected a JSON object"),
    ("manifest NaN", raw(MANIFEST, b'{"format": NaN}'), ALL, "manifest.json: not valid JSON (NaN is not a JSON"),
    ("manifest without files", edit_json(MANIFEST, delitem("files")), ALL, "manifest.json: files is missing"),
    ("manifest iter_num 1.5", edit_json(MANIFEST, setitem("iter_num", 1.5)), ALL,
     "manifest.json: iter_num must be an integer >= 0, got 1.5"),
    ("manifest format 1", edit_json(MANIFEST, setitem("format", 1)), ALL, "checkpoint format 1, this minigpt reads"),
    ("manifest bytes a string", edit_json(MANIFEST, lambda m: m["files"][MODEL].update(bytes="x")), ALL,
     f"manifest.json: files.{MODEL}.bytes must be an integer >= 0, got 'x'"),
    ("manifest nested 100,000 deep", raw(MANIFEST, NESTED), ALL, "manifest.json: not valid JSON (nested too deeply)"),
    ("manifest 2 MiB", raw(MANIFEST, b" " * 2**21 + b"{}"), ALL, "manifest.json: 2,097,154 bytes, more than"),
    pytest.param("manifest a directory", replace_with(MANIFEST, os.mkdir), ALL,
                 "manifest.json: a directory, not a regular file"),
    pytest.param("manifest a FIFO", replace_with(MANIFEST, os.mkfifo), ALL, "manifest.json: a FIFO", marks=FIFO),
    pytest.param("manifest /dev/zero", replace_with(MANIFEST, lambda p: p.symlink_to("/dev/zero")), ALL,
                 "manifest.json: a device, not a regular file", marks=DEVICE),
    # config.json
    pytest.param("config a directory", replace_with(CONFIG, os.mkdir), ALL, "config.json: a directory"),
    pytest.param("config a FIFO", replace_with(CONFIG, os.mkfifo), ALL, "config.json: a FIFO", marks=FIFO),
    pytest.param("config /dev/zero", replace_with(CONFIG, lambda p: p.symlink_to("/dev/zero")), ALL,
                 "config.json: a device", marks=DEVICE),
    ("config sparse 1.5 GB", replace_with(CONFIG, sparse), ALL,
     "config.json: 1,610,612,736 bytes, more than the"),
    ("config nested 100,000 deep", lambda out: rewrite(out, CONFIG, NESTED), ALL,
     "config.json: not valid JSON (nested too deeply)"),
    ("config n_layer a string", edit_json(CONFIG, setitem("model.n_layer", "4")), ALL,
     "config.json: model.n_layer must be an integer, got '4'"),
    ("config n_embd huge", edit_json(CONFIG, setitem("model.n_embd", 2 * 10**7)), ALL,
     "config.json: model: 4,800,000,820,000,000 parameters need about"),
    ("config block_size huge", edit_json(CONFIG, setitem("model.block_size", 10**12)), ALL,
     "config.json: model: 16,000,000,003,600 parameters need about"),
    ("config rope tables huge", edit_json(CONFIG, lambda c: c["model"].update(pos_encoding="rope", block_size=10**11)),
     ALL, "config.json: model: 3,600 parameters need about"),
    ("config without vocab_size", edit_json(CONFIG, delitem("model.vocab_size")), ALL,
     "config.json: model.vocab_size is missing"),
    ("config unknown field", edit_json(CONFIG, setitem("model.n_expert", 8)), ALL,
     "config.json: model.n_expert is not a setting of GPTConfig"),
    ("config dropout 1.5", edit_json(CONFIG, setitem("model.dropout", 1.5)), ALL,
     "config.json: model: GPTConfig: dropout must be in [0, 1)"),
    ("config data sha256", edit_json(CONFIG, setitem("data.sha256", "x")), ALL,
     "config.json: data.sha256 must be a hex SHA-256"),
    ("config without schedule", edit_json(CONFIG, delitem("schedule")), ALL, "config.json: schedule is missing"),
    ("config eval_iters 1e9", edit_json(CONFIG, setitem("train.eval_iters", 1e9)), RESUME,
     "config.json: train.eval_iters must be an integer, got 1000000000.0"),
    ("config lr a string", edit_json(CONFIG, setitem("train.lr", "fast")), RESUME,
     "config.json: train.lr must be a finite number, got 'fast'"),
    ("config batch_size 0", edit_json(CONFIG, setitem("train.batch_size", 0)), RESUME,
     "config.json: train.batch_size must be at least 1, got 0"),
    ("config without max_iters", edit_json(CONFIG, delitem("train.max_iters")), RESUME,
     "config.json: train.max_iters is missing"),
    # state.json
    ("state nested 100,000 deep", lambda out: rewrite(out, STATE, NESTED), ALL,
     "state.json: not valid JSON (nested too deeply)"),
    ("state iter_num 1.5", edit_json(STATE, setitem("iter_num", 1.5)), ALL,
     "state.json: iter_num must be an integer >= 0, got 1.5"),
    ("state iter_num not the manifest's", edit_json(STATE, setitem("iter_num", 999)), ALL,
     f"state.json: iter_num is 999, the manifest's is {ITER}"),
    ("state best_val_loss a string", edit_json(STATE, setitem("best_val_loss", "low")), ALL,
     "state.json: best_val_loss must be a finite number"),
    ("state batch_rng damaged", edit_json(STATE, setitem("batch_rng.state", "x")), ALL,
     "state.json: batch_rng is not a PCG64 generator state"),
    ("state minigrad_rng seed", edit_json(STATE, setitem("minigrad_rng.seed", "x")), ALL,
     "state.json: minigrad_rng.seed must be an integer or null"),
    ("state without minigrad_rng", edit_json(STATE, delitem("minigrad_rng")), ALL,
     "state.json: minigrad_rng is missing"),
    # tokenizer.json
    pytest.param("tokenizer a directory", replace_with(TOKENIZER, os.mkdir), ALL, "tokenizer.json: a directory"),
    ("tokenizer not JSON", lambda out: rewrite(out, TOKENIZER, b"chars"), ALL, "tokenizer.json: "),
    ("tokenizer nested 100,000 deep", lambda out: rewrite(out, TOKENIZER, NESTED), ALL,
     "tokenizer.json: not valid JSON (nested too deeply)"),
    ("tokenizer chars not a list", edit_json(TOKENIZER, setitem("chars", "abc")), ALL,
     'tokenizer.json: CharTokenizer.from_json: expected {"type": "char", "chars": [...]}'),
    ("tokenizer two-character entry", edit_json(TOKENIZER, lambda t: t["chars"].__setitem__(0, "ab")), ALL,
     "tokenizer.json: CharTokenizer: every vocabulary entry must be one character, got 'ab'"),
    ("tokenizer of another size", edit_json(TOKENIZER, lambda t: t["chars"].pop()), ALL,
     "tokenizer.json: 29 characters, the model's vocab_size is 30"),
    # metrics.jsonl
    ("metrics line not JSON", lambda out: rewrite(out, METRICS, b'{"iter": 1}\nnot json\n'), ALL,
     "metrics.jsonl: line 2: not valid JSON"),
    ("metrics line nested 100,000 deep", lambda out: rewrite(out, METRICS, NESTED + b"\n"), ALL,
     "metrics.jsonl: line 1: not valid JSON (nested too deeply)"),
    ("metrics line a list", lambda out: rewrite(out, METRICS, b"[1]\n"), ALL,
     "metrics.jsonl: line 1: expected a JSON object"),
    ("metrics iter a string", lambda out: rewrite(out, METRICS, b'{"iter": "3"}\n'), ALL,
     "metrics.jsonl: line 1: iter must be an integer >= 0"),
    ("metrics loss a string", lambda out: rewrite(out, METRICS, b'{"iter": 3, "loss": "low"}\n'), ALL,
     "metrics.jsonl: line 1: loss must be a finite number"),
    # model.safetensors
    ("weights truncated", lambda out: (out / MODEL).write_bytes((out / MODEL).read_bytes()[:-100]), ALL,
     "model.safetensors: damaged: it does not match its size and hash"),
    ("weights missing", lambda out: (out / MODEL).unlink(), ALL, "damaged checkpoint: model.safetensors is missing"),
    pytest.param("weights a FIFO", replace_with(MODEL, os.mkfifo), ALL, "model.safetensors: a FIFO", marks=FIFO),
    ("weights a pickle", lambda out: rewrite(out, MODEL, pickle.dumps({"w": [1.0]})), ALL,
     "model.safetensors: this looks like a pickle"),
    ("weights header claims huge tensors",
     lambda out: rewrite(out, MODEL, _header_only({"w": {"dtype": "F32", "shape": [10**9, 10**9],
                                                         "data_offsets": [0, 4 * 10**18]}})), ALL,
     "model.safetensors: not a valid safetensors file"),
    ("weights header nested 100,000 deep", lambda out: rewrite(out, MODEL, len(NESTED).to_bytes(8, "little") + NESTED),
     ALL, "model.safetensors: not a valid safetensors file: its header is nested too deeply"),
    ("weights NaN", edit_tensors(MODEL, lambda t: t["transformer.wte.weight"].__setitem__((1, 2), np.nan)), ALL,
     "model.safetensors: transformer.wte.weight holds non-finite values"),
    ("weights a wrong shape", edit_tensors(MODEL, lambda t: t.update({"transformer.ln_f.weight": np.ones(3, "f4")})),
     ALL,
     "model.safetensors: transformer.ln_f.weight is float32 minigrad.Size([3]), the model's is float32 "
     "minigrad.Size([16])"),
    ("weights float64", edit_tensors(MODEL, lambda t: t.update(
        {"transformer.ln_f.weight": t["transformer.ln_f.weight"].astype(np.float64)})), ALL,
     "model.safetensors: transformer.ln_f.weight is float64 minigrad.Size([16]), the model's is float32 "
     "minigrad.Size([16])"),
    ("weights a key missing", edit_tensors(MODEL, lambda t: t.pop("transformer.ln_f.weight")), ALL,
     "model.safetensors: the tensors do not match the model of config.json: missing transformer.ln_f.weight"),
    ("weights an extra key", edit_tensors(MODEL, lambda t: t.update(extra=np.ones(2, "f4"))), ALL,
     "model.safetensors: the tensors do not match the model of config.json: unexpected extra"),
    # optimizer.safetensors (read by --resume only)
    ("optimizer without metadata", edit_tensors(OPTIMIZER, lambda t: None, metadata=lambda old: {}), RESUME,
     "optimizer.safetensors: the metadata has no 'optimizer.state'"),
    ("optimizer state not JSON", edit_tensors(OPTIMIZER, lambda t: None,
                                              metadata=with_metadata("optimizer.state", "{")), RESUME,
     "optimizer.safetensors: metadata 'optimizer.state' is not JSON"),
    ("optimizer step a string", edit_tensors(OPTIMIZER, lambda t: None,
                                             metadata=with_metadata("optimizer.state", '{"0": {"step": "x"}}')),
     RESUME, "optimizer.safetensors: state.0.step must be an integer >= 0, got 'x'"),
    ("optimizer moment of a wrong shape", edit_tensors(OPTIMIZER, lambda t: t.update({"state.0.exp_avg": np.ones(2)})),
     RESUME, "optimizer.safetensors: state.0.exp_avg is minigrad.Size([2]), its parameter is"),
    ("optimizer moment missing", edit_tensors(OPTIMIZER, lambda t: t.pop("state.1.exp_avg_sq")), RESUME,
     "optimizer.safetensors: state.1.exp_avg_sq is missing, its parameter is"),
    ("optimizer header nested 100,000 deep",
     lambda out: rewrite(out, OPTIMIZER, len(NESTED).to_bytes(8, "little") + NESTED), RESUME,
     "optimizer.safetensors: not a valid safetensors file: its header is nested too deeply"),
    ("optimizer moment NaN", edit_tensors(OPTIMIZER, lambda t: t["state.2.exp_avg"].fill(np.nan)), RESUME,
     "optimizer.safetensors: state.2.exp_avg holds values an AdamW moment cannot have"),
    ("optimizer no parameter groups", edit_tensors(OPTIMIZER, lambda t: None,
                                                   metadata=with_metadata("optimizer.param_groups", "[]")), RESUME,
     "optimizer.safetensors: 0 parameter groups, the model needs 2"),
    ("optimizer a bad parameter index", edit_tensors(OPTIMIZER, lambda t: t.update({"state.x.exp_avg": np.ones(1)})),
     RESUME, "optimizer.safetensors: state.x.exp_avg: 'x' is not a parameter index"),
]


def _header_only(header):
    text = json.dumps(header).encode()
    return len(text).to_bytes(8, "little") + text


@pytest.fixture
def deadline():
    """Fail (instead of hanging) if a case takes more than 30 s: a FIFO that is opened blocks forever."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def timeout(signum, frame):
        raise TimeoutError("this case blocked for 30 s")

    previous = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


CASES = [case if hasattr(case, "marks") else pytest.param(*case) for case in CASES]


@pytest.mark.parametrize(("case", "damage", "commands", "message"), CASES, ids=[case.values[0] for case in CASES])
def test_a_damaged_or_hostile_checkpoint_is_one_line_and_exit_status_2(out, capsys, deadline, case, damage, commands,
                                                                       message):
    damage(out)
    for command in commands:
        argv = {"sample": ["sample", "--out-dir", str(out), "--max-new-tokens", "5"],
                "draw": ["draw", "--out-dir", str(out), "--format", "dot"],
                "resume": ["train", "--resume", "--out-dir", str(out), "--max-iters", str(ITER + 1)]}[command]
        start = time.perf_counter()
        status = main(argv)
        seconds = time.perf_counter() - start
        err = capsys.readouterr().err
        assert status == 2, f"{command}: {err}"
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert message in err, f"{command}: {err}"
        assert seconds < 5, f"{command} took {seconds:.1f} s"
    assert checkpoint.iteration(out) in (ITER, None)  # nothing was trained or saved over it
    assert not (out.parent / "gpt_graph.dot").exists()  # nor drawn
