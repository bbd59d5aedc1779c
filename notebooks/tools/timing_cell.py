"""The timing helper that chapters 7 to 9 define in a cell, so that a learner sees how a
trustworthy figure is taken: interleaved rounds, the best round, a flag when unsteady,
and one ratio convention ("x faster than numpy" / "x slower than numpy")."""

TIMING_PROSE = (
    "On a shared machine one measurement can be far off, so the programs take turns, "
    "several rounds each, and we keep each one's best round. When a program's two best "
    "rounds differ by more than 20%, even its best may be disturbed: it is marked "
    "*unsteady*. Ratios are always against numpy: \"x faster than numpy\" or \"x "
    "slower than numpy\".")

TIMING_CELL = '''def compare(candidates, rounds=7, round_seconds=0.02):
    """Best seconds per call of each candidate (name -> function of no arguments), and
    the names of the unsteady ones. A round calls a candidate for about `round_seconds`;
    the candidates take turns, so a busy moment on the machine slows all of them."""
    number = {}
    for name, run in candidates.items():
        start = time.perf_counter()
        run()                                   # warm up, and size the rounds
        number[name] = max(1, int(round_seconds / (time.perf_counter() - start)))
    times = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, run in candidates.items():
            start = time.perf_counter()
            for _ in range(number[name]):
                run()
            times[name].append((time.perf_counter() - start) / number[name])
    best = {name: min(t) for name, t in times.items()}
    unsteady = {name for name, t in times.items() if sorted(t)[1] > 1.2 * min(t)}
    return best, unsteady


def report(best, unsteady, reference="numpy"):
    for name, seconds in best.items():
        ratio = best[reference] / seconds
        words = f"{ratio:6.2f}x faster" if ratio >= 1 else f"{1 / ratio:6.2f}x slower"
        flag = "  (unsteady)" if name in unsteady else ""
        print(f"{name:>22}: {seconds * 1e3:8.3f} ms, {words} than numpy{flag}")'''
