"""How well does the XGBoost cost model rank schedules it has never seen measured?

Run: ``python benchmarks/cost_model.py --schedules 3000`` (the full run: about 50
minutes on two cores, mostly building conv2d candidates, then 5 minutes of feature
extraction), or ``--schedules 500`` (10 minutes).

1. Candidates of a 256^3 matmul and a 3x3 conv2d (1x32x28x28 -> 32 channels):
   ``--space post-order-apply`` (default) samples them as tuning does -- a design space
   of ``PostOrderApply`` with the CPU schedule rules (multi-level tiling SSRSRS with a
   write cache, parallel/vectorize/unroll, compute locations), its decisions drawn at
   random, then the postprocessors -- except that unrolling stops at 64 steps (a
   512-step unroll takes seconds to lower). ``--space primitives`` draws them with
   Schedule primitives instead: spatial loops split in four and reduction loops in two,
   the levels ordered S S R S R S with random shuffles, outer tile fused and parallel,
   innermost loop vectorized, explicit unrolls and ``pragma_auto_unroll_max_step``, an
   optional local ``cache_write``, for the conv2d an inlined or separate padding.
2. They are built 25 at a time and timed in three interleaved rounds
   (``time_evaluator(number=1, repeat=5, min_repeat_ms=10)`` each, single process); a
   record's cost is its fastest round (see ``measure_chunk``). Traces and times are
   cached in ``<work-dir>/records-<space>.json`` (default work dir
   ``tune_tmp/cost_model_bench``, not committed): a second run measures only what is
   missing.
3. The records are split (``--test-fraction``) at random; each model variant trains on
   the training part of both workloads and ranks the held-out part of each.

Reported per workload on the held-out split: pairwise ranking accuracy (pairs with
different run times ordered correctly), top-1 / top-5 recall (share of the predicted
top k that is in the measured top k), peak@5 (best throughput among the predicted top 5
over the best measured) and Spearman's rho. Variants: rank or regression objective,
score as the sum of per-store predictions (``pack-sum``) or one aggregated row per
candidate, and a random model as the floor. Last, a learning curve: the default
variant trained on 1/8, 1/4, 1/2 and all of the training split.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import time

import numpy as np

import mlcbench
from mlcbench import te, topi
from mlcbench.ir.errors import ScheduleError
from mlcbench.meta_schedule import metrics
from mlcbench.meta_schedule.builder import BuilderInput, LocalBuilder, remove_artifact
from mlcbench.meta_schedule.cost_model import RandomModel
from mlcbench.meta_schedule.feature_extractor import PerStoreFeature
from mlcbench.meta_schedule.postproc.postproc import apply_postprocs
from mlcbench.meta_schedule.runner_worker import entry_function_name
from mlcbench.meta_schedule.space_generator import PostOrderApply
from mlcbench.meta_schedule.xgb_model import XGBConfig, XGBModel
from mlcbench.runtime import load_module
from mlcbench.tir import IterType, Schedule, Trace


# -- workloads ---------------------------------------------------------------------------
def matmul():
    A, B = te.placeholder((256, 256), name="A"), te.placeholder((256, 256), name="B")
    k = te.reduce_axis((0, 256), name="k")
    C = te.compute((256, 256), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C]), "C"


def conv2d():
    data = te.placeholder((1, 32, 28, 28), name="data")
    weight = te.placeholder((32, 32, 3, 3), name="weight")
    out = topi.nn.conv2d_nchw(data, weight, 1, 1, 1)
    return te.create_prim_func([data, weight, out]), "conv2d_nchw"


WORKLOADS = {"matmul": matmul, "conv2d": conv2d}


# -- random schedules --------------------------------------------------------------------
def _try(step, *args):
    """Apply one primitive; a refused one leaves the schedule as it was."""
    try:
        return step(*args)
    except ScheduleError:
        return None


def _tile(sch, block, rng: random.Random) -> list:
    """Split spatial loops in 4 and reduction loops in 2; order them S S R S R S."""
    iter_types = [iv.iter_type for iv in sch.get(block).iter_vars]
    levels = [[] for _ in range(6)]
    spatial_levels, reduce_levels = (0, 1, 3, 5), (2, 4)
    for loop, iter_type in zip(sch.get_loops(block), iter_types):
        targets = spatial_levels if iter_type == IterType.DATA_PAR else reduce_levels
        factors = sch.sample_perfect_tile(loop, n=len(targets),
                                          max_innermost_factor=rng.choice([4, 16, 64]))
        for level, part in zip(targets, sch.split(loop, factors)):
            levels[level].append(part)
    for level in levels:
        if rng.random() < 0.3:
            rng.shuffle(level)
    if rng.random() < 0.25:                 # a reduction innermost, vectorizing fails
        levels[4], levels[5] = levels[5], levels[4]
    sch.reorder(*[loop for level in levels for loop in level])
    return levels


def _annotate(sch, block, levels, rng: random.Random) -> None:
    outer = levels[0]
    if rng.random() < 0.8:
        fused = sch.fuse(*outer) if len(outer) > 1 else outer[0]
        sch.parallel(fused)
        outer = [fused]
    if rng.random() < 0.5:
        sch.annotate(outer[0], "pragma_auto_unroll_max_step", rng.choice([16, 64]))
    innermost = sch.get_loops(block)[-1]
    if rng.random() < 0.7:
        _try(sch.vectorize, innermost)
    if rng.random() < 0.3 and len(sch.get_loops(block)) > 1:
        candidate = sch.get_loops(block)[-2]
        if sch.get(candidate).extent.value <= 16:
            _try(sch.unroll, candidate)
    if rng.random() < 0.5:
        write = _try(sch.cache_write, block, 0, "local")
        if write is not None:
            at = rng.choice([levels[1][-1], outer[-1]])
            _try(sch.reverse_compute_at, write, at)


def _space_generator(seed: int):
    """PostOrderApply with the CPU rules, less the 512-step unroll: its lowering alone
    takes seconds per candidate, which would make this benchmark an hour long."""
    from mlcbench.meta_schedule.schedule_rule import ScheduleRule
    from mlcbench.meta_schedule.schedule_rule.parallel_vectorize_unroll import (
        ParallelizeVectorizeUnroll)
    rules = [ParallelizeVectorizeUnroll(max_jobs_per_core=16, max_vectorize_extent=64,
                                        unroll_max_steps=[0, 16, 64], unroll_explicit=True)
             if isinstance(rule, ParallelizeVectorizeUnroll) else rule
             for rule in ScheduleRule.create("llvm")]
    generator = PostOrderApply(sch_rules=rules)
    generator.rand_state = seed
    return generator


def sampled_schedule(name: str, seed: int):
    """One design space of PostOrderApply, its decisions sampled, postprocessed (as the
    search measures it); None when a postprocessor rejects it."""
    generator = _space_generator(seed)
    spaces = generator.generate_design_space(WORKLOADS[name]()[0])
    sch = random.Random(seed).choice(spaces)
    return sch if apply_postprocs(sch, generator.postprocs) else None


def random_schedule(name: str, seed: int) -> Schedule:
    func, block_name = WORKLOADS[name]()
    rng = random.Random(seed)
    sch = Schedule(func, seed=seed)
    if name == "conv2d" and rng.random() < 0.5:
        sch.compute_inline(sch.get_block("pad_temp"))
    block = sch.get_block(block_name)
    levels = _tile(sch, block, rng)
    _annotate(sch, block, levels, rng)
    return sch


# -- measurement and the record cache ----------------------------------------------------
def _arguments(func):
    rng = np.random.default_rng(0)
    return [mlcbench.nd.array(rng.random([int(d) for d in b.shape], dtype="float32"))
            for b in (func.buffer_map[p] for p in func.params)]


def measure_chunk(schedules: list, rounds: int = 3) -> list:
    """Per schedule, its mean seconds in each of ``rounds`` interleaved rounds (``None``
    for one that failed to build).

    Other work on this machine comes and goes: timed once, a fifth of the pairs of
    matmul schedules came out in another order a few minutes later. Building a chunk
    first (in a worker process per core, as tuning does) and timing it round after round
    spreads each schedule's timings over the chunk's seconds; the fastest round then
    agrees with a second run on 97% of pairs.
    """
    builder = LocalBuilder(timeout_sec=120)
    try:
        built = builder.build([BuilderInput(sch.mod, "llvm") for sch in schedules])
    finally:
        builder.shutdown()
    try:
        libs = [load_module(b.artifact_path) if b.artifact_path else None for b in built]
        args = [_arguments(sch.mod["main"]) for sch in schedules]
        timings = [[] if lib else None for lib in libs]
        for _ in range(rounds):
            for lib, arg, times in zip(libs, args, timings):
                if lib is not None:
                    timer = lib.time_evaluator(entry_function_name(lib), mlcbench.cpu(),
                                               number=1, repeat=5, min_repeat_ms=10)
                    times.append(timer(*arg).mean)
    finally:
        for b in built:
            remove_artifact(b.artifact_path)
    return timings


def cost(record) -> float:
    """Seconds of a record: its fastest round."""
    return float(min(record["run_secs"]))


def load_records(path: str) -> list:
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def save_records(path: str, records: list) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(records, f)
    os.replace(path + ".tmp", path)


SPACES = {"post-order-apply": sampled_schedule, "primitives": random_schedule}


def collect(path: str, total: int, seed: int, make_schedule, chunk: int = 25) -> list:
    """Cached records, topped up to ``total`` (half per workload) by measuring; the
    result holds the first ``total // 2`` measured records of each workload."""
    records = load_records(path)
    start, per_workload = time.time(), total // len(WORKLOADS)
    for name in WORKLOADS:
        tried = {r["seed"] for r in records if r["workload"] == name}
        need = per_workload - sum(r["run_secs"] is not None for r in records
                                  if r["workload"] == name)
        next_seed = seed * 1_000_003
        while need > 0:
            batch, wanted = [], min(chunk, need)
            while sum(sch is not None for _, sch in batch) < wanted:
                next_seed += 1
                if next_seed not in tried:
                    batch.append((next_seed, make_schedule(name, next_seed)))
            valid = [(s, sch) for s, sch in batch if sch is not None]
            timings = dict(zip([s for s, _ in valid], measure_chunk([sch for _, sch in valid])))
            need -= sum(t is not None for t in timings.values())
            records += [{"workload": name, "seed": s,
                         "trace": sch.trace.as_json() if sch else None,
                         "run_secs": timings.get(s)} for s, sch in batch]
            save_records(path, records)
            print(f"  {len(records)} records, {time.time() - start:.0f} s", flush=True)
    return [r for name in WORKLOADS
            for r in [r for r in records if r["workload"] == name and r["run_secs"]][
                :per_workload]]


