"""Stress: many back-to-back calls of every sm90 phase, on two CUDA streams and from two Python threads at
once, every result checked, no hang, GPU memory flat.

1. Streams: for each phase, --calls calls of cute_gemm.gemm(a, b, phase, out=c), alternating between two
   streams and cycling through the shapes the phase accepts (--shapes; a ragged one is skipped by phases
   that refuse it). Each (stream, shape) owns its inputs, its reference (torch.mm, fp32 out) and its C,
   all made on that stream. Before a checked call C is poisoned with NaN on the same stream; after it, a
   comparison (|C - ref| <= atol + rtol |ref|, NaN fails) is queued on the same stream into a result slot,
   so the calls stay back to back and the host reads the verdicts once at the end.
2. Threads: two Python threads call cute_gemm.gemm at the same time (a barrier starts them together), each
   with its own stream and tensors, cycling through every phase and shape, checked the same way. Every
   kernel is compiled before the threads start: this tests concurrent launches, not the compiler.
3. Memory: torch.cuda.memory_allocated / max_memory_allocated / memory_reserved and the device's used
   memory (NVML, else nvidia-smi) after a warm-up pass and again at the end; growth beyond the tolerances
   fails the run.

``--config 10:bm=128,bn=224,bk=64,stages=5,cluster_m=4`` adds a config of a phase as a kernel of its own
(named by that spec), stressed like the phases; ``--phases none`` stresses the configs alone. ``--layout``,
``--dtype`` and ``--out-dtype`` give the operands (default the worklog's: nn, fp16 in, fp32 C), for configs that
take only some (a 5-stage ring with a 16-bit C); a 16-bit C is compared with rtol widened by one unit of its last
place.

A watchdog (faulthandler) dumps every thread's stack to the log and exits if the script runs past
--timeout. Output in --out: stress.log and stress.json. Exit status: 0 all right, 1 a wrong result, a thread
error or memory growth, 2 no sm90 GPU.

  on an H200: python3 bench/stress.py --out $OUT/stress
"""

from __future__ import annotations

import argparse
import dataclasses
import faulthandler
import gc
import json
import os
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # run as `python3 bench/stress.py` from a checkout, installed or not

from cute_gemm.cli.args import operand_args, operands_of  # noqa: E402  (--layout, --dtype, --out-dtype)

SHAPES = ("512,512,512", "1024,512,256", "256,1024,768", "1000,264,520")  # the last is ragged
STREAMS = 2
TORCH_TOL_BYTES = 1 << 20  # torch-allocated memory may not grow by more (it should not grow at all)
DEVICE_TOL_MIB = 64  # device used memory (NVML): room for a late driver-side allocation, not a leak


