"""Make this folder's helper module (``codegen_helpers``) importable.

Tests run with ``--import-mode=importlib``, which does not put test folders on
``sys.path``; the helper module's name is unique to this folder.
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
