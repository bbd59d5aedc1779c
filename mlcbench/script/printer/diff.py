"""A unified diff of two scripts: what a pass or a schedule primitive changed.

>>> print(print_diff("x = 1\\ny = 2", "x = 1\\ny = 3"))
--- before
+++ after
@@ -1,2 +1,2 @@
 x = 1
-y = 2
+y = 3
"""
from __future__ import annotations

import difflib


def print_diff(before, after, before_name: str = "before", after_name: str = "after",
               context: int = 3) -> str:
    """Unified diff of two scripts (strings, or IR objects printed with ``.script()``).

    Returns ``""`` when the texts are equal.
    """
    old = before if isinstance(before, str) else before.script()
    new = after if isinstance(after, str) else after.script()
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), before_name, after_name,
                                 n=context, lineterm="")
    return "\n".join(lines)