# -- evaluation -------------------------------------------------------------------------
def features_of(records: list, extractor) -> list:
    funcs = {name: make()[0] for name, make in WORKLOADS.items()}
    result = []
    for record in records:
        sch = Trace.from_json(record["trace"]).apply_to_schedule(Schedule(funcs[record["workload"]]))
        result.append(extractor.extract_mod(sch.mod))
    return result


VARIANTS = {
    "xgb rank pack-sum": dict(objective="rank", aggregate="pack-sum"),
    "xgb reg pack-sum": dict(objective="reg", aggregate="pack-sum"),
    "xgb rank candidate": dict(objective="rank", aggregate="candidate"),
    "xgb reg candidate": dict(objective="reg", aggregate="candidate"),
}


def scores(pred, throughput) -> dict:
    return {"pairwise": metrics.pairwise_accuracy(pred, throughput),
            "top1": metrics.top_k_recall(pred, throughput, 1),
            "top5": metrics.top_k_recall(pred, throughput, 5),
            "peak@5": metrics.peak_at_k(pred, throughput, 5),
            "spearman": metrics.spearman(pred, throughput)}


def evaluate(model, records, features, train, test, draws: int = 20) -> dict:
    """Fit on ``train`` indices, then score ``test`` per workload (a random model:
    the mean over ``draws`` draws, so that the floor is not one lucky draw)."""
    started = time.time()
    if isinstance(model, XGBModel):
        for i in train:
            model.add_records(records[i]["workload"], [features[i]], [cost(records[i])])
        model.train()
    fit_secs = time.time() - started
    rows = {}
    for name in WORKLOADS:
        idx = [i for i in test if records[i]["workload"] == name]
        throughput = np.array([1.0 / cost(records[i]) for i in idx])
        if isinstance(model, XGBModel):
            draw_scores = [scores(model.predict_features([features[i] for i in idx]),
                                  throughput)]
        else:
            draw_scores = [scores(model.predict(None, idx), throughput) for _ in range(draws)]
        rows[name] = {key: float(np.mean([d[key] for d in draw_scores]))
                      for key in draw_scores[0]}
        rows[name].update(n=len(idx), fit_s=fit_secs)
    return rows


