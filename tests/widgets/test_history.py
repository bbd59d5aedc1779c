"""History: a tree of steps with undo, redo, fork, paths and a printed outline."""
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench_widgets import History, HistoryError


def test_add_undo_redo():
    history = History("s0")
    one = history.add("one", "s1")
    two = history.add("two", "s2")
    assert [s.index for s in history.path()] == [0, 1, 2]
    assert history.undo() is one and history.undo() is history.root
    assert history.redo() is one and history.redo() is two
    assert two.parent is one and one.children == [two] and two.depth == 2


def test_undo_at_the_start_and_redo_at_the_end_are_refused():
    history = History("s0")
    with pytest.raises(HistoryError, match="already at the first step"):
        history.undo()
    history.add("one", "s1")
    with pytest.raises(HistoryError, match="step 1 has no later step"):
        history.redo()
    assert not history.can_redo and history.can_undo


def test_fork_starts_a_branch_and_redo_follows_the_newest_branch():
    history = History("s0")
    one = history.add("one", "s1")
    history.add("two", "s2")
    history.fork(one)
    three = history.add("three", "s3")
    assert one.children[1] is three
    assert [s.index for s in history.path()] == [0, 1, 3]
    history.fork(0)
    assert history.redo() is one and history.redo() is three


def test_redo_returns_to_the_branch_undone_from():
    history = History("s0")
    one = history.add("one", "s1")
    history.add("two", "s2")
    history.fork(one)
    history.add("three", "s3")
    history.fork(2)
    history.undo()
    assert history.redo().label == "two"


def test_lines_mark_current_and_branches():
    history = History("s0")
    history.add("split", "s1")
    history.add("reorder", "s2")
    history.fork(1)
    history.add("fuse", "s3")
    assert history.render().splitlines() == [
        "  0: start", "  1: split", "  2: reorder", "*   3: fuse   (branch from 1)"]


def test_unknown_steps_are_refused():
    history, other = History("a"), History("b")
    with pytest.raises(HistoryError, match=r"no step 5: the history has steps 0..0"):
        history.fork(5)
    with pytest.raises(HistoryError, match="another history"):
        history.fork(other.root)


# A random walk of moves; invariants hold after every move.
MOVES = st.lists(st.tuples(st.sampled_from(["add", "undo", "redo", "fork"]),
                           st.integers(0, 50)), max_size=40)


@settings(max_examples=60, deadline=None)
@given(MOVES)
def test_random_moves_keep_the_tree_consistent(moves):
    history = History(0)
    for move, number in moves:
        before = history.current
        if move == "add":
            step = history.add(f"step {len(history)}", len(history))
            assert step.parent is before and history.current is step
        elif move == "undo" and history.can_undo:
            assert history.undo() is before.parent
            assert history.redo() is before            # undo then redo is a no-op
        elif move == "redo" and history.can_redo:
            assert history.redo().parent is before
        elif move == "fork":
            history.fork(number % len(history))
        path = history.path()
        assert path[0] is history.root and path[-1] is history.current
        assert all(child.parent is parent for parent, child in zip(path, path[1:]))
        assert all(child in parent.children for parent, child in zip(path, path[1:]))
    assert [s.index for s in history] == list(range(len(history)))
    assert sorted(s.index for s, _ in history.lines()) == list(range(len(history)))
