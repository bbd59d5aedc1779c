"""The Fallback rule applies to anything; the pass keeps scheduled functions."""
import numpy as np

import mlcbench
from mlcbench import dlight, te, topi
from mlcbench.dlight.base import IS_SCHEDULED
from mlcbench.dlight.cpu import Fallback
from mlcbench.tir.schedule import Schedule

from mlcbench.target import Target

TARGET = Target("llvm")


def test_applies_to_every_kind_of_function():
    x = te.placeholder((7, 13), name="x")
    w = te.placeholder((5, 13), name="w")
    for out, ins in [(topi.argmax(x, axis=1), [x]), (topi.nn.dense(x, w), [x, w]),
                     (topi.exp(x), [x]), (topi.nn.softmax(x), [x])]:
        assert Fallback().apply(te.create_prim_func(ins + [out]), TARGET) is not None


def test_argmax_over_leading_axis_matches_numpy(rule_for, run_te, rng):
    a = rng.standard_normal((300, 301)).astype("float32")
    x = te.placeholder(a.shape, name="x")
    assert rule_for([x], topi.argmax(x, axis=0)) in ("Fallback", "Reduction")
    np.testing.assert_array_equal(run_te([x], topi.argmax(x, axis=0), [a]), a.argmax(0))


def test_pass_name_and_scheduled_functions_are_kept():
    x = te.placeholder((7, 13), name="x")
    func = te.create_prim_func([x, topi.exp(x)])
    done = func.with_attr(IS_SCHEDULED, True)
    mod = mlcbench.IRModule({"f": func, "g": done})
    apply = dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())
    assert apply.info.name == "dlight.ApplyDefaultSchedule"
    out = apply(mod)
    assert out["g"] is done
    assert out["f"].attrs[IS_SCHEDULED] and "T.vectorized" in out["f"].script()


def test_first_applicable_rule_wins():
    class Refuses(dlight.ScheduleRule):
        def apply(self, func, target, tunable=False):
            return None

    class Marks(dlight.ScheduleRule):
        def apply(self, func, target, tunable=False):
            sch = Schedule(func)
            sch.annotate(sch.get_block("compute"), "picked", 1)
            return sch

    x = te.placeholder((4,), name="x")
    mod = mlcbench.IRModule({"main": te.create_prim_func([x, topi.exp(x)])})
    out = dlight.ApplyDefaultSchedule(Refuses(), Marks(), Fallback())(mod)
    assert '"picked": 1' in out["main"].script()
