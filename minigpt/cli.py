"""The `minigpt` command: `minigpt train`, `minigpt sample` and `minigpt draw` (also `python -m minigpt`).

    minigpt train                                  # the built-in Shakespeare corpus, nanoGPT's CPU settings
    minigpt train --corpus tang --out-dir out-tang # the built-in Tang poems, with settings chosen for them
    minigpt sample --out-dir out-tang --prompt "床前"
    minigpt train --data input.txt --max-iters 500 --out-dir out-mine
    minigpt train --resume --max-iters 4000        # continue the run in out/ to iteration 4000
    minigpt sample --prompt "ROMEO:" --max-new-tokens 300
    minigpt draw --collapse                        # the graph of out/'s model, one node per block -> gpt_graph.svg

Bad arguments or input (flags, a data file, a damaged checkpoint) get one line on stderr naming what is wrong,
and exit status 2, never a traceback. A run that has to stop (its loss diverged, the disk is full) says why in
one line and exits with status 1, its last good checkpoint kept. Ctrl-C and SIGTERM save a checkpoint and exit
with 128 + the signal's number (130, 143), as a process stopped by it would. Output into a pipe whose reader
has gone (`minigpt train | head`) stops quietly, as a Unix tool's does: training saves and exits with 141.
Read next: interop.py, which moves the weights to and from nanoGPT / PyTorch.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import fields
from typing import Any, NoReturn

import numpy as np

import minigrad as mg
from minigpt.checkpoint import load_model
from minigpt.config import CORPUS_DEFAULTS, MAX_THREADS, TrainConfig
from minigpt.corpus import CORPORA
from minigpt.data import DataError
from minigpt.distributed_training import launched_rank_and_size
from minigpt.errors import ConfigError, TrainingError
from minigpt.preflight import config_for_resume
from minigpt.progress import discard_stdout, write_out
from minigpt.threads import thread_chooser
from minigpt.tokenizer import UnknownCharacterError
from minigpt.train import train
from minigrad.viz.render import FORMATS

DEFAULTS = TrainConfig()
STREAM_EVERY = 16  # characters `minigpt sample` writes at a time
TRIAL_CHUNK = 4  # characters a step of the thread trial generates: the trial is short, however slow a count is
SIGPIPE = getattr(signal, "SIGPIPE", 13)  # (13 on every Unix; Windows has no such signal)
TANG = CORPUS_DEFAULTS["tang"]  # where --corpus tang's defaults differ, --help shows both


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line (argparse's own print the usage first), said by rank 0 alone."""

    def error(self, message: str) -> NoReturn:
        _say(f"{self.prog}: error: {message} (see {self.prog} --help)")
        self.exit(2)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def _thread_count(text: str) -> int:
    value = _non_negative_int(text)
    if value > MAX_THREADS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_THREADS}, got {text}")
    return value


def _non_negative_float(text: str) -> float:
    value = float(text)
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), got {text}")
    return value


def _device(text: str) -> str:
    # "strict", the CuPy-like stand-in the tests train on, is accepted but not advertised.
    kind, _, index = text.partition(":")
    if text not in ("cpu", "cuda", "strict") and not (kind == "cuda" and index.isdigit()):
        raise argparse.ArgumentTypeError(f"must be cpu or cuda (or cuda:N for the GPU numbered N), got {text!r}")
    return text


def _path(text: str) -> str:
    if not text.strip():  # `--out-dir "$OUT"` with OUT unset: not the current folder
        raise argparse.ArgumentTypeError("is empty: give a path")
    return text


def _top_p(text: str) -> float:
    value = float(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text}")
    return value


# So that argparse names the expected kind of value in its error ("invalid positive integer value: 'x'").
_positive_int.__name__ = "positive integer"
_non_negative_int.__name__ = "non-negative integer"
_thread_count.__name__ = "thread count"
_non_negative_float.__name__ = "non-negative number"
_fraction.__name__ = "fraction"
_device.__name__ = "device"
_top_p.__name__ = "probability"
_path.__name__ = "path"


def build_parser() -> argparse.ArgumentParser:
    """The `minigpt` command line: the subcommands train, sample and draw."""
    parser = _Parser(prog="minigpt", description="Train a small GPT on a text, sample from it, draw its graph.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{train,sample,draw}",
                                     parser_class=_Parser)
    train = commands.add_parser("train", help="train a GPT (the built-in Shakespeare corpus by default)",
                                description="Train a character-level GPT; defaults are nanoGPT's CPU settings. "
                                "Ctrl-C or SIGTERM saves a checkpoint after the current step and exits (status 130 "
                                "or 143; SIGHUP too, 129; a second one quits at once); so does a closed stdout "
                                "(`minigpt train | head`), quietly, with status 141, as a Unix tool stops when its "
                                "reader goes away.")
    _add_io_flags(train.add_argument_group("I/O"))
    _add_model_flags(train.add_argument_group("data and model"))
    _add_optimisation_flags(train.add_argument_group("optimisation"))
    _add_sample_parser(commands)
    _add_draw_parser(commands)
    return parser


