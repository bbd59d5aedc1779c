"""What codegen refuses (with a CodegenError naming the function and node) and what the
generated IR promises (noalias, vector types)."""
import numpy as np
import pytest
from helpers.codegen_helpers import compile_kernels, flat, kernel, ramp

from mlcbench.codegen import generate_ir
from mlcbench.ir.errors import CodegenError
from mlcbench.target import Target
from mlcbench.tir import (Block, BlockRealize, BufferStore, Call, For, Var, call_extern, const)


def _copy(name="copy", noalias=True, vector=False):
    A, out = flat("A", 64), flat("out", 64)
    i = Var("i")
    if vector:
        index = ramp(i * 16, 16)
        body = For(i, 0, 4, "serial", BufferStore(out, A.vload((index,)), (index,)))
    else:
        body = For(i, 0, 64, "serial", BufferStore(out, A[i], (i,)))
    return kernel(name, [A, out], body, noalias=noalias)


def _ir(func):
    return generate_ir({"k": func}, Target("llvm"))


def _signature(text):
    return next(line for line in text.splitlines() if line.startswith("define"))


def test_noalias_follows_tir_noalias():
    assert _signature(_ir(_copy(noalias=True))).count("noalias") == 2
    assert "noalias" not in _ir(_copy(noalias=False))


def test_vector_access_is_one_vector_load():
    text = _ir(_copy(vector=True))
    assert "load <16 x float>" in text and "store <16 x float>" in text


def test_block_left_in_body_is_rejected():
    out = flat("out", 4)
    block = Block((), (), (), "B", BufferStore(out, const(1.0), (0,)))
    func = kernel("blocky", [out], BlockRealize((), const(True), block))
    with pytest.raises(CodegenError, match=r"'blocky'.*blocks must be lowered"):
        _ir(func)


def test_unknown_intrinsic_is_named():
    A = flat("A", 4)
    i = Var("i")
    body = For(i, 0, 4, "serial", BufferStore(A, Call("float32", "tir.frobnicate", (A[i],)), (i,)))
    with pytest.raises(CodegenError, match="tir.frobnicate"):
        _ir(kernel("weird", [A], body))


def test_unbound_variable_is_named():
    A = flat("A", 4)
    ghost = Var("ghost", "float32")
    with pytest.raises(CodegenError, match="'ghost'"):
        _ir(kernel("ghostly", [A], BufferStore(A, ghost, (0,))))


def test_missing_extern_symbol_fails_at_link_time():
    A = flat("A", 4)
    body = BufferStore(A, call_extern("float32", "no_such_function_anywhere", A[0]), (0,))
    with pytest.raises(CodegenError, match="no_such_function_anywhere"):
        compile_kernels(kernel("missing", [A], body))


def test_gpu_target_is_refused_clearly():
    with pytest.raises(CodegenError, match="CPU"):
        compile_kernels(_copy(), target="cuda")


def test_get_source_asm_shows_machine_code():
    lib = compile_kernels(_copy(vector=True))
    assert "mlc_copy" in lib.get_source("asm")
    a, out = np.arange(64, dtype="float32"), np.zeros(64, "float32")
    lib["copy"](a, out)
    np.testing.assert_array_equal(a, out)
