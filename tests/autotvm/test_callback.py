"""Tuning callbacks: the progress bar's units and the log's protocol, checked when made."""
from types import SimpleNamespace

import pytest

from mlcbench import autotvm
from mlcbench.ir import InvalidValueError


def _measured(flop, seconds):
    inp = SimpleNamespace(task=SimpleNamespace(flop=flop))
    return inp, SimpleNamespace(error_no=0, costs=[seconds])


@pytest.mark.parametrize("prefix, shown", [("G", "2.00/   2.00 GFLOPS"),
                                           ("M", "2000.00/2000.00 MFLOPS")])
def test_progress_bar_reports_in_the_prefix_asked_for(capsys, prefix, shown):
    bar = autotvm.callback.progress_bar(1, si_prefix=prefix)
    inp, result = _measured(2e9, 1.0)
    bar(SimpleNamespace(best_flops=2e9, finished=True), [inp], [result])
    assert shown in capsys.readouterr().err


def test_unknown_si_prefix_is_refused():
    with pytest.raises(InvalidValueError, match=r"si_prefix must be one of .*found 'X'"):
        autotvm.callback.progress_bar(4, si_prefix="X")


def test_log_protocol_other_than_json_is_refused(tmp_path):
    with pytest.raises(InvalidValueError, match="protocol must be 'json'.*found 'pickle'"):
        autotvm.callback.log_to_file(str(tmp_path / "t.log"), protocol="pickle")
    assert not (tmp_path / "t.log").exists()
