"""The on-disk kernel cache: a second build loads machine code instead of compiling.

Every test gets an empty cache directory of its own; LLVM compilations are counted by
wrapping ``compile_ir`` where code generation calls it.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench as tvm
from mlcbench import relax, te
from mlcbench.codegen import kernel_cache, kernel_store
from mlcbench.codegen.llvm import module as llvm_module
from mlcbench.ir.instrument import RecordingInstrument
from mlcbench.ir.transform import PassContext
from mlcbench.script import ir as I, relax as R


@I.ir_module
class MatmulRelu:
    @R.function
    def main(x: R.Tensor((4, 8), "float32"), w: R.Tensor((8, 3), "float32")):
        with R.dataflow():
            y = R.matmul(x, w)
            z = R.nn.relu(y)
            R.output(z)
        return z


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MLCBENCH_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(kernel_cache.SWITCH, raising=False)
    return tmp_path / "kernels"


@pytest.fixture
def compiles(monkeypatch):
    """A list that gets one entry per LLVM compilation (the module's name)."""
    seen = []
    original = llvm_module.compile_ir

    def counting(text, target, name="module", imports=()):
        seen.append(name)
        return original(text, target, name, imports)
    monkeypatch.setattr(llvm_module, "compile_ir", counting)
    return seen


def add_scaled(n=64, scale=3.0):
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * scale + 1.0, name="B")
    return te.create_prim_func([A, B]).with_attr("global_symbol", "add_scaled")


def run_add_scaled(lib, n=64, scale=3.0):
    a = np.random.default_rng(0).random(n, dtype="float32")
    b = tvm.nd.array(np.zeros(n, "float32"))
    lib["add_scaled"](tvm.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a * scale + 1.0, rtol=1e-6)


def entry_files(cache_dir):
    return sorted(cache_dir.glob("*" + kernel_store.SUFFIX)) if cache_dir.exists() else []


def test_second_tir_build_loads_from_the_cache(cache_dir, compiles):
    first = tvm.build(add_scaled(), target="llvm")
    second = tvm.build(add_scaled(), target="llvm")   # a new, structurally equal PrimFunc
    assert len(compiles) == 1 and len(entry_files(cache_dir)) == 1
    assert isinstance(second._artifact, kernel_cache.CachedArtifact)
    assert second._artifact.emit_object() == first._artifact.emit_object()
    run_add_scaled(first)
    run_add_scaled(second)


def test_second_relax_build_skips_scheduling_lowering_and_llvm(cache_dir, compiles):
    rng = np.random.default_rng(1)
    x, w = rng.random((4, 8), dtype="float32"), rng.random((8, 3), dtype="float32") - 0.5
    for _ in range(2):
        vm = relax.VirtualMachine(relax.build(MatmulRelu, "llvm"), tvm.cpu())
        out = vm["main"](tvm.nd.array(x), tvm.nd.array(w)).numpy()
        np.testing.assert_allclose(out, np.maximum(x @ w, 0), rtol=1e-5, atol=1e-6)
    assert len(compiles) == 1


