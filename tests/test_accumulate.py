"""``accumulate`` (C += A @ B) on sm90 phases 5-8, without a GPU: the compiled code and the PTX machine.

With ``accumulate=True`` in its config a TMA-store phase stores each C slab with the TMA's reduce-add
(``cp.reduce.async.bulk.tensor...add``) instead of the plain bulk tensor store; nothing else of the kernel
changes, and the default config's code is the one it always was. The machine runs the accumulate config on a
ragged problem and checks that every element of C is added to exactly once, with exactly its sum over K.
"""

import dataclasses
import re

import pytest

from cute_gemm.runtime import registry
from phases.operands import Operands

PHASES = ["5", "6", "7", "8"]
REDUCE_ADD = re.compile(r"cp\.reduce\.async\.bulk\.tensor\.2d\.global\.shared::cta\.add\.")
PLAIN_STORE = re.compile(r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.")


def accumulating(phase: str, **over):
    return dataclasses.replace(registry.get("sm90", phase).default_config(), accumulate=True, **over)


@pytest.mark.parametrize("ops", [None, Operands.of("tn", "bf16", "bf16")], ids=["fp32-C", "bf16-C"])
@pytest.mark.parametrize("phase", PHASES)
def test_accumulate_swaps_the_store_for_the_reduce_add(phase, ops):
    from sm90_compiled import compiled

    _, ptx, res = compiled(f"sm90:{phase}", ops, accumulating(phase))
    assert REDUCE_ADD.search(ptx), f"phase {phase}: no cp.reduce.async.bulk.tensor ... .add in the PTX"
    assert not PLAIN_STORE.search(ptx), f"phase {phase}: a plain TMA store of C is left"
    assert res["spill_stores"] == 0
    _, default_ptx, _ = compiled(f"sm90:{phase}", ops)
    assert PLAIN_STORE.search(default_ptx) and not REDUCE_ADD.search(default_ptx), \
        f"phase {phase}: the default config stores C (no reduce-add)"


def test_only_phases_5_to_8_have_the_field():
    have = {e.phase for e in registry.all_entries("sm90") if hasattr(e.default_config(), "accumulate")}
    assert have == set(PHASES)
    assert all(not e.default_config().accumulate for e in registry.all_entries("sm90") if e.phase in have)


def test_accumulate_is_a_switch_of_the_config():
    """Field overrides as gemm(config=) and compile_only take them; a new compile key (the config)."""
    e = registry.get("sm90", "6")
    assert e.configured("accumulate=true").accumulate is True
    assert e.configured({"accumulate": 1}) == accumulating("6")
    assert accumulating("6") != e.default_config()


def test_reduced_adds_refuses_a_plain_store():
    from sm90kit.harness90 import reduced_adds
    from sm90kit.machine90 import ReduceAdd

    vals, errors = reduced_adds({(0, 0): [ReduceAdd("x")], (0, 1): ["y"]}, [])
    assert vals == {(0, 0): ["x"], (0, 1): ["y"]}
    assert len(errors) == 1 and "(0, 1)" in errors[0]


# the machine runs: tests/test_sm90_sim.py's cases of these phases (ragged; 7 splits a tile along K)
SIM = {
    "5": (200, 120, 136, {"bn": 128}),
    "6": (300, 120, 72, {"bn": 128, "stages": 2, "sm_count": 2}),
    "7": (200, 264, 200, {"bn": 128, "sm_count": 4}),
    "8": (520, 120, 72, {"bn": 128, "sm_count": 2}),
}


@pytest.mark.parametrize("phase", PHASES, ids=lambda p: f"phase{p}")
def test_machine_adds_each_element_once(phase):
    """Every element of C gets one TMA reduce-add of exactly its row of A times its column of B (the
    harness's ``check_c`` on the added values); a plain store would be reported as an overwrite."""
    from sm90kit.harness90 import simulate90

    m, n, k, over = SIM[phase]
    res = simulate90(f"sm90:{phase}", m, n, k, accumulating(phase, **over))
    assert res.ok, res.report()
