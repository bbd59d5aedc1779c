"""The pictures of notebooks/07_gpu.ipynb: the thread hierarchy, the window a block
stages in shared memory, and the tiles a matmul block loads."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 -- after choosing the backend
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

GLOBAL, SHARED, LOCAL, THREAD = "#dde7f5", "#c9e8c4", "#fbe3c4", "#f6c8c8"


def _canvas(width, height, xmax, ymax):
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_xlim(0, xmax)
    ax.set_ylim(0, ymax)
    ax.axis("off")
    return fig, ax


def _box(ax, x, y, w, h, label="", color="white", fontsize=9, **kwargs):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor="black", **kwargs))
    if label:
        ax.text(x + w / 2, y + h / 2, label, ha="center", va="center", fontsize=fontsize)


def _arrow(ax, start, end, label="", fontsize=8):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="->", mutation_scale=12))
    if label:
        ax.text((start[0] + end[0]) / 2 + 0.15, (start[1] + end[1]) / 2, label,
                fontsize=fontsize, va="center")


def gpu_model_figure():
    """Left: a grid of 8 blocks of 128 threads covering a 1024-vector. Right: where the
    three memories of the model live."""
    fig, ax = _canvas(10, 4.4, 22, 10)
    ax.text(5.5, 9.5, "grid: 8 blocks (blockIdx.x = 0..7)", ha="center", fontsize=10)
    for b in range(8):
        x = 0.3 + b * 1.35
        _box(ax, x, 6.6, 1.2, 2.2, f"block\n{b}", THREAD if b == 2 else GLOBAL)
    for t in range(16):
        _box(ax, 0.3 + t * 0.68, 4.5, 0.6, 0.8, color=THREAD)
    _arrow(ax, (3.3, 6.6), (0.6, 5.35))
    _arrow(ax, (3.3, 6.6), (10.8, 5.35))
    ax.text(5.6, 4.0, "block 2: 128 threads (threadIdx.x = 0..127; 16 drawn)",
            ha="center", fontsize=9)
    ax.text(5.6, 3.3, "each thread: i = blockIdx.x * 128 + threadIdx.x", ha="center",
            fontsize=9, family="monospace")
    for i in range(32):
        _box(ax, 0.3 + i * 0.34, 1.7, 0.34, 0.8,
             color=THREAD if 8 <= i < 12 else "white", linewidth=0.5)
    ax.text(5.6, 1.1, "C[0:1024] (32 drawn): block 2 writes C[256:384], one element per thread",
            ha="center", fontsize=9)
    # the memory hierarchy
    _box(ax, 12.5, 0.4, 9.2, 1.6, "global memory (GBs, all blocks, slow)", GLOBAL)
    for k, x in enumerate((12.8, 17.3)):
        _box(ax, x, 2.6, 4.1, 6.8, color="#f4f4f4")
        ax.text(x + 2.05, 9.0, f"block {k} (on one SM)", ha="center", fontsize=9)
        _box(ax, x + 0.3, 6.6, 3.5, 1.6, "shared memory\n(KBs, this block)", SHARED)
        for t in range(3):
            _box(ax, x + 0.3 + t * 1.2, 3.0, 1.0, 2.6, f"thread\n{t}\nregis-\nters", LOCAL,
                 fontsize=7)
        _arrow(ax, (x + 2.05, 2.0), (x + 2.05, 2.6))
    return fig


def window_figure(nthread=128, window=3):
    """Block b of the window sum stages A[b*128 : b*128 + 130] in shared memory."""
    fig, ax = _canvas(10, 2.8, 22, 6)
    ax.text(0.2, 5.4, "A (global)", fontsize=9)
    cells = 26
    for c in range(cells):
        color = SHARED if 8 <= c < 8 + 8 + window - 1 else "white"
        _box(ax, 2.5 + c * 0.7, 4.4, 0.7, 0.8, color=color, linewidth=0.5)
    ax.text(0.2, 2.6, "A_shared", fontsize=9)
    for c in range(8 + window - 1):
        _box(ax, 2.5 + (8 + c) * 0.7, 2.0, 0.7, 0.8, color=SHARED, linewidth=0.5)
    _arrow(ax, (2.5 + 11 * 0.7, 4.4), (2.5 + 11 * 0.7, 2.8), "cooperative fetch:\n"
           "every thread copies a few")
    ax.text(0.2, 0.6, "B (global)", fontsize=9)
    for c in range(cells - window + 1):
        _box(ax, 2.5 + c * 0.7, 0.2, 0.7, 0.8, color=THREAD if 8 <= c < 16 else "white",
             linewidth=0.5)
    ax.text(15.5, 1.3, f"one block: {nthread} outputs need {nthread + window - 1} inputs\n"
            f"(drawn 8 for {nthread})", fontsize=8.5)
    return fig


def matmul_tiles_figure():
    """One block of the shared-memory matmul: the 64 x 64 tile of C, the strips of A and
    B it walks along k, the 64 x 8 and 8 x 64 pieces staged per k step, and one
    thread's 8 x 8 register tile."""
    fig, ax = _canvas(10, 4.6, 22, 11)
    # B on top, A on the left, C at the crossing
    _box(ax, 8, 7.0, 8, 3.4, color="white")
    ax.text(12, 10.6, "B (1024 x 1024)", ha="center", fontsize=9)
    _box(ax, 10, 7.0, 2, 3.4, color=GLOBAL)                       # the block's strip
    _box(ax, 10, 8.6, 2, 0.45, color=SHARED)                      # this k step
    ax.text(16.3, 8.8, "B_shared: 8 x 64 per k step", fontsize=8.5)
    _box(ax, 0.5, 0.5, 6.5, 6)
    ax.text(3.75, 6.7, "A (1024 x 1024)", ha="center", fontsize=9)
    _box(ax, 0.5, 3.0, 6.5, 1.8, color=GLOBAL)
    _box(ax, 2.6, 3.0, 0.45, 1.8, color=SHARED)
    ax.text(0.5, 0.0, "A_shared: 64 x 8 per k step", fontsize=8.5)
    _box(ax, 8, 0.5, 8, 6)
    _box(ax, 10, 3.0, 2, 1.8, color=THREAD)
    ax.text(12, 0.0, "C: the block computes a 64 x 64 tile", ha="center", fontsize=8.5)
    for r in range(8):
        for c in range(8):
            _box(ax, 10 + c * 0.25, 3.0 + r * 0.225, 0.25, 0.225, linewidth=0.3,
                 color=LOCAL if (r, c) == (5, 2) else THREAD)
    _arrow(ax, (16.5, 4.0), (10.7, 4.2))
    ax.text(16.6, 3.6, "one thread: an 8 x 8 tile\nof C in registers (C_local)\n"
            "64 threads per block", fontsize=8.5)
    return fig
