"""Strided vector loads: contiguous vector loads plus shufflevectors, never past the last
lane; wider strides (and stores) stay per-lane accesses."""
import re

import numpy as np
import pytest
from helpers.codegen_helpers import compile_kernels, flat, kernel, ramp
from hypothesis import given, settings, strategies as st

from mlcbench.codegen.llvm.memory import shuffled_load_plan, strided_base
from mlcbench.target import Target
from mlcbench.tir import Broadcast, BufferLoad, BufferStore, For, IntImm, Ramp, Var
from mlcbench.tir.functor import post_order_visit

AVX2 = Target("llvm -mcpu=znver1")
AVX512 = Target("llvm -mcpu=znver4")


def _strided_copy(name, stride, lanes, offset, length, rows=1):
    """``out[r, i] = A[offset + r * lanes * stride + i * stride]``; ``A`` has ``length``
    elements."""
    a, out = flat("A", length), flat("out", rows * lanes)
    r = Var("r", "int32")
    index = Ramp(r * (lanes * stride) + offset, IntImm("int32", stride), lanes)
    body = BufferStore(out, a.vload((index,)), (ramp(r * lanes, lanes),))
    return kernel(name, [a, out], For(r, 0, rows, "serial", body))


def _loads_of(ir_text, symbol):
    function = ir_text[ir_text.index(f"@{symbol}("):]
    function = function[:function.index("\n}\n")]
    return re.findall(r"= load (<\d+ x float>|float), ptr", function), function


def test_stride_two_is_two_vector_loads_and_one_shuffle():
    lib = compile_kernels(_strided_copy("s2", 2, 8, 0, 15), target=AVX2)
    loads, body = _loads_of(lib.get_source("ll"), "mlc_s2")
    assert loads == ["<8 x float>", "<8 x float>"]
    assert body.count("shufflevector") == 1 and "insertelement" not in body


def test_vector_width_follows_the_lanes_not_the_host():
    lib = compile_kernels(_strided_copy("s3", 3, 16, 0, 46), target=AVX512)
    loads, body = _loads_of(lib.get_source("ll"), "mlc_s3")
    assert loads == ["<16 x float>"] * 3
    assert body.count("shufflevector") == 2


def test_wide_stride_gathers_lane_by_lane():
    lib = compile_kernels(_strided_copy("s5", 5, 4, 0, 16), target=AVX2)
    loads, _ = _loads_of(lib.get_source("ll"), "mlc_s5")
    assert "<4 x float>" not in loads


def test_broadcast_plus_ramp_is_recognised():
    base = Var("b", "int32")
    index = Broadcast(base, 8) + Ramp(IntImm("int32", 1), IntImm("int32", 2), 8)
    found_base, stride = strided_base(index)
    assert stride == 2 and str(found_base) == str(base + 1)
    assert strided_base(Ramp(base, base, 8)) is None


@settings(max_examples=60, deadline=None)
@given(stride=st.integers(2, 8), lanes=st.integers(2, 32))
def test_plan_stays_between_the_first_and_last_lane(stride, lanes):
    starts, sources = shuffled_load_plan(stride, lanes)
    span = (lanes - 1) * stride + 1
    assert all(0 <= start and start + lanes <= span for start in starts)
    assert [starts[k] + j for k, j in sources] == [i * stride for i in range(lanes)]
    assert all(0 <= j < lanes for _, j in sources)


@settings(max_examples=25, deadline=None)
@given(stride=st.integers(1, 6), lanes=st.sampled_from([2, 3, 4, 7, 8, 16]),
       offset=st.integers(0, 9), rows=st.integers(1, 3), slack=st.sampled_from([0, 0, 1, 5]),
       target=st.sampled_from(["znver1", "znver4"]), data=st.data())
def test_strided_loads_match_numpy(stride, lanes, offset, rows, slack, target, data):
    """The buffer ends ``slack`` elements after the last lane read (0: right at it)."""
    length = offset + (rows * lanes - 1) * stride + 1 + slack
    cpu = Target(f"llvm -mcpu={target}")
    if target == "znver4" and not Target("llvm").has_feature("avx512f"):
        cpu = AVX2      # the host cannot run AVX-512 code
    lib = compile_kernels(_strided_copy("copy", stride, lanes, offset, length, rows), target=cpu)
    a = np.random.default_rng(data.draw(st.integers(0, 99))).standard_normal(length)
    a = a.astype("float32")
    out = np.zeros(rows * lanes, "float32")
    lib["copy"](a, out)
    np.testing.assert_array_equal(out, a[offset::stride][:rows * lanes])


def test_max_pool_window_reads_its_row_with_vector_loads():
    """A vectorized 3x3/2 padded max pool keeps no per-lane loads in its vector code: its
    row stage reads the input contiguously, its window stage the row of maxes at stride 2."""
    import mlcbench
    from mlcbench import dlight, te, topi

    x = te.placeholder((1, 2, 20, 64), name="x")      # output rows of 32: 4 vectors of 8
    out = topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1,) * 4, "max")
    mod = mlcbench.IRModule({"main": te.create_prim_func([x, out])})
    with AVX2:
        mod = dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())(mod)
    strides = {}
    post_order_visit(mlcbench.lower(mod)["main"].body, lambda n: strides.setdefault(
        n.buffer.name, set()).add(n.indices[0].stride.value) if isinstance(n, BufferLoad)
        and isinstance(n.indices[0], Ramp) else None)
    # The row stage keeps its running max at stride 1; the window reads it at stride 2.
    assert strides["x"] == {1} and strides["pool_row_max"] == {1, 2}
    data = np.random.default_rng(0).standard_normal((1, 2, 20, 64)).astype("float32")
    result = np.zeros((1, 2, 10, 32), "float32")
    mlcbench.build(mod, target=AVX2)["main"](data, result)
    padded = np.pad(data, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
    np.testing.assert_array_equal(result, windows[:, :, ::2, ::2].max(axis=(-1, -2)))


if __name__ == "__main__":
    pytest.main([__file__])
