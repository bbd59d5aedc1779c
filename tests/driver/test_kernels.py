"""The demo's kernels: the register tile follows the target's vector registers."""
import numpy as np
import pytest

import mlcbench
from mlcbench.driver.kernels import register_tile, tiled_matmul_schedule
from mlcbench.target import Target


@pytest.mark.parametrize("target, tile", [("llvm -mattr=+avx2,-avx512f", (4, 16)),
                                          ("llvm -mcpu=znver5", (8, 32))])
def test_register_tile_fills_half_the_vector_registers(target, tile):
    assert register_tile(Target(target)) == tile


def test_tiled_matmul_uses_the_host_tile_and_matches_numpy():
    rows, cols = register_tile()
    sch = tiled_matmul_schedule(64)
    assert f"T.vectorized({cols})" in sch.mod.script()
    assert f"T.unroll({rows})" in sch.mod.script()
    a, b = (np.random.rand(64, 64).astype("float32") for _ in range(2))
    c = mlcbench.nd.empty((64, 64), "float32")
    mlcbench.build(sch.mod)["main"](mlcbench.nd.array(a), mlcbench.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4)
