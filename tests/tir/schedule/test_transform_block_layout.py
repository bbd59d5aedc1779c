import numpy as np
from hypothesis import given, settings, strategies as st

from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import (check_after, check_numeric, check_refused,
                                      check_trace_roundtrip, make_matmul)


@T.prim_func
def pointwise(x: T.Buffer((1, 4, 3, 5), "float32"), w: T.Buffer((8, 4), "float32"),
              y: T.Buffer((1, 8, 3, 5), "float32")):
    for n, f, h, v, c in T.grid(1, 8, 3, 5, 4):
        with T.block("conv"):
            vn, vf, vh, vw, vc = T.axis.remap("SSSSR", [n, f, h, v, c])
            T.reads(x[vn, vc, vh, vw], w[vf, vc])
            T.writes(y[vn, vf, vh, vw])
            with T.init():
                y[vn, vf, vh, vw] = T.float32(0)
            y[vn, vf, vh, vw] = y[vn, vf, vh, vw] + x[vn, vc, vh, vw] * w[vf, vc]


@T.prim_func
def pointwise_pixels_fused(x: T.Buffer((1, 4, 3, 5), "float32"), w: T.Buffer((8, 4), "float32"),
                           y: T.Buffer((1, 8, 3, 5), "float32")):
    for n, f, h_w, c in T.grid(1, 8, 15, 4):
        with T.block("conv"):
            vn, vf, vh_w, vc = T.axis.remap("SSSR", [n, f, h_w, c])
            T.reads(x[vn, vc, vh_w // 5, vh_w % 5], w[vf, vc])
            T.writes(y[vn, vf, vh_w // 5, vh_w % 5])
            with T.init():
                y[vn, vf, vh_w // 5, vh_w % 5] = T.float32(0)
            y[vn, vf, vh_w // 5, vh_w % 5] = (y[vn, vf, vh_w // 5, vh_w % 5]
                                              + x[vn, vc, vh_w // 5, vh_w % 5] * w[vf, vc])


@T.prim_func
def pointwise_reordered(x: T.Buffer((1, 4, 3, 5), "float32"), w: T.Buffer((8, 4), "float32"),
                        y: T.Buffer((1, 8, 3, 5), "float32")):
    for f, n_h_w, c in T.grid(8, 15, 4):
        with T.block("conv"):
            vf, vn_h_w, vc = T.axis.remap("SSR", [f, n_h_w, c])
            T.reads(x[0, vc, vn_h_w // 5, vn_h_w % 5], w[vf, vc])
            T.writes(y[0, vf, vn_h_w // 5, vn_h_w % 5])
            with T.init():
                y[0, vf, vn_h_w // 5, vn_h_w % 5] = T.float32(0)
            y[0, vf, vn_h_w // 5, vn_h_w % 5] = (y[0, vf, vn_h_w // 5, vn_h_w % 5]
                                                 + x[0, vc, vn_h_w // 5, vn_h_w % 5] * w[vf, vc])


def _reference(x, w, y):
    return np.einsum("fc,nchw->nfhw", w, x)


def test_fuses_neighbouring_iterators_into_one():
    sch = Schedule(pointwise)
    sch.transform_block_layout("conv", lambda n, f, h, v, c: (n, f, h * 5 + v, c))
    check_after(pointwise, sch, pointwise_pixels_fused)
    assert "index_map=lambda n, f, h, v, c: (n, f, h * 5 + v, c)" in str(sch.trace)
    check_numeric(sch.mod["main"], _reference)


def test_reorders_and_fuses_three_iterators():
    sch = Schedule(pointwise)
    sch.transform_block_layout("conv", lambda n, f, h, v, c: (f, n * 15 + h * 5 + v, c))
    check_after(pointwise, sch, pointwise_reordered)
    check_numeric(sch.mod["main"], _reference)


def test_a_buffer_laid_out_by_the_same_map_is_indexed_by_the_new_iterator():
    sch = Schedule(pointwise)
    block = sch.get_block("conv")
    sch.cache_write(block, 0, "global")
    sch.transform_layout(block, ("write", 0), lambda n, f, h, v: (n, f, h * 5 + v))
    sch.transform_block_layout(block, lambda n, f, h, v, c: (n, f, h * 5 + v, c))
    text = sch.mod["main"].script()
    assert "y_global[vn, vf, vh_vw] = y_global[vn, vf, vh_vw] + x[vn, vc, vh_vw // 5, vh_vw % 5]" \
        in text, text
    check_trace_roundtrip(pointwise, sch)
    check_numeric(sch.mod["main"], _reference)


def test_refuses_maps_that_are_not_fusions():
    sch = Schedule(pointwise)
    for index_map, rule in [
            (lambda n, f, h, v, c: (n, f, h * 4 + v, c), r"fusion of iterators such as y \* W"),
            (lambda n, f, h, v, c: (n, f, h, v // 2, c), r"found v // 2"),
            (lambda n, f, h, v, c: (n, f, h, v), r"must use every iterator once; it drops \['vc'\]"),
            (lambda n, f, h, v: (n, f, h, v), r"takes 4 indices; block 'conv' has 5"),
            (lambda n, f, h, v, c: (n, f, h * 5 + v, h), r"it uses \['vh'\] more than once"),
            (lambda n, f, h, v, c: (n, f, h, v * 4 + c), r"mix spatial and reduction")]:
        check_refused(sch, lambda s, m=index_map: s.transform_block_layout("conv", m), rule)


def test_refuses_a_block_not_alone_under_plain_loops():
    sch = Schedule(make_matmul(16, 16, 8))
    i, _, _ = sch.get_loops(sch.get_block("C"))
    sch.split(i, [4, 4])
    check_refused(sch, lambda s: s.transform_block_layout(
        "C", lambda i, j, k: (i * 16 + j, k)), r"bound one to one to loops")


@T.prim_func
def diagonal(a: T.Buffer((16, 16), "float32"), b: T.Buffer((16, 16), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            vj = T.axis.spatial(16, i)
            b[vi, vj] = a[vi, vj]


def test_refuses_two_iterators_bound_to_one_loop():
    sch = Schedule(diagonal)
    check_refused(sch, lambda s: s.transform_block_layout("B", lambda i, j: (i * 16 + j,)),
                  r"bound one to one to loops")


@settings(max_examples=15, deadline=None)
@given(h=st.integers(1, 6), v=st.integers(1, 7), f=st.integers(1, 5))
def test_any_pixel_fusion_computes_the_same(h, v, f):
    @T.prim_func
    def add_one(a: T.Buffer((f, h, v), "float32"), b: T.Buffer((f, h, v), "float32")):
        for i, j, k in T.grid(f, h, v):
            with T.block("B"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                b[vi, vj, vk] = a[vi, vj, vk] + T.float32(1)

    sch = Schedule(add_one)
    sch.transform_block_layout("B", lambda i, j, k: (j * v + k, i))
    check_trace_roundtrip(add_one, sch)
    check_numeric(sch.mod["main"], lambda a, b: a + 1)
