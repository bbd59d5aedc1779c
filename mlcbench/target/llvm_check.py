"""Check a target's CPU and features against LLVM before any TargetMachine exists.

LLVM answers a CPU name it does not know with a warning, then ends the process with
"LLVM ERROR: 64-bit code requested on a subtarget that doesn't support it!" at the
first compilation; a 32-bit CPU such as ``i386`` on an x86-64 triple ends it the same
way, without a warning. Neither can be caught in Python, so both questions go to a
child process, once per (triple, cpu, features) in this process:

1. LLVM's own lists: a TargetMachine for the CPU ``help`` with the feature ``+help``
   prints every CPU and feature the triple knows;
2. a trial compilation of a small float/vector function for the exact CPU and
   features; if the child dies, its "LLVM ERROR" line becomes the message.

Example::

    check_cpu_and_features("x86_64-unknown-linux-gnu", "notacpu", (), "")
    # TargetError: -mcpu=notacpu: LLVM knows no such CPU for x86_64-unknown-linux-gnu;
    # close matches: ...
"""
from __future__ import annotations

import difflib
import subprocess
import sys
from functools import lru_cache

from ..ir.errors import CodegenError

_CHILD = r'''
import sys
import llvmlite.binding as llvm
llvm.initialize_all_targets(); llvm.initialize_all_asmprinters()
triple, cpu, features = sys.argv[1:4]
target = llvm.Target.from_triple(triple)
target.create_target_machine(cpu="help", features="+help")
sys.stderr.write("\n@@trial\n"); sys.stderr.flush()
machine = target.create_target_machine(cpu=cpu, features=features, opt=2, reloc="pic")
module = llvm.parse_assembly(sys.stdin.read())
module.triple = triple
machine.emit_object(module)
sys.stderr.write("\n@@compiled\n")
'''

# Scalar and vector float arithmetic: what every generated kernel needs from a CPU.
_TRIAL_IR = """
define <4 x float> @trial(<4 x float> %a, float %s, double %d) {
  %v = insertelement <4 x float> %a, float %s, i32 0
  %m = fmul <4 x float> %v, %a
  %r = fadd <4 x float> %m, %a
  %e = fptrunc double %d to float
  %t = insertelement <4 x float> %r, float %e, i32 1
  ret <4 x float> %t
}
"""


class TargetError(CodegenError, ValueError):
    """A target string that cannot be understood (unknown kind, CPU, feature or option)."""


@lru_cache(maxsize=None)
def llvm_target_facts(triple: str, cpu: str, features: str) -> tuple:
    """``(cpus, features, failure)`` LLVM reports for ``triple``; ``failure`` is None
    when a trial compilation for ``cpu`` and ``features`` succeeded, else LLVM's message."""
    try:
        child = subprocess.run([sys.executable, "-c", _CHILD, triple, cpu, features],
                               input=_TRIAL_IR, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise TargetError(f"could not ask LLVM about -mcpu={cpu} -mattr={features} for "
                          f"{triple}: {err}") from None
    listing, _, trial = child.stderr.partition("@@trial")
    cpus = _listed_names(listing, "Available CPUs", "Available features")
    feats = _listed_names(listing, "Available features", "Use +feature")
    failure = None if "@@compiled" in trial else _failure_line(child.stderr, child.returncode)
    return frozenset(cpus), frozenset(feats), failure


def _listed_names(text: str, start: str, stop: str) -> list:
    """Names from LLVM's help listing: lines ``  name   - description`` between two titles."""
    section = text.partition(start)[2].partition(stop)[0]
    return [line.split()[0] for line in section.splitlines()
            if line.startswith("  ") and " - " in line]


def _failure_line(stderr: str, returncode: int) -> str:
    for line in stderr.splitlines():
        if "LLVM ERROR" in line:
            return line.strip()
    lines = [line for line in stderr.splitlines() if line.strip()]
    return lines[-1].strip() if lines else f"the compiler exited with status {returncode}"


def check_cpu_and_features(triple: str, cpu: str, mattr: tuple, features: str) -> None:
    """Raise TargetError unless LLVM knows ``cpu`` and every ``+f``/``-f`` in ``mattr``
    for ``triple`` and can compile for them (``features`` is the full feature string)."""
    cpus, known_features, failure = llvm_target_facts(triple, cpu, features)
    if not cpus and failure:
        raise TargetError(f"LLVM cannot generate code for the triple {triple!r}: {failure}")
    if cpu not in cpus:
        raise TargetError(f"-mcpu={cpu}: LLVM knows no such CPU for {triple}; "
                          f"{_suggest(cpu, cpus)}")
    for toggle in mattr:
        _check_toggle(toggle, known_features, triple)
    if failure:
        raise TargetError(f"-mcpu={cpu}"
                          + (f" -mattr={','.join(mattr)}" if mattr else "")
                          + f": LLVM cannot generate code for {triple} with it ({failure})"
                          + _hint_for(failure))


def _check_toggle(toggle: str, known: frozenset, triple: str) -> None:
    name = toggle[1:]
    if toggle[:1] not in ("+", "-"):
        raise TargetError(f"-mattr: expected +{toggle} or -{toggle} (a feature with its "
                          f"sign), found {toggle!r}")
    if name not in known:
        raise TargetError(f"-mattr: {name!r} (in {toggle!r}) is not a feature LLVM knows "
                          f"for {triple}; {_suggest(name, known)}")


def _suggest(name: str, accepted: frozenset) -> str:
    close = difflib.get_close_matches(name, sorted(accepted), n=5, cutoff=0.6)
    if close:
        return "close matches: " + ", ".join(close)
    sample = ", ".join(sorted(accepted)[:8])
    return f"it accepts {len(accepted)} names, e.g. {sample}, ..."


def _hint_for(failure: str) -> str:
    if "64-bit code requested" in failure:
        return ("; it is a 32-bit CPU: name a 64-bit one such as x86-64, x86-64-v3, "
                "haswell or znver4")
    return ""
