"""FlattenBuffer: multi-dimensional accesses become one-dimensional, params keep shapes."""
import pytest
from helpers.lowering_programs import block, buf, loops, prim_func, root

import mlcbench
from mlcbench.ir.errors import CodegenError
from mlcbench.tir import Allocate, Buffer, BufferStore, IntImm, const, substitute
from mlcbench.tir.stmt import For
from mlcbench.tir.transform import FlattenBuffer
from mlcbench.tir.transform.flatten_buffer import flatten


def _apply(func):
    return FlattenBuffer()(mlcbench.IRModule.from_expr(func))["main"]


def _flat_like(buffer, extent):
    return Buffer(buffer.name, (extent,), buffer.dtype, buffer.data, scope=buffer.scope)


def test_row_major_index_and_shared_data_var():
    A, B = buf("A", (8, 16)), buf("B", (8, 16))
    func = prim_func([A, B], loops([8, 16], lambda i, j: BufferStore(B, A[i, j], (i, j))))
    after = _apply(func)
    A1, B1 = _flat_like(A, 128), _flat_like(B, 128)
    expected = loops([8, 16], lambda i, j: BufferStore(B1, A1[i * 16 + j], (i * 16 + j,)))
    mlcbench.assert_structural_equal(after.body, expected)
    assert after.buffer_map == func.buffer_map           # params keep their shapes
    store = after.body.body.body
    assert store.buffer.data is B.data and store.value.buffer.data is A.data
    assert store.buffer.shape[0].value == 128 and store.buffer.ndim == 1


def test_allocate_gets_a_flat_buffer():
    A, T = buf("A", (4, 4)), buf("T", (4, 4), scope="local")
    body = Allocate(T, loops([4, 4], lambda i, j: BufferStore(T, A[i, j], (i, j))))
    after = _apply(prim_func([A], body))
    T1, A1 = _flat_like(T, 16), _flat_like(A, 16)
    expected = Allocate(T1, loops([4, 4], lambda i, j: BufferStore(T1, A1[i * 4 + j],
                                                                    (i * 4 + j,))))
    mlcbench.assert_structural_equal(after.body, expected)
    assert after.body.buffer.scope == "local" and after.body.buffer.data is T.data


def test_strides_and_elem_offset_are_folded_into_the_index():
    A = buf("A", (4, 4), strides=(32, 1), elem_offset=5)
    B = buf("B", (4, 4))
    after = _apply(prim_func([A, B], loops([4, 4], lambda i, j: BufferStore(B, A[i, j],
                                                                            (i, j)))))
    load = after.body.body.body.value
    i, j = load_vars(after)
    at_2_3 = substitute(load.indices[0], {i: 2, j: 3})
    assert isinstance(at_2_3, IntImm) and at_2_3.value == 5 + 2 * 32 + 3
    assert flatten(A).shape[0].value == 5 + 3 * 32 + 3 + 1


def load_vars(func):
    outer = func.body
    return outer.loop_var, outer.body.loop_var


def test_zero_dim_buffer_uses_index_zero():
    S, A = buf("S", ()), buf("A", (4,))
    after = _apply(prim_func([S, A], loops([4], lambda i: BufferStore(S, A[i], ()))))
    store = after.body.body
    assert store.indices[0].value == 0 and store.buffer.shape[0].value == 1


def test_flat_buffers_return_the_same_function():
    A, B = buf("A", (16,)), buf("B", (16,))
    func = prim_func([A, B], loops([16], lambda i: BufferStore(B, A[i], (i,))))
    assert _apply(func) is func


def test_blocks_must_be_lowered_first():
    A = buf("A", (4, 4))
    body = root(loops([4, 4], lambda i, j: block(
        "A", [("S", 4), ("S", 4)], [i, j], lambda vi, vj: BufferStore(A, const(0.0),
                                                                       (vi, vj)))))
    with pytest.raises(CodegenError, match="LowerOpaqueBlock"):
        _apply(prim_func([A], body))


def test_loop_structure_is_kept():
    A = buf("A", (2, 3))
    after = _apply(prim_func([A], loops([2, 3], lambda i, j: BufferStore(A, const(1.0),
                                                                         (i, j)))))
    assert isinstance(after.body, For) and after.body.body.extent.value == 3
