"""`minigrad.viz`: pictures that teach - computation graphs, the backward pass step by step, and plots.

    import minigrad as mg
    print(mg.viz.to_dot(loss))                       # DOT text; no graphviz needed
    mg.viz.draw(loss, "loss_graph", format="png")    # renders with graphviz's `dot`
    with mg.viz.record_modules(model):               # group ops by module, collapse blocks
        logits, loss = model(idx, targets)
    mg.viz.draw(loss, "gpt", model=model, collapse="transformer.h.*", rankdir="TB")
    mg.viz.backward_frames(loss, "frames/")          # one picture per step of backward, a GIF, an HTML page

The plots (attention maps, gradient norms, loss curves, positional encodings) are in `minigrad.viz.plots`
and re-exported here (`mg.viz.plot_attention(model.attention_maps(idx), "床前明月光")`).
Importing this package stays light: graphviz, matplotlib and Pillow are imported only by the functions
that need them. Read graph.py, then dot.py, then render.py.
"""

from minigrad.viz import plots
from minigrad.viz.dot import to_dot
from minigrad.viz.graph import GradStep, gradient_norms, record_modules, walk
from minigrad.viz.plots import (
    plot_attention,
    plot_grad_norms,
    plot_loss_curves,
    plot_positional_encoding,
    use_cjk_font,
)
from minigrad.viz.render import backward_frames, draw, draw_to_file

__all__ = [
    "GradStep", "backward_frames", "draw", "draw_to_file", "gradient_norms", "plot_attention", "plot_grad_norms",
    "plot_loss_curves", "plot_positional_encoding", "plots", "record_modules", "to_dot", "use_cjk_font", "walk",
]
