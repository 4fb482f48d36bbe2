"""The ``cute-gemm`` command (also ``python3 -m cute_gemm``)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys

from cute_gemm import arch as _arch
from cute_gemm import registry
from cute_gemm.bench import SWEEP
from cute_gemm.problem import HEADLINE, Problem

DESCRIPTION = """\
cute-gemm: a GEMM worklog's phases (naive tensor-core loop -> beating cuBLAS) as CuTe DSL kernels.

Problem: C[M,N] fp32 = A[M,K] fp16 row-major @ B[K,N] fp16 row-major (N-major), fp32 accumulate.
Two ladders share this tool: sm100 (Blackwell tcgen05, compile-verified here) and sm90 (Hopper wgmma,
run and measured on an H200). Phase ids: 0, 1, 2a (TMA), 2b (TMA + warp specialization; '2' = 2b),
3, 4, 5, and 6 (beyond the worklog: persistent, overlapped epilogue; sm90 only so far).

A newcomer's three commands:
  cute-gemm list                     what each phase adds, per arch
  cute-gemm bench                    check + time every phase vs cuBLAS/cuBLASLt (GPU), or the
                                     compile-only report (no GPU), then `cute-gemm plot` the JSON
  cute-gemm compare 2a 2b            two phases side by side: config, generated code, timings
