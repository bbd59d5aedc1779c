"""Text is data: TVMScript read by ``from_source`` (and every loader built on it) never
runs code. Each payload would create a marker file if it ran; each test asserts that the
marker is absent and that the ParseError names the offending construct."""
import pytest

from mlcbench.ir import ParseError
from mlcbench.script import from_source, tir as T
from mlcbench.script.parser.lambda_text import lambda_from_text
from mlcbench.tir.schedule.primitives.index_map import IndexMap

_FUNC = '''
@T.prim_func
def main(A: T.Buffer({shape}, {dtype})):
    T.func_attr({attrs})
    for i in range({extent}):
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            A[vi] = T.float32(0)
'''


def _func(shape="(4,)", dtype='"float32"', attrs="{}", extent="4"):
    return _FUNC.format(shape=shape, dtype=dtype, attrs=attrs, extent=extent)


def _system(marker) -> str:
    return f'__import__("os").system("touch {marker}")'


def _payloads(marker):
    """(text, word the error names) for every place and every way out we know."""
    run = _system(marker)
    module_sys = f'R.sys.modules["os"].system("touch {marker}")'
    return {
        "shape": (_func(shape=f"({run} * 0 + 4,)"), "__import__"),
        "dtype": (_func(dtype=run), "__import__"),
        "func_attr": (_func(attrs=f'{{"a": {run}}}'), "__import__"),
        "loop extent": (_func(extent=run), "__import__"),
        "open builtin": (_func(shape=f'(open("{marker}", "w"),)'), "open"),
        "decorator": (f"@{run}\ndef main():\n    pass\n", "__import__"),
        "decorator argument": (f"@T.prim_func({run})\ndef main():\n    pass\n",
                               "keyword arguments only"),
        "default argument": (_func().replace('"float32"))', f'"float32") = {run})'),
                             "no defaults"),
        "namespace's module": (_func(shape=f"({module_sys} * 0 + 4,)"), "'sys'"),
        "namespace's builtins": (_func(shape=f'(R.builtins.exec("open(\'{marker}\', \'w\')"),)'),
                                 "'builtins'"),
        "dunder on a class": (_func(shape='(T.Buffer.__init__.__globals__["os"],)'),
                              "'__init__'"),
        "dunder on a literal": (_func(shape="(().__class__.__base__.__subclasses__(),)"),
                                "'__class__'"),
        "getattr builtin": (_func(shape='(getattr(T, "__dict__"),)'), "getattr"),
        "registry": (_func(shape='(R.register_op("x"),)'), "register_op"),
        "import os": ("import os\n" + _func(shape=f'(os.system("touch {marker}"),)'), "'os'"),
        "from os import": ("from os import system\n" + _func(), "'os'"),
        "tvm.runtime": ("import tvm\n" + _func(shape=f'(tvm.runtime.load_module("{marker}"),)'),
                        "'runtime'"),
        "decorator called in text": (_func(shape="(T.prim_func(T.float32),)"), "decorator"),
        "huge power": (_func(shape="(10 ** 10 ** 10,)"), "too large"),
        "huge repetition": (_func(dtype='"a" * 10 ** 10'), "repeating a str"),
        "module_attrs": (f'@I.ir_module\nclass M:\n    I.module_attrs({{"a": {run}}})\n\n'
                         '    @T.prim_func\n    def main():\n        T.evaluate(0)\n',
                         "__import__"),
        "relax annotation": (f'@R.function\ndef main(x: R.Tensor(({run} * 0 + 4,), "float32")):'
                             '\n    return x\n', "__import__"),
        "relax body": (f'@R.function\ndef main(x: R.Tensor((4,), "float32")):\n'
                       f'    y = {module_sys}\n    return x\n', "'sys'"),
    }


_NAMES = sorted(_payloads("m"))


@pytest.mark.parametrize("name", _NAMES)
def test_from_source_refuses_the_payload_and_runs_nothing(tmp_path, name):
    marker = tmp_path / "ran"
    text, word = _payloads(marker)[name]
    with pytest.raises(ParseError) as info:
        from_source(text)
    assert not marker.exists()
    assert word in str(info.value), str(info.value)
    assert ":" in str(info.value).splitlines()[0]        # file:line:col of the construct


@pytest.mark.parametrize("text, word", [
    ('__import__("os").system("touch {marker}")', "expected a lambda"),
    ('lambda i: (__import__("os").system("touch {marker}"),)', "__import__"),
    ("lambda i: (i.__class__,)", "'__class__'"),
    ('lambda i, j=open("{marker}", "w"): (i,)', "plain positional parameters"),
    ('lambda i: (R.sys.modules["os"].system("touch {marker}"),)', "'sys'"),
    ("lambda *i: i", "plain positional parameters"),
])
def test_index_map_text_is_parsed_not_run(tmp_path, text, word):
    marker = tmp_path / "ran"
    with pytest.raises(ParseError, match=word):
        IndexMap.from_text(text.format(marker=marker))
    assert not marker.exists()


def test_index_map_text_builds_the_map_and_evaluates_on_numbers():
    imap = IndexMap.from_text("lambda i, j: (i // 32, j, i % 32)")
    assert imap.as_python() == "lambda i, j: (i // 32, j, i % 32)"
    assert tuple(imap.python_callable()(70, 3)) == (2, 3, 6)
    assert lambda_from_text("lambda i: (T.floordiv(i, 4),)")(T.int32(9))[0] is not None


def test_printed_scripts_still_parse_with_the_older_spellings():
    """``import tvm`` (for ``@tvm.script.ir_module``) and ``tir.max`` stay accepted."""
    mod = from_source('import tvm\nfrom tvm.script import tir as T\n\n'
                      '@tvm.script.ir_module\nclass M:\n    @T.prim_func\n'
                      '    def main(A: T.Buffer((4,), "float32")):\n'
                      '        A[0] = tir.max(A[1], T.float32(0))\n')
    assert "main" in [gv.name_hint for gv in mod.get_global_vars()]


def test_the_users_own_decorated_function_keeps_its_closure():
    """A decorated function in the user's notebook is the user's code, not data: it sees
    its closure and Python's builtins."""
    size = 2 * len("ab")

    @T.prim_func
    def main(A: T.Buffer((size,), "float32")):
        for i in range(max(size, 1)):
            with T.block("b"):
                vi = T.axis.spatial(size, i)
                A[vi] = T.float32(0)
    assert [int(s) for s in main.buffer_map[main.params[0]].shape] == [4]
