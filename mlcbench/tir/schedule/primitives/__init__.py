"""Schedule primitives as pure functions ``(PrimFunc, references...) -> PrimFunc``.

Loops are referenced by their loop ``Var``, blocks by their name (unique within a
function). Each primitive checks its preconditions and raises ScheduleError (through
:func:`mlcbench.tir.schedule.errors.fail`) before building anything.
"""
