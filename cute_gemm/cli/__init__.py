"""The ``cute-gemm`` command (also ``python3 -m cute_gemm``).

One module per command in ``cute_gemm/cli/commands/``, each with ``DESCRIPTION``, ``add_arguments(parser)``
and ``run(args)`` (the parsed arguments in, the exit code out). ``COMMANDS`` lists them in help order with
their one-line help: a new command is one module and one entry there. Only the module of the command
being run is imported (``cute-gemm --help`` imports none of them). Argument types, file checks and
``UsageError`` are in ``args``; steps several commands share (the GPU, the compile-only report, the
timing options) in ``steps``.

Errors: a bad argument, file or combination of options is ONE line on stderr (``cute-gemm <command>:
...``) and exit 2, found before anything looks for a GPU: argument types reject bad values while parsing,
and commands raise ``UsageError`` for the rest before they start work; ``cute_gemm.InputError`` and
``UnsupportedError`` read the same. Anything unexpected is one line and exit 1 (``--debug`` or
``CUTE_GEMM_DEBUG=1`` show the traceback); a stdout closed early (``cute-gemm list | head -1``) ends
quietly with exit 141, as a shell's SIGPIPE would.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import NamedTuple

from cute_gemm import __version__
from cute_gemm.cli.args import PROG, Parser, UsageError
from cute_gemm.errors import InputError, UnsupportedError, one_line


class Command(NamedTuple):
    name: str
    help: str  # the one line `cute-gemm --help` shows
    module: str  # DESCRIPTION, add_arguments(parser), run(args); imported only when the command runs


# The commands, in help order.
COMMANDS = (
    Command("list", "phases per arch: what each adds; --fields: config fields and allowed values",
            "cute_gemm.cli.commands.list"),
    Command("inspect", "compile-only report (no GPU needed): instruction census + resources",
            "cute_gemm.cli.commands.inspect"),
    Command("run", "one phase on the GPU: check vs cuBLASLt, time beside cuBLAS/cuBLASLt",
            "cute_gemm.cli.commands.run"),
    Command("bench", "the main job: every phase checked then timed beside its peers, JSON + plots",
            "cute_gemm.cli.commands.bench"),
    Command("tune", "time best's candidates per shape on this GPU; best runs the fastest from then on",
            "cute_gemm.cli.commands.tune"),
    Command("compare", "two phases side by side: config, generated code, timings",
            "cute_gemm.cli.commands.compare"),
    Command("plot", "PNG plots from a bench JSON: the ladder, the worklog side by side, the sweep",
            "cute_gemm.cli.commands.plot"),
    Command("profile", "Nsight Compute counters per phase: where the cycles go",
            "cute_gemm.cli.commands.profile"),
    Command("report", "one HTML file to step through the ladders in a browser: diffs, census, numbers",
            "cute_gemm.cli.commands.report"),
    Command("selftest", "on an sm90/sm100 GPU: the ladder and best's classes checked, JSON + markdown report",
            "cute_gemm.cli.commands.selftest"),
)

DESCRIPTION = """\
cute-gemm: a GEMM worklog's phases (a serialized tensor-core loop -> beating cuBLAS) as CuTe DSL kernels.

Problem: C[M,N] fp32 = A[M,K] fp16 row-major @ B[K,N] fp16 row-major (N-major), fp32 accumulate; phases 2a
and later also take A and B column-major, bf16 inputs and fp16/bf16 C (bench, run, compare, inspect:
--layout, --dtype, --out-dtype). Shapes are M,N,K: positive integers, N and K multiples of 8 (16-byte rows for
cp.async/TMA); the early phases also need whole tiles (`cute-gemm list` shows each phase's tile).
Two ladders share this tool: sm100 (Blackwell tcgen05, compile-verified here) and sm90 (Hopper wgmma,
run and measured on an H200). Registered phases ('2' means 2b):
{phase_ids}

A newcomer's three commands:
  cute-gemm list                     what each phase adds, per arch
  cute-gemm bench                    check + time every phase beside cuBLAS/cuBLASLt and other peers
                                     (GPU), or the compile-only report (no GPU); then `cute-gemm plot`
  cute-gemm compare 2a 2b            two phases side by side: config, generated code, timings

Errors are one line; --debug (or CUTE_GEMM_DEBUG=1) shows the traceback.
"""


def _named(argv) -> str | None:
    """The command an argument list names: its first word that is not an option (the top level's options,
    --help, --version and --debug, take no value)."""
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(argv=()) -> Parser:
    """The parser; of the commands only the one ``argv`` names gets its arguments (and its module imported),
    the others stand as a name and a line of help."""
    ap = Parser(prog=PROG, description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")
    named = _named(argv)
    for command in COMMANDS:
        if command.name != named:
            sub.add_parser(command.name, help=command.help)
            continue
        module = importlib.import_module(command.module)
        p = sub.add_parser(command.name, help=command.help, description=module.DESCRIPTION)
        module.add_arguments(p)
        p.set_defaults(fn=module.run)
    for p in (ap, *sub.choices.values()):
        p.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    return ap


def _quiet_stdout():
    """After stdout's reader went away: point stdout at /dev/null so the exit flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv or os.environ.get("CUTE_GEMM_DEBUG", "") not in ("", "0")
    prog = PROG
    try:
        ap = build_parser(argv)
        args = ap.parse_args(argv)
        if not getattr(args, "fn", None):
            ap.print_help()
            return 0
        prog = f"{PROG} {args.cmd}"
        rc = args.fn(args)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at interpreter exit
        return rc
    except SystemExit as exc:  # argparse: --help, --version, or a one-line usage error already printed
        return exc.code if isinstance(exc.code, int) else 2
    except (UsageError, InputError, UnsupportedError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        _quiet_stdout()
        return 141
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if debug:
            raise
        print(f"{prog}: unexpected {one_line(exc)} (--debug or CUTE_GEMM_DEBUG=1 shows the traceback)",
              file=sys.stderr)
        return 1


__all__ = ["COMMANDS", "Command", "UsageError", "build_parser", "main"]
