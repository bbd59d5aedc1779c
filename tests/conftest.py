"""Test-wide settings.

Property tests draw their examples from a fixed seed (``derandomize``), so a CI run
is repeatable: the same commit passes or fails the same way every time. Exploring new
random cases is the fuzzer's job (``benchmarks/fuzz_schedules.py``) or, locally,
``pytest --hypothesis-profile=explore``.

``cuda(0)`` is the simulated GPU in every test, also on a machine with a CUDA device
(``MLCBENCH_GPU=sim`` unless the environment says otherwise): the tests' figures and
counters are the simulator's. ``tests/codegen/gpu/test_cuda_device.py`` asks for the
real device itself, and skips where there is none.
"""
import os

from hypothesis import settings

os.environ.setdefault("MLCBENCH_GPU", "sim")

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile("ci")