"""


def _gpu_target() -> str | None:
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        return _arch.target_of_capability(*torch.cuda.get_device_capability(0))
    except Exception:
        return None


def _no_gpu_reason() -> str:
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA GPU is visible to torch"
    major, minor = torch.cuda.get_device_capability(0)
    return f"{torch.cuda.get_device_name(0)} (compute capability {major}.{minor}) runs neither ladder"


def _parse_shape_list(values: list[str] | None, default=HEADLINE) -> list[Problem]:
    if not values:
        return list(default)
    return [Problem.parse(v) for v in values]


# ---------------------------------------------------------------------------------------------- list
def cmd_list(args) -> int:
    for fam in ([_arch.family(args.arch)] if args.arch else list(_arch.TARGETS)):
        ents = registry.all_entries(fam)
        verified = "run and measured on the H200" if fam == "sm90" else "compile-verified (no Blackwell GPU here)"
        print(f"{fam} ({', '.join(_arch.TARGETS[fam])}; {verified}):")
        if not ents:
            print("  (no phases registered)")
        for e in ents:
            cfg = e.default_config()
            tile = f"{cfg.bm * cfg.cluster_m}x{cfg.bn}x{cfg.bk} NS={cfg.stages}" + (f" cluster {cfg.cluster_m}" if cfg.cluster_m > 1 else "")
            wl = f"  [worklog: {e.worklog}]" if e.worklog else ""
            print(f"  {e.phase:<3} {tile:<24} {e.summary}")
            print(f"      adds: {e.adds}{wl}")
        print()
    return 0


# ------------------------------------------------------------------------------------------- inspect
def _inspect(entries, targets, shape, dump_dir=None, as_json=False):
    from cute_gemm.inspection import dump, inspect_phase, side_by_side

    results, failures = [], []
    for tgt in targets:
        ins_list = []
        for e in entries:
            if e.arch != _arch.family(tgt):
                continue
            try:
                ins = inspect_phase(e, tgt, shape)
            except Exception as exc:
                failures.append(f"{e.key} for {tgt}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
                continue
            ins_list.append(ins)
            if dump_dir:
                for path in dump(ins, e, dump_dir):
                    print(f"wrote {path}", file=sys.stderr)
        results.append((tgt, ins_list))
    if as_json:
        print(json.dumps({t: [i.as_dict() for i in il] for t, il in results}, indent=1))
    else:
        for tgt, il in results:
            print(f"\n== {tgt} at {shape} (compile-only: PTX census = static instruction counts; resources from ptxas) ==")
            print(side_by_side(il))
    for f in failures:
        print(f"FAILED to compile {f}", file=sys.stderr)
    return 1 if failures else 0


def cmd_inspect(args) -> int:
    fams = [_arch.family(args.arch)] if args.arch else list(_arch.TARGETS)
    ents = [e for f in fams for e in registry.all_entries(f)]
    if args.phase:
        want = registry.parse_phase_list(args.phase)
        ents = [e for e in ents if e.phase in want]
        if not ents:
            print(f"no registered phase matches {args.phase!r} for {', '.join(fams)}", file=sys.stderr)
            return 2
    if args.target:
        targets = [_arch.target(args.target)]
    else:
        targets = [t for f in fams for t in (_arch.TARGETS[f] if args.all_targets else _arch.TARGETS[f][:1])]
    return _inspect(ents, targets, Problem.parse(args.shape), args.dump, args.json)


# ----------------------------------------------------------------------------------------------- run
def cmd_run(args) -> int:
    tgt = _gpu_target()
    if tgt is None:
        print(f"cute-gemm run needs a Hopper (sm90) or Blackwell (sm100) GPU: {_no_gpu_reason()}.\n"
              f"Without a GPU, `cute-gemm inspect` shows what the kernels compile to.", file=sys.stderr)
        return 2
    from cute_gemm.measure import measure

    fam = _arch.family(tgt)
    entry = registry.get(args.arch or fam, args.phase)
    if entry.arch != fam:
        print(f"{entry.key} is a {entry.arch} kernel and this GPU is {tgt}: it cannot run here. "
              f"Use `cute-gemm list --arch {fam}` for the phases this GPU runs.", file=sys.stderr)
        return 2
    rc = 0
    rows = []
    for p in _parse_shape_list(args.shape):
        why = entry.make().can_implement(p.m, p.n, p.k)
        if why:
            print(f"{entry.key} cannot do {p}: {'; '.join(why)}", file=sys.stderr)
            rc = 2
            continue
        m = measure(entry, p, cold_l2=args.cold_l2)
        rows.append(dataclasses.asdict(m))
        chk = m.check
        print(f"\n{entry.key} at {p}  ({entry.adds})")
        if chk.get("error"):
            print(f"  ERROR: {chk['error']}")
            rc = 1
            continue
        print(f"  check: {'PASS' if chk['passed'] else 'FAIL'}  vs cuBLASLt {chk['mismatches']} mismatches "
              f"(max |err| {chk['max_abs_err']:.3g}), vs float64 rel err {chk['rel_fro_err']:.2e} "
              f"(cuBLASLt {chk['cublaslt_rel_fro_err']:.2e}), unwritten {chk['unwritten']}, "
              f"repeat {'identical' if chk['repeat_identical'] else 'DIFFERS'}")
        lines = []
        if m.timing:
            lines.append((f"phase {entry.phase}", m.timing))
        else:
            rc = 1
        lines += [("cuBLAS", m.cublas), ("cuBLASLt", m.cublaslt)]
        for name, t in lines:
            rel = f"{100 * t['tflops'] / m.cublas['tflops']:6.1f}% of cuBLAS" if name != "cuBLAS" else ""
            print(f"  {name:<10} {t['tflops']:8.1f} TFLOP/s  (median {t['ms_median'] * 1e3:8.1f} us, "
                  f"min..max {t['tflops_worst']:.0f}..{t['tflops_best']:.0f})  {rel}")
    if args.json and rows:
        from cute_gemm import environment

        with open(args.json, "w") as f:
            json.dump({"schema": "cute-gemm/run-v1", **environment.record(), "results": rows}, f, indent=1)
        print(f"wrote {args.json}", file=sys.stderr)
    return rc


# --------------------------------------------------------------------------------------------- bench
def cmd_bench(args) -> int:
    from cute_gemm import bench

    tgt = _gpu_target()
    if tgt is None:
        print(f"No GPU to benchmark on ({_no_gpu_reason()}): showing the compile-only report instead.\n"
              f"Every phase of both ladders is compiled for its target; the table is what the generated code\n"
              f"contains. On an H200 (sm90) or a Blackwell GPU (sm100) this command checks and times them.",
              file=sys.stderr)
        fams = [_arch.family(args.arch)] if args.arch else list(_arch.TARGETS)
        ents = [e for f in fams for e in bench.entries_for(f, args.phases)]
        targets = [_arch.TARGETS[f][0] for f in fams]
        return _inspect(ents, targets, Problem(4096, 4096, 4096))
    fam = _arch.family(tgt)
    if args.arch and _arch.family(args.arch) != fam:
        print(f"this GPU is {tgt}; {args.arch} kernels cannot run on it", file=sys.stderr)
        return 2
    entries = bench.entries_for(fam, args.phases)
    shapes = _parse_shape_list(args.shapes)
    if args.sweep:
        shapes += [p for p in SWEEP if p not in shapes]
    doc = bench.run_bench(entries, shapes, cold_l2=args.cold_l2, progress=not args.quiet)
    print(bench.table(doc))
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    bench.save(doc, args.out)
    print(f"\nwrote {args.out}", file=sys.stderr)
    if not args.no_plot:
        try:
            from cute_gemm.plot import plot_all

            for path in plot_all(doc, os.path.splitext(args.out)[0]):
                print(f"wrote {path}", file=sys.stderr)
        except ImportError:
            print("matplotlib is not installed: skipped the plots (pip install 'cute-gemm[plot]')", file=sys.stderr)
    failed = [r for r in doc["results"] if r["status"] in ("failed", "error")]
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------------- plot
def cmd_plot(args) -> int:
    from cute_gemm import bench
    from cute_gemm.plot import plot_all

    doc = bench.load(args.results)
    prefix = args.out or os.path.splitext(args.results)[0]
    for path in plot_all(doc, prefix):
        print(f"wrote {path}")
    return 0


# ------------------------------------------------------------------------------------------- compare
def cmd_compare(args) -> int:
    from cute_gemm.inspection import inspect_phase, side_by_side

    tgt = _gpu_target()
    default_arch = args.arch or (_arch.family(tgt) if tgt else "sm90")
    ea, eb = registry.resolve(args.a, default_arch), registry.resolve(args.b, default_arch)
    p = Problem.parse(args.shape)
    print(f"{ea.key}: {ea.summary}\n{eb.key}: {eb.summary}\n{eb.key} adds: {eb.adds}\n")
    ca, cb = dataclasses.asdict(ea.default_config()), dataclasses.asdict(eb.default_config())
    print("config differences:")
    diff = [(k, ca.get(k), cb.get(k)) for k in dict.fromkeys([*ca, *cb]) if ca.get(k) != cb.get(k)]
    for k, va, vb in diff:
        print(f"  {k:<16} {str(va):>10} -> {vb}")
    if not diff:
        print("  (same tile, stages and cluster: the difference is in the code, below)")
    ins = []
    for e in (ea, eb):
        try:
            ins.append(inspect_phase(e, None, p))
        except Exception as exc:
            print(f"could not compile {e.key}: {exc}", file=sys.stderr)
            return 1
    print(f"\ngenerated code at {p} (compile-only):")
    print(side_by_side(ins))
    if tgt is None:
        print(f"\n(no timing: {_no_gpu_reason()})")
        return 0
    from cute_gemm.measure import library_timings, measure

    fam = _arch.family(tgt)
    runnable = [e for e in (ea, eb) if e.arch == fam and not e.make().can_implement(p.m, p.n, p.k)]
    if not runnable:
        print(f"\n(no timing: neither phase runs on this {tgt} GPU at {p})")
        return 0
    libs = library_timings(p)
    print(f"\ntimings at {p} on {tgt}:  cuBLAS {libs['cublas']['tflops']:.1f}  cuBLASLt {libs['cublaslt']['tflops']:.1f} TFLOP/s")
    tf = {}
    for e in runnable:
        m = measure(e, p, libs=libs)
        tf[e.key] = m.tflops
        status = f"{m.tflops:.1f} TFLOP/s" if m.tflops else f"check failed: {m.check.get('error') or 'mismatch'}"
        print(f"  {e.key:<10} {status}")
    if len(tf) == 2 and all(tf.values()):
        print(f"  speed-up {eb.key} / {ea.key}: {tf[eb.key] / tf[ea.key]:.3f}x")
    return 0


# ---------------------------------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="cute-gemm", description=DESCRIPTION,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")
    arch_help = "sm90 (Hopper) or sm100 (Blackwell); default: both, or the GPU's"

    p = sub.add_parser("list", help="phases per arch: config, summary, what each adds",
                       description="List the registered phases of each ladder with their default config, "
                                   "a one-line summary and what each adds over the previous phase.")
    p.add_argument("--arch", help=arch_help)
    p.set_defaults(fn=cmd_list)

    p = sub.add_parser("inspect", help="compile-only report (no GPU needed): instruction census + resources",
                       description="Compile phases for a target without a GPU and print, side by side, the "
                                   "instruction census of the PTX (tcgen05/wgmma, cp.async, TMA loads/stores, "
                                   "multicast, setmaxnreg, stmatrix, mbarrier waits, proxy fences) and the "
                                   "resources (registers, spills, dynamic smem, threads, TMEM columns).")
    p.add_argument("--arch", help=arch_help)
    p.add_argument("--phase", help="phase id or list, e.g. 0, 2a, 0-3,5 (default: all)")
    p.add_argument("--target", help="exact target: sm_90a, sm_100a or sm_103a (default: the arch's first)")
    p.add_argument("--all-targets", action="store_true", help="compile sm100 phases for both sm_100a and sm_103a")
    p.add_argument("--shape", default="4096,4096,4096", help="M,N,K to compile for (default 4096,4096,4096)")
    p.add_argument("--dump", metavar="DIR", help="also write DIR/<arch>_phase<id>.ptx and .cubin")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.set_defaults(fn=cmd_inspect)

    p = sub.add_parser("run", help="one phase on the GPU: check vs cuBLASLt, time beside cuBLAS/cuBLASLt",
                       description="Check one phase (fresh random inputs, NaN-poisoned C, vs cuBLASLt with "
                                   "atol=0.01 rtol=0.001 and vs float64) and, if it passes, time it beside "
                                   "cuBLAS and cuBLASLt (CUDA events, 5 warm-ups, median of 10).")
    p.add_argument("--phase", required=True, help="0, 1, 2a, 2b (2), 3, 4, 5, 6")
    p.add_argument("--arch", help="must match the GPU (default: the GPU's)")
    p.add_argument("--shape", action="append", help="M,N,K; repeat for several (default: 4096^3 and 1024,4096,4096)")
    p.add_argument("--cold-l2", action="store_true", help="rotate input sets larger than L2 (default: L2-resident, as the worklog)")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.set_defaults(fn=cmd_run)

    p = sub.add_parser("bench", help="the main job: every phase checked then timed vs cuBLAS/cuBLASLt, JSON + plots",
                       description="On a GPU: for every phase of the GPU's arch (or --phases) and every shape, "
                                   "check against cuBLASLt first (a failing phase is reported, never timed), then "
                                   "time it beside cuBLAS and cuBLASLt in the same run; print a table, write JSON "
                                   "and PNG plots. Without a GPU: the compile-only report for both ladders.")
    p.add_argument("--arch", help=arch_help)
    p.add_argument("--phases", help="e.g. 0-3,5 (default: all registered for the arch)")
    p.add_argument("--shapes", nargs="+", metavar="M,N,K", help="default: 4096,4096,4096 1024,4096,4096")
    p.add_argument("--sweep", action="store_true", help=f"add square sizes {', '.join(str(s.m) for s in SWEEP)}")
    p.add_argument("--cold-l2", action="store_true", help="rotate input sets larger than L2")
    p.add_argument("--out", default="bench/results/latest.json", help="JSON path; plots go beside it (default %(default)s)")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG plots")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(fn=cmd_bench)

    p = sub.add_parser("compare", help="two phases side by side: config, generated code, timings",
                       description="Compare two phases, e.g. `compare 2 3`, `compare sm90:4 sm90:5`, "
                                   "`compare sm90:3 sm100:3`: config differences, instruction census and "
                                   "resources of both compiled kernels, and with a GPU both timings.")
    p.add_argument("a", help="phase (arch:phase or phase)")
    p.add_argument("b", help="phase (arch:phase or phase)")
    p.add_argument("--arch", help="arch for bare phase ids (default: the GPU's, else sm90)")
    p.add_argument("--shape", default="4096,4096,4096", help="M,N,K (default 4096,4096,4096)")
    p.set_defaults(fn=cmd_compare)

    p = sub.add_parser("plot", help="PNG plots from a bench JSON: the ladder figure and the size sweep",
                       description="Draw the worklog's Figure 1 for a bench result (a bar per phase at each "
                                   "headline shape, cuBLAS/cuBLASLt/peak lines, gain per step) and, when the "
                                   "result has a sweep, TFLOP/s against size.")
    p.add_argument("results", help="a JSON file written by `cute-gemm bench`")
    p.add_argument("--out", help="output prefix (default: the JSON path without .json)")
    p.set_defaults(fn=cmd_plot)
    return ap


def main(argv=None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if not getattr(args, "fn", None):
        ap.print_help()
        return 0
    try:
        return args.fn(args)
    except (ValueError, LookupError) as exc:
        print(f"cute-gemm {args.cmd}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
