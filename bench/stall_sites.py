"""Where one kernel's warps wait, instruction by instruction: Nsight Compute's warp-state samples per SASS line.

    python bench/stall_sites.py --shape 128,4096,14336 [--phase best|10 --config bn=128,stages=4] --out DIR [--top 25]
        [--layout nt --dtype bf16 --out-dtype bf16] [--epilogue bias,gelu]

Runs ``ncu`` (SourceCounters, one launch after three warm-ups, caches flushed, clocks free) on a
``cute_gemm.gemm`` call, exports the report's source page as SASS and prints the instructions that collected the
most warp samples, with their share of all samples. That answers what a per-kernel stall table cannot: *which* wait
holds a pipelined kernel back -- the consumers' wait for a full stage (``SYNCS...TRYWAIT`` after the
consumer's loop head), the producer's wait for an empty one, the wgmma wait (``WARPGROUP.DEPBAR``), or the tail's
cluster barrier. Warps with nothing to do park at a barrier and collect samples there too (a producer warpgroup's
three idle warps): read a line's share with the warp that runs it in mind. ``--epilogue`` (a bias and an activation,
as ``cute-gemm bench --epilogue`` spells them) profiles the call with the fused epilogue, to set beside the plain one.
Needs a GPU and ncu; ``summarize`` (the CSV -> table step) runs anywhere and is what the CPU test holds.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cute_gemm.cli.args import operand_args, shape_arg  # noqa: E402  (the CLI's M,N,K parser, the operands)
from cute_gemm.measure.epilogue_bench import parse_spec  # noqa: E402  (bench --epilogue's parser)
from cute_gemm.runtime.registry import parse_overrides  # noqa: E402  (the CLI's FIELD=VALUE,... parser)


def summarize(csv_text: str, top: int = 25) -> list[tuple[str, str, int, float, int]]:
    """(address, SASS line, samples, share of all samples, warp instructions executed) of the ``top`` most-sampled
    instructions of ncu's source page CSV (``--page source --csv --print-source sass``); the samples column is
    "Warp Stall Sampling (All Samples)". The executed count tells whose line it is: once per k-tile per CTA is the
    producer's one warp, four times that the consumer warpgroup's four."""
    lines = csv_text.splitlines()
    start = next((i for i, line in enumerate(lines) if "Source" in line and "Sampling" in line), None)
    if start is None:
        raise ValueError("no source-page header (a 'Source' and a 'Warp Stall Sampling' column) in the CSV")
    rows = list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))
    col = next(c for c in rows[0] if c.startswith("Warp Stall Sampling (All"))
    address = next((c for c in rows[0] if c.strip("# ") == "Address"), None)

    def count(r, c):
        return int(float((r.get(c) or "0").replace(",", ""))) if c else 0

    samples = []
    for r in rows:
        try:
            n, executed = count(r, col), count(r, "Instructions Executed")
        except ValueError:  # a second kernel's header or a blank line
            continue
        samples.append(((r.get(address) or "").strip(), (r.get("Source") or "").strip(), n, executed))
    total = sum(s[2] for s in samples) or 1
    samples.sort(key=lambda s: -s[2])
    return [(addr, src, n, n / total, executed) for addr, src, n, executed in samples[:top]]


def epilogue_fields(text: str | None) -> dict:
    """``--epilogue``'s spec as what the call is given ({} for none): ``bias`` (a random [N] vector is made for it)
    and ``activation`` -- ``gemm`` sets the config's fields from them; ValueError for the terms this probe does not
    take (a residual, the gated pairs)."""
    if not text:
        return {}
    spec = parse_spec(text)
    if spec.residual or spec.gated:
        raise ValueError(f"--epilogue {text!r}: this probe takes a bias and an activation (no residual, no gated pairs)")
    return {**({"bias": True} if spec.bias else {}), **({"activation": spec.activation} if spec.activation else {})}


def _launch(shape, phase: str, config: dict | None, layout: str, dtype: str, out_dtype: str, epi: dict) -> None:
    """Three warm-up calls, then one inside cudaProfilerStart/Stop (what ncu --profile-from-start off records)."""
    import torch

    import cute_gemm

    m, n, k = shape.m, shape.n, shape.k
    types = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
    dt = types[dtype]
    a = torch.randn(m, k, device="cuda", dtype=dt) if layout[0] == "n" else torch.randn(k, m, device="cuda", dtype=dt).t()
    b = torch.randn(k, n, device="cuda", dtype=dt) if layout[1] == "n" else torch.randn(n, k, device="cuda", dtype=dt).t()
    kw = {"out_dtype": types[out_dtype], **({"activation": epi["activation"]} if "activation" in epi else {})}
    if epi.get("bias"):
        kw["bias"] = torch.randn(n, device="cuda", dtype=dt)
    for _ in range(3):
        cute_gemm.gemm(a, b, phase=phase, config=config, **kw)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    cute_gemm.gemm(a, b, phase=phase, config=config, **kw)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", required=True, type=shape_arg, help="M,N,K")
    ap.add_argument("--phase", default="best")
    ap.add_argument("--config", help="field=value,... (the phase's config overrides)")
    ap.add_argument("--out", default="out", help="folder for the ncu report, its CSV and the table")
    ap.add_argument("--top", type=int, default=25)
    operand_args(ap)
    ap.add_argument("--epilogue", help="the fused epilogue to profile: a bias and/or an activation (e.g. bias,gelu)")
    ap.add_argument("--launch", action="store_true", help=argparse.SUPPRESS)  # the process ncu profiles
    args = ap.parse_args(argv)
    shape = args.shape
    config = parse_overrides(args.config) if args.config else None  # a bad one refused here, before ncu runs
    try:
        epi = epilogue_fields(args.epilogue)
    except ValueError as exc:
        ap.error(str(exc))
    if args.launch:
        _launch(shape, args.phase, config, args.layout, args.dtype, args.out_dtype, epi)
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"stalls_{shape}" if not epi else out / f"stalls_{shape}_{args.epilogue.replace(',', '+')}"
    me = [sys.executable, str(Path(__file__).resolve()), "--launch", "--shape", f"{shape.m},{shape.n},{shape.k}",
          "--phase", args.phase, "--layout", args.layout, "--dtype", args.dtype, "--out-dtype", args.out_dtype]
    if args.config:
        me += ["--config", args.config]
    if args.epilogue:
        me += ["--epilogue", args.epilogue]
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    subprocess.run(["ncu", "--profile-from-start", "off", "--clock-control", "none", "--cache-control", "all",
                    "--section", "SourceCounters", "--section", "WarpStateStats", "-f", "-o", str(stem), *me],
                   check=True, env=env)
    page = subprocess.run(["ncu", "-i", f"{stem}.ncu-rep", "--page", "source", "--csv", "--print-source", "sass"],
                          check=True, capture_output=True, text=True).stdout
    Path(f"{stem}.csv").write_text(page)
    table = [f"{shape} {args.layout} {args.dtype}->{args.out_dtype} phase={args.phase} config={args.config or '-'} "
             f"epilogue={args.epilogue or '-'}: the {args.top} most-sampled SASS lines",
             "| share | samples | executed | address | SASS |", "|---:|---:|---:|---|---|"]
    table += [f"| {share:.1%} | {n} | {executed} | {addr[-5:]} | `{src}` |"
              for addr, src, n, share, executed in summarize(page, args.top)]
    Path(f"{stem}.md").write_text("\n".join(table) + "\n")
    print("\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
