"""Drawing DOT text with graphviz: `draw` (one picture) and `backward_frames` (the backward pass, step by step).

Both need graphviz's `dot` program to make pictures (the graphviz Python package only gives `draw` a Digraph
to return); without the program they write the `.dot` text and say, in one line, how to install graphviz.
`backward_frames` listens to the engine's own backward pass (`autograd.backward(..., on_step=...)`), so its
frames show the order in which the engine really completes each gradient; Pillow, when installed, joins them
into an animated GIF. Every file is written through files.write_file: never through a link, never half-written.

Read next: plots.py, for the matplotlib figures of the lectures.
"""

from __future__ import annotations

import base64
import html
import io
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from minigrad.tensor import Tensor
from minigrad.tools.files import make_folder, write_file
from minigrad.viz.dot import _DotWriter, _resolve_grads, format_shape
from minigrad.viz.graph import gradient_norms

FORMATS = ("svg", "png", "pdf", "dot")  # "dot": the DOT text itself, no graphviz needed
# Rendering needs graphviz's `dot` program; the graphviz Python package gives `draw` a Digraph to return.
INSTALL_DOT = ("apt install graphviz (Debian/Ubuntu), brew install graphviz (macOS), conda install graphviz, or "
               "winget install graphviz (Windows)")
INSTALL_PACKAGE = "pip install graphviz (or pip install -e '.[viz]')"


def _output_path(path: str | Path, format: str) -> tuple[Path, str]:
    """`graph.png` sets the format from its suffix; `graph` gets the suffix of `format`."""
    path = Path(path)
    if path.suffix.lstrip(".").lower() in FORMATS:
        return path, path.suffix.lstrip(".").lower()
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    return path.with_name(path.name + "." + format), format


def _render(body: list[str], path: Path | None, format: str, say: bool = True) -> tuple[Any, Path | None]:
    """A graphviz.Digraph of `body` (None without the graphviz Python package), and the file written to `path`.

    The picture is made by graphviz's `dot` program itself, so the Python package is needed only for the Digraph
    that Jupyter shows inline. Without the program (or when it fails) the DOT text is written instead, beside
    `path` with a `.dot` suffix, and, if `say`, one line tells what to install.
    """
    source = "digraph minigrad {\n" + "".join(body) + "}\n"
    try:
        import graphviz
    except ImportError:
        graphviz = None
    digraph = graphviz.Digraph("minigrad", body=body) if graphviz is not None else None
    if path is None:
        if digraph is None and say:  # nothing to render and nothing to return: say why
            print(f"minigrad.viz: the graphviz Python package is missing: {INSTALL_PACKAGE}", file=sys.stderr)
        return digraph, None
    make_folder(path.parent)
    if format == "dot":
        return digraph, write_file(path, source)
    picture, why_not = _run_dot(source, format)
    if picture is not None:
        return digraph, write_file(path, picture)
    dot_path = write_file(path.with_suffix(".dot"), source)
    if say:
        print(f"minigrad.viz: wrote {dot_path} instead ({why_not})", file=sys.stderr)
    return digraph, dot_path


def _run_dot(source: str, format: str) -> tuple[bytes | None, str]:
    """(the picture, "") from graphviz's `dot` program, or (None, why not: what to install, or how it failed)."""
    program = shutil.which("dot")
    if program is None:
        return None, f"no graphviz `dot` program found: {INSTALL_DOT}"
    try:
        result = subprocess.run([program, f"-T{format}"], input=source.encode("utf-8"), capture_output=True)
    except OSError as error:  # not a program at all (a broken install)
        return None, f"graphviz's `dot` program at {program} cannot run ({error.strerror}): reinstall it, {INSTALL_DOT}"
    if result.returncode != 0 or not result.stdout:
        said = (result.stderr.decode("utf-8", "replace").strip().splitlines() or ["no output"])[0]
        return None, f"graphviz's `dot` program at {program} failed (exit status {result.returncode}: {said})"
    return result.stdout, ""


def draw(tensor: Tensor, path: str | Path | None = None, format: str = "svg", **options: Any) -> Any:
    """Draw the graph that computed `tensor`; returns a `graphviz.Digraph` (Jupyter shows it inline).

    With `path` ("graph" or "graph.png"), also render it to a file in `format` ("svg", "png", "pdf", or
    "dot" for the DOT text; a suffix on `path` wins). Without graphviz's `dot` program, the DOT text
    goes to `path` with a `.dot` suffix instead and one line on stderr says how to install graphviz.
    The options are those of `to_dot` (model=, names=, rankdir=, values=, grads=, cluster=, depth=,
    collapse=, title=).
    Returns None when the `graphviz` Python package is missing (the file is drawn all the same).
    """
    return _draw(tensor, path, format, options)[0]


def draw_to_file(tensor: Tensor, path: str | Path, format: str = "svg", **options: Any) -> Path:
    """As `draw`, but returns the path of the file written (the `.dot` file when graphviz is missing)."""
    return _draw(tensor, path, format, options)[1]


def _draw(tensor: Tensor, path: str | Path | None, format: str, options: dict[str, Any]) -> tuple[Any, Path | None]:
    options = dict(options)
    grads = _resolve_grads(tensor, options.pop("grads", False))
    writer = _DotWriter(tensor, grads=grads, **_defaults(options))
    target, fmt = _output_path(path, format) if path is not None else (None, format)
    return _render(writer.body(), target, fmt)


