"""Two processes tuning into one work_dir: every record stays, under its own workload."""
import multiprocessing

from mlcbench import tir
from mlcbench.ir import structural_hash
from mlcbench.meta_schedule import JSONDatabase, TuningRecord
from helpers.tuning_testing import matmul_module

RECORDS = 40
OWN_SIZES = (24, 40)        # each process's own workload; matmul_module(8) is shared


def _secs(worker: int, n: int) -> float:
    """A time that tells which process wrote the record and which of its records it is."""
    return (worker * 1000 + n + 1) * 1e-6


def _annotated_trace(mod, n):
    sch = tir.Schedule(mod)
    sch.annotate(sch.get_block("C"), "test.index", n)
    return sch.trace


def _tune_into(work_dir, worker, opened):
    db = JSONDatabase(work_dir=work_dir)
    opened.wait()                   # both have read the (empty) files before either commits
    workloads = [db.commit_workload(matmul_module(8)),
                 db.commit_workload(matmul_module(OWN_SIZES[worker]))]
    for n in range(RECORDS):
        for workload in workloads:
            db.commit_tuning_record(TuningRecord(_annotated_trace(workload.mod, n), workload,
                                                 [_secs(worker, n)], "llvm"))


def _run_two(work_dir):
    # fork starts in milliseconds where spawn imports mlcbench again in each child
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    opened = context.Barrier(2)
    procs = [context.Process(target=_tune_into, args=(str(work_dir), worker, opened))
             for worker in (0, 1)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
    assert [proc.exitcode for proc in procs] == [0, 0]


def _check_every_record_under_its_workload(work_dir):
    shared = structural_hash(matmul_module(8))
    own = [structural_hash(matmul_module(size)) for size in OWN_SIZES]
    found = set()
    for record in JSONDatabase(work_dir=work_dir).get_all_tuning_records():
        worker, n = divmod(round(record.run_secs[0] * 1e6) - 1, 1000)
        assert record.workload.shash in (shared, own[worker]), (worker, n)
        assert record.trace.insts[-1].attrs == _annotated_trace(
            record.workload.mod, n).insts[-1].attrs
        found.add((worker, n, record.workload.shash))
    assert found == {(w, n, shash) for w in (0, 1) for n in range(RECORDS)
                     for shash in (shared, own[w])}


def test_two_processes_keep_every_record_under_the_right_workload(tmp_path):
    _run_two(tmp_path)
    _check_every_record_under_its_workload(tmp_path)
    assert len(JSONDatabase(work_dir=tmp_path)) == 4 * RECORDS


def test_two_processes_repair_a_torn_tail_once(tmp_path):
    (tmp_path / "database_tuning_record.json").write_bytes(b'[0,[{"insts":[')
    _run_two(tmp_path)
    assert sorted(p.name for p in tmp_path.glob("*.torn-*")) == [
        "database_tuning_record.json.torn-1"]
    _check_every_record_under_its_workload(tmp_path)
