"""GPU target tags: ``Target("nvidia/...")`` and ``Target("cuda")`` carry device limits."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlcbench.target import DEFAULT_CUDA_TAG, Target, TargetError, list_tags
from mlcbench.target.tags import CUDA_TAGS

_LIMITS = ("max_threads_per_block", "max_shared_memory_per_block", "registers_per_block",
           "thread_warp_size", "max_num_threads", "arch", "multiprocessor_count",
           "memory_bandwidth_gbps", "fp32_gflops", "shared_memory_banks", "clock_mhz",
           "max_threads_per_sm", "max_shared_memory_per_sm")


@pytest.mark.parametrize("tag,arch,sms", [
    ("nvidia/geforce-rtx-2080-ti", "sm_75", 68), ("nvidia/nvidia-t4", "sm_75", 40),
    ("nvidia/nvidia-a100", "sm_80", 108), ("nvidia/nvidia-h100", "sm_90", 132)])
def test_a_tag_is_a_cuda_target_with_its_limits(tag, arch, sms):
    target = Target(tag)
    assert target.kind.name == "cuda" and target.tag == tag
    assert target.is_gpu and not target.is_cpu and "gpu" in target.keys
    assert target.attrs["arch"] == arch
    assert target.attrs["multiprocessor_count"] == sms
    assert target.attrs["max_threads_per_block"] == 1024
    assert target.attrs["max_shared_memory_per_block"] == 49152
    assert target.attrs["thread_warp_size"] == 32
    assert set(_LIMITS) <= set(target.attrs)


@pytest.mark.parametrize("tag", sorted(CUDA_TAGS))
def test_peak_flops_agree_with_cores_and_clock(tag):
    # 2 FLOP per FMA, 64 FP32 cores per SM on sm_75/sm_80, 128 on sm_90: the figure
    # from the spec sheet is within 1% of cores x clock.
    attrs = Target(tag).attrs
    cores = 128 if attrs["arch"] == "sm_90" else 64
    computed = attrs["multiprocessor_count"] * cores * 2 * attrs["clock_mhz"] / 1000
    assert abs(computed - attrs["fp32_gflops"]) / attrs["fp32_gflops"] < 0.01


def test_cuda_is_the_default_tag():
    assert DEFAULT_CUDA_TAG == "nvidia/geforce-rtx-2080-ti"
    cuda, tagged = Target("cuda"), Target(DEFAULT_CUDA_TAG)
    assert cuda.attrs == tagged.attrs
    assert cuda.tag == "" and str(cuda) == "cuda"
    assert cuda != tagged      # a target is named by its text, as in TVM


def test_options_replace_single_entries():
    target = Target("nvidia/nvidia-a100 -max_threads_per_block=256")
    assert target.attrs["max_threads_per_block"] == 256
    assert target.attrs["max_num_threads"] == 256
    assert target.attrs["arch"] == "sm_80"
    assert Target("cuda -arch=sm_86").attrs["arch"] == "sm_86"


@given(st.integers(1, 4096))
def test_a_thread_limit_option_is_read_as_an_integer(limit):
    target = Target(f"cuda -max_num_threads={limit}")
    assert target.attrs["max_threads_per_block"] == limit == target.attrs["max_num_threads"]


def test_unknown_tag_names_it_and_lists_the_known():
    with pytest.raises(TargetError, match=r"'nvidia/rtx-9999'.*nvidia/nvidia-a100"):
        Target("nvidia/rtx-9999")


@pytest.mark.parametrize("text,match", [
    ("cuda -arch=75", r"-arch .*'sm_75', found '75'"),
    ("cuda -max_threads_per_block=0", r"-max_threads_per_block must be at least 1, found 0"),
    ("cuda -max_shared_memory_per_block=lots", r"expects an integer, found 'lots'")])
def test_bad_gpu_options_are_refused(text, match):
    with pytest.raises(TargetError, match=match):
        Target(text)


def test_opencl_is_a_gpu_with_the_default_tags_limits():
    target = Target("opencl -max_threads_per_block=256")
    assert target.is_gpu and target.attrs["max_threads_per_block"] == 256
    assert target.attrs["max_shared_memory_per_block"] == Target("cuda").attrs[
        "max_shared_memory_per_block"]


def test_list_tags_is_a_copy():
    tags = list_tags()
    tags["nvidia/nvidia-a100"]["arch"] = "sm_00"
    assert Target("nvidia/nvidia-a100").attrs["arch"] == "sm_80"


def test_export_holds_the_limits():
    exported = Target("nvidia/nvidia-h100").export()
    assert exported["kind"] == "cuda" and exported["tag"] == "nvidia/nvidia-h100"
    assert exported["max_shared_memory_per_block"] == 49152 and exported["arch"] == "sm_90"
