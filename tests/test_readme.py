"""The README's Python examples run: every ```python block, in order, in one fresh
process, from an empty working directory (tuning writes its records there). A block that
builds on an earlier one says so in its first line; all others bring their own imports
and data (``mlcbench.datasets``)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
CONTINUES = "# continues the "


def python_blocks(text: str) -> list:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_blocks_that_use_earlier_names_say_so():
    """A block that does not say it continues another imports what it uses first."""
    for block in python_blocks(README.read_text()):
        if not block.startswith(CONTINUES):
            first_code = next(line for line in block.splitlines() if line.strip())
            assert first_code.startswith(("import ", "from ")), block[:200]


@pytest.mark.skipif(sys.platform != "linux", reason="the examples time code on Linux hosts")
def test_readme_python_blocks_run_in_order(tmp_path):
    blocks = python_blocks(README.read_text())
    assert len(blocks) >= 8, "the README lost its examples"
    script = "\n".join(f"print('--- README block {n}', flush=True)\n{block}"
                       for n, block in enumerate(blocks))
    (tmp_path / "readme_blocks.py").write_text(script)
    env = {**os.environ, "MPLBACKEND": "Agg"}
    child = subprocess.run([sys.executable, "readme_blocks.py"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=900)
    assert child.returncode == 0, child.stdout[-3000:] + child.stderr[-3000:]
    assert f"--- README block {len(blocks) - 1}" in child.stdout
