"""from_source: TVMScript text (as printed) back to an IRModule or a PrimFunc."""
import pytest

import mlcbench
from mlcbench.ir import ParseError, assert_structural_equal
from mlcbench.script import from_source
from mlcbench.script import ir as I
from mlcbench.script import tir as T
from mlcbench.tir import PrimFunc

MODULE_TEXT = '''
# from mlcbench.script import ir as I
# from mlcbench.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.func_attr({"global_symbol": "add_one", "tir.noalias": T.bool(True)})
        # with T.block("root"):
        for i in range(8):
            with T.block("B"):
                v_i = T.axis.spatial(8, i)
                T.reads(A[v_i])
                T.writes(B[v_i])
                B[v_i] = A[v_i] + T.float32(1)

    @T.prim_func(private=True)
    def helper(A: T.Buffer((8,), "float32")):
        A[0] = T.float32(0)
'''


@I.ir_module
class Expected:
    @T.prim_func
    def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.func_attr({"global_symbol": "add_one", "tir.noalias": True})
        for i in range(8):
            with T.block("B"):
                v_i = T.axis.spatial(8, i)
                B[v_i] = A[v_i] + T.float32(1)

    @T.prim_func(private=True)
    def helper(A: T.Buffer((8,), "float32")):
        A[0] = T.float32(0)


def test_module_text_equals_decorated_module():
    mod = from_source(MODULE_TEXT)
    assert isinstance(mod, mlcbench.IRModule)
    assert_structural_equal(mod, Expected)
    assert mod["add_one"].attrs["tir.noalias"] is True
    assert mod["helper"].attrs == {}


def test_single_function_text_with_tvm_import_header():
    func = from_source('''
import tvm
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    for i in T.vectorized(4):
        A[i] = T.float32(0)
''')
    assert isinstance(func, PrimFunc) and func.attrs == {}


def test_mlcbench_import_header_and_script_decorator_spelling():
    mod = from_source('''
import mlcbench
from mlcbench.script import tir as T

@mlcbench.script.ir_module
class M:
    @T.prim_func
    def main(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(0)
''')
    assert mod["main"].attrs == {"global_symbol": "main"}


def test_module_attrs():
    mod = from_source('''
@I.ir_module
class M:
    I.module_attrs({"system_lib_prefix": "lib_"})

    @T.prim_func
    def main(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(0)
''')
    assert mod.attrs == {"system_lib_prefix": "lib_"}


def test_decorated_module_attrs():
    @I.ir_module
    class M:
        I.module_attrs({"key": 1})

        @T.prim_func
        def main(A: T.Buffer((4,), "float32")):
            A[0] = T.float32(0)

    assert M.attrs == {"key": 1} and list(M.functions)[0].name_hint == "main"


@pytest.mark.parametrize("text, message", [
    ("x = 1\n", "expected `@I.ir_module class"),
    ("", "found 0"),
    ("@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    A[0] = 1\n"
     "@T.prim_func\ndef g(A: T.Buffer((4,), 'float32')):\n    A[0] = 1\n", "found 2"),
    ("class M:\n    pass\n", "needs the @I.ir_module decorator"),
    ("def f(A: T.Buffer((4,), 'float32')):\n    A[0] = 1\n", "needs a decorator"),
    ("from tvm.nothing_here import x\n", "may import only the TVMScript namespaces"),
    ("@T.prim_func\ndef f(A):\n    A[0] = 1\n", "needs a type annotation"),
])
def test_malformed_text(text, message):
    with pytest.raises(ParseError, match=message):
        from_source(text)


def test_text_parses_from_several_threads_at_once():
    # CPython 3.11's AST constructor counts its recursion per interpreter: unserialized,
    # parses in two threads can fail with "AST constructor recursion depth mismatch"
    import concurrent.futures
    nested = MODULE_TEXT.replace("A[v_i] + T.float32(1)",
                                 "(" * 40 + "A[v_i]" + " + T.float32(1))" * 40)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        modules = list(pool.map(lambda _: from_source(nested), range(16)))
    for mod in modules[1:]:
        assert_structural_equal(mod, modules[0])
