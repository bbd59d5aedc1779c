import threading

import pytest

from mlcbench.ir import TuningError
from mlcbench.meta_schedule.background import BackgroundCall


def test_result_is_the_value_computed_in_another_thread():
    threads = []
    call = BackgroundCall(lambda: threads.append(threading.current_thread()) or 42, "t")
    assert call.result() == 42
    assert threads and threads[0] is not threading.current_thread()
    assert threads[0].name == "t"


def test_an_exception_of_the_call_is_raised_by_result():
    def fail():
        raise TuningError("the build failed")
    call = BackgroundCall(fail, "failing")
    with pytest.raises(TuningError, match="the build failed"):
        call.result()
