"""Write notebooks/05_tuning.ipynb (run from the repository root)."""
import base64
import io
import os
import sys

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tuning_figures as figures  # noqa: E402 -- beside this script
from tuning_exercises import EXERCISE_CELLS  # noqa: E402
from tuning_models import AUTOTVM, TUNE_RELAX  # noqa: E402

MD, CODE = new_markdown_cell, new_code_cell


def figure_cell(text, name, fig):
    """A markdown cell showing ``fig`` as an attachment (no drawing code in the notebook)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight", metadata={"Software": None})
    figures.plt.close(fig)
    cell = new_markdown_cell(text + f"\n\n![{name}](attachment:{name})")
    cell["attachments"] = {name: {"image/png": base64.b64encode(buf.getvalue()).decode()}}
    return cell


RECAP = [
    MD("# 5. Automatic program optimization\n\n"
       "The previous chapters gave us two abstractions: primitive tensor functions in "
       "TensorIR, and the Relax function that connects them into a model. We also "
       "learned to transform a tensor function by hand with a schedule: split this loop "
       "by 4, move that one inward. Every such choice rests on a guess about the "
       "hardware (cache sizes, vector width, number of cores), and the guesses that "
       "are right for one machine and one shape are wrong for the next.\n\n"
       "This chapter lets the machine make the guesses. Instead of one schedule we "
       "write a **stochastic schedule** that leaves some choices open; it describes a "
       "whole *space* of programs. A **search** then builds and measures programs from "
       "that space and keeps the fastest. We start with the simplest search, random "
       "sampling, then use `meta_schedule.tune_tir`, which adds a learned cost model "
       "and an evolutionary strategy, and watch it with the `TuningDashboard`. We look "
       "at the older style of the same idea, AutoTVM templates, side by side, and end "
       "by tuning every kernel of a whole model with `tune_relax`.\n\n"
       "Tuning measures programs, so this chapter's figures depend on the machine and "
       "on what else it is doing. The budgets are tiny so that the notebook runs in a "
       "minute; real tuning runs use hundreds or thousands of trials."),
    CODE("import tempfile\nimport numpy as np\nimport mlcbench as tvm\n"
         "from mlcbench import meta_schedule as ms, tir\n"
         "from mlcbench.runtime import timing\n"
         "from mlcbench.script import ir as I, tir as T\n"
         "from mlcbench_widgets import TuningDashboard"),
    MD("## Recap: transforming one tensor function\n\n"
       "Our running example is a 64x64x64 matrix multiplication, small enough that "
       "building and timing one version takes a fraction of a second."),
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
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


rng = np.random.default_rng(0)
a_np, b_np = rng.random((64, 64), dtype="float32"), rng.random((64, 64), dtype="float32")
a_nd, b_nd, c_nd = tvm.nd.array(a_np), tvm.nd.array(b_np), tvm.nd.empty((64, 64), "float32")'''),
    MD("A deterministic schedule, as in chapter 3: split `j` by a factor we choose, "
       "make the inner part the innermost loop (consecutive `j` are consecutive in "
       "memory, so the inner loop becomes a vector operation), and separate the "
       "initialization from the reduction."),
    CODE('''def schedule_mm(sch, jfactor=4):
    block_C = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block=block_C)
    j_0, j_1 = sch.split(loop=j, factors=[None, jfactor])
    sch.reorder(i, j_0, k, j_1)
    sch.decompose_reduction(block_C, k)
    return sch


sch = schedule_mm(tir.Schedule(MyModule))
sch.mod.show()'''),
    MD("### The trace\n\n"
       "Besides the transformed module, a schedule keeps a **trace**: the list of "
       "primitives it applied, with their arguments. The trace and the original module "
       "together determine the result, so a trace is a compact, replayable record of a "
       "program. Tuning stores traces, not programs."),
    CODE("print(sch.trace)"),
]

STOCHASTIC = [
    MD("## Stochastic schedules\n\n"
       "Which `jfactor` is best? It depends on the vector width of the processor, on "
       "the cache, on the shape. Instead of choosing, we let the schedule *sample* the "
       "factor. The only change is one line: `sch.sample_perfect_tile(loop=j, n=2)` "
       "draws two factors whose product is the loop extent (a *perfect* tiling: no "
       "remainder), and the split uses them."),
    CODE('''def stochastic_schedule_mm(sch):
    block_C = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block=block_C)
    j_factors = sch.sample_perfect_tile(loop=j, n=2)
    j_0, j_1 = sch.split(loop=j, factors=j_factors)
    sch.reorder(i, j_0, k, j_1)
    sch.decompose_reduction(block_C, k)
    return sch


for seed in range(3):
    sch = stochastic_schedule_mm(tir.Schedule(MyModule, seed=seed))
    print(f"seed {seed}:", [sch.get(loop).extent for loop in sch.get_loops(sch.get_block("C_update", "main"))])'''),
    MD("Each run draws again, so each seed gives possibly another loop nest (the "
       "extents of `i, j_0, k, j_1` above). Let us take the schedule apart step by step. "
       "After sampling, nothing in the program has changed yet, and `j_factors` are not "
       "numbers:"),
    CODE('''sch = tir.Schedule(MyModule, seed=0)
block_C = sch.get_block("C", "main")
i, j, k = sch.get_loops(block=block_C)
j_factors = sch.sample_perfect_tile(loop=j, n=2)
print(type(j_factors[0]).__name__, "->", [sch.get(f) for f in j_factors])
print(sch.trace)'''),
    MD("They are **random variables**: symbolic handles whose values the schedule "
       "drew and recorded. The trace shows the instruction *and* its outcome, written "
       "as `decision=[...]`. Later steps use the variables as if they were numbers; the "
       "split below reads their values."),
    CODE('''j_0, j_1 = sch.split(loop=j, factors=j_factors)
sch.reorder(i, j_0, k, j_1)
sch.decompose_reduction(block_C, k)
print(sch.trace)'''),
    MD("A stochastic schedule is therefore an ordinary schedule plus two ingredients: "
       "**sampling instructions** that create random variables, and **transformations "
       "that depend on them**. Replaying the trace with the same decisions gives the "
       "same program; changing a decision gives a neighbouring program. That is what "
       "a search will exploit."),
    figure_cell(
        "How many programs does `stochastic_schedule_mm` describe? `j` has extent 64, "
        "so the perfect tilings are `[64, 1]`, `[32, 2]`, ..., `[1, 64]`. "
        "`sample_perfect_tile` also bounds the inner factor (`max_innermost_factor`, "
        "16 by default, as in TVM: an inner loop longer than that rarely helps), which "
        "leaves **five** programs. The stochastic schedule is a compact description of "
        "a **search space**.", "search_space.png", figures.search_space_figure()),
    MD("## Random search\n\n"
       "The simplest search draws programs from the space, measures each, and keeps "
       "the fastest. We time with the compiled module's `time_evaluator` (mean seconds "
       "per call over a batch of calls lasting at least `min_repeat_ms`) and check "
       "every candidate against numpy: a fast wrong program is worth nothing."),
    CODE('''def random_search(mod, num_trials=5):
    best_seconds, best_sch = None, None
    for seed in range(num_trials):
        sch = stochastic_schedule_mm(tir.Schedule(mod, seed=seed))
        lib = tvm.build(sch.mod, target="llvm")
        lib["main"](a_nd, b_nd, c_nd)
        np.testing.assert_allclose(c_nd.numpy(), a_np @ b_np, rtol=1e-4)
        seconds = lib.time_evaluator("main", tvm.cpu(), number=1, min_repeat_ms=20)(a_nd, b_nd, c_nd).mean
        decision = [inst.decision for inst in sch.trace.insts if inst.kind == "sample_perfect_tile"]
        print(f"trial {seed}: j tiles {decision[0]}, {seconds * 1e6:7.1f} us")
        if best_seconds is None or seconds < best_seconds:
            best_seconds, best_sch = seconds, sch
    return best_sch


best_sch = random_search(MyModule)
print(best_sch.trace)'''),
    MD("Two trials may draw the same program (seeds differ, decisions need not), and "
       "on a busy machine two measurements of the same program can differ by more "
       "than two different programs do. Both problems grow with the space. A real "
       "tuner avoids measuring a program twice, measures in a separate process (a "
       "candidate that crashes or hangs must not take the tuner down), and, since "
       "measuring is the expensive step, predicts which candidates are worth "
       "measuring at all."),
]

METASCHEDULE = [
    figure_cell(
        "## MetaSchedule: `tune_tir`\n\n"
        "`meta_schedule` is the search with those pieces added. In each **round** the "
        "**search strategy** (evolutionary: it samples programs from the design "
        "space, then *mutates* the decisions of the best ones found so far) proposes "
        "candidates; a **cost model** (gradient-boosted trees, XGBoost) scores them "
        "from features of their loop nests; the best-scored ones are **built** and "
        "**run** in worker processes; every measurement becomes a **record** (trace, "
        "seconds) in a **database**; and the records train the cost model for the "
        "next round.", "tuning_loop.png", figures.tuning_loop_figure()),
    MD("The `TuningDashboard` is a tuning callback: tuning hands it each round's "
       "results and it redraws. It reads the records from the same `work_dir` the "
       "tuner writes to. We give `tune_tir` our stochastic schedule as the design "
       "space and a budget of 8 trials, 4 per round."),
    CODE('work_dir = tempfile.mkdtemp(prefix="tune_")\n'
         "dashboard = TuningDashboard(work_dir)\ndashboard"),
    CODE('''target = "llvm --num-cores=2"
database = ms.tune_tir(mod=MyModule, target=target, work_dir=work_dir,
                       max_trials_global=8, num_trials_per_iter=4,
                       space=ms.space_generator.ScheduleFn(stochastic_schedule_mm),
                       seed=0, callbacks=[dashboard], progress_bar=False)'''),
    MD("### Reading the output\n\n"
       "The tuner stopped before the budget and said why: **space exhausted after 5 "
       "candidates**. The design space has five programs (the picture above), and the "
       "search never measures the same program twice, so after five there was nothing "
       "left to try. A larger budget would not help; a larger space would (exercise "
       "2). The table lists every task (here one) with its best time, and the last "
       "line splits the seconds per trial into searching, building, running and "
       "updating: on a small kernel most of the time goes to building and to starting "
       "measurements, not to the kernel itself.\n\n"
       "Every click of the dashboard has a Python call underneath. `tasks` says how "
       "far each task got; `best()` is the fastest record."),
    CODE("dashboard.tasks"),
    CODE('best = dashboard.best()\nprint(f"best: {best.seconds * 1e6:.1f} us, '
         '{best.gflops:.1f} GFLOPS, round {best.round_index}")'),
    MD("### Does the cost model know anything yet?\n\n"
       "In each round the cost model scored the candidates before they were measured. "
       "The rank correlation compares its order with the measured order: +1 is a "
       "perfect guess, 0 no better than chance. But look at the marks: an XGBoost "
       "model is not trained until it has seen `num_warmup_samples` measurements "
       "(100 by default), and until then its scores are **random numbers**. The "
       "dashboard marks such rounds *model not trained: random scores*, and "
       "`model_trained` says the same in Python. Any correlation in those rounds is "
       "luck, positive or negative. With 5 trials the model never trained; in the "
       "whole-model run below we lower the warm-up so that it does. `select_round` "
       "chooses the round the \"cost model\" tab plots."),
    CODE('''for r in dashboard.rounds:
    print(f"round {r.round_index}: {len(r.candidates)} candidates, model trained: "
          f"{r.model_trained}, rank correlation {r.rank_correlation:+.2f}")
dashboard.select_round(0)'''),
    MD("### Use the best schedule\n\n"
       "`compile_tir` replays the fastest record's trace on the module. The trace is "
       "ordinary schedule code: the sampled tile sizes are written in as `decision=`. "
       "We build it, check it, and time it against the untransformed module and numpy "
       "(interleaved rounds, best round each, ratios as \"x faster/slower than "
       "numpy\")."),
    CODE("sch_tuned = ms.tir_integration.compile_tir(database, MyModule, target)\n"
         "print(sch_tuned.trace)"),
    CODE('''lib_tuned = tvm.build(sch_tuned.mod, target)
lib_tuned["main"](a_nd, b_nd, c_nd)
np.testing.assert_allclose(c_nd.numpy(), a_np @ b_np, rtol=1e-4)
lib_plain = tvm.build(MyModule, target)
times = timing.compare({"tuned": timing.kernel(lib_tuned, "main", a_nd, b_nd, c_nd),
                        "untransformed": timing.kernel(lib_plain, "main", a_nd, b_nd, c_nd),
                        "numpy": timing.call(lambda: a_np @ b_np)},
                       rounds=5, min_repeat_ms=10, settle_ms=20)
for name in ("tuned", "untransformed"):
    print(times.describe(name, "numpy"))'''),
    MD("### Keep exploring by hand\n\n"
       "\"Open in ScheduleExplorer\" (or `open_in_explorer()`) replays the best trace in "
       "the explorer of chapter 3, one history step per primitive: step back through "
       "what the tuner did, or try a primitive of your own on top."),
    CODE("explorer = dashboard.open_in_explorer()\n"
         "print([step.label for step in explorer.history.path()][-2:])\nexplorer"),
    MD("### Without a hand-written space\n\n"
       "We wrote the design space ourselves. Leave out `space=` and `tune_tir` "
       "generates one: its default rules analyse each block (which loops are spatial, "
       "which reduce, what is read and written) and apply generic stochastic "
       "transformations: multi-level tiling of spatial and reduction loops, "
       "caching the output in a local block, sampled parallelization, vectorization "
       "and unrolling. That is **auto-scheduling**. The space is much larger than "
       "ours, which is why it needs the cost model and many trials; the whole-model "
       "tuning at the end of this chapter uses it."),
]

CLOSING = [
    MD("## Discussion\n\n"
       "Chapters 2 to 4 were about **abstractions**: how to write tensor programs and "
       "models. This chapter was about **transformations** again, with a twist: a "
       "stochastic schedule states which transformations *may* be applied and leaves "
       "the parameters open, and a search fills them in by measuring. The split of "
       "roles matters. The person writing the space knows the structure of good "
       "programs (tile, reorder, vectorize the inner loop); the machine knows which "
       "numbers are fast on it. AutoTVM templates and MetaSchedule's stochastic "
       "schedules are two ways of writing the same division of labour, and "
       "MetaSchedule's default rules write the space for us when we have nothing "
       "better to say.\n\n"
       "Putting a tuned kernel back into a model is itself a transformation of the "
       "IRModule: replace a PrimFunc by its tuned version (`update_func`, as in "
       "exercise 2 of chapter 4), or let `compile_relax` do it for every kernel from "
       "the database. Tuning records are data: they can be kept, shared, and reused "
       "for the next build of the same shapes (tuning again with the same `work_dir` "
       "resumes from its records).\n\n"
       "Three cautions from the runs above. Small budgets find little: the cost model "
       "is untrained for its first `num_warmup_samples` measurements, and the "
       "evolutionary search needs measured programs to evolve from. A search cannot "
       "leave its space: when it says *space exhausted*, enlarge the space, not the "
       "budget. And a measurement on a busy machine can mislead a search as much as "
       "it misleads a reader; tuning is best done on a quiet machine.\n\n"
       "## Summary\n\n"
       "* A stochastic schedule (sampling instructions + transformations that use the "
       "samples) describes a space of programs; its trace records the decisions.\n"
       "* Random search samples, builds, checks and measures; `ms.tune_tir` adds an "
       "evolutionary strategy, a cost model, isolated measurement and a database.\n"
       "* The tuning output says when the space is exhausted, and the dashboard marks "
       "rounds whose cost-model scores are random because the model is not trained "
       "yet.\n"
       "* AutoTVM templates express the same idea with knobs in a config space, "
       "searched by tuners such as `XGBTuner`.\n"
       "* `tune_relax` tunes every kernel of a model with one budget; `compile_relax` "
       "builds the model with the best records."),
]

cells = RECAP + STOCHASTIC + METASCHEDULE + AUTOTVM + TUNE_RELAX + CLOSING + EXERCISE_CELLS
nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3",
                                                        "display_name": "Python 3",
                                                        "language": "python"}})
nbformat.write(nb, "notebooks/05_tuning.ipynb")
