"""``cute-gemm profile``: Nsight Compute counters per phase, where the cycles go (``--from`` re-prints a
saved profile anywhere)."""

from __future__ import annotations

import sys

from cute_gemm.cli.args import UsageError, argtype, phase_list_arg, shape_arg, writable_file
from cute_gemm.profiling.ncu import TIMEOUT_S, WARMUP, parse_peers


@argtype
def warmup_arg(text: str) -> int:
    """Launches before the profiled one: a whole number >= 0."""
    try:
        n = int(text)
    except ValueError:
        raise ValueError(f"--warmup must be a whole number of launches, got {text!r}") from None
    if n < 0:
        raise ValueError(f"--warmup must be 0 or more launches, got {n}")
    return n


@argtype
def ncu_timeout_arg(text: str) -> float:
    """Seconds before ncu is killed: a finite number > 0."""
    try:
        s = float(text)
    except ValueError:
        raise ValueError(f"--timeout must be a number of seconds, got {text!r}") from None
    if not 0 < s < float("inf"):
        raise ValueError(f"--timeout must be a finite number of seconds > 0, got {text}")
    return s


def _say(msg: str) -> None:
    print(f"cute-gemm profile: {msg}", file=sys.stderr)


def run(args) -> int:
    from cute_gemm.profiling import ncu
    from cute_gemm.report.tables import render_doc, render_moved_markdown

    if args.json:
        writable_file(args.json, "--json")  # before the profile, not after it
    if args.from_json:
        try:
            doc = ncu.load(args.from_json)
        except OSError as exc:
            raise UsageError(f"cannot read {args.from_json}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    else:
        try:
            exe = ncu.find_ncu()
        except ncu.NcuError as exc:
            raise UsageError(f"{exc} (a saved profile prints without it: --from FILE)") from None
        fam, why = ncu.gpu_family()
        if fam is None:
            raise UsageError(f"needs a Hopper (sm90) or Blackwell (sm100) GPU: {why}")
        from cute_gemm.runtime import registry

        entries = registry.all_entries(fam)
        if args.phase:
            entries = [e for e in entries if e.phase in args.phase]
        try:
            doc = ncu.run_profile(entries, args.shape, args.peers, args.warmup, args.timeout, exe, warn=_say)
        except ncu.NcuError as exc:
            _say(str(exc))
            return 1
    print(render_doc(doc))
    if args.markdown:
        print("\n" + render_moved_markdown(doc["kernels"]))
    if args.json:
        try:
            ncu.save(doc, args.json)
        except OSError as exc:
            raise UsageError(f"cannot write {args.json}: {exc.strerror or exc}") from None
        print(f"wrote {args.json}", file=sys.stderr)
    return 0 if doc["kernels"] else 1


DESCRIPTION = ("Run Nsight Compute (clocks and caches left alone) on one launch of each phase and of "
               "cuBLAS, after warm-ups, and print one column per kernel: duration, SM clock, cycles, "
               "tensor/shared pipe use, occupancy, registers, smem, DRAM/L2 throughput, L2 hit rate, "
               "smem bank conflicts and the top three warp-stall reasons. Needs ncu on PATH and a GPU; "
               "--from re-prints a saved profile anywhere.")


def add_arguments(p):
    p.add_argument("--phase", type=phase_list_arg,
                   help="phase ids, e.g. 0-3,5 (default: every phase of the GPU's ladder)")
    p.add_argument("--shape", type=shape_arg, default="4096,4096,4096", help="M,N,K (default %(default)s)")
    p.add_argument("--peers", type=argtype(parse_peers), default="cublas", help="libraries to profile beside the phases: cublas, cublaslt, "
                                                     "or none (default %(default)s)")
    p.add_argument("--json", metavar="FILE", help="also write the profile as JSON (the raw ncu CSV goes beside it)")
    p.add_argument("--from", dest="from_json", metavar="FILE", help="print a saved profile (no GPU, no ncu)")
    p.add_argument("--markdown", action="store_true",
                   help="also print the ladder's 'where the cycles go' table (markdown): per step, what moved most")
    p.add_argument("--warmup", type=warmup_arg, default=WARMUP, help="launches before the profiled one (default %(default)s)")
    p.add_argument("--timeout", type=ncu_timeout_arg, default=TIMEOUT_S,
                   help="seconds before ncu is killed (default %(default)s)")
