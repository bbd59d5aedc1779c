"""The MLC course's older Relax names, kept as aliases (mlcbench/relax/compat.py)."""
from mlcbench import relax
from mlcbench.script import relax as R


def test_2022_names_are_todays_objects():
    assert relax.op.linear is relax.op.nn.linear          # course chapter 6
    assert (relax.dataflow, relax.output) == (R.dataflow, R.output)   # chapter 9
    assert relax.multiply is relax.op.multiply and relax.add is relax.op.add
    old_type = relax.DynTensorType(2, "float32")
    assert (old_type.ndim, old_type.dtype, old_type.shape) == (2, "float32", None)
