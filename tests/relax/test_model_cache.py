"""The model cache: a second ``relax.build`` of the same model loads the whole Executable
(VM code, constants, kernels) without running the pipeline; anything its key covers
that changes gives a build of its own.

Every test gets an empty cache directory of its own; builds past the model cache are
counted by wrapping ``vm_build._build``.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import relax
from mlcbench.codegen import kernel_cache, kernel_store
from mlcbench.relax import model_cache, op, vm_build
from mlcbench.relax.transform.legalize_ops import LegalizeOps


def dense_model(weight, input_name="x", batch=2):
    """``relu(x @ weight.T + 1)`` with ``weight`` a constant of the model."""
    units, features = weight.shape
    x = relax.Var(input_name, relax.TensorStructInfo((batch, features), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            dense = bb.emit(op.matmul(x, op.permute_dims(relax.const(weight))))
            out = bb.emit(op.nn.relu(op.add(dense, relax.const(np.float32(1.0)))))
            gv = bb.emit_output(out)
        bb.emit_func_output(gv)
    return bb.get()


WEIGHT = np.random.default_rng(0).standard_normal((6, 5)).astype("float32")


def run(ex, x):
    return relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.nd.array(x)).numpy()


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MLCBENCH_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(kernel_cache.SWITCH, raising=False)
    monkeypatch.delenv("MLCBENCH_KERNEL_CACHE_MB", raising=False)
    return tmp_path / "kernels"


@pytest.fixture
def builds(monkeypatch):
    """A list that gets one entry per build past the model cache."""
    seen = []
    original = vm_build._build

    def counting(mod, target, pipeline, lookup):
        seen.append(pipeline)
        return original(mod, target, pipeline, lookup)
    monkeypatch.setattr(vm_build, "_build", counting)
    return seen


def test_a_second_build_runs_no_pass_and_gives_the_same_program(cache_dir, builds):
    x = np.random.default_rng(1).standard_normal((2, 5)).astype("float32")
    first = relax.build(dense_model(WEIGHT), "llvm")
    second = relax.build(dense_model(WEIGHT), "llvm")      # a new, equal module
    assert len(builds) == 1
    assert model_cache.stats()["hits"] >= 1
    assert second.function_names == first.function_names
    assert second.lib.function_names == first.lib.function_names
    assert second.as_text() == first.as_text()
    assert second.lib._artifact.emit_object() == first.lib._artifact.emit_object()
    expected = np.maximum(x @ WEIGHT.T + 1.0, 0.0)
    np.testing.assert_allclose(run(first, x), expected, rtol=1e-5, atol=1e-6)
    assert run(second, x).tobytes() == run(first, x).tobytes()


def test_a_hit_still_shows_its_kernels_source(cache_dir, builds):
    relax.build(dense_model(WEIGHT), "llvm")
    second = relax.build(dense_model(WEIGHT), "llvm")
    assert isinstance(second.lib._artifact, kernel_cache.CachedArtifact)
    assert "define" in second.lib.get_source("ll")


@pytest.mark.parametrize("change", ["weight", "one weight bit", "input name", "shape",
                                    "target", "pipeline"])
def test_what_the_key_covers_gives_a_build_of_its_own(cache_dir, builds, change):
    relax.build(dense_model(WEIGHT), "llvm -mcpu=znver3")
    other_weight = WEIGHT.copy()
    other_weight.view(np.uint32)[0, 0] ^= 1
    mod, target, pipeline = {
        "weight": (dense_model(WEIGHT * 2), "llvm -mcpu=znver3", None),
        "one weight bit": (dense_model(other_weight), "llvm -mcpu=znver3", None),
        "input name": (dense_model(WEIGHT, input_name="data"), "llvm -mcpu=znver3", None),
        "shape": (dense_model(WEIGHT, batch=3), "llvm -mcpu=znver3", None),
        "target": (dense_model(WEIGHT), "llvm -mcpu=znver3 -mattr=-fma", None),
        "pipeline": (dense_model(WEIGHT), "llvm -mcpu=znver3", "default_build"),
    }[change]
    relax.build(mod, target, pipeline=pipeline)
    assert len(builds) == 2


def test_the_key_is_the_same_in_another_process(cache_dir):
    kernel_cache.toolchain.cache_clear()    # the source digest of now, as the child's
    relax.build(dense_model(WEIGHT), "llvm")
    script = textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        from test_model_cache import WEIGHT, dense_model
        from mlcbench import relax
        from mlcbench.relax import model_cache
        relax.build(dense_model(WEIGHT), "llvm")
        print(model_cache.stats()["hits"])
    """)
    env = dict(os.environ, PYTHONHASHSEED="4321")   # string hashes differ from this process
    child = subprocess.run([sys.executable, "-c", script, os.path.dirname(__file__)],
                           capture_output=True, text=True, env=env, timeout=300)
    assert child.returncode == 0, child.stderr
    assert child.stdout.split()[-1] == "1"


def test_builds_the_key_does_not_decide_are_not_cached(cache_dir, builds):
    def lookup(func, name, target):
        return None
    mod = dense_model(WEIGHT)
    target = tvm.target.Target("llvm")
    assert model_cache.model_key(mod, target, None, lookup) is None
    assert model_cache.model_key(mod, target, LegalizeOps(), None) is None
    with kernel_cache.disabled():
        assert model_cache.model_key(mod, target, None, None) is None
    for _ in range(2):
        relax.build(mod, "llvm", schedule_lookup=lookup)
    assert len(builds) == 2


@pytest.mark.parametrize("damage", ["truncate", "flip", "foreign"])
def test_a_damaged_model_entry_is_rebuilt(cache_dir, builds, damage):
    x = np.ones((2, 5), "float32")
    expected = run(relax.build(dense_model(WEIGHT), "llvm"), x)
    keyed = model_cache.model_key(dense_model(WEIGHT), tvm.target.Target("llvm"), None, None)
    path = kernel_store.entry_path(keyed[0])
    meta, data = kernel_store.load(keyed[0])
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[:-100])
    elif damage == "flip":
        raw = path.read_bytes()
        path.write_bytes(raw[:-10] + bytes([raw[-10] ^ 0x40]) + raw[-9:])
    else:   # intact, but stored for another key
        kernel_store.store(keyed[0], dict(meta, model={"other": 1}), data)
    np.testing.assert_array_equal(run(relax.build(dense_model(WEIGHT), "llvm"), x), expected)
    assert len(builds) == 2


def test_a_model_too_large_for_the_bound_is_not_stored(cache_dir, builds, monkeypatch):
    monkeypatch.setenv("MLCBENCH_KERNEL_CACHE_MB", "0.01")     # a quarter: 2.5 KB
    big = np.random.default_rng(2).standard_normal((64, 32)).astype("float32")  # 8 KB
    relax.build(dense_model(big), "llvm")
    keyed = model_cache.model_key(dense_model(big), tvm.target.Target("llvm"), None, None)
    assert kernel_store.load(keyed[0]) is None
