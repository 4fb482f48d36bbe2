"""``cute-gemm selftest``: on a Blackwell GPU, every sm100 phase checked on aligned and ragged shapes, each
check in its own process under a timeout, and a JSON report to share."""

from __future__ import annotations

from cute_gemm.cli.args import UsageError, phase_list_arg, timeout_arg, writable_file


def run(args) -> int:
    from cute_gemm.measure import environment, selftest

    try:
        selftest.cases(args.phases)  # a phase the sm100 ladder does not have: one line, before anything runs
    except LookupError as exc:
        raise UsageError(str(exc)) from None
    if args.list:
        selftest.list_cases(args.phases)
        return 0
    writable_file(args.out, "--out")  # before the checks (minutes on the GPU), not after them
    return selftest.run(args.phases, args.out, args.timeout, environment.command())


DESCRIPTION = ("For a Blackwell (sm100) owner: check every sm100 phase on aligned, ragged and "
               "stream-K shapes against cuBLASLt and float64, each check in its own process under "
               "a timeout (a hang is reported, not waited on), and write a JSON report (GPU, "
               "driver, versions, per phase and shape: pass / fail / hang / error / skip). "
               "Without an sm100 GPU it says so in one line.")


def add_arguments(p):
    p.add_argument("--out", default="selftest-sm100.json", help="JSON report (default %(default)s)")
    p.add_argument("--phases", type=phase_list_arg, help="phase list, e.g. 0-3,7 (default: every sm100 phase)")
    p.add_argument("--timeout", type=timeout_arg, default=300,
                   help="seconds per check before it counts as a hang (default %(default)s)")
    p.add_argument("--list", action="store_true", help="list the checks and exit (no GPU needed)")
