"""The exercise set-up of a committed notebook, run outside Jupyter.

A chapter's exercises are checked by functions defined in cells tagged
``exercise-setup``; the tests run those cells and hand the check functions the
reference solutions, so the tests check exactly what the notebook checks.
"""
import linecache
import os

import nbformat

NOTEBOOKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "notebooks")


def exercise_namespace(notebook: str) -> dict:
    """Globals after running the ``exercise-setup`` cells of ``notebooks/<notebook>``."""
    nb = nbformat.read(os.path.join(NOTEBOOKS, notebook), as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code"
             and "exercise-setup" in c.metadata.get("tags", [])]
    assert cells, f"{notebook} has no cell tagged exercise-setup"
    namespace: dict = {"__name__": f"exercises_of_{notebook.split('.')[0]}"}
    for number, cell in enumerate(cells):
        # TVMScript decorators read their source back; IPython keeps cell sources in
        # linecache, and so do we.
        filename = f"<{notebook} exercise set-up {number}>"
        linecache.cache[filename] = (len(cell.source), None,
                                     cell.source.splitlines(keepends=True), filename)
        exec(compile(cell.source, filename, "exec"), namespace)
    return namespace