# Every train flag defaults to None, so that `--resume` can tell the flags a user typed (checked against the
# checkpoint) from those left out (taken from it). The help shows the real defaults.
def _flag(group: Any, name: str, help: str, **kwargs: Any) -> None:
    key = name.lstrip("-").replace("-", "_")
    default = f"{getattr(DEFAULTS, key)}" + (f"; with --corpus tang: {TANG[key]}" if key in TANG else "")
    group.add_argument(name, default=None, help=f"{help} (default: {default})", **kwargs)


def _add_io_flags(group: Any) -> None:
    d = DEFAULTS
    group.add_argument("--corpus", choices=list(CORPORA), default=None,
                       help="a built-in text: Shakespeare's plays, or 35,000 Tang poems (绝句 and 律诗, simplified "
                            "characters) with the model settings marked 'with --corpus tang' below "
                            f"(default: {d.corpus})")
    group.add_argument("--data", metavar="PATH", default=None, type=_path,
                       help="a UTF-8 text file to train on, instead of a built-in corpus")
    group.add_argument("--out-dir", metavar="DIR", default=None, type=_path,
                       help=f"where checkpoints, the metrics log and the loss curve go (default: {d.out_dir}/)")
    existing = group.add_mutually_exclusive_group()
    existing.add_argument("--resume", action="store_true",
                          help="continue the run saved in --out-dir up to --max-iters; the other settings come from "
                               "the checkpoint (only --max-iters, --eval-interval, --eval-iters, --device, --threads "
                               "and --data may be given)")
    existing.add_argument("--overwrite", action="store_true",
                          help="start a new run even though --out-dir holds a checkpoint, which the new run's first "
                               "save (at its first evaluation) replaces; Ctrl-C before then keeps the old one as it "
                               "was (without this flag, such a run is refused)")
    group.add_argument("--device", default=None, type=_device, metavar="{cpu,cuda}",
                       help=f"where to train: cpu (NumPy) or cuda (CuPy, an NVIDIA GPU) (default: {d.device})")
    group.add_argument("--threads", default=None, type=_thread_count, metavar="N",
                       help="BLAS threads for the CPU's matrix products; 0 measures the fastest count as the run "
                            "goes, which keeps a busy machine from slowing it down many times (default: 0)")
    _flag(group, "--eval-interval", "evaluate and checkpoint every N iterations", type=_positive_int, metavar="N")
    _flag(group, "--eval-iters", "batches per split in each evaluation, counted in batches of the default "
          f"{d.batch_size} x {d.block_size} tokens: larger batches read as many tokens in fewer of them",
          type=_positive_int, metavar="N")


def _add_model_flags(group: Any) -> None:
    _flag(group, "--batch-size", "sequences per batch", type=_positive_int, metavar="B")
    _flag(group, "--block-size", "context length in characters", type=_positive_int, metavar="T")
    _flag(group, "--n-layer", "transformer blocks", type=_positive_int, metavar="N")
    _flag(group, "--n-head", "attention heads per block", type=_positive_int, metavar="N")
    _flag(group, "--n-embd", "embedding width", type=_positive_int, metavar="C")
    _flag(group, "--dropout", "dropout probability", type=_fraction, metavar="P")
    _flag(group, "--bias", "biases in the Linear and LayerNorm layers", action=argparse.BooleanOptionalAction)
    _flag(group, "--pos-encoding", "position encoding", choices=["learned", "sinusoidal", "rope", "none"])
    _flag(group, "--norm-position", "LayerNorm before (pre, GPT-2) or after (post) each sublayer",
          choices=["pre", "post"])


def _add_optimisation_flags(group: Any) -> None:
    _flag(group, "--max-iters", "train up to this iteration; 0 evaluates the untrained model and writes no "
          "checkpoint", type=_non_negative_int, metavar="N")
    _flag(group, "--lr", "peak learning rate (AdamW); it decays to lr/10", type=_non_negative_float, metavar="LR")
    _flag(group, "--warmup-iters", "iterations of linear warmup", type=_non_negative_int, metavar="N")
    group.add_argument("--lr-decay-iters", type=_non_negative_int, metavar="N", default=None,
                       help="the cosine decay reaches lr/10 here (default: --max-iters of the run's start)")
    group.add_argument("--grad-accum", type=_positive_int, metavar="N", default=None,
                       help="micro-batches of --batch-size sequences per optimizer step, their gradients averaged "
                            "(nanoGPT's gradient_accumulation_steps); under `mpiexec -n R` the ranks share them, so "
                            "N must be a multiple of R (default: 1, or R under mpiexec: one micro-batch per rank)")
    _flag(group, "--grad-clip", "clip the global gradient norm to this, 0 for none", type=_non_negative_float,
          metavar="NORM")
    _flag(group, "--weight-decay", "AdamW weight decay on the 2-D weights", type=_non_negative_float, metavar="WD")
    _flag(group, "--seed", "random seed (weights, batches, dropout)", type=_non_negative_int, metavar="S")


