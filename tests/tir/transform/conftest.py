"""Make the helpers of this folder importable (``interp``, ``lowering_programs``).

The tests run with ``--import-mode=importlib``, which does not put test folders on
``sys.path``; the helper modules have names unique to this folder.
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