def test_a_new_process_hits_what_this_one_stored(cache_dir, compiles):
    tvm.build(add_scaled(), target="llvm")
    script = textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        from test_kernel_cache import add_scaled, run_add_scaled
        import mlcbench as tvm
        from mlcbench.codegen import kernel_cache
        run_add_scaled(tvm.build(add_scaled(), target="llvm"))
        print(kernel_cache.stats()["hits"])
    """)
    env = dict(os.environ, PYTHONHASHSEED="12345")   # string hashes differ from this process
    child = subprocess.run([sys.executable, "-c", script, os.path.dirname(__file__)],
                           capture_output=True, text=True, env=env, timeout=300)
    assert child.returncode == 0, child.stderr
    assert child.stdout.split()[-1] == "1"


def test_a_changed_kernel_or_target_gets_an_entry_of_its_own(cache_dir, compiles):
    tvm.build(add_scaled(), target="llvm -mcpu=znver3")
    tvm.build(add_scaled(scale=4.0), target="llvm -mcpu=znver3")
    tvm.build(add_scaled(), target="llvm -mcpu=znver4")
    tvm.build(add_scaled(), target="llvm -mcpu=znver4 -mattr=-avx512f")
    assert len(compiles) == 4 and len(entry_files(cache_dir)) == 4
    tvm.build(add_scaled(), target="llvm -mcpu=znver4")
    assert len(compiles) == 4


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_a_damaged_entry_is_rebuilt_and_replaced(cache_dir, compiles, damage):
    tvm.build(add_scaled(), target="llvm")
    path, = entry_files(cache_dir)
    data = path.read_bytes()
    damaged = {"truncate": data[:len(data) // 2],
               "flip": data[:-10] + bytes([data[-10] ^ 0x40]) + data[-9:],
               "garbage": b"\x80\x04not an entry at all",
               "empty": b""}[damage]
    path.write_bytes(damaged)
    run_add_scaled(tvm.build(add_scaled(), target="llvm"))
    assert len(compiles) == 2
    assert kernel_store.decode_entry(path.read_bytes()) is not None   # replaced, whole
    run_add_scaled(tvm.build(add_scaled(), target="llvm"))
    assert len(compiles) == 2


@pytest.mark.parametrize("switch", ["0", "off"])
def test_the_cache_can_be_turned_off(cache_dir, compiles, monkeypatch, switch):
    monkeypatch.setenv(kernel_cache.SWITCH, switch)
    for _ in range(2):
        run_add_scaled(tvm.build(add_scaled(), target="llvm"))
    assert len(compiles) == 2 and entry_files(cache_dir) == []


def test_an_unwritable_cache_directory_only_costs_the_cache(tmp_path, monkeypatch, compiles):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("MLCBENCH_CACHE_DIR", str(blocker))
    for _ in range(2):
        run_add_scaled(tvm.build(add_scaled(), target="llvm"))
    assert len(compiles) == 2


def test_builds_under_instruments_run_their_passes(cache_dir, compiles):
    tvm.build(add_scaled(), target="llvm")
    recorder = RecordingInstrument()
    with PassContext(instruments=[recorder]):
        run_add_scaled(tvm.build(add_scaled(), target="llvm"))
    assert len(compiles) == 2 and recorder.records    # the lowering passes ran
    assert kernel_cache.stats()["bypassed"] >= 1


def test_a_cached_module_shows_its_source_and_exports(cache_dir, compiles, tmp_path):
    tvm.build(add_scaled(), target="llvm")
    lib = tvm.build(add_scaled(), target="llvm")
    assert len(compiles) == 1
    assert "define" in lib.get_source("ll") and "mlc_add_scaled" in lib.get_source("ll")
    lib.export_library(str(tmp_path / "add_scaled.so"))
    run_add_scaled(tvm.runtime.load_module(str(tmp_path / "add_scaled.so")))


_WRITER = textwrap.dedent("""
    import sys
    from mlcbench.codegen import kernel_store
    meta, obj = {"writer": "same"}, bytes(range(256)) * 4000
    for _ in range(40):
        assert kernel_store.store("k" * 64, meta, obj)
        entry = kernel_store.load("k" * 64)
        assert entry == (meta, obj), "a reader saw a partial entry"
""")


def test_two_processes_writing_the_same_key(cache_dir):
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER], stderr=subprocess.PIPE)
               for _ in range(2)]
    for writer in writers:
        _, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err.decode()
    assert [p.name for p in cache_dir.iterdir()] == ["k" * 64 + kernel_store.SUFFIX]
    assert kernel_store.load("k" * 64) == ({"writer": "same"}, bytes(range(256)) * 4000)


def test_least_recently_used_entries_go_first(cache_dir):
    for k in range(4):
        kernel_store.store(f"{k}" * 64, {"k": k}, b"x" * 1000)
        os.utime(kernel_store.entry_path(f"{k}" * 64), (k, k))
    kernel_store.load("0" * 64)                      # a hit: now the most recently used
    kernel_store.evict(limit=2500)
    assert sorted(p.name[0] for p in entry_files(cache_dir)) == ["0", "3"]
    assert kernel_cache.clear() == 2 and entry_files(cache_dir) == []


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_any_damaged_entry_decodes_to_none(data):
    entry = kernel_store.encode_entry({"kernels": ["a", 1]}, b"\x7fELF" + bytes(range(40)))
    assert kernel_store.decode_entry(entry) == ({"kernels": ["a", 1]},
                                                b"\x7fELF" + bytes(range(40)))
    index = data.draw(st.integers(0, len(entry) - 1))
    if data.draw(st.booleans()):
        damaged = entry[:index]
    else:
        byte = data.draw(st.integers(0, 255).filter(lambda b: b != entry[index]))
        damaged = entry[:index] + bytes([byte]) + entry[index + 1:]
    assert kernel_store.decode_entry(damaged) is None


def test_builds_inside_disabled_neither_read_nor_write_the_cache(cache_dir, compiles):
    tvm.build(add_scaled(), target="llvm")                  # stored
    with kernel_cache.disabled():
        with kernel_cache.disabled():                        # nested blocks keep it off
            run_add_scaled(tvm.build(add_scaled(), target="llvm"))
        tvm.build(add_scaled(scale=5.0), target="llvm")
    assert len(compiles) == 3 and len(entry_files(cache_dir)) == 1
    assert kernel_cache.enabled()


def test_tuning_candidates_are_built_outside_the_cache(cache_dir, compiles):
    from mlcbench.meta_schedule.builder import default_build
    from mlcbench.target import Target
    run_add_scaled(default_build(tvm.IRModule({"add_scaled": add_scaled()}), Target("llvm")))
    assert len(compiles) == 1 and entry_files(cache_dir) == []
