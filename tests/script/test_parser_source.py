"""parse_python: Python's parser one thread at a time, and a parse that meets CPython
3.11's shared AST recursion depth (another thread parsing outside the lock) is tried
again; any other SystemError, and a mismatch on every attempt, reach the caller."""
import ast

import pytest

from mlcbench.script.parser import source

MISMATCH = SystemError("AST constructor recursion depth mismatch (before=153, after=199)")


def _parse_failing(times: int, error: Exception):
    real, calls = ast.parse, []

    def parse(text, mode="exec"):
        calls.append(text)
        if len(calls) <= times:
            raise error
        return real(text, mode=mode)
    return parse, calls


def test_a_depth_mismatch_is_parsed_again(monkeypatch):
    parse, calls = _parse_failing(2, MISMATCH)
    monkeypatch.setattr(source.ast, "parse", parse)
    tree = source.parse_python("x = 1\n")
    assert isinstance(tree.body[0], ast.Assign) and len(calls) == 3


def test_a_mismatch_on_every_attempt_reaches_the_caller(monkeypatch):
    parse, calls = _parse_failing(source.PARSE_ATTEMPTS, MISMATCH)
    monkeypatch.setattr(source.ast, "parse", parse)
    with pytest.raises(SystemError, match="recursion depth mismatch"):
        source.parse_python("x = 1\n")
    assert len(calls) == source.PARSE_ATTEMPTS


def test_another_system_error_is_not_retried(monkeypatch):
    parse, calls = _parse_failing(1, SystemError("something else"))
    monkeypatch.setattr(source.ast, "parse", parse)
    with pytest.raises(SystemError, match="something else"):
        source.parse_python("x = 1\n")
    assert len(calls) == 1
