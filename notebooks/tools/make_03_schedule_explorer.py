"""Write notebooks/03_schedule_explorer.ipynb (run from the repository root)."""
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

MD, CODE = new_markdown_cell, new_code_cell
cells = [
    MD("# 3b. Exploring schedules, one step at a time\n\n"
       "The first part of chapter 3 wrote a schedule as a script. The **ScheduleExplorer** lets you build "
       "one step by step instead: every step shows the new TVMScript, what changed, the "
       "trace so far, and (when you press *Run*) how fast it is. Steps form a tree, so "
       "you can undo, try another branch, and compare.\n\n"
       "Every button of the widget is a Python call, and this notebook uses the calls."),
    CODE("import mlcbench as tvm\nfrom mlcbench.script import tir as T, ir as I\n"
         "from mlcbench_widgets import ScheduleExplorer, PassViewer"),
    CODE('''@I.ir_module
class MyModule:
    @T.prim_func
    def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
        Y = T.alloc_buffer((128, 128), "float32")
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))'''),
    MD("## The loop tree\n\nThe explorer starts from the unscheduled module. Its loop "
       "tree lists loops (with extents and kinds), blocks (with `S`patial / `R`educe "
       "iterators and the buffers they touch) and buffers.\n\n"
       "Loops are named as the TVMScript prints them. Both nests here print `i, j`, so "
       "those names are qualified by a block below them: `i@Y`, `j@C`."),
    CODE("explorer = ScheduleExplorer(MyModule)\nprint(explorer.tree.render())"),
    MD("## Applying primitives\n\n`apply` takes the primitive's name and its arguments, "
       "with loops and blocks given by name. `diff()` shows what the step changed."),
    CODE('explorer.apply("split", loop="j@Y", factors=[None, 4])\nprint(explorer.diff())'),
    MD("After the split the names `j_0` and `j_1` are unique, so they need no "
       "qualification."),
    CODE('explorer.apply("reorder", loops=["j_0", "k", "j_1"])\n'
         'explorer.apply("reverse_compute_at", block="C", loop="j_0")\n'
         "print(explorer.tree.render())"),
    MD("## A refused step changes nothing\n\nVectorizing the reduction loop `k` would "
       "change the result, so the schedule refuses with a `ScheduleError` that explains "
       "the rule. The widget shows the message under the buttons; the history does not "
       "move."),
    CODE('steps_before = len(explorer.history)\ntry:\n    explorer.apply("vectorize", '
         'loop="k")\nexcept tvm.tir.ScheduleError as err:\n    print(str(err).splitlines()[0])\n'
         "assert len(explorer.history) == steps_before"),
    MD("## Run\n\n`run()` builds the current step, runs it on random inputs, compares "
       "every buffer with the *unscheduled* module, and times it. Let us run the "
       "starting point (step 0) too. (Timings vary from run to run.)"),
    CODE("print('step 0:', explorer.run(0))\nprint('now:   ', explorer.run())\n"
         "assert explorer.current.measurement.correct"),
    MD("## Branches: undo, fork, compare\n\n`undo()` and `redo()` walk the current "
       "branch; `fork(step)` makes any earlier step current, and the next `apply` starts "
       "a new branch there. `compare(a, b)` diffs any two steps.\n\n"
       "Which branch wins depends on the machine: 128 rows give each thread little "
       "work, and on a busy machine `parallel` can even lose. Measure, don't guess."),
    CODE('explorer.apply("vectorize", loop="j_1")     # step 4\nexplorer.run()\n\n'
         "explorer.fork(3)                               # back to reverse_compute_at\n"
         'explorer.apply("parallel", loop="i")          # step 5: a second branch\n'
         'explorer.apply("vectorize", loop="j_1")       # step 6\nexplorer.run()\n'
         "print(explorer.history.render())"),
    CODE("comparison = explorer.compare(4, 6)\nprint(comparison.summary())\n"
         "print(comparison.diff)"),
    MD("## Export\n\nThe path to the current step is a trace; `export()` prints it as "
       "an `apply_trace` function that replays the schedule on the original module."),
    CODE("code = explorer.export()\nprint(code)\n\nnamespace = {}\nexec(code, namespace)\n"
         "sch = tvm.tir.Schedule(MyModule)\nnamespace['apply_trace'](sch)\n"
         "tvm.ir.assert_structural_equal(sch.mod, explorer.mod)"),
    MD("## Roofline\n\nThe kernel's arithmetic intensity (FLOPs per byte of its "
       "parameters) is fixed; each run step is a point at its measured GFLOPS under "
       "the roof of this machine's peak compute and bandwidth (measured once by two "
       "tiny kernels, then cached)."),
    CODE("import matplotlib.pyplot as plt\n\nfig, ax = plt.subplots(figsize=(6, 4))\n"
         "explorer.roofline(ax=ax);"),
    MD("## The widget\n\nDisplaying the explorer shows the widget on the same history: "
       "select loops and blocks in the tree (the order of clicks is the order of "
       "`reorder`), press a primitive, *Run*, or browse the history tab."),
    CODE("explorer"),
    MD("## What build does next: the PassViewer\n\n`PassViewer` runs the lowering "
       "passes of `tvm.build` under a recording instrument; select a pass to see the IR "
       "before and after it (passes that change nothing are dimmed in the widget)."),
    CODE('viewer = PassViewer(explorer.mod)\nprint(viewer.summary())\n'
         'viewer.select("LowerInitBlock")\nprint(viewer.diff)'),
    CODE("viewer"),
]
nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3",
                                                        "display_name": "Python 3",
                                                        "language": "python"}})
nbformat.write(nb, "notebooks/03_schedule_explorer.ipynb")