def _defaults(options: dict[str, Any]) -> dict[str, Any]:
    known = {"model": None, "names": None, "rankdir": "LR", "values": False, "cluster": True, "depth": None,
             "collapse": None, "title": None}
    unknown = set(options) - set(known)
    if unknown:
        raise TypeError(f"unknown drawing option(s): {', '.join(sorted(unknown))}")
    return {**known, **options}


def backward_frames(
    loss: Tensor,
    out_dir: str | Path,
    format: str = "png",
    gif: bool = True,
    html_page: bool = True,
    duration_ms: int = 900,
    **options: Any,
) -> list[Path]:
    """One picture per step of the backward pass from `loss`, in the order the engine takes them.

    Frame k highlights (a thick black border) the tensor whose gradient the engine completed at step k and shows
    every gradient known by then: its norm, and its colour on the log scale of the whole pass. The
    layout is the same in every frame (gradients not known yet are drawn invisibly), so the frames
    animate cleanly. The backward pass is the engine's own, with `retain_graph=True`; `.grad` is left
    as it was. Call it before `loss.backward()` or after `loss.backward(retain_graph=True)`.

    Writes `out_dir/frame_000.png` ... (or .svg, .pdf, .dot), `backward.gif` (needs Pillow and png frames) and
    `backward.html` (a page with a slider; the frames inlined, so it is self-contained). Returns the
    frame paths (`.dot` files when graphviz's `dot` program is missing). Options as `to_dot`.
    """
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    out_dir = Path(out_dir)
    make_folder(out_dir)
    steps = gradient_norms(loss)
    options = _defaults(options)
    paths: list[Path] = []
    for k, step in enumerate(steps):
        writer = _DotWriter(loss, grads=steps, highlight=step.tensor, known=k + 1,
                            **{**options, "title": None})
        i = writer.index[id(step.tensor)]
        where = f" (inside {writer.home[i]})" if writer.home[i] is not None else ""
        caption = (f"backward step {k + 1}/{len(steps)}: gradient of {writer.tensor_name(i)}{where} "
                   f"{format_shape(step.tensor.shape)} complete, norm {step.norm:.2e}")
        if options["title"]:
            caption = f"{options['title']}\n{caption}"
        writer.title = caption
        _, written = _render(writer.body(), out_dir / f"frame_{k:03d}.{format}", format, say=k == 0)
        paths.append(written)
    if gif and paths and all(p.suffix == ".png" for p in paths):
        _write_gif(paths, out_dir / "backward.gif", duration_ms)
    if html_page and paths and all(p.suffix in (".png", ".svg") for p in paths):
        _write_html(paths, out_dir / "backward.html", duration_ms)
    return paths


def _write_gif(paths: list[Path], out: Path, duration_ms: int) -> Path | None:
    """Join PNG frames into an animated GIF, each centred on a white canvas of the largest frame's size."""
    try:
        from PIL import Image
    except ImportError:
        print("minigrad.viz: pip install pillow to get an animated GIF of the frames", file=sys.stderr)
        return None
    images = [Image.open(p).convert("RGB") for p in paths]
    width, height = max(im.width for im in images), max(im.height for im in images)
    frames = []
    for im in images:
        canvas = Image.new("RGB", (width, height), "white")
        canvas.paste(im, ((width - im.width) // 2, (height - im.height) // 2))
        frames.append(canvas.convert("P", palette=Image.Palette.ADAPTIVE, colors=64))
    buffer = io.BytesIO()
    frames[0].save(buffer, format="GIF", save_all=True, append_images=frames[1:], duration=duration_ms, loop=0,
                   optimize=True)
    return write_file(out, buffer.getvalue())


def _write_html(paths: list[Path], out: Path, duration_ms: int) -> Path:
    """A self-contained page: the frames inlined as base64, a slider and a play button."""
    mime = {".png": "image/png", ".svg": "image/svg+xml"}
    sources = [f"data:{mime[p.suffix]};base64,{base64.b64encode(p.read_bytes()).decode()}" for p in paths]
    images = "\n".join(f'<img src="{s}" style="display:{"block" if k == 0 else "none"}">'
                       for k, s in enumerate(sources))
    page = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{html.escape(out.stem)}: the backward pass step by step</title>
<style>body{{font-family:sans-serif;margin:1em}} img{{max-width:100%}}</style></head><body>
<p><button id="play">play</button> <input id="step" type="range" min="0" max="{len(paths) - 1}" value="0"
 style="width:60%"> step <span id="n">1</span> / {len(paths)}</p>
<div id="frames">
{images}
</div>
<script>
const frames = document.querySelectorAll("#frames img"), slider = document.getElementById("step");
function show(k) {{ frames.forEach((f, i) => f.style.display = i == k ? "block" : "none");
  slider.value = k; document.getElementById("n").textContent = +k + 1; }}
slider.oninput = () => show(slider.value);
let timer = null;
document.getElementById("play").onclick = () => {{
  if (timer) {{ clearInterval(timer); timer = null; return; }}
  timer = setInterval(() => show((+slider.value + 1) % frames.length), {duration_ms});
}};
</script></body></html>
"""
    return write_file(out, page)
