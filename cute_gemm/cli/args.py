"""What the commands share about their arguments: the parser class, the argument types, the checks of
files and directories, and ``UsageError``.

An argument type rejects a bad value while parsing (one line, exit 2, before anything looks for a GPU);
a command raises ``UsageError`` for what only a combination of options or a file can tell.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile

from cute_gemm.runtime import arch as _arch
from cute_gemm.runtime.problem import Problem

PROG = "cute-gemm"


class UsageError(Exception):
    """A bad argument, file or combination of options: one line on stderr, exit 2."""


def _phase_ids(inline: bool) -> str:
    """The registered phase ids per ladder, from the kernel files' names (loading the kernels would import
    the DSL, far too slow for a help text)."""
    from cute_gemm.runtime import registry

    per_arch = [(fam, " ".join(registry.phase_ids(fam))) for fam in _arch.TARGETS]
    if inline:
        return "; ".join(f"{fam}: {ids}" for fam, ids in per_arch)
    return "\n".join(f"  {fam + ':':<7} {ids}" for fam, ids in per_arch)


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors, and the phase ids filled into help texts when shown
    (``{phase_ids}``, ``{phase_ids_inline}``). A value that starts with '-' and a digit (``--shape -1,4096,4096``,
    ``--rounds -3``, ``--sustained -1e3``) is a value, not an option, so its type says what is wrong with it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-\.?\d")  # argparse's: only '-5' or '-.5' whole

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see `{self.prog} --help`)\n")

    def format_help(self):
        text = super().format_help()
        if "{phase_ids" in text:
            text = text.replace("{phase_ids}", _phase_ids(False)).replace("{phase_ids_inline}", _phase_ids(True))
        return text


# ------------------------------------------------------------------------------------ argument types
def argtype(fn):
    """An argparse type from a parser that raises ValueError/LookupError with a clear message."""

    def parse(text):
        try:
            return fn(text)
        except (ValueError, LookupError) as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = fn.__name__
    return parse


@argtype
def shape_arg(text: str) -> Problem:
    """'M,N,K' (or MxNxK, or one number for a cube): positive integers, N and K multiples of 8."""
    p = Problem.parse(text)
    if p.n % 8 or p.k % 8:
        raise ValueError(f"shape {text!r}: N and K must be multiples of 8 (each row of A and B is loaded in "
                         f"16-byte pieces), got N={p.n}, K={p.k}")
    return p


@argtype
def arch_arg(text: str) -> str:
    """'sm90' / 'sm100' / 'sm_100a' ... -> the family name."""
    return _arch.family(text)


@argtype
def target_arg(text: str) -> str:
    """'sm_90a' / 'sm100' / 'sm_103a' ... -> the exact target."""
    return _arch.target(text)


@argtype
def phase_arg(text: str) -> str:
    from cute_gemm.runtime import registry

    return registry.parse_phase(text)


@argtype
def phase_list_arg(text: str) -> list[str]:
    from cute_gemm.runtime import registry

    phases = registry.parse_phase_list(text)
    if not phases:
        raise ValueError(f"no phase in {text!r}")
    return phases


@argtype
def peers_arg(text: str) -> list[str]:
    from cute_gemm.measure.peers import parse_peer_list

    return parse_peer_list(text)


def _at_least_one(text: str, what: str, unit: str = "") -> int:
    """A whole number >= 1, or ValueError naming ``what`` (and its ``unit``, e.g. 'second')."""
    try:
        n = int(text)
    except ValueError:
        raise ValueError(f"{what} must be a whole number{f' of {unit}s' if unit else ''}, got {text!r}") from None
    if n < 1:
        raise ValueError(f"{what} must be at least 1{f' {unit}' if unit else ''}, got {n}")
    return n


@argtype
def rounds_arg(text: str) -> int:
    return _at_least_one(text, "rounds")


@argtype
def timeout_arg(text: str) -> int:
    """Whole seconds, at least 1."""
    return _at_least_one(text, "the timeout", "second")


@argtype
def seconds_arg(text: str) -> float:
    try:
        s = float(text)
    except ValueError:
        raise ValueError(f"seconds must be a number, got {text!r}") from None
    if not s >= 0 or s == float("inf"):
        raise ValueError(f"seconds must be a finite number >= 0, got {text}")
    return s


# ---------------------------------------------------------------------------------------------- files
def writable_file(path: str, option: str):
    """UsageError unless ``path`` can be written as a file (its directory is created if missing): tried by
    opening it for appending (a new file is removed again), so a command finds out before its work, not after."""
    if os.path.isdir(path):
        raise UsageError(f"{option} {path} is a directory; give a file name")
    writable_dir(os.path.dirname(path) or ".", option)
    existed = os.path.exists(path)
    try:
        with open(path, "a"):
            pass
    except OSError as exc:
        raise UsageError(f"{option}: cannot write {path} ({exc.strerror or exc})") from None
    if not existed:
        os.remove(path)


def writable_dir(path: str, option: str):
    """UsageError unless ``path`` is (or can be created as) a directory we can write into: a file is made and
    removed in it (permission bits do not tell for root, nor on a read-only or virtual file system)."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{option}: cannot create directory {path} ({exc.strerror or exc})") from None
    try:
        tempfile.TemporaryFile(dir=path).close()
    except OSError as exc:
        raise UsageError(f"{option}: directory {path} is not writable ({exc.strerror or exc})") from None


def readable_file(path: str) -> str:
    if not os.path.exists(path):
        raise UsageError(f"{path}: no such file")
    if os.path.isdir(path):
        raise UsageError(f"{path} is a directory; give a JSON file written by `cute-gemm bench`")
    return path


def operand_args(ap) -> None:
    """``--layout``, ``--dtype`` and ``--out-dtype``: the operands of a bench script's calls (the worklog's by
    default: nn, fp16 in, fp32 C), as ``operands_of`` reads them."""
    ap.add_argument("--layout", default="nn", choices=("nn", "nt", "tn", "tt"),
                    help="A and B majors in BLAS letters: n row-major A / row-major B, t their transposes (default nn)")
    ap.add_argument("--dtype", default="fp16", choices=("fp16", "bf16"), help="A and B element type (default fp16)")
    ap.add_argument("--out-dtype", default="fp32", choices=("fp32", "fp16", "bf16"), help="C's type (default fp32)")


def operands_of(args):
    """The ``phases.operands.Operands`` that ``operand_args``' options name."""
    from phases.operands import Operands

    return Operands.of(args.layout, args.dtype, args.out_dtype)
