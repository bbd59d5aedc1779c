"""The x86 templates: every config builds and computes what numpy computes."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench
from mlcbench import autotvm
from mlcbench.ir.errors import TuningError
from mlcbench.topi.testing import conv2d_nchw_python

DENSE_NK = (("TENSOR", (6, 16), "float32"), ("TENSOR", (24, 16), "float32"), None, "float32")
DENSE_KN = (("TENSOR", (6, 16), "float32"), ("TENSOR", (16, 24), "float32"), None, "float32",
            "KN")
CONV = (("TENSOR", (2, 4, 7, 6), "float32"), ("TENSOR", (6, 4, 3, 3), "float32"), (2, 1),
        (1, 0, 2, 1), (1, 2), "float32")
TASKS = {(name, args): autotvm.task.create(name, args=args, target="llvm")
         for name, args in [("dense.x86", DENSE_NK), ("dense.x86", DENSE_KN),
                            ("dense_pack.x86", DENSE_NK), ("dense_pack.x86", DENSE_KN),
                            ("conv2d_nchw.x86", CONV)]}
RNG = np.random.default_rng(0)


def run_config(task, index):
    s, args = task.instantiate(task.config_space.get(index))
    lib = mlcbench.build(s, args, target="llvm")
    inputs = [RNG.standard_normal(tuple(int(d) for d in t.shape)).astype("float32")
              for t in args[:2]]
    out = mlcbench.nd.array(np.zeros(tuple(int(d) for d in args[2].shape), "float32"))
    lib(*[mlcbench.nd.array(x) for x in inputs], out)
    return inputs, out.numpy()


def reference(name, args, data, weight):
    if name == "conv2d_nchw.x86":
        return conv2d_nchw_python(data, weight, args[2], args[3], args[4])
    return data @ (weight if args[-1] == "KN" else weight.T)


@settings(max_examples=12, deadline=None)
@given(key=st.sampled_from(sorted(TASKS)), fraction=st.floats(0, 1, exclude_max=True))
def test_every_config_matches_numpy(key, fraction):
    task = TASKS[key]
    (data, weight), out = run_config(task, int(fraction * len(task.config_space)))
    np.testing.assert_allclose(out, reference(*key, data, weight), rtol=1e-4, atol=1e-4)


def test_space_knobs_follow_tvm_names():
    space = TASKS[("dense_pack.x86", DENSE_NK)].config_space
    assert list(space.space_map) == ["tile_y", "tile_x", "tile_k", "unroll_y", "parallel"]
    assert TASKS[("dense_pack.x86", DENSE_NK)].flop == 2 * 6 * 24 * 16


def test_dense_pack_packs_weight_into_tile_x_panels():
    task = TASKS[("dense_pack.x86", DENSE_NK)]
    config = next(c for c in map(task.config_space.get, range(len(task.config_space)))
                  if c["tile_x"].size[-1] == 8)
    mod = task.instantiate_module(config)
    assert "packed_weight = T.alloc_buffer((3, 16, 8))" in mod.script()


def test_dense_rejects_mismatched_reduction():
    bad = (("TENSOR", (6, 16), "float32"), ("TENSOR", (24, 15), "float32"), None, "float32")
    with pytest.raises(TuningError, match="reduces over 15"):
        autotvm.task.create("dense.x86", args=bad, target="llvm")


def test_dense_rejects_unknown_layout():
    with pytest.raises(TuningError, match="weight_layout must be one of"):
        autotvm.task.create("dense.x86", args=DENSE_NK + ("NN",), target="llvm")
