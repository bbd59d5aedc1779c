"""The ``R`` namespace of TVMScript: ``from mlcbench.script import relax as R``.

The names live with the graph IR (``mlcbench.relax.tvmscript.namespace``), a layer above
this one; they are looked up on first use, so importing ``mlcbench.script`` stays light::

    @R.function
    def main(x: R.Tensor((1, 784), "float32")) -> R.Tensor((1, 784), "float32"):
        with R.dataflow():
            y = R.nn.relu(x)
            R.output(y)
        return y
"""


def _namespace():
    from ..relax.tvmscript import namespace
    return namespace


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(_namespace(), name)


def __dir__():
    return sorted(n for n in vars(_namespace()) if not n.startswith("_"))