def schedule(calls: int, shapes: list, streams: int = STREAMS) -> list[tuple[int, object]]:
    """[(stream index, shape)] per call: streams alternate every call; the shape changes every `streams`
    calls, so each stream sees every shape and consecutive calls differ in stream or shape."""
    return [(i % streams, shapes[(i // streams) % len(shapes)]) for i in range(calls)]


def checked(i: int, every: int, calls: int) -> bool:
    """Call i of `calls` is checked (poisoned before, compared after) when `every` divides it; the last
    call always is."""
    return every <= 1 or i % every == 0 or i == calls - 1


def memory_problems(before: dict, after: dict, torch_tol: int = TORCH_TOL_BYTES, device_tol_mib: float = DEVICE_TOL_MIB):
    """What grew beyond tolerance between two memory snapshots (empty: flat)."""
    out = []
    grew = after["allocated"] - before["allocated"]
    if grew > torch_tol:
        out.append(f"torch allocated memory grew by {grew:,} bytes (tolerance {torch_tol:,})")
    if before.get("device_used_mib") is not None and after.get("device_used_mib") is not None:
        # torch's caching allocator keeps the blocks the concurrent streams needed (its reserved pool, not a
        # leak: what is still allocated in it is checked above); the rest of the device's growth is not torch's
        pool = (after.get("reserved", 0) - before.get("reserved", 0)) / 2**20
        dev = after["device_used_mib"] - before["device_used_mib"] - max(pool, 0.0)
        if dev > device_tol_mib:
            out.append(f"device used memory grew by {dev:,.0f} MiB beyond torch's reserved pool (which grew by "
                       f"{pool:,.0f} MiB; tolerance {device_tol_mib} MiB, {after.get('device_source')})")
    return out


# --------------------------------------------------------------------------------------------- GPU side
def device_used_mib() -> tuple[float | None, str]:
    """Used memory of the GPU torch uses, in MiB: NVML (pynvml) if importable, else nvidia-smi."""
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    uuid = str(getattr(props, "uuid", "") or "")
    if uuid and not uuid.startswith(("GPU-", "MIG-")):
        uuid = "GPU-" + uuid  # NVML and nvidia-smi spell it with the prefix
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            h = pynvml.nvmlDeviceGetHandleByUUID(uuid) if uuid else pynvml.nvmlDeviceGetHandleByIndex(0)
        except pynvml.NVMLError:
            h = pynvml.nvmlDeviceGetHandleByIndex(0)
        return pynvml.nvmlDeviceGetMemoryInfo(h).used / 2**20, "nvml"
    except Exception:  # no pynvml, or NVML not usable here: ask nvidia-smi
        pass
    try:
        sel = ["-i", uuid] if uuid else ["-i", "0"]
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", *sel],
                             capture_output=True, text=True, timeout=20)
        return float(out.stdout.strip().splitlines()[0]), "nvidia-smi"
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None, "unavailable"


def snapshot() -> dict:
    import torch

    torch.cuda.synchronize()
    used, src = device_used_mib()
    return {"allocated": torch.cuda.memory_allocated(), "max_allocated": torch.cuda.max_memory_allocated(),
            "reserved": torch.cuda.memory_reserved(), "device_used_mib": used, "device_source": src}


@dataclasses.dataclass
class Slot:
    """One (stream, shape)'s own tensors: inputs, reference and output, all made on that stream."""

    a: object
    b: object
    ref: object
    c: object
    atol: float = 0.0  # |C - ref| <= atol + rtol |ref|: the worklog's tolerance, rtol widened for a 16-bit C
    rtol: float = 0.0


def make_slot(p, stream, operands=None):
    """A (stream, shape)'s tensors in ``operands``' layout and types (None: the worklog's); the reference in fp32."""
    import torch

    from cute_gemm.measure.check import tolerance
    from cute_gemm.measure.inputs import make_inputs
    from cute_gemm.measure.reference import mm_fp32_out
    from cute_gemm.runtime.problem import torch_dtype
    from phases.operands import WORKLOG

    ops = operands or WORKLOG
    tol = tolerance(ops)  # at the worklog's K: the fp32 C's ATOL / RTOL as before, plus a 16-bit C's rounding
    with torch.cuda.stream(stream):
        a, b = make_inputs(p, operands=ops)
        ref = mm_fp32_out(a, b)
        c = torch.empty(p.m, p.n, dtype=torch_dtype(ops.c), device="cuda")
    return Slot(a, b, ref, c, tol.atol, tol.rtol)


@dataclasses.dataclass(frozen=True)
class Target:
    """A kernel under stress: a phase with its default config, or with ``over`` ('FIELD=V,...')."""

    entry: object
    over: str | None = None
    operands: object = None  # phases.operands.Operands of the run (None: the worklog's)

    @property
    def key(self) -> str:
        return self.entry.key + (f":{self.over}" if self.over else "")

    @property
    def config(self):
        return self.entry.configured(self.over) if self.over else None

    def cannot(self, p) -> list:
        return self.entry.make(self.entry.configured(self.over), self.operands).can_implement(p.m, p.n, p.k)


def call_and_check(target: Target, slot: Slot, verdict, i: int, check: bool):
    """On the current stream: poison C, the call, then queue how many elements miss the reference into
    verdict[i] (a NaN counts as a miss); nothing waits on the host."""
    import torch

    import cute_gemm

    if check:
        slot.c.fill_(float("nan"))
    cute_gemm.gemm(slot.a, slot.b, phase=target.entry.phase, out=slot.c, config=target.config)
    if check:
        verdict[i] = (~torch.isclose(slot.c.float(), slot.ref, rtol=slot.rtol, atol=slot.atol)).sum()


def failures(verdict, labels) -> list[dict]:
    """The checked calls whose result missed the reference: [{call, label, wrong elements}]."""
    v = verdict.cpu().tolist()
    return [{"call": i, "where": labels[i], "wrong": int(n)} for i, n in enumerate(v) if n > 0]


def stress_streams(entry: Target, shapes, calls: int, every: int, streams, log) -> dict:
    """--calls back-to-back calls of one phase over the streams and its shapes; verdicts read at the end."""
    import torch

    slots = {(s, p): make_slot(p, streams[s], entry.operands) for s in range(len(streams)) for p in shapes}
    torch.cuda.synchronize()
    plan = schedule(calls, shapes, len(streams))
    verdict = torch.full((calls,), -1, dtype=torch.int64, device="cuda")  # -1: not checked
    t0 = time.perf_counter()
    for i, (s, p) in enumerate(plan):
        with torch.cuda.stream(streams[s]):
            call_and_check(entry, slots[(s, p)], verdict, i, checked(i, every, calls))
    torch.cuda.synchronize()
    secs = time.perf_counter() - t0
    bad = failures(verdict, [f"stream {s} {p}" for s, p in plan])
    n_checked = int((verdict >= 0).sum())
    log(f"  {entry.key:<9} {calls} calls over {len(streams)} streams x {len(shapes)} shapes in {secs:.2f} s, "
        f"{n_checked} checked, {len(bad)} wrong")
    return {"phase": entry.key, "calls": calls, "checked": n_checked, "wrong": bad[:20], "n_wrong": len(bad),
            "shapes": [str(p) for p in shapes], "seconds": round(secs, 3)}


def stress_threads(work: list[tuple[Target, object]], calls: int, every: int, streams, timeout: float, log) -> dict:
    """One thread per stream calling cute_gemm.gemm over `work` (phase, shape) at the same time. Each thread's
    tensors are made here, on its stream, before it starts: the threads themselves only call and check."""
    import torch

    results = [dict(thread=t) for t in range(len(streams))]
    ops = work[0][0].operands if work else None  # one run, one set of operands
    slots = [{p: make_slot(p, st, ops) for p in dict.fromkeys(p for _, p in work)} for st in streams]
    verdicts = [torch.full((calls,), -1, dtype=torch.int64, device="cuda") for _ in streams]
    torch.cuda.synchronize()
    start = threading.Barrier(len(streams))

    def body(t: int):
        res = results[t]
        order = [work[(i + t) % len(work)] for i in range(calls)]  # the threads run different phases at a time
        try:
            start.wait(timeout=timeout)
            t0 = time.perf_counter()
            with torch.cuda.stream(streams[t]):
                for i, (ph, p) in enumerate(order):
                    call_and_check(ph, slots[t][p], verdicts[t], i, checked(i, every, calls))
            streams[t].synchronize()
            bad = failures(verdicts[t], [f"{ph.key} {p}" for ph, p in order])
            res.update(calls=calls, checked=int((verdicts[t] >= 0).sum()), n_wrong=len(bad), wrong=bad[:20],
                       seconds=round(time.perf_counter() - t0, 3))
        except Exception as exc:  # reported, and fails the run
            res["error"] = f"{type(exc).__name__}: {exc}"

    threads = [threading.Thread(target=body, args=(t,), name=f"stress-{t}") for t in range(len(streams))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout)
    hung = [th.name for th in threads if th.is_alive()]
    for r in results:
        if "error" in r:
            log(f"  thread {r['thread']}: {r['error']}")
        elif "calls" in r:
            log(f"  thread {r['thread']}: {r['calls']} calls in {r['seconds']:.2f} s, {r['checked']} checked, "
                f"{r['n_wrong']} wrong")
        else:
            log(f"  thread {r['thread']}: did not finish within {timeout:.0f} s")
    return {"threads": results, "hung": hung}


# ------------------------------------------------------------------------------------------------ main
def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "out") + "/stress", help="output folder (default $OUT/stress)")
    ap.add_argument("--phases", help="phase ids, e.g. 0-3,5, or none (default: every sm90 phase)")
    ap.add_argument("--config", action="append", default=[], metavar="PHASE:FIELD=V[,FIELD=V]",
                    help="also stress this config of a phase, e.g. 10:bm=128,bn=224,bk=64,stages=5,cluster_m=4 "
                         "(repeatable; alone with --phases none)")
    ap.add_argument("--shapes", nargs="+", default=list(SHAPES), metavar="M,N,K", help="default: %(default)s")
    operand_args(ap)
    ap.add_argument("--calls", type=int, default=1000, help="calls per phase on the two streams (default %(default)s)")
    ap.add_argument("--thread-calls", type=int, default=1000, help="calls per thread (default %(default)s)")
    ap.add_argument("--check-every", type=int, default=1, help="check every Nth call (default: every call)")
    ap.add_argument("--timeout", type=float, default=540, help="watchdog: dump stacks and exit after this many s")
    ap.add_argument("--device-tol-mib", type=float, default=DEVICE_TOL_MIB, help="device memory growth allowed")
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "stress.log"), "w") as logf:

        def log(msg: str):
            print(msg, flush=True)
            logf.write(msg + "\n")
            logf.flush()

        faulthandler.dump_traceback_later(args.timeout, exit=True, file=logf)  # stacks into the log, then exit
        try:
            return stress(args, log)
        finally:
            faulthandler.cancel_dump_traceback_later()


