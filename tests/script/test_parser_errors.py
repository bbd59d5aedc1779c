"""Parse errors point at file:line:col of the user's real file, with a caret."""
import pytest

from mlcbench.ir import ParseError
from mlcbench.script import from_source
from mlcbench.script import tir as T

THIS_FILE = __file__


def _locate(marker: str, offending: str):
    """(line, 1-based column) of ``offending`` on the unique line holding ``marker``."""
    with open(THIS_FILE) as f:
        lines = f.read().splitlines()
    (number,) = [k + 1 for k, line in enumerate(lines) if f"# {marker}" in line]
    return number, lines[number - 1].index(offending) + 1, lines[number - 1]


def _check(err: ParseError, marker: str, offending: str, message: str):
    line, column, text = _locate(marker, offending)
    rendered = str(err)
    assert rendered.startswith(f"{THIS_FILE}:{line}:{column}: error: "), rendered
    assert message in rendered
    source_line, caret_line = rendered.splitlines()[1:3]
    assert source_line == "    " + text
    assert caret_line.index("^") == 4 + column - 1
    assert caret_line.strip() == "^" * len(caret_line.strip())
    assert err.span.source_name == THIS_FILE and err.span.line == line


def test_unknown_T_function():
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            A[0] = T.fancy_op(A[1])  # marker-unknown
    _check(info.value, "marker-unknown", "T.fancy_op", "unknown TVMScript function T.fancy_op")
    assert "^" * len("T.fancy_op") in str(info.value)


def test_remap_kinds_do_not_match_loop_variables():
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32")):
            for i, j in T.grid(4, 4):
                with T.block("A"):
                    vi, vj = T.axis.remap("SSR", [i, j])  # marker-remap
                    A[vi, vj] = T.float32(0)
    _check(info.value, "marker-remap", "T.axis.remap", "3 iterator kinds 'SSR' but 2 loop")


def test_undefined_variable():
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = undefined_thing  # marker-undefined  # noqa: F821
    _check(info.value, "marker-undefined", "undefined_thing",
           "undefined variable 'undefined_thing'")


def test_assigning_to_a_loop_variable():
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                i = 3  # marker-loopvar
                A[i] = T.float32(0)
    _check(info.value, "marker-loopvar", "i = 3", "cannot assign to loop variable 'i'")


def test_assigning_to_a_block_variable():
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("A"):
                    vi = T.axis.spatial(4, i)
                    vi = vi + 1  # marker-blockvar
                    A[vi] = T.float32(0)
    _check(info.value, "marker-blockvar", "vi = vi", "cannot assign to loop variable 'vi'")


def test_while_loop_is_unsupported():
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            while A[0] < T.float32(1):  # marker-while
                A[0] = A[0] + T.float32(1)
    _check(info.value, "marker-while", "while", "`while` loops are not supported")


def test_lambda_is_unsupported():
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            T.evaluate(lambda x: x)  # marker-lambda
    _check(info.value, "marker-lambda", "lambda", "lambda expressions are not supported")


def test_list_comprehension_is_unsupported():
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("A"):
                    vi = T.axis.spatial(4, i)
                    T.reads([A[k] for k in range(4)])  # marker-listcomp
                    A[vi] = T.float32(0)
    _check(info.value, "marker-listcomp", "[A[k]", "list comprehensions are not supported")


def test_wrong_number_of_indices_in_a_load():
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                B[i] = A[i]  # marker-load
    _check(info.value, "marker-load", "A[i]", "buffer A has 2 dimension(s) (4, 4), but is "
                                               "indexed with 1 index(es)")


def test_wrong_number_of_indices_in_a_store():
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32")):
            for i in range(4):
                A[i] = T.float32(0)  # marker-store
    _check(info.value, "marker-store", "A[i]", "buffer A has 2 dimension(s)")


def test_unknown_dtype_string_points_at_the_string():
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            B = T.alloc_buffer((4,), "flaot32")  # marker-dtype
            A[0] = B[0]
    _check(info.value, "marker-dtype", '"flaot32"', "unknown dtype 'flaot32'")


def test_unknown_dtype_in_a_text_annotation():
    with pytest.raises(ParseError) as info:
        from_source('@T.prim_func\ndef f(A: T.Buffer((4,), "flaot32")):\n    A[0] = 1\n')
    assert str(info.value).startswith("<string>:2:25: error: T.Buffer: unknown dtype 'flaot32'")


def test_chained_comparison_location():
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                if 0 < i < 3:  # marker-chain
                    A[i] = T.float32(0)
    _check(info.value, "marker-chain", "0 < i", "chained comparisons")


def test_errors_in_text_point_into_the_string():
    text = '''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = B[i]
'''
    with pytest.raises(ParseError) as info:
        from_source(text)
    rendered = str(info.value)
    assert rendered.splitlines()[0] == "<string>:5:16: error: undefined name 'B': text may " \
                                       "use the names it binds, the T, I and R namespaces " \
                                       "and range, no builtins"
    assert rendered.splitlines()[1:] == ["            A[i] = B[i]", "                   ^"]


def test_syntax_errors_in_text_are_parse_errors():
    with pytest.raises(ParseError, match=r"<string>:3:\d+: error: invalid syntax"):
        from_source("@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    A[0] = = 1\n")


def test_parameters_with_defaults_are_rejected():
    with pytest.raises(ParseError, match=r"<string>:3:22: error: TVMScript parameters are plain"):
        from_source('@T.prim_func\ndef f(A: T.Buffer((4,), "float32"),\n'
                    '      n: T.int32, *, m: T.int32 = 3):\n    A[0] = 1\n')


def test_constant_division_by_zero_is_a_parse_error():
    source = '''
@T.prim_func
def main():
    T.evaluate(1 % (1 - 1))
'''
    with pytest.raises(ParseError, match=r"<string>:4:\d+: error: division by zero"):
        from_source(source)


def test_float_loop_extent_is_a_parse_error():
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in T.grid(4.5):  # marker-float-extent
                A[0] = T.float32(1)
    _check(info.value, "marker-float-extent", "T.grid(4.5)",
           "a loop bound must be an integer, found 4.5")


@pytest.mark.parametrize("loop, message", [
    ("range(-3)", "a loop extent must not be negative, found -3"),
    ("T.grid(4, -1)", "a loop extent must not be negative, found -1"),
    ("T.serial(5, 2)", "a loop extent must not be negative, found -3"),
    ("T.grid(2**62)", "a loop bound must fit the int32 loop variable, found 4611686018427387904"),
    ("T.parallel(T.float32(2))", "a loop bound must be an integer"),
])
def test_loop_bounds_out_of_range_name_the_loop(loop, message):
    text = f'@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n    for i in {loop}:\n' \
           '        A[0] = T.float32(1)\n'
    with pytest.raises(ParseError, match=r"<string>:3:\d+: error: " + message.replace("*", r"\*")):
        from_source(text)


def test_explicit_int64_extent_is_kept():
    func = from_source('@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n'
                       '    for i in range(T.int64(2**40)):\n        A[0] = T.float32(1)\n')
    assert func.body.extent.dtype == "int64" and func.body.extent.value == 2**40


@pytest.mark.parametrize("terms", [1000, 5000])
def test_deeply_nested_expressions_are_parse_errors(terms):
    text = '@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n    A[0] = ' + \
        " + ".join(["A[1]"] * terms) + "\n"
    with pytest.raises(ParseError, match=r"<string>:\d+:\d+: error: .*nests too deeply"):
        from_source(text)