def _add_sample_parser(commands: Any) -> None:
    sample = commands.add_parser("sample", help="print text from a trained checkpoint",
                                 description="Load the checkpoint in --out-dir and continue a prompt. Into a pipe "
                                 "closed early (`minigpt sample | head`) it stops quietly, with status 141.")
    sample.add_argument("--out-dir", metavar="DIR", default=DEFAULTS.out_dir, type=_path,
                        help=f"the checkpoint folder (default: {DEFAULTS.out_dir}/)")
    sample.add_argument("--prompt", default="", help="text to continue (default: start a new line)")
    sample.add_argument("--max-new-tokens", type=_non_negative_int, default=500, metavar="N",
                        help="characters to generate (default: 500)")
    sample.add_argument("--temperature", type=_non_negative_float, default=0.8, metavar="T",
                        help="below 1 is safer, above 1 wilder, 0 is greedy (default: 0.8)")
    sample.add_argument("--top-k", type=_positive_int, default=None, metavar="K",
                        help="draw only from the K likeliest characters (default: all)")
    sample.add_argument("--top-p", type=_top_p, default=None, metavar="P",
                        help="draw only from the likeliest characters that make up probability P (default: 1)")
    sample.add_argument("--seed", type=_non_negative_int, default=1337, metavar="S",
                        help="random seed (default: 1337)")
    sample.add_argument("--threads", type=_thread_count, default=0, metavar="N",
                        help="BLAS threads (default 0: measured as the text is written, as `minigpt train` does)")


def _add_draw_parser(commands: Any) -> None:
    draw = commands.add_parser("draw", help="draw a trained checkpoint's computation graph to a file",
                               description="Load the checkpoint in --out-dir (with every check `minigpt sample` "
                                           "makes) and draw the graph of its loss on a few tokens. Without "
                                           "graphviz's `dot` program it writes the .dot text and says so.")
    draw.add_argument("--out-dir", metavar="DIR", default=DEFAULTS.out_dir, type=_path,
                      help=f"the checkpoint folder (default: {DEFAULTS.out_dir}/)")
    draw.add_argument("--tokens", type=_positive_int, default=8, metavar="T",
                      help="sequence length of the forward pass drawn (at most the model's block_size; default: 8)")
    draw.add_argument("--collapse", nargs="?", const=True, default=None, metavar="PATTERN",
                      help="draw modules as one node each: every numbered block, or those matching PATTERN "
                           "(e.g. 'transformer.h.*')")
    draw.add_argument("--depth", type=_positive_int, metavar="N", help="nest module clusters at most this deep")
    draw.add_argument("--format", choices=FORMATS, default="svg", help="the file's format (default: svg)")
    draw.add_argument("--out", metavar="FILE", type=_path, help="the file to write (default: gpt_graph.FORMAT)")
    draw.add_argument("--rankdir", choices=("LR", "TB"), default="TB", help="layout direction (default: TB)")
    draw.add_argument("--grads", action="store_true", help="show and colour by each tensor's gradient norm")
    draw.add_argument("--values", action="store_true", help="show the values of small tensors")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `minigpt` command; returns the exit status: 0 ok, 1 a run that had to stop, 2 bad input, and
    128 + the signal's number when one stopped it (130 Ctrl-C, 143 SIGTERM, 141 a closed stdout)."""
    if sys.stdout is None:  # started with stdout closed (`minigpt train >&-`): Python has none to write to
        print("minigpt: error: stdout is closed; send it to a file or to /dev/null instead", file=sys.stderr)
        return 2
    try:
        return _run(build_parser().parse_args(argv))
    except BrokenPipeError:  # the reader of stdout has gone (`minigpt sample | head`): stop quietly, as Unix tools do
        discard_stdout()
        return 128 + SIGPIPE


