"""Docstrings that teach, not records (issue 49): the lesson files and ``choose.py`` explain what, why and how in at
most 40 lines each; the measurements behind them live in docs/ (docs/best.md for the model, docs/lessons.md for the
phases), which the docstrings link. Read from the source with ``ast`` (no import, no compile: CPU only, instant)."""

import ast
import glob
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_LINES = 40
CHOOSE = os.path.join("cute_gemm", "runtime", "choose.py")


def _doc(rel: str) -> str:
    with open(os.path.join(ROOT, rel)) as f:
        return ast.get_docstring(ast.parse(f.read())) or ""


def _lines(doc: str) -> int:
    return doc.count("\n") + 1


def test_choose_docstring_explains_the_model_in_40_lines_and_links_its_evidence():
    doc = _doc(CHOOSE)
    assert _lines(doc) <= MAX_LINES, f"{CHOOSE}'s docstring is {_lines(doc)} lines"
    assert "docs/best.md" in doc
    for name in ("pick", "resolve", "explain", "tune", "time ="):  # what it ranks, the formula, the entry points
        assert name in doc, name
    assert os.path.isfile(os.path.join(ROOT, "docs", "best.md"))


def test_choose_constants_each_carry_a_short_comment():
    """Every ``Machine`` field has a comment on its line or the line above, and no comment block above a field runs
    past 3 lines (the evidence is docs/best.md's, by constant)."""
    with open(os.path.join(ROOT, CHOOSE)) as f:
        lines = f.read().splitlines()
    tree = ast.parse("\n".join(lines))
    machine = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Machine")
    fields = [n for n in machine.body if isinstance(n, ast.AnnAssign)]
    assert len(fields) >= 10
    for field in fields:
        i = field.lineno - 1
        block = 0
        while lines[i - 1 - block].lstrip().startswith("#"):
            block += 1
        assert "#" in lines[i] or block, f"Machine.{field.target.id} has no comment"
        assert block <= 3, f"Machine.{field.target.id}: {block} comment lines above it"
    best = open(os.path.join(ROOT, "docs", "best.md")).read()
    for name in ("mcast_gain", "swap_factor", "token_tile_reread", "reduce_max_bytes", "persistent_one_round_us"):
        assert f"`{name}`" in best, f"docs/best.md has no section for {name}"


PHASE_FILES = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "phases", "sm*", "phase*.py")))


def test_both_ladders_are_found():
    assert any("sm90" in p for p in PHASE_FILES) and any("sm100" in p for p in PHASE_FILES), PHASE_FILES


@pytest.mark.parametrize("rel", PHASE_FILES)
def test_phase_docstring_teaches_in_at_most_40_lines(rel):
    """What the step changes, why it pays, how, its constraints: in 40 lines; the history is docs/lessons.md's."""
    doc = _doc(rel)
    assert doc, f"{rel} has no module docstring"
    assert _lines(doc) <= MAX_LINES, f"{rel}'s docstring is {_lines(doc)} lines (at most {MAX_LINES})"
    assert "Constraints" in doc, f"{rel}'s docstring lost its Constraints"


def test_lessons_hold_what_the_docstrings_moved_out():
    lessons = open(os.path.join(ROOT, "docs", "lessons.md")).read()
    for rel in ("phases/sm90/phase10_swap_ab.py", "phases/sm90/phase8_pingpong.py", "phases/sm100/phase6_persistent.py",
                "phases/sm100/phase7_stream_k.py", "phases/sm90/phase11_fused_epilogue.py",
                "phases/sm100/phase11_fused_epilogue.py"):
        assert f"(../{rel})" in lessons, f"docs/lessons.md has no section for {rel}"
