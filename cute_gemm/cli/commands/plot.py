"""``cute-gemm plot RESULT.json``: the PNG figures of a bench result."""

from __future__ import annotations

import os

from cute_gemm.cli.args import UsageError, readable_file, writable_dir


def run(args) -> int:
    from cute_gemm.measure import results

    path = readable_file(args.results)
    try:
        doc = results.load(path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot read {path} ({exc.strerror or exc})") from None
    if not any(r.get("timing") for r in doc["results"]):
        raise UsageError(f"{path} has no timed results to plot")
    prefix = args.out or os.path.splitext(path)[0]
    if args.out and (args.out.endswith(("/", os.sep)) or os.path.isdir(args.out)):  # a directory: the JSON's name in it
        prefix = os.path.join(args.out, os.path.splitext(os.path.basename(path))[0])
    writable_dir(os.path.dirname(prefix) or ".", "--out")
    try:
        from cute_gemm.report.plot import plot_all
    except ImportError:
        raise UsageError("matplotlib is not installed (pip install 'cute-gemm[plot]')") from None
    for out in plot_all(doc, prefix):
        print(f"wrote {out}")
    return 0


DESCRIPTION = ("Draw, from a bench-v2 result: the worklog's Figure 1 for our data (a bar per "
               "phase at each headline shape with its gain over the phase before it and its SM clock, "
               "the peers as lines, the dense peak named in the title), each phase's % of the vendor "
               "library beside the worklog's B300 numbers (where a phase is on both sides), and, when "
               "the result has a sweep, TFLOP/s against size, and where it has the run's copy bandwidth, a "
               "roofline: each kernel at each shape under min(peak, copy bandwidth x arithmetic intensity).")


def add_arguments(p):
    p.add_argument("results", help="a JSON file written by `cute-gemm bench`")
    p.add_argument("--out", help="output prefix, or a directory (ending in /) to write <json name>_*.png into "
                                 "(default: the JSON path without .json, i.e. beside it)")
