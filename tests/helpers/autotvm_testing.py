"""Templates and a fast fake measurer shared by the autotvm tests."""
import numpy as np

from mlcbench import autotvm, te
from mlcbench.autotvm.measure import Builder, MeasureResult, Runner


@autotvm.template("test/matmul")
def matmul(N, L, M, dtype):
    A = te.placeholder((N, L), name="A", dtype=dtype)
    B = te.placeholder((L, M), name="B", dtype=dtype)
    k = te.reduce_axis((0, L), name="k")
    C = te.compute((N, M), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    y, x = s[C].op.axis
    cfg = autotvm.get_config()
    cfg.define_split("tile_y", y, num_outputs=2)
    cfg.define_split("tile_x", x, num_outputs=2)
    cfg.define_knob("vec", [0, 1])
    yo, yi = cfg["tile_y"].apply(s, C, y)
    xo, xi = cfg["tile_x"].apply(s, C, x)
    s[C].reorder(yo, xo, k, yi, xi)
    if cfg["vec"].val:
        s[C].vectorize(xi)
    return s, [A, B, C]


class FakeBuilder(Builder):
    def build(self, measure_inputs):
        return [None] * len(measure_inputs)


class FakeRunner(Runner):
    """Cost grows with the distance of the inner tiles from 8x8; knob "vec" halves it;
    configs in ``broken`` fail as a crash would."""

    def __init__(self, broken=()):
        self.broken, self.calls = set(broken), 0

    def run(self, measure_inputs, build_results):
        results = []
        for inp in measure_inputs:
            self.calls += 1
            cfg = inp.config
            if cfg.index in self.broken:
                results.append(MeasureResult(("run crash",), 4, 0.0, 0.0))
                continue
            y, x = cfg["tile_y"].size[-1], cfg["tile_x"].size[-1]
            cost = (1 + abs(np.log2(y) - 3) + abs(np.log2(x) - 3)) * 1e-3
            results.append(MeasureResult((cost / (1 + cfg["vec"].val),), 0, 0.0, 0.0))
        return results
