"""Make this folder's kernel module (``matmul_kernels``) importable and run the simulated
GPU without its first-use notice."""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
os.environ.setdefault("MLCBENCH_GPU", "sim")
