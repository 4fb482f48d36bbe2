"""Every CLI command with a bad value of each of its options: one line on stderr naming what is wrong, exit 2,
no traceback -- and before anything compiles (a compile here fails the case) or runs for long.

``CASES`` holds (command, option, bad value, what the line must say); ``test_every_option_has_a_bad_value``
holds ``CASES`` against the parsers, so an option added to a command without a case here fails. Flags (no
value) are exempt. Run in-process (``cli.main``), so the whole table costs a few seconds."""

import argparse
import os

import pytest

from cute_gemm import cli
from cute_gemm.measure import results
from synthetic_doc import make_doc

# the arguments a command needs besides the one under test ({tmp}: a directory the fixture fills)
BASE = {
    "list": [],
    "inspect": [],
    "run": ["--phase", "5"],
    "bench": [],
    "tune": ["--shapes", "256,4096,4096"],
    "compare": ["2a", "2b"],
    "plot": ["{tmp}/run.json"],
    "profile": [],
    "report": ["--out", "{tmp}/report.html", "--no-census"],
    "selftest": [],
}
UNWRITABLE = "/proc/cute-gemm-nope/x.json"  # a directory nobody can create, not even root

# (command, option, bad value, what the one line must contain). A positional is named by its dest.
CASES = [
    ("list", "--arch", "sm80", "unknown arch 'sm80'"),
    ("inspect", "--arch", "sm70", "unknown arch 'sm70'"),
    ("inspect", "--phase", "12", "unknown phase '12'"),
    ("inspect", "--target", "sm_80", "unknown arch 'sm_80'"),
    ("inspect", "--shape", "-1,4096,4096", "positive"),
    ("inspect", "--shape", "4096,4100,4096", "multiples of 8"),
    ("inspect", "--config", "8:bn=100", "bn=100: bn is a multiple of"),
    ("inspect", "--config", "8:bn=-64", "bn=-64: a positive integer"),
    ("inspect", "--config", "7:sm_count=0", "sm_count=0: a positive integer"),
    ("inspect", "--config", "9:split_k=9", "split_k is 1..8"),
    ("inspect", "--config", "6:epi_stages=1", "epi_stages >= 2"),
    ("inspect", "--config", "8:tile=3", "'tile' is not a field"),
    ("inspect", "--layout", "nx", "invalid choice: 'nx'"),
    ("inspect", "--dtype", "fp8", "invalid choice: 'fp8'"),
    ("inspect", "--out-dtype", "int8", "invalid choice: 'int8'"),
    ("inspect", "--dump", "/proc/cute-gemm-nope", "--dump"),
    ("run", "--phase", "12", "unknown phase '12'"),
    ("run", "--arch", "sm80", "unknown arch 'sm80'"),
    ("run", "--shape", "-1,4096,4096", "positive"),
    ("run", "--data", "zeros", "invalid choice: 'zeros'"),
    ("run", "--rounds", "-3", "at least 1, got -3"),
    ("run", "--sustained", "-1", ">= 0"),
    ("run", "--peers", "mkl", "unknown peer 'mkl'"),
    ("run", "--layout", "nx", "invalid choice: 'nx'"),
    ("run", "--dtype", "fp32", "invalid choice: 'fp32'"),
    ("run", "--out-dtype", "int8", "invalid choice: 'int8'"),
    ("run", "--json", UNWRITABLE, "--json"),
    ("bench", "--arch", "sm80", "unknown arch 'sm80'"),
    ("bench", "--phases", "0,12", "unknown phase '12'"),
    ("bench", "--shapes", "-1,4096,4096", "positive"),
    ("bench", "--set", "huge", "huge"),
    ("bench", "--data", "zeros", "invalid choice: 'zeros'"),
    ("bench", "--rounds", "1.5", "whole number"),
    ("bench", "--sustained", "-1e3", ">= 0"),
    ("bench", "--peers", "mkl", "unknown peer 'mkl'"),
    ("bench", "--layout", "nx", "invalid choice: 'nx'"),
    ("bench", "--dtype", "fp32", "invalid choice: 'fp32'"),
    ("bench", "--out-dtype", "int8", "invalid choice: 'int8'"),
    ("bench", "--config", "8:bn=100", "bn=100: bn is a multiple of"),
    ("bench", "--config", "8:bn=-64", "bn=-64: a positive integer"),
    ("bench", "--epilogue", "bias,gelu,silu", "two activations"),
    ("bench", "--out", UNWRITABLE, "--out"),
    ("tune", "--shapes", "-1,4096,4096", "positive"),
    ("tune", "--set", "huge", "huge"),
    ("tune", "--top", "0", "at least 1"),
    ("tune", "--rounds", "0", "at least 1"),
    ("tune", "--sustained", "-1", ">= 0"),
    ("tune", "--peers", "mkl", "unknown peer 'mkl'"),
    ("tune", "--layout", "nx", "invalid choice: 'nx'"),
    ("tune", "--dtype", "fp32", "invalid choice: 'fp32'"),
    ("tune", "--out-dtype", "int8", "invalid choice: 'int8'"),
    ("tune", "--out", UNWRITABLE, "--out"),
    ("compare", "a", "12", "unknown phase '12'"),
    ("compare", "b", "sm80:5", "unknown arch 'sm80'"),
    ("compare", "--arch", "sm80", "unknown arch 'sm80'"),
    ("compare", "--shape", "-5", "positive"),
    ("compare", "--data", "zeros", "invalid choice: 'zeros'"),
    ("compare", "--rounds", "0", "at least 1"),
    ("compare", "--sustained", "inf", "finite"),
    ("compare", "--peers", "mkl", "unknown peer 'mkl'"),
    ("compare", "--layout", "nx", "invalid choice: 'nx'"),
    ("compare", "--dtype", "fp32", "invalid choice: 'fp32'"),
    ("compare", "--out-dtype", "int8", "invalid choice: 'int8'"),
    ("plot", "results", "{tmp}/missing.json", "no such file"),
    ("plot", "--out", "/proc/cute-gemm-nope/x", "--out"),
    ("profile", "--phase", "12", "unknown phase '12'"),
    ("profile", "--shape", "-1,4096,4096", "positive"),
    ("profile", "--peers", "rocblas", "unknown peer 'rocblas'"),
    ("profile", "--json", UNWRITABLE, "--json"),
    ("profile", "--from", "{tmp}/missing.json", "missing.json"),
    ("profile", "--warmup", "-1", "--warmup must be 0 or more"),
    ("profile", "--timeout", "0", "--timeout must be a finite number of seconds > 0"),
    ("report", "--arch", "sm80", "unknown arch 'sm80'"),
    ("report", "--results", "{tmp}/missing.json", "no such file"),
    ("report", "--out", "/proc/cute-gemm-nope/r.html", "--out"),
    ("report", "--out", "{tmp}/report.txt", "ending in .html"),
    ("selftest", "--out", UNWRITABLE, "--out"),
    ("selftest", "--phases", "bogus", "unknown phase 'bogus'"),
    ("selftest", "--timeout", "-5", "at least 1 second, got -5"),
    ("selftest", "--arch", "sm80", "unknown arch 'sm80'"),
    ("selftest", "--jobs", "0", "--jobs must be at least 1, got 0"),
]


