"""ScheduleState: the interface between the Schedule facade and what it commits."""
import ast
import pathlib

import pytest

from mlcbench.script import tir as T
from mlcbench.tir import Schedule, ScheduleError
from mlcbench.tir.schedule import BlockRV, LoopRV, ScheduleState
from mlcbench.tir.schedule import schedule as schedule_module


@T.prim_func
def add_one(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64, 32), "float32")):
    for i, j in T.grid(64, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)


def _snapshot(state: ScheduleState):
    return state.mod, state.mod.script(), str(state.trace()), state.num_handles()


def test_refused_commit_changes_nothing():
    sch = Schedule(add_one)
    sch.get_loops("B")
    before = _snapshot(sch.state)
    with pytest.raises(ScheduleError, match="split: commit expects a PrimFunc .* found int"):
        sch.state.commit("main", 7, "split")
    with pytest.raises(ScheduleError, match="found PrimFunc for 'nope'"):
        sch.state.commit("nope", add_one, "split")
    assert _snapshot(sch.state) == before
    assert _snapshot(sch.state)[0] is before[0]


def test_refused_primitive_changes_no_handle_nor_random_state():
    sch = Schedule(add_one, seed=3)
    block = sch.get_block("B")
    _, j = sch.get_loops(block)
    before, draw = _snapshot(sch.state), sch.copy().fork_seed()
    with pytest.raises(ScheduleError, match="compute_inline"):
        sch.compute_inline(block)
    with pytest.raises(ScheduleError, match="sample_perfect_tile: decision"):
        sch.sample_perfect_tile(j, n=2, decision=[4, 4])
    assert _snapshot(sch.state) == before
    assert sch.fork_seed() == draw


def test_refused_primitive_on_a_block_name_leaves_no_get_block():
    sch = Schedule(add_one)
    sch.get_loops("B")
    before = _snapshot(sch.state)
    with pytest.raises(ScheduleError, match="compute_inline"):
        sch.compute_inline("B")
    assert _snapshot(sch.state) == before


def test_roll_back_undoes_commits_and_new_handles():
    state = Schedule(add_one).state
    mark = state.checkpoint()
    rv = state.new_block_rv("main", "B")
    state.commit("main", state.func("main").with_attr("tag", 1), "get_block", outputs=(rv,))
    state.roll_back(mark)
    assert state.mod is mark[0] and state.trace().insts == () and state.num_handles() == 0
    with pytest.raises(ScheduleError, match="expected a block handle"):
        state.block(rv, "test")


def test_copy_is_independent():
    sch = Schedule(add_one, seed=11)
    i, j = sch.get_loops("B")
    other = sch.copy()
    assert other.state is not sch.state
    other.state.commit("main", other.mod["main"].with_attr("tag", 1), "annotate")
    other.split(j, factors=[None, 8])
    assert len(sch.get_loops("B")) == 2 and len(other.get_loops("B")) == 3
    assert "tag" not in (sch.mod["main"].attrs or {})
    assert sch.state.fork_seed() == other.state.fork_seed()   # same random state copied
    assert len(sch.trace.insts) < len(other.trace.insts)


def test_handles_resolve_after_split():
    sch = Schedule(add_one)
    block = sch.get_block("B")
    i, j = sch.get_loops(block)
    j0, j1 = sch.split(j, factors=[None, 8])
    state = sch.state
    assert state.block(block, "test")[1].node.block.name_hint == "B"
    func_name, var = state.loop(i, "test")
    assert func_name == "main" and var is sch.get(i).loop_var
    assert state.loop_node(j1, "test").extent.value == 8
    with pytest.raises(ScheduleError, match="test: the loop 'j' is no longer in the function"):
        state.loop(j, "test")
    with pytest.raises(ScheduleError, match="test: expected a loop handle of this schedule"):
        state.loop(block, "test")


def test_new_handles_values_and_renames():
    state = ScheduleState(Schedule(add_one).mod, seed=0)
    v = state.new_expr_rv(4)
    assert state.value(v, "split") == 4 and state.value(5, "split") == 5
    b = state.new_block_rv("main", "B")
    state.rename_block("main", "B", "B_update")
    with pytest.raises(ScheduleError, match="no block named 'B_update'"):
        state.block(b, "test")
    where = state.new_location_rv("main", "inline")
    assert isinstance(where, LoopRV) and state.location(where) == "inline"
    assert state.location(state.new_loop_rv("main", None)) is None
    assert isinstance(b, BlockRV) and state.num_handles() == 4


# -- the facade reaches the state only through its public interface ---------------------
SCHEDULE_DIR = pathlib.Path(schedule_module.__file__).parent
FACADE_FILES = sorted(SCHEDULE_DIR.glob("facade_*.py")) + [SCHEDULE_DIR / "schedule.py"]


def _facade_helpers() -> set:
    """Names of the facade's own methods (private helpers such as ``_as_block_rv``)."""
    names = set()
    for path in FACADE_FILES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                names |= {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
    return names


def _private_reads(path, helpers) -> list:
    """``self._x`` that is not a facade method, and ``<anything>.state._x``."""
    found = []
    allowed = helpers | {"_error_render_level"}      # the facade's own setting
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")):
            continue
        owner = node.value
        on_self = isinstance(owner, ast.Name) and owner.id == "self"
        on_state = (isinstance(owner, ast.Attribute) and owner.attr == "state") or \
            (isinstance(owner, ast.Name) and owner.id == "state")
        if on_state or (on_self and node.attr not in allowed):
            found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_facade_reads_no_private_state():
    helpers = _facade_helpers()
    found = [hit for path in FACADE_FILES for hit in _private_reads(path, helpers)]
    assert FACADE_FILES[:-1], "no facade_*.py files found"
    assert found == [], "the facade must use ScheduleState's public methods:\n" + \
        "\n".join(found)


def test_private_read_check_catches_a_planted_read(tmp_path):
    planted = tmp_path / "facade_planted.py"
    planted.write_text("class M:\n    def f(self):\n        return self._mod, self.state._rvs\n")
    assert _private_reads(planted, _facade_helpers()) == [
        "facade_planted.py:3: self._mod", "facade_planted.py:3: self.state._rvs"]


def test_each_method_is_defined_once():
    # with two definitions, which one runs would depend on the order of the base classes
    owners = {}
    for path in FACADE_FILES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                for f in node.body:
                    if isinstance(f, ast.FunctionDef) and f.name != "__init__":
                        owners.setdefault(f.name, []).append(f"{path.name}:{node.name}")
    assert {name: where for name, where in owners.items() if len(where) > 1} == {}
