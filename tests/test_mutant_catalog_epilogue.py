"""The fused epilogue's mutants (tests/mutants/catalog_epilogue.py), without running them: every planted bug
still applies to the current code exactly once, touches the epilogue's code only, selects machine runs that
exist, and the catalog covers the bug classes it promises. Running them: ``python -m tests.mutants --ladder
epilogue`` (the CI subset: ``--fast``)."""

import os

import pytest
from _pytest.mark.expression import Expression

from mutants import __main__ as cli
from mutants.catalog_epilogue import MUTANTS, PRUNS, PSIM, RUNS, SIM
from mutants.catalog_sm90 import substitutions
from mutants.runner import REPO

import test_epilogue_sim
import test_epilogue_sim_persistent

REQUIRED_KINDS = ["activation constant", "activation formula", "activation branch", "term dropped", "term order",
                  "epilogue coordinates", "epilogue vs the reduce", "gated pairs"]
EPILOGUE_FILES = ("phases/epilogue.py", "phases/sm90/phase9_split_k.py", "phases/sm100/phase9_split_k.py",
                  "phases/sm90/phase11_fused_epilogue.py", "phases/sm100/phase11_fused_epilogue.py",
                  # the persistent phases' epilogue (tests/test_epilogue_sim_persistent.py's runs)
                  "phases/sm90/common_tma.py", "phases/sm100/common_tma.py", "phases/sm90/phase6_persistent.py",
                  "phases/sm100/phase6_persistent.py", "phases/sm90/phase7_stream_k.py", "phases/sm90/phase8_pingpong.py")
CASE_IDS = {SIM: [f"{RUNS}[{test_epilogue_sim.case_id(c)}]" for c in test_epilogue_sim.CASES],
            PSIM: [f"{PRUNS}[{test_epilogue_sim_persistent.case_id(c)}]" for c in test_epilogue_sim_persistent.CASES]}


def selected(checks: tuple) -> list:
    """The machine runs a mutant's ``-k`` expression selects (pytest's own keyword matching on the ids)."""
    assert checks[0] in CASE_IDS and checks[1] == "-k"
    expr = Expression.compile(checks[2])
    return [i for i in CASE_IDS[checks[0]] if expr.evaluate(lambda word, i=i: word in i)]


@pytest.mark.parametrize("m", MUTANTS, ids=lambda m: m.id)
def test_each_epilogue_mutant_applies_exactly_once(m):
    assert m.path in EPILOGUE_FILES and m.ladder == "epilogue"
    with open(os.path.join(REPO, m.path)) as f:
        text = f.read()
    for old, new in substitutions(m):
        assert old and old != new
        assert text.count(old) == 1, f"{m.id}: {old!r} occurs {text.count(old)} times in {m.path}"
        text = text.replace(old, new)
    assert selected(m.checks), f"{m.id}: {m.checks[2]!r} selects no machine run"
    if m.fast:
        assert 1 <= len(selected(m.fast_checks)) <= 3, m.fast_checks


def test_epilogue_catalog_covers_the_bug_classes():
    kinds = {m.kind for m in MUTANTS}
    assert set(REQUIRED_KINDS) <= kinds, set(REQUIRED_KINDS) - kinds
    assert len(MUTANTS) >= 20 and len({m.id for m in MUTANTS}) == len(MUTANTS)
    assert {m.path for m in MUTANTS} == set(EPILOGUE_FILES)
    fast = [m for m in MUTANTS if m.fast]
    assert 2 <= len(fast) <= 4, "the CI subset of all ladders must stay a few minutes"


def test_the_ladder_is_selectable():
    args = cli.parse_args(["--ladder", "epilogue", "--fast"])
    assert {m.id for m in cli.select(args)} == {m.id for m in MUTANTS if m.fast}
    assert {m.id for m in MUTANTS} <= {m.id for m in cli.select(cli.parse_args([]))}
    assert cli.parse_args([]).min_kill_epilogue == 0.9
    md = cli.markdown(cli.summarize([]), [], fast=False, ladder="epilogue")
    assert md.startswith("# fused-epilogue mutants")
