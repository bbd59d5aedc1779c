"""Target strings, host facts and the ``with Target(...)`` context."""
import pytest

from mlcbench.ir.errors import CodegenError
from mlcbench.target import Target, host_cpu_features, host_cpu_name


def test_default_llvm_target_describes_the_host():
    target = Target("llvm")
    assert target.kind.name == "llvm" and target.mcpu == host_cpu_name()
    assert target.features == host_cpu_features()
    expected = 512 if "avx512f" in target.features else 256 if "avx2" in target.features else 128
    assert target.vector_width_bits == expected
    assert target.num_cores >= 1
    assert target.l1d_cache_bytes >= 16 * 1024 and target.l2_cache_bytes >= target.l1d_cache_bytes


def test_options_are_parsed():
    target = Target("llvm -mcpu=znver5 --num-cores=3 -mattr=+avx2,-avx512f")
    assert (target.mcpu, target.num_cores) == ("znver5", 3)
    assert target.mattr == ("+avx2", "-avx512f")
    assert "avx512f" not in target.features and target.vector_width_bits == 256
    assert str(target) == "llvm -mcpu=znver5 --num-cores=3 -mattr=+avx2,-avx512f"


def test_named_cpu_implies_its_vector_width():
    assert Target("llvm -mcpu=skylake-avx512").vector_width_bits == 512
    assert Target("llvm -mcpu=haswell").vector_width_bits == 256


def test_context_sets_current_target():
    assert Target.current() is None
    with Target("llvm --num-cores=1") as outer:
        assert Target.current() is outer
        with Target("llvm") as inner:
            assert Target.current() is inner
        assert Target.current() is outer
    assert Target.current() is None
    with pytest.raises(CodegenError, match="no target"):
        Target.current(allow_none=False)


def test_cuda_is_describable():
    target = Target("cuda")
    assert target.kind.name == "cuda" and not target.is_cpu and "gpu" in target.keys


@pytest.mark.parametrize("text, message", [("vulkan", "unknown target kind"),
                                           ("llvm mcpu", "should look like"),
                                           ("llvm --num-cores=two", "integer"),
                                           ("", "target string")])
def test_bad_target_strings(text, message):
    with pytest.raises(ValueError, match=message):
        Target(text)
