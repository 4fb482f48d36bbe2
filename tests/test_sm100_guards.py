"""Configs an sm100 phase cannot run are refused at compile time, with the reason (as the sm90 phases do).

Each phase lists the reasons its config cannot be built, or would build a kernel that computes wrong C
(``config_problems``, checked first thing while tracing), and asserts what depends on sizes it computes
(TMEM columns, shared memory, the stream-K mailbox). One test per guard: the config it is there for
fails its compile with that reason; take the guard away and the compile either succeeds (a kernel
that must not exist) or fails with another error, and the test fails. The runtime names the same
reasons before anything compiles (``can_implement``), and ``compile_only`` in one line.
Phases 9-10's guards are ``tests/test_sm100_phase9.py``'s.
"""

import dataclasses

import pytest

from cute_gemm.errors import UnsupportedError
from cute_gemm.runtime import registry
from cute_gemm.runtime.compile import compile_kernel

TMA = ["2a", "2b", "3", "4", "5", "6", "7"]
PAIRS = ["4", "5", "6", "7"]

GUARDS = (
    # every phase of the ladder: the CTA's 128 accumulator rows are TMEM's 128 lanes, an MMA N tcgen05 has,
    # whole MMAs per k-tile
    [(p, {"bm": 64}, "bm is 128") for p in ["0", "1", *TMA]]
    + [(p, {"bn": 272}, "bn is a multiple of 16 in 16..256") for p in ["0", "1", *TMA]]
    + [(p, {"bk": 24}, "bk is a multiple of 16") for p in ["0", "1", *TMA]]
    + [(p, {"stages": 0}, "at least one stage") for p in TMA]
    # the cluster each phase is written for: one CTA (cta_group::1) or a pair (cta_group::2)
    + [(p, {"cluster_m": 2}, "cluster_m=1") for p in ["2a", "2b", "3"]]
    + [(p, {"cluster_m": 1}, "cluster_m=2") for p in PAIRS]
    + [(p, {"epi_warps": 6}, "drains with 4 or 8 warps") for p in TMA]
    + [
        # phases 0-1: the worklog's cp.async kernels
        ("0", {"stages": 3}, "exactly 2 static stages"),
        ("1", {"stages": 5}, "NSTAGES is 2, 3 or 4"),
        ("0", {"warps": 8}, "run 4 warps"),
        ("1", {"warps": 2}, "run 4 warps"),
        ("0", {"bn": 96}, "bn is a multiple of 64"),
        ("1", {"bn": 160}, "bn is a multiple of 64"),
        # phase 5: TMEM holds 2 CTAs per SM, the staging tiles must not make smem the limit
        ("5", {"stages": 4}, "would leave one CTA per SM"),
        # the persistent phases
        ("6", {"acc_stages": 3}, "more than the 512 an SM has"),
        ("7", {"acc_stages": 3}, "more than the 512 an SM has"),
        ("6", {"epi_stages": 3}, "chunks per warp must be a multiple of epi_stages"),
        ("7", {"epi_stages": 3}, "chunks per warp must be a multiple of epi_stages"),
        ("6", {"stages": 12}, "B of smem per CTA"),
        ("7", {"stages": 12}, "B of smem per CTA"),
        ("6", {"sm_count": 1}, "at least one cluster of 2"),
        ("6", {"sm_count": 147}, "multiple of 2 SMs"),
        ("7", {"sm_count": 150}, "multiple of 4 SMs"),
        ("7", {"sm_count": 2}, "at least one cluster of 4"),
        ("6", {"group_m": 0}, "a raster band is at least one pair row"),
        ("7", {"group_m": 0}, "a raster band is at least one pair row"),
        ("6", {"acc_stages": 0}, "at least one accumulator stage"),
        ("7", {"acc_stages": 0}, "at least one accumulator stage"),
        ("6", {"epi_stages": 0}, "at least one C staging buffer"),
        ("7", {"epi_stages": 0}, "at least one C staging buffer"),
        ("7", {"pairs": 3}, "two pairs"),
        ("7", {"epi_warps": 4}, "the mailbox must fit in the A/B ring"),  # one column part: 128 KiB to send
    ]
)


def _id(guard):
    phase, over, _ = guard
    return f"phase{phase}-" + "-".join(f"{k}{v}" for k, v in over.items())


def _kernel(phase, over):
    e = registry.get("sm100", phase)
    return e, e.make(dataclasses.replace(e.default_config(), **over))


@pytest.mark.parametrize("guard", GUARDS, ids=_id)
def test_configs_a_phase_cannot_run_are_refused_at_compile(guard):
    phase, over, message = guard
    _, kern = _kernel(phase, over)
    with pytest.raises(AssertionError, match=message):
        compile_kernel(kern, "sm_100a")


# the guards that need sizes the compile computes (TMEM columns, smem bytes, the mailbox) speak at compile time only
SIZED = ("would leave one CTA per SM", "more than the 512", "chunks per warp", "B of smem", "mailbox must fit")


@pytest.mark.parametrize("guard", [g for g in GUARDS if not any(x in g[2] for x in SIZED)], ids=_id)
def test_the_runtime_names_the_reason_before_compiling(guard):
    """The config-only guards are also ``can_implement``'s reasons: a GPU call is refused with them before
    anything compiles."""
    phase, over, message = guard
    _, kern = _kernel(phase, over)
    assert any(message in why for why in kern.can_implement(1024, 1024, 1024)), message


def test_compile_only_says_why_in_one_line():
    with pytest.raises(UnsupportedError, match=r"sm100:7 with sm_count=150 does not compile for sm_100a: .*"
                                               r"multiple of 4 SMs"):
        __import__("cute_gemm").compile_only("7", {"sm_count": 150}, "sm100")


def test_default_configs_have_no_problems():
    for e in registry.all_entries("sm100"):
        kern = e.make()
        assert getattr(kern, "config_problems", lambda: [])() == [], e.key
