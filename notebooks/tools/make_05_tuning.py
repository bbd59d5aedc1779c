"""Write notebooks/05_tuning.ipynb (run from the repository root)."""
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

MD, CODE = new_markdown_cell, new_code_cell
cells = [
    MD("# 5. Automatic tuning\n\n"
       "In chapter 3 we chose tile sizes by hand, then let `sample_perfect_tile` choose "
       "them at random. Tuning closes the loop: a **search strategy** proposes schedules "
       "from a **design space**, a **cost model** guesses which ones will be fast, the "
       "best guesses are built and **measured**, and the measurements teach the cost "
       "model. Every measurement is a **record** in a database.\n\n"
       "We tune a small matmul for a handful of trials and watch it happen with the "
       "`TuningDashboard`."),
    CODE("import tempfile\nimport numpy as np\nimport mlcbench as tvm\n"
         "from mlcbench import meta_schedule as ms\n"
         "from mlcbench.script import ir as I, tir as T\n"
         "from mlcbench_widgets import TuningDashboard"),
    MD("## The program\n\nA 64x64x64 matmul: small enough that a trial takes a fraction "
       "of a second."),
    CODE('''@I.ir_module
class MyModule:
    @T.prim_func
    def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
             C: T.Buffer((64, 64), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(64, 64, 64):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]'''),
    MD("## The design space\n\nThe stochastic schedule of chapter 3: every call samples "
       "new tile sizes, so the function describes a whole family of programs. The tuner "
       "searches that family."),
    CODE('''def stochastic_schedule_mm(sch):
    block = sch.get_block("C", func_name="main")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=sch.sample_perfect_tile(i, n=2))
    j0, j1 = sch.split(j, factors=sch.sample_perfect_tile(j, n=2))
    k0, k1 = sch.split(k, factors=sch.sample_perfect_tile(k, n=2))
    sch.reorder(i0, j0, k0, i1, k1, j1)
    sch.decompose_reduction(block, k0)
    return sch'''),
    MD("## Watch it tune\n\nThe dashboard is a tuning callback: tuning hands it each "
       "round's results and it redraws. Show it first, then start tuning. It reads the "
       "records from the same `work_dir` the tuner writes to, so it can also show the IR "
       "of the best schedule."),
    CODE('work_dir = tempfile.mkdtemp(prefix="tune_")\n'
         "dashboard = TuningDashboard(work_dir)\ndashboard"),
    CODE('''target = "llvm --num-cores=2"
database = ms.tune_tir(mod=MyModule, target=target, work_dir=work_dir,
                       max_trials_global=8, num_trials_per_iter=4,
                       space=ms.space_generator.ScheduleFn(stochastic_schedule_mm),
                       seed=0, callbacks=[dashboard])'''),
    MD("## Reading the dashboard\n\nEvery click has a Python call underneath. `tasks` "
       "says how far each task got; `best()` is the fastest record. The numbers vary "
       "from machine to machine."),
    CODE("dashboard.tasks"),
    CODE('best = dashboard.best()\nprint(f"best: {best.seconds * 1e6:.1f} us, '
         '{best.gflops:.1f} GFLOPS, round {best.round_index}")'),
    MD("## Does the cost model know anything?\n\nIn each round the cost model scored "
       "the candidates before they were measured. The rank correlation compares its "
       "order with the measured order: +1 is a perfect guess, 0 no better than chance. "
       "With a few trials it has little to learn from; watch it on longer runs. "
       "`select_round` chooses the round the \"cost model\" tab plots."),
    CODE('print([f"{r.rank_correlation:+.2f}" for r in dashboard.rounds])\n'
         "dashboard.select_round(0)"),
    MD("## Use the best schedule\n\n`compile_tir` replays the fastest record's trace on "
       "the module. The trace is ordinary schedule code: the sampled tile sizes are "
       "written in as `decision=`."),
    CODE("sch = ms.tir_integration.compile_tir(database, MyModule, target)\nprint(sch.trace)"),
    CODE('''lib = tvm.build(sch.mod, target)
a, b = np.random.rand(64, 64).astype("float32"), np.random.rand(64, 64).astype("float32")
c = tvm.nd.empty((64, 64), "float32")
lib["main"](tvm.nd.array(a), tvm.nd.array(b), c)
np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4)
print("matches numpy")'''),
    MD("## Keep exploring by hand\n\n\"Open in ScheduleExplorer\" (or "
       "`open_in_explorer()`) replays the best trace in the explorer of chapter 3, one "
       "history step per primitive: step back through what the tuner did, or try a "
       "primitive of your own on top."),
    CODE("explorer = dashboard.open_in_explorer()\n"
         "print([step.label for step in explorer.history.path()][-2:])\nexplorer"),
    MD("## What we saw\n\n* `ms.tune_tir` searches a design space, guided by a cost "
       "model, and keeps every measurement in a database.\n* The `TuningDashboard` "
       "follows the search round by round: best speed, every candidate, the cost "
       "model's guesses.\n* `compile_tir` applies the best record; its trace is "
       "schedule code we can read, replay and keep editing."),
]
nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3",
                                                        "display_name": "Python 3",
                                                        "language": "python"}})
nbformat.write(nb, "notebooks/05_tuning.ipynb")