def report(results: dict) -> None:
    print(f"{'model':22s} {'workload':8s} {'n':>5s} {'pairwise':>9s} {'top-1':>6s} "
          f"{'top-5':>6s} {'peak@5':>7s} {'spearman':>9s} {'fit s':>6s}")
    for model, rows in results.items():
        for name, r in rows.items():
            print(f"{model:22s} {name:8s} {r['n']:5d} {r['pairwise']:9.3f} {r['top1']:6.2f} "
                  f"{r['top5']:6.2f} {r['peak@5']:7.3f} {r['spearman']:9.3f} {r['fit_s']:6.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schedules", type=int, default=500)
    parser.add_argument("--work-dir", default="tune_tmp/cost_model_bench")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--test-fraction", type=float, default=0.5)
    parser.add_argument("--nthread", type=int, default=2)
    parser.add_argument("--space", choices=sorted(SPACES), default="post-order-apply")
    args = parser.parse_args()
    records = collect(os.path.join(args.work_dir, f"records-{args.space}.json"),
                      args.schedules, args.seed, SPACES[args.space])
    started = time.time()
    extractor = PerStoreFeature()
    features = features_of(records, extractor)
    print(f"{len(records)} records, features in {time.time() - started:.1f} s "
          f"({extractor.feature_vector_length} per store)")
    order = np.random.default_rng(args.seed).permutation(len(records))
    cut = int(len(records) * (1 - args.test_fraction))
    train, test = sorted(order[:cut]), sorted(order[cut:])
    results = {"random": evaluate(RandomModel(seed=args.seed), records, features, train, test)}
    for label, options in VARIANTS.items():
        model = XGBModel(extractor=extractor, config=XGBConfig(nthread=args.nthread),
                         seed=args.seed, **options)
        results[label] = evaluate(model, records, features, train, test)
    report(results)
    learning_curve(records, features, order[:cut], test, extractor, args)


def learning_curve(records, features, train_order, test, extractor, args) -> None:
    """Held-out pairwise accuracy of the default model (rank, pack-sum) trained on a
    growing share of the training split: how many measured records it needs."""
    print("\nlearning curve (xgb rank pack-sum, same held-out split)")
    print(f"{'train records':>13s} " + " ".join(f"{name:>8s}" for name in WORKLOADS))
    for share in (0.125, 0.25, 0.5, 1.0):
        train = sorted(train_order[:max(2, int(len(train_order) * share))])
        model = XGBModel(extractor=extractor, config=XGBConfig(nthread=args.nthread),
                         seed=args.seed)
        rows = evaluate(model, records, features, train, test)
        print(f"{len(train):13d} " + " ".join(f"{rows[name]['pairwise']:8.3f}"
                                              for name in WORKLOADS))


if __name__ == "__main__":
    main()
