"""Test-wide settings.

Property tests draw their examples from a fixed seed (``derandomize``), so a CI run
is repeatable: the same commit passes or fails the same way every time. Exploring new
random cases is the fuzzer's job (``benchmarks/fuzz_schedules.py``) or, locally,
``pytest --hypothesis-profile=explore``.
"""
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile("ci")