def stress(args, log) -> int:
    from cute_gemm.cli.args import UsageError
    from cute_gemm.cli.steps import buildable_variant
    from cute_gemm.measure import environment
    from cute_gemm.runtime import registry
    from cute_gemm.runtime.problem import Problem

    try:  # a bad --config or operand is said before the GPU is looked for
        ops = operands_of(args)
        targets = [Target(*buildable_variant(spec, "sm90", ops), ops) for spec in args.config]
    except UsageError as exc:
        log(f"stress: {exc}")
        return 2
    gpu = environment.gpu()
    if gpu is None or gpu["capability"] != "9.0":
        log(f"stress: needs an sm90 (Hopper) GPU, found {gpu['name'] if gpu else 'none'}")
        return 2
    import torch

    entries = registry.all_entries("sm90")
    if args.phases == "none":
        entries = []
    elif args.phases:
        want = registry.parse_phase_list(args.phases)
        entries = [e for e in entries if e.phase in want]
    entries = [Target(e, None, ops) for e in entries] + targets
    shapes = [Problem.parse(s) for s in args.shapes]
    accepted = {e.key: [p for p in shapes if not e.cannot(p)] for e in entries}
    rec = environment.record()
    log(f"stress on {gpu['name']} ({rec['date']}): {len(entries)} kernels, {ops.label()}, "
        f"shapes {', '.join(map(str, shapes))}, "
        f"watchdog {args.timeout:.0f} s")
    for e in entries:
        refused = [str(p) for p in shapes if p not in accepted[e.key]]
        if refused:
            log(f"  {e.key} refuses {', '.join(refused)}")

    # warm-up, then the baseline: every (phase, shape) compiled, and on every stream the tensors of each
    # shape made once, so torch's per-stream pools and cuBLAS workspaces (for the references) exist already
    streams = [torch.cuda.Stream() for _ in range(STREAMS)]
    thread_streams = [torch.cuda.Stream() for _ in range(2)]
    for st in streams + thread_streams:
        for p in shapes:
            make_slot(p, st, ops)
    for e in entries:
        for p in accepted[e.key]:
            with torch.cuda.stream(streams[0]):
                call_and_check(e, make_slot(p, streams[0], ops), None, 0, False)
    gc.collect()
    torch.cuda.reset_peak_memory_stats()
    before = snapshot()
    log(f"memory after warm-up: {json.dumps(before)}")

    problems = []
    log("streams:")
    per_phase = [stress_streams(e, accepted[e.key], args.calls, args.check_every, streams, log)
                 for e in entries if accepted[e.key]]
    problems += [f"{r['phase']}: {r['n_wrong']} wrong results, first {r['wrong'][0]}" for r in per_phase if r["n_wrong"]]
    log("threads:")
    work = [(e, p) for e in entries for p in accepted[e.key]]
    thr = stress_threads(work, args.thread_calls, args.check_every, thread_streams, args.timeout, log)
    problems += [f"thread {r['thread']}: {r['error']}" for r in thr["threads"] if "error" in r]
    problems += [f"thread {r['thread']}: {r['n_wrong']} wrong results, first {r['wrong'][0]}"
                 for r in thr["threads"] if r.get("n_wrong")]
    problems += [f"thread {name} did not finish" for name in thr["hung"]]

    gc.collect()  # the stress's own tensors are gone; what is left allocated beyond the baseline leaked
    after = snapshot()
    log(f"memory at the end:    {json.dumps(after)}")
    problems += memory_problems(before, after, device_tol_mib=args.device_tol_mib)
    doc = {"schema": "cute-gemm/stress-v1", **rec, "config": vars(args), "accepted": {k: [str(p) for p in v]
           for k, v in accepted.items()}, "streams": per_phase, "threads": thr,
           "memory": {"before": before, "after": after}, "problems": problems, "ok": not problems}
    with open(os.path.join(args.out, "stress.json"), "w") as f:
        json.dump(doc, f, indent=1)
    log("PASS" if not problems else "FAIL:\n  " + "\n  ".join(problems))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