def _argv(command: str, option: str, value: str) -> list[str]:
    """The command's base arguments with ``option`` set to ``value`` (a positional replaced in place)."""
    base = list(BASE[command])
    if option.startswith("--"):
        if option in base:  # the base gives it already: the bad value replaces the good one
            base[base.index(option) + 1] = value
            return [command, *base]
        return [command, *base, option, value]
    positionals = {"compare": ["a", "b"], "plot": ["results"]}[command]
    base[positionals.index(option)] = value
    return [command, *base]


def _value_options(command: str) -> set[str]:
    """The options (and positionals) of ``command`` that take a value."""
    sub = cli.build_parser([command])._subparsers._group_actions[0].choices[command]
    out = set()
    for a in sub._actions:
        if isinstance(a, (argparse._HelpAction, argparse._VersionAction)) or a.nargs == 0:
            continue
        out.add(a.option_strings[0] if a.option_strings else a.dest)
    return out


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad_values")
    results.save(make_doc(), str(d / "run.json"))
    return d


@pytest.fixture
def no_compile(monkeypatch):
    """A compile during a bad-value case is a failure: the value must be refused before."""
    from cute_gemm.runtime import compile as compile_mod
    from cute_gemm.runtime import plan

    def refuse(*args, **kwargs):
        raise AssertionError("compiled before refusing the bad value")

    monkeypatch.setattr(compile_mod, "compile_kernel", refuse)
    monkeypatch.setattr(plan, "compile_plan", refuse)


def test_every_command_is_covered():
    assert set(BASE) == {c.name for c in cli.COMMANDS}


@pytest.mark.parametrize("command", list(BASE))
def test_every_option_has_a_bad_value(command):
    covered = {option for cmd, option, _, _ in CASES if cmd == command}
    assert _value_options(command) <= covered, f"{command}: no bad-value case for {_value_options(command) - covered}"


@pytest.mark.parametrize("command,option,value,expect", CASES, ids=[f"{c} {o} {v}" for c, o, v, _ in CASES])
def test_a_bad_value_is_one_line_before_any_compile(command, option, value, expect, tmp, no_compile, capsys,
                                                    monkeypatch):
    monkeypatch.chdir(tmp)  # a command that would write a default file writes it here
    argv = [a.replace("{tmp}", str(tmp)) for a in _argv(command, option, value)]
    rc = cli.main(argv)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert rc == 2, (argv, rc, err)
    assert len(lines) == 1, err
    assert lines[0].startswith(f"cute-gemm {command}") and expect.replace("{tmp}", str(tmp)) in lines[0], lines[0]
    assert "Traceback" not in out + err
    assert not os.path.exists(os.path.join(str(tmp), "x.json"))
