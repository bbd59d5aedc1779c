"""Records: encode/decode round trip, atomic appends, a partial last line dropped."""
import pytest

from mlcbench import autotvm
from mlcbench.autotvm import record
from mlcbench.autotvm.measure import MeasureInput, MeasureResult
from mlcbench.meta_schedule.database import DatabaseWarning


def measured(task, index, cost, error_no=0):
    return (MeasureInput("llvm", task, task.config_space.get(index)),
            MeasureResult((cost,), error_no, 0.5, 1.0))


def test_encode_decode_round_trip(task):
    inp, res = measured(task, 9, 1e-3)
    line = record.encode(inp, res)
    assert '"tile_y","sp",[-1,' in line and '"version":0.2' in line
    inp2, res2 = record.decode(line)
    assert inp2.workload == task.workload and inp2.config == inp.config
    assert res2 == res


def test_log_to_file_pick_best_and_partial_line(task, tmp_path):
    log, best = str(tmp_path / "mm.log"), str(tmp_path / "best.log")
    callback = autotvm.callback.log_to_file(log)
    pairs = [measured(task, 1, 3e-3), measured(task, 2, 1e-3), measured(task, 3, 0.0, 4)]
    callback(None, [p[0] for p in pairs], [p[1] for p in pairs])
    with open(log, "a") as f:
        f.write('{"input": ["llvm", "test/ma')        # a crash in the middle of a write
    with pytest.warns(DatabaseWarning, match="partial last line"):
        assert len(list(record.load_from_file(log))) == 3
    record.pick_best(log, best)
    (only,) = list(record.load_from_file(best))
    assert only[0].config.index == 2
