"""``cute-gemm selftest``: on an sm90 or sm100 GPU, every phase of its ladder and every config class
``phase="best"`` can pick checked against cuBLASLt and float64 on ragged shapes (batches of checks in child
processes under a timeout), a short bench, and one JSON + markdown report to share."""

from __future__ import annotations

from cute_gemm.cli.args import UsageError, _at_least_one, arch_arg, argtype, phase_list_arg, timeout_arg, writable_file


@argtype
def jobs_arg(text: str) -> int:
    return _at_least_one(text, "--jobs")


def run(args) -> int:
    from cute_gemm.measure import environment, selftest

    arch = args.arch
    if arch is None and not args.list:
        arch = selftest.gpu_description()[0]  # None: selftest.run says what this machine has
    try:
        selftest.cases(args.phases, arch=arch or "sm100", best=False)  # an unknown phase: one line, before anything
    except LookupError as exc:
        raise UsageError(str(exc)) from None
    if args.list:
        selftest.list_cases(args.phases, arch=arch or selftest.gpu_description()[0] or "sm100")
        return 0
    writable_file(args.out, "--out")  # before the checks (minutes on the GPU), not after them
    gpu_check = selftest.gpu_description
    if args.arch:  # the ladder asked for must be the GPU's
        def gpu_check():
            found, gpu = selftest.gpu_description()
            if found != args.arch:
                return None, f"{gpu}, not an {args.arch} GPU" if found else gpu
            return found, gpu
    return selftest.run(args.phases, args.out, args.timeout, environment.command(), gpu_check=gpu_check,
                        jobs=args.jobs, bench=not args.no_bench)


DESCRIPTION = ("On an sm90 (H100/H200) or sm100 (B200/B300) GPU: check every phase of its ladder "
               "and every config class phase=\"best\" can pick there (each split, tile family, "
               "multicast, swap, C dtype) against cuBLASLt and float64 on ragged shapes, in "
               "child processes under a timeout (a hang is reported, not waited on), then a short "
               "bench of best against cuBLASLt; write a JSON report and the same as markdown beside "
               "it (.md). Without such a GPU it says so in one line; --list needs none.")


def add_arguments(p):
    p.add_argument("--out", default="selftest.json", help="JSON report; the markdown goes beside it "
                   "(default %(default)s)")
    p.add_argument("--arch", type=arch_arg, help="the ladder (default: the GPU's; sm100 for --list "
                   "without a GPU)")
    p.add_argument("--phases", type=phase_list_arg, help="phase list, e.g. 0-3,7 (default: every phase of the "
                   "ladder; best's classes of those phases only)")
    p.add_argument("--timeout", type=timeout_arg, default=300,
                   help="seconds per child process (a batch of checks) before it counts as a hang "
                        "(default %(default)s)")
    p.add_argument("--jobs", type=jobs_arg, default=4, help="child processes at once (default %(default)s)")
    p.add_argument("--no-bench", action="store_true", help="skip the short bench after the checks")
    p.add_argument("--list", action="store_true", help="list the checks and exit (no GPU needed)")
