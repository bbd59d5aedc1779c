"""Opening a work_dir parses its workloads' TVMScript as data: a payload in a database
file is refused with TuningError naming file:line and the construct, and never runs."""
import json

import pytest

from mlcbench.ir import TuningError
from mlcbench.meta_schedule import JSONDatabase

_WORKLOAD = '''
@T.prim_func
def main(A: T.Buffer(({shape},), "float32")):
    for i in range(4):
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            A[vi] = T.float32(0)
'''


def _payloads(marker):
    return {
        "builtin": (f'__import__("os").system("touch {marker}") * 0 + 4', "__import__"),
        "namespace module": (f'R.sys.modules["os"].system("touch {marker}") * 0 + 4', "'sys'"),
        "dunder": ('T.Buffer.__init__.__globals__["os"]', "'__init__'"),
        "huge constant": ("10 ** 10 ** 10", "too large"),
    }


@pytest.mark.parametrize("name", sorted(_payloads("m")))
def test_workload_payload_is_refused_and_never_runs(tmp_path, name):
    marker = tmp_path / "ran"
    shape, word = _payloads(marker)[name]
    line = json.dumps(["12", _WORKLOAD.format(shape=shape)])
    (tmp_path / "database_workload.json").write_text(line + "\n")
    with pytest.raises(TuningError) as info:
        JSONDatabase(work_dir=tmp_path)
    assert not marker.exists()
    assert "database_workload.json:1" in str(info.value) and word in str(info.value)
