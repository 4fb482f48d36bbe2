"""``cute-gemm report``: the ladders as one self-contained HTML file, a page per step, to step through in a
browser (no GPU, no server, no network)."""

from __future__ import annotations

import sys

from cute_gemm.cli.args import UsageError, arch_arg, readable_file, writable_file
from cute_gemm.runtime import arch as _arch


def run(args) -> int:
    writable_file(args.out, "--out")
    if not args.out.endswith((".html", ".htm")):
        raise UsageError(f"--out {args.out}: give a file name ending in .html (the report is one HTML file)")
    given = [readable_file(p) for p in args.results or ()]  # a bad file is named before anything else
    try:
        import pygments  # noqa: F401
    except ImportError:
        raise UsageError("pygments is not installed (pip install 'cute-gemm[report]')") from None
    from cute_gemm.report import html

    if given:
        paths, missing = given, []
    else:
        paths, missing = html.default_results()
        for m in missing:
            print(f"note: the default result file {m} is not in this checkout", file=sys.stderr)
    try:
        inputs = html.load_inputs(paths)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot read {exc.filename or ''} ({exc.strerror or exc})") from None
    inputs.missing = missing
    arches = [args.arch] if args.arch else list(_arch.TARGETS)
    progress = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    text, pages = html.build(arches, inputs, census=not args.no_census, progress=progress)
    size = html.write(args.out, text)
    print(f"wrote {args.out} ({size / 2**20:.2f} MiB, {len(pages)} pages: the summary and "
          f"{len(pages) - 1} steps of {' and '.join(arches)}); results from "
          f"{', '.join(d.path for d in inputs.bench + inputs.profiles) or 'no file'}")
    if size > html.MAX_BYTES:
        print(f"note: the report is larger than the {html.MAX_BYTES / 2**20:.0f} MiB it is meant to stay under",
              file=sys.stderr)
    return 0


DESCRIPTION = ("Write the ladders as one self-contained HTML file: a page per step (phase N-1 -> N) with what "
               "the step adds and why, the source diff side by side, what changed in the generated code (the "
               "compile-only census of `cute-gemm compare`), the measured numbers of both phases and the Nsight "
               "Compute counters that moved most, the worklog's B300 number beside ours; a summary page with "
               "the plots and every phase; a picker to diff any two phases. Open it in a browser: <- and -> step "
               "through the pages, each has a permalink (report.html#sm90/5-6). No GPU needed (sm100 pages are "
               "compile-verified only); every phase is compiled once for its census (~1 s each).")


def add_arguments(p):
    p.add_argument("--arch", type=arch_arg, help="one ladder only: sm90 or sm100 (default: both)")
    p.add_argument("--results", nargs="+", metavar="FILE",
                   help="bench results (`cute-gemm bench`) and Nsight Compute profiles (`cute-gemm profile --json`) "
                        "to show; for a phase and shape the first file that has it is shown (default: the committed "
                        "H200 sweep and profiles in bench/results/)")
    p.add_argument("--out", required=True, help="the HTML file to write, e.g. report.html")
    p.add_argument("--no-census", action="store_true",
                   help="skip compiling the phases: no generated-code census on the pages (faster)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
