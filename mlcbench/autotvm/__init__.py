"""Template tuning in the style of TVM's AutoTVM.

A template is a schedule with knobs; a tuner searches the knobs' values by measuring
configs; the best record is applied when the template is called again::

    from mlcbench import autotvm, te

    @autotvm.template("tutorial/matmul")
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
        yo, yi = cfg["tile_y"].apply(s, C, y)
        xo, xi = cfg["tile_x"].apply(s, C, x)
        s[C].reorder(yo, xo, k, yi, xi)
        return s, [A, B, C]

    task = autotvm.task.create("tutorial/matmul", args=(512, 512, 512, "float32"),
                               target="llvm")
    tuner = autotvm.tuner.XGBTuner(task)
    tuner.tune(n_trial=32, measure_option=autotvm.measure_option(
        builder=autotvm.LocalBuilder(), runner=autotvm.LocalRunner(number=5)),
        callbacks=[autotvm.callback.log_to_file("matmul.log")])
    with autotvm.apply_history_best("matmul.log"):
        s, args = matmul(512, 512, 512, "float32")
"""
from . import callback, measure, record, task, tuner
from . import templates  # registers dense.x86, dense_pack.x86, conv2d_nchw.x86
from .task import relax_integration  # relax.build's schedule lookup: apply_history_best
from .measure import (LocalBuilder, LocalRunner, MeasureErrorNo, MeasureInput, MeasureResult,
                      measure_option)
from .task import (ApplyConfig, ApplyHistoryBest, ConfigEntity, ConfigSpace, DispatchContext,
                   FallbackContext, apply_history_best, get_config, template)
