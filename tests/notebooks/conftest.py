"""Make ``exercise_cells`` importable (tests run with ``--import-mode=importlib``)."""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
