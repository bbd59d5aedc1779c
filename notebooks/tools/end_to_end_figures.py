"""The pictures of notebooks/04_end_to_end.ipynb: the MLP as a computational graph,
what ``R.call_tir`` does with a destination-passing kernel, and the MLC flow of the
chapter (import, transform, build, run)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 -- after choosing the backend
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

OP, TENSOR, LIBRARY, NOTE = "#dde7f5", "#f4f4f4", "#fbe3c4", "#c9e8c4"


def _canvas(width, height, xmax, ymax):
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_xlim(0, xmax)
    ax.set_ylim(0, ymax)
    ax.axis("off")
    return fig, ax


def _box(ax, x, y, w, h, label, color=OP, fontsize=9, family=None):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.08",
                                facecolor=color, edgecolor="black"))
    ax.text(x + w / 2, y + h / 2, label, ha="center", va="center", fontsize=fontsize,
            family=family)


def _arrow(ax, start, end, label="", fontsize=8, offset=(0.1, 0.15)):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="->", mutation_scale=12))
    if label:
        ax.text((start[0] + end[0]) / 2 + offset[0], (start[1] + end[1]) / 2 + offset[1],
                label, fontsize=fontsize)


def mlp_graph_figure():
    """x -> linear0 -> relu0 -> linear1 -> out, weights as side inputs, shapes on edges."""
    fig, ax = _canvas(10, 2.8, 22, 6)
    _box(ax, 0.3, 2.4, 2.2, 1.2, "x\n(360, 64)", TENSOR)
    _box(ax, 4.5, 2.4, 3.0, 1.2, "linear0\nx @ w0.T + b0")
    _box(ax, 10.0, 2.4, 2.6, 1.2, "relu0\nmax(., 0)")
    _box(ax, 15.0, 2.4, 3.0, 1.2, "linear1\n. @ w1.T + b1")
    _box(ax, 19.8, 2.4, 2.0, 1.2, "out\n(360, 10)", TENSOR)
    _box(ax, 4.6, 4.6, 1.3, 0.9, "w0", TENSOR)
    _box(ax, 6.1, 4.6, 1.3, 0.9, "b0", TENSOR)
    _box(ax, 15.1, 4.6, 1.3, 0.9, "w1", TENSOR)
    _box(ax, 16.6, 4.6, 1.3, 0.9, "b1", TENSOR)
    _arrow(ax, (2.6, 3.0), (4.4, 3.0))
    _arrow(ax, (7.6, 3.0), (9.9, 3.0), "(360, 128)", offset=(-0.9, -0.6))
    _arrow(ax, (12.7, 3.0), (14.9, 3.0), "(360, 128)", offset=(-0.9, -0.6))
    _arrow(ax, (18.1, 3.0), (19.7, 3.0))
    for x in (5.25, 6.75, 15.75, 17.25):
        _arrow(ax, (x, 4.55), (x, 3.7))
    ax.text(11, 0.8, "boxes: operations   edges: tensors   any order that respects the "
            "edges is a valid schedule", ha="center", fontsize=9)
    return fig


def call_tir_figure():
    """Left: a destination-passing kernel writes into an argument. Right: call_tir
    allocates the output and hides that write, so the graph node is pure."""
    fig, ax = _canvas(10, 3.4, 24, 8)
    ax.text(5, 7.4, "the kernel (destination passing)", ha="center", fontsize=10)
    _box(ax, 0.4, 4.6, 2.0, 1.0, "X", TENSOR)
    _box(ax, 0.4, 3.2, 2.0, 1.0, "W, B", TENSOR)
    _box(ax, 0.4, 1.0, 2.0, 1.0, "Z (given)", LIBRARY)
    _box(ax, 4.0, 3.0, 3.6, 2.2, "linear0(X, W, B, Z)\nreads X, W, B\nwrites Z")
    _arrow(ax, (2.5, 5.1), (3.9, 4.6))
    _arrow(ax, (2.5, 3.7), (3.9, 3.9))
    _arrow(ax, (4.4, 2.9), (2.5, 1.6))
    ax.text(3.7, 1.7, "writes", fontsize=8)
    ax.text(17.5, 7.4, "R.call_tir(linear0, (X, W, B), out_sinfo)", ha="center",
            fontsize=10, family="monospace")
    _box(ax, 11.5, 3.6, 11.8, 3.0, "", NOTE)
    for y, line in ((5.9, "Z = empty(out_sinfo)   # allocate"),
                    (5.0, "linear0(X, W, B, Z)    # fill"),
                    (4.1, "return Z               # a fresh value")):
        ax.text(12.2, y, line, ha="left", fontsize=9, family="monospace")
    _box(ax, 11.5, 1.0, 2.4, 1.0, "X, W, B", TENSOR)
    _box(ax, 20.9, 1.0, 2.4, 1.0, "Z (new)", TENSOR)
    _arrow(ax, (14.0, 1.5), (20.8, 1.5))
    ax.text(17.4, 2.3, "a pure graph node: inputs in, output out", ha="center", fontsize=8)
    return fig


def mlc_flow_figure():
    """Where the chapter's programs come from and what happens to them."""
    fig, ax = _canvas(10, 2.6, 23, 6)
    sources = [("TVMScript\n(by hand)", 4.6), ("nn.Module\nexport_tvm", 3.2),
               ("ONNX file\nfrom_onnx", 1.8)]
    for label, y in sources:
        _box(ax, 0.3, y, 3.0, 1.0, label, TENSOR, fontsize=8.5)
        _arrow(ax, (3.4, y + 0.5), (4.9, 3.9))
    _box(ax, 5.0, 2.4, 4.2, 3.0, "IRModule\nRelax function\n+ TensorIR kernels\n+ library "
         "calls", NOTE)
    _box(ax, 10.5, 2.8, 5.4, 2.2, "transformations\nBindParams, LegalizeOps,\nFuseOps, "
         "FuseTIR,\nschedules (ch. 3, 5)")
    _box(ax, 17.0, 3.3, 2.6, 1.2, "relax.build", OP)
    _box(ax, 20.6, 3.3, 2.2, 1.2, "VM\nrun", LIBRARY)
    _arrow(ax, (9.3, 3.9), (10.4, 3.9))
    _arrow(ax, (16.0, 3.9), (16.9, 3.9))
    _arrow(ax, (19.7, 3.9), (20.5, 3.9))
    ax.annotate("", xy=(8.2, 5.5), xytext=(13.2, 5.1),
                arrowprops=dict(arrowstyle="->", connectionstyle="arc3,rad=0.35"))
    ax.text(10.7, 5.75, "IRModule -> IRModule", ha="center", fontsize=8.5,
            bbox=dict(facecolor="white", edgecolor="none", pad=1))
    ax.set_ylim(1.4, 6.4)
    return fig
