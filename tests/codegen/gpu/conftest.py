"""Run the simulated GPU without its first-use notice."""
import os

os.environ.setdefault("MLCBENCH_GPU", "sim")
