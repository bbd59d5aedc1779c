"""Helpers around the printer: unified diffs and HTML highlighting."""
from mlcbench.script.printer import highlight, print_diff
from mlcbench.tir import expr as E


def test_print_diff_shows_changed_lines_only():
    before = "for i in range(128):\n    A[i] = T.float32(0)\n"
    after = "for i in T.parallel(128):\n    A[i] = T.float32(0)\n"
    diff = print_diff(before, after)
    assert diff.splitlines() == [
        "--- before", "+++ after", "@@ -1,2 +1,2 @@",
        "-for i in range(128):", "+for i in T.parallel(128):", "     A[i] = T.float32(0)"]
    assert print_diff(before, before) == ""


def test_print_diff_accepts_ir_objects():
    i = E.Var("i")
    diff = print_diff(i + 1, i + 2, "old", "new")
    assert "-i + 1" in diff and "+i + 2" in diff and diff.startswith("--- old\n+++ new")


def test_highlight_returns_inline_styled_html():
    html = highlight('for i in T.grid(128):\n    A[i] = T.float32(0)')
    assert html.startswith("<div") and "style=" in html
    assert ">for</span>" in html and "T" in html


def test_highlight_can_be_called_twice():
    """The function stays the package's attribute after its module is imported."""
    first, second = highlight("x = 1"), highlight("y = 2")
    assert "x" in first and "y" in second and first != second