def _run(args: argparse.Namespace) -> int:
    prog = f"minigpt {args.command}"
    try:  # reads MINIGRAD_KERNELS: a bad value is the user's input, and a warning a note, each said in one line
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            mg.kernels.implementation()
    except ValueError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    for warning in said:  # (not Python's own form, which adds the line of source code that warned)
        _say(f"{prog}: note: {warning.message}")
    try:
        rank, _ = launched_rank_and_size()
    except ValueError as error:  # PMI_SIZE=abc: the launcher's variables are input too
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    if args.command != "train" and rank != 0:
        return 0  # under mpiexec: rank 0 samples (or draws) and prints, once; the other ranks have nothing to do
    try:
        if args.command == "train":
            return _train(args)
        if args.command == "draw":
            return _draw(args)
        return _sample(args)
    except UnicodeEncodeError as error:  # PYTHONIOENCODING=ascii and a Chinese path or sample
        _say(f"{prog}: error: this terminal's encoding ({error.encoding}) cannot show "
             f"{error.object[error.start:error.end]!r}: set PYTHONIOENCODING=utf-8, or use a UTF-8 locale")
        return 2
    except (ConfigError, DataError, mg.CheckpointError, UnknownCharacterError) as error:
        _say(f"{prog}: error: {error}")
        return 2
    except TrainingError as error:
        _say(f"{prog}: stopped: {error}")
        return 1
    except BrokenPipeError:
        raise
    except OSError as error:  # the machine's, not the input's: a full disk, a folder removed under us
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as error:  # a second Ctrl-C or SIGTERM: stop at once, without saving
        print(f"\n{prog}: interrupted", file=sys.stderr)
        return 128 + getattr(error, "signum", signal.SIGINT)


def _say(line: str) -> None:
    """A refusal on stderr, once: under `mpiexec -n N` every rank refuses alike, and rank 0 speaks for them."""
    try:
        rank = launched_rank_and_size()[0]
    except ValueError:  # (said by _run, once)
        rank = 0
    if rank == 0:
        print(line, file=sys.stderr)


def _train(args: argparse.Namespace) -> int:
    names = {f.name for f in fields(TrainConfig)} - {"resume", "overwrite"}
    given = {name: value for name, value in vars(args).items() if name in names and value is not None}
    if args.corpus is not None and args.data is not None:
        raise ConfigError(f"--corpus {args.corpus} and --data {args.data}: give one text to train on, not both")
    if args.resume:
        config = config_for_resume(args.out_dir or DEFAULTS.out_dir, given)
    else:
        config = TrainConfig.for_corpus(given.pop("corpus", DEFAULTS.corpus), **given, overwrite=args.overwrite)
    result = train(config)
    return 128 + result.signum if result.interrupted else 0


def _sample(args: argparse.Namespace) -> int:
    model, tokenizer = load_model(args.out_dir)
    # An empty prompt starts the text at a new line, as the training text's speeches do.
    start = args.prompt if args.prompt else ("\n" if "\n" in tokenizer.stoi else tokenizer.chars[0])
    try:
        ids = tokenizer.encode(start)
    except UnknownCharacterError as error:
        raise UnknownCharacterError(f"--prompt: {error}") from None
    mg.manual_seed(args.seed)
    # The thread count is measured as the text is written: first a trial of one timed chunk per count (after one
    # to settle), again whenever the count chosen turns slow; beside a busy process one thread can be ten times
    # faster than all of them.
    chooser, _ = thread_chooser(args.threads, "cpu", every=1_000, trial_steps=1)
    if args.prompt:
        _write(args.prompt)
    ids = np.array([ids])  # (1, T)
    # Written as it is generated, STREAM_EVERY characters at a time (TRIAL_CHUNK in a trial), so that `| head`
    # stops it early. generate continues the same draws from the same seed whether it is called once or in pieces.
    done = 0
    while done < args.max_new_tokens:
        chooser.before_step()
        n = min(TRIAL_CHUNK if chooser.trying is not None else STREAM_EVERY, args.max_new_tokens - done)
        started = time.perf_counter()
        out = model.generate(ids, n, temperature=args.temperature, top_k=args.top_k, top_p=args.top_p)
        chooser.after_step((time.perf_counter() - started) / n)  # per character: trial chunks are shorter
        _write(tokenizer.decode(out[0, ids.shape[1]:].tolist()))
        ids, done = out, done + n
    _write("\n")
    return 0


def _write(text: str) -> None:
    write_out(text)


def _draw(args: argparse.Namespace) -> int:
    model, _ = load_model(args.out_dir)  # every check `minigpt sample` makes
    T = min(args.tokens, model.config.block_size)
    idx = np.arange(T).reshape(1, T) % model.config.vocab_size  # (1, T): any ids will do for the graph's shape
    with mg.viz.record_modules(model):
        _, loss = model(idx, np.roll(idx, -1, axis=1))
    loss.name = "loss"
    out = args.out or f"gpt_graph.{args.format}"
    written = mg.viz.draw_to_file(loss, out, format=args.format, model=model, collapse=args.collapse,
                                  depth=args.depth, rankdir=args.rankdir, grads=args.grads, values=args.values)
    write_out(f"wrote {written}\n")
    return 0
