"""build() for GPU targets: lower_gpu, then codegen.gpu.build_gpu (replaced here by a stub)."""
import sys
import types

import pytest

import mlcbench
from mlcbench.codegen import kernel_cache
from mlcbench.ir import CodegenError
from mlcbench.script import tir as T
from mlcbench.target import Target
from mlcbench.tir import build as build_module


@T.prim_func
def _vec_add(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    T.func_attr({"global_symbol": "main"})
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            B[bx * 128 + tx] = A[bx * 128 + tx] + T.float32(1)


@pytest.fixture
def stub_codegen(monkeypatch):
    """A stand-in ``mlcbench.codegen.gpu`` recording what build hands it; the kernel
    cache must not be asked."""
    calls = []
    stub = types.ModuleType("mlcbench.codegen.gpu")
    stub.build_gpu = lambda lowered, target: calls.append((lowered, target)) or "runtime module"
    monkeypatch.setitem(sys.modules, "mlcbench.codegen.gpu", stub)

    def no_cache(*args, **kwargs):
        raise AssertionError("a GPU build went through the kernel cache")
    monkeypatch.setattr(kernel_cache, "cached_build", no_cache)
    return calls


@pytest.mark.parametrize("target", ["cuda", "nvidia/geforce-rtx-2080-ti",
                                    Target("nvidia/nvidia-a100")])
def test_a_gpu_build_lowers_and_hands_the_kernels_to_build_gpu(stub_codegen, target):
    assert mlcbench.build(_vec_add, target=target) == "runtime module"
    (lowered, given), = stub_codegen
    assert given == (target if isinstance(target, Target) else Target(target))
    assert sorted(gv.name_hint for gv in lowered.functions) == ["main", "main_kernel0"]
    assert lowered["main_kernel0"].attrs["calling_conv"] == "device_kernel"


def test_the_target_in_scope_picks_the_gpu_path(stub_codegen):
    with Target("cuda"):
        mlcbench.build(_vec_add)
    assert len(stub_codegen) == 1


def test_lower_with_a_gpu_target_gives_the_gpu_lowered_form():
    lowered = build_module.lower(_vec_add, target="cuda")
    assert lowered["main"].attrs["calling_conv"] == "host_launch"


def test_without_the_gpu_code_generator_the_error_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "mlcbench.codegen.gpu", None)
    with pytest.raises(CodegenError, match="'cuda' needs the GPU code generator "
                                           r"\(mlcbench.codegen.gpu.build_gpu\)"):
        mlcbench.build(_vec_add, target="cuda")


def test_opencl_takes_the_gpu_path(stub_codegen):
    mlcbench.build(_vec_add, target="opencl")
    (lowered, given), = stub_codegen
    assert given.kind.name == "opencl" and "main_kernel0" in lowered


def test_other_gpu_kinds_are_refused_naming_what_is_built():
    with pytest.raises(CodegenError, match="is not supported; GPU code is built for 'cuda', "
                                           "'opencl' or a tag"):
        build_module.build_gpu_target(mlcbench.IRModule({"main": _vec_add}), _FakeVulkan())


class _FakeVulkan:
    """A GPU kind that Target does not know (yet): build refuses it by name."""
    class kind:
        name = "vulkan"

    def __str__(self):
        return "vulkan"


def test_a_te_schedule_with_thread_bindings_lowers_for_a_gpu_target():
    from mlcbench import te
    A = te.placeholder((1024,), name="A")
    B = te.compute((1024,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    bx, tx = s[B].split(B.op.axis[0], factor=64)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    lowered = mlcbench.lower(s, [A, B], target="cuda")
    kernel = lowered["main_kernel0"]
    assert kernel.body.thread_binding.thread_tag == "blockIdx.x"
    assert kernel.body.extent.value == 16 and kernel.body.body.extent.value == 64
    with pytest.raises(mlcbench.ir.ScheduleError, match="binds axis 'i.outer' to 'blockIdx.x'"):
        mlcbench.lower(s, [A, B])               # the CPU cannot run thread bindings
