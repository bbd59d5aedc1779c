"""Executable.export_library / runtime.load_module / VirtualMachine: the program and its
constants travel inside the shared library and run the same after loading."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir import MLCBenchError
from mlcbench.relax.executable import decode_program, encode_program, load_executable

LOWER = "vm_lowering"


def export_and_load(ex, tmp_path, name):
    # One file name per library: the C loader reuses a library already loaded by path.
    path = tmp_path / f"{name}.so"
    ex.export_library(path)
    return relax.VirtualMachine(tvm.runtime.load_module(path), tvm.cpu()), path


def test_call_tir_module_round_trips(course_mlp, mlp_weights, tmp_path):
    args, expected = mlp_weights
    ex = relax.build(course_mlp, "llvm", pipeline=LOWER)
    vm, _ = export_and_load(ex, tmp_path, "mlp")
    np.testing.assert_allclose(vm["main"](*args).numpy(), expected, rtol=1e-4, atol=1e-4)
    assert vm.executable.program == ex.program


def test_module_of_packed_calls_only_round_trips(course_mlp_extern, mlp_weights, tmp_path):
    args, expected = mlp_weights
    vm, _ = export_and_load(relax.build(course_mlp_extern, "llvm"), tmp_path, "extern")
    np.testing.assert_allclose(vm["main"](*args).numpy(), expected, rtol=1e-5)


def weights_as_constants(course_mlp, weights):
    """The course MLP with its weights bound as constants (main takes x only)."""
    _, w0, b0, w1, b1 = weights
    x = relax.Var("x", relax.TensorStructInfo((1, 784), "float32"))
    gv = {n: course_mlp.get_global_var(n) for n in ("linear0", "relu0", "linear1")}
    bb = relax.BlockBuilder(tvm.IRModule({g: course_mlp[g] for g in gv.values()}))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit(relax.call_tir(gv["linear0"], (x, relax.const(w0), relax.const(b0)),
                                         relax.TensorStructInfo((1, 128), "float32")))
            lv1 = bb.emit(relax.call_tir(gv["relu0"], (lv0,),
                                         relax.TensorStructInfo((1, 128), "float32")))
            out = bb.emit_output(relax.call_tir(gv["linear1"], (lv1, relax.const(w1),
                                                                relax.const(b1)),
                                                relax.TensorStructInfo((1, 10), "float32")))
        bb.emit_func_output(out)
    return bb.get()


def test_constants_travel_inside_the_library(course_mlp, mlp_weights, tmp_path):
    args, expected = mlp_weights
    ex = relax.build(weights_as_constants(course_mlp, args), "llvm", pipeline=LOWER)
    assert len(ex.constants) == 4
    loaded = load_executable(export_and_load(ex, tmp_path, "consts")[1])
    for before, after in zip(ex.constants, loaded.constants):
        np.testing.assert_array_equal(before.numpy(), after.numpy())
        assert after.data_ptr % 64 == 0
    vm = relax.VirtualMachine(loaded, tvm.cpu())
    np.testing.assert_allclose(vm["main"](args[0]).numpy(), expected, rtol=1e-4, atol=1e-4)


def test_a_new_process_runs_the_exported_library(course_mlp, mlp_weights, tmp_path):
    args, expected = mlp_weights
    ex = relax.build(weights_as_constants(course_mlp, args), "llvm", pipeline=LOWER)
    _, path = export_and_load(ex, tmp_path, "fresh_process")
    np.save(tmp_path / "x.npy", args[0])
    script = textwrap.dedent(f"""
        import numpy as np, mlcbench as tvm
        from mlcbench import relax
        vm = relax.VirtualMachine(tvm.runtime.load_module({str(path)!r}), tvm.cpu())
        np.save({str(tmp_path / "out.npy")!r}, vm["main"](np.load({str(tmp_path / "x.npy")!r})).numpy())
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120,
                   cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), expected, rtol=1e-4, atol=1e-4)


def test_a_loaded_executable_exports_again(course_mlp, mlp_weights, tmp_path):
    args, expected = mlp_weights
    vm, _ = export_and_load(relax.build(course_mlp, "llvm", pipeline=LOWER), tmp_path, "first")
    vm.executable.export_library(tmp_path / "second.so")
    again = relax.VirtualMachine(tvm.runtime.load_module(tmp_path / "second.so"), tvm.cpu())
    np.testing.assert_allclose(again["main"](*args).numpy(), expected, rtol=1e-4, atol=1e-4)


def test_export_errors(course_mlp, tmp_path):
    ex = relax.build(course_mlp, "llvm", pipeline=LOWER)
    with pytest.raises(MLCBenchError, match=r"exports as a shared library \(.so\)"):
        ex.export_library(tmp_path / "mlp.o")
    tvm.build(course_mlp["relu0"]).export_library(tmp_path / "kernels.so")
    with pytest.raises(MLCBenchError, match="holds kernels but no VM program"):
        relax.VirtualMachine(tvm.runtime.load_module(tmp_path / "kernels.so"), tvm.cpu())


def test_program_blob_round_trip_and_corruption():
    constants = [tvm.nd.array(np.arange(5, dtype="int32")),
                 tvm.nd.array(np.ones((2, 3), "float64"))]
    program = {"format": 1, "functions": {}}
    blob = encode_program(program, constants)
    decoded, arrays = decode_program(blob)
    assert decoded == program
    for before, after in zip(constants, arrays):
        np.testing.assert_array_equal(before.numpy(), after.numpy())
        assert after.dtype == before.dtype
    with pytest.raises(MLCBenchError, match="bad magic"):
        decode_program(b"NOTMAGIC" + blob[8:])
    with pytest.raises(MLCBenchError, match="expected .* bytes"):
        decode_program(blob[:-8])
