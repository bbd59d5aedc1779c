import pytest

import mlcbench.runtime as rt
from mlcbench.ir.errors import RuntimeError_


def test_cpu_repr_equality_and_hash():
    assert repr(rt.cpu()) == "cpu(0)" and str(rt.cpu(1)) == "cpu(1)"
    assert rt.cpu() == rt.Device(rt.kDLCPU, 0)
    assert rt.cpu() != rt.cpu(1) and rt.cpu() != rt.cuda()
    assert len({rt.cpu(), rt.device("llvm"), rt.device(1, 0)}) == 1


@pytest.mark.parametrize("name, expected", [
    ("llvm", "cpu(0)"), ("cpu", "cpu(0)"), ("cuda", "cuda(0)"), ("gpu", "cuda(0)"),
    ("llvm -mcpu=znver4", "cpu(0)"), (1, "cpu(0)"), (2, "cuda(0)"),
])
def test_device_from_name_or_dlpack_type(name, expected):
    assert repr(rt.device(name)) == expected


def test_device_id_is_kept():
    assert rt.device("cuda", 3).device_id == 3
    assert rt.device("llvm", 0).device_type == rt.kDLCPU


def test_only_cpu_exists_and_syncs():
    assert rt.cpu().exist and not rt.cuda().exist
    rt.cpu().sync()
    with pytest.raises(RuntimeError_, match="no GPU runtime"):
        rt.cuda().sync()


@pytest.mark.parametrize("bad", ["opencl", 7, 3.5, None])
def test_unknown_device_is_a_value_error(bad):
    with pytest.raises(ValueError):
        rt.device(bad)


def test_negative_device_id_rejected():
    with pytest.raises(ValueError, match="non-negative"):
        rt.cpu(-1)
