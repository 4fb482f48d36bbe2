"""The README and docs/ as a newcomer meets them: every relative link leads to a file of this checkout,
the set-up block is two command lines, and CI (.ci/run) runs exactly those two (the first with the
torch pin the README states for CPU-only machines)."""

import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = ["README.md"] + sorted(os.path.join("docs", n) for n in os.listdir(os.path.join(ROOT, "docs")) if n.endswith(".md"))


def _read(rel: str) -> str:
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


@pytest.mark.parametrize("doc", DOCS)
def test_relative_links_resolve(doc):
    missing = []
    for target in re.findall(r"\]\(([^)#\s]+)\)", _read(doc)):
        if not target.startswith(("http://", "https://")):
            path = os.path.normpath(os.path.join(ROOT, os.path.dirname(doc), target))
            if not path.startswith(ROOT + os.sep) or not os.path.exists(path):
                missing.append(target)
    assert not missing, missing


def test_setup_is_two_commands_and_ci_runs_them():
    readme = _read("README.md")
    block = re.search(r"## Quick start.*?```bash\n(.*?)```", readme, re.S).group(1)
    commands = [line.split(" # ")[0].strip() for line in block.splitlines() if line.strip() and not line.startswith("#")]
    assert len(commands) == 2, commands
    install, tests = commands
    pinned = install.replace("pip install ", "pip install 'torch==2.13.0' ", 1)
    assert "`'torch==2.13.0'` before `-e`" in readme.replace("\n", " ")
    ci = [line.strip() for line in _read(".ci/run").splitlines()]
    assert pinned in ci and tests in ci, (pinned, tests)


def test_readme_names_the_python_version_and_the_worklog():
    readme = _read("README.md")
    requires = re.search(r'requires-python = ">=(\d+\.\d+)"', _read("pyproject.toml")).group(1)
    assert f"Python {requires} or later" in readme
    assert '"Optimizing GEMMs using tcgen05 - Part 1"' in readme and "Gaurav Jain" in readme


# ------------------------------------------------------------------------------------------ anchors
def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text (code spans and links unwrapped) lower-cased, every character
    that is not a letter, digit, '_', '-' or space dropped, spaces to '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").replace("*", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _headings(text: str) -> list[tuple[int, str, str]]:
    """(level, title, anchor) of every heading outside code blocks, in order; a repeated anchor gets -1, -2, ...
    as on GitHub."""
    out, seen, fence = [], {}, False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
            continue
        m = None if fence else re.match(r"(#{1,6}) (.+)", line)
        if m:
            base = _slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.append((len(m.group(1)), m.group(2), f"{base}-{n}" if n else base))
    return out


def _anchors(rel: str) -> set[str]:
    return {a for _, _, a in _headings(_read(rel))}


def test_slug_is_githubs():
    assert _slug("`--set heldout12`: 12 random shapes of 1-512 tokens") == "--set-heldout12-12-random-shapes-of-1-512-tokens"
    assert _slug("128 tokens in weight-sharing pairs; what the split-K reduce costs (H200, 2026-12-03, night)") == (
        "128-tokens-in-weight-sharing-pairs-what-the-split-k-reduce-costs-h200-2026-12-03-night")
    assert [a for _, _, a in _headings("## Checks\n## Checks\n```\n# no\n```\n### Checks\n")] == ["checks", "checks-1", "checks-2"]


def _tracked_text_files() -> list[str]:
    out = []
    for top in ("README.md", "docs", "cute_gemm", "phases", "bench", "tests"):
        path = os.path.join(ROOT, top)
        if os.path.isfile(path):
            out.append(top)
            continue
        for base, dirs, files in os.walk(path):
            dirs[:] = [d for d in dirs if not d.startswith((".", "__pycache__"))]
            out += [os.path.relpath(os.path.join(base, f), ROOT) for f in files if f.endswith((".md", ".py", ".sh"))]
    return out


def test_every_link_into_a_doc_names_an_existing_heading():
    """Markdown links with an anchor (`](results.md#x)`, `](#x)`) in README.md and docs/, and any
    `results.md#x` written in code, comments or scripts, name a heading of the file they point at."""
    bad = []
    for rel in _tracked_text_files():
        if rel == os.path.join("tests", "test_docs.py"):
            continue  # its docstrings name link forms, not links
        text = _read(rel)
        if rel.endswith(".md"):
            links = re.findall(r"\]\(([^)\s]*)#([^)\s]+)\)", text)
        else:
            links = [(m.group(1), m.group(2)) for m in re.finditer(r"([\w./-]*results\.md)#([\w-]+)", text)]
        for target, anchor in links:
            if target.startswith(("http://", "https://")):
                continue
            if not target:
                doc = rel
            elif rel.endswith(".md"):
                doc = os.path.relpath(os.path.normpath(os.path.join(ROOT, os.path.dirname(rel), target)), ROOT)
            else:
                doc = os.path.join("docs", "results.md")
            if doc.endswith(".md") and os.path.exists(os.path.join(ROOT, doc)) and anchor not in _anchors(doc):
                bad.append(f"{rel}: {target}#{anchor}")
    assert not bad, bad


# ------------------------------------------------------------------------------------------ README
def _prose_lines(text: str) -> list[str]:
    out, fence = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence:
            out.append(line)
    return out


def test_readme_reads_in_five_minutes():
    """At most 200 lines, and no line outside code blocks (table rows included) over 200 characters."""
    readme = _read("README.md")
    assert len(readme.splitlines()) <= 200, len(readme.splitlines())
    long = [(len(line), line[:60]) for line in _prose_lines(readme) if len(line) > 200]
    assert not long, long


def _section(text: str, title_start: str) -> str:
    m = re.search(rf"^## {re.escape(title_start)}.*?$(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, f"no section '## {title_start}...'"
    return m.group(1)


def test_readme_sections_and_the_hardware_honesty():
    readme = _read("README.md")
    for title in ("The hardware, honestly", "Quick start", "Measured", "From Python", "Commands", "How it is verified"):
        _section(readme, title)
    honest = _section(readme, "The hardware, honestly")
    assert "compile-verified only" in honest and "no sm100 number exists" in honest and "H200" in honest


def test_readme_measured_is_six_one_line_rows_linking_the_record():
    rows = [line for line in _section(_read("README.md"), "Measured").splitlines() if line.startswith("| ")]
    body = rows[1:]  # the header row; the separator row starts with '|---'
    assert 1 <= len(body) <= 6, body
    for row in body:
        targets = re.findall(r"\]\(([^)#\s]+)(#[^)\s]+)?\)", row)
        assert any(t == "docs/results.md" for t, _ in targets), row
    for needle in ("1.084", "1.086", "1.13", "0.982", "1.013", "0.969"):
        assert needle in "\n".join(body), needle


def test_readme_cpu_only_install_is_written_out_and_is_cis():
    readme = _read("README.md")
    blocks = re.findall(r"```bash\n(.*?)```", _section(readme, "Quick start"), re.S)
    first = [line.split(" # ")[0].strip() for line in blocks[0].splitlines() if line.strip()]
    cpu = [line.split(" # ")[0].strip() for line in blocks[1].splitlines() if line.strip()]
    assert cpu == [first[0].replace("pip install ", "pip install 'torch==2.13.0' ", 1), first[1]], cpu
    ci = [line.strip() for line in _read(".ci/run").splitlines()]
    assert all(c in ci for c in cpu), cpu
    assert re.search(r"test suite takes roughly \d+-\d+ minutes on 2 cores", readme.replace("\n", " "))


def test_readme_names_every_command():
    from cute_gemm.cli import COMMANDS

    commands = _section(_read("README.md"), "Commands")
    missing = [c.name for c in COMMANDS if f"cute-gemm {c.name}" not in commands]
    assert not missing, missing


def test_readme_describes_best_as_list_does(capsys):
    """`cute-gemm list` and the README say the same thing of `best`, word for word."""
    from cute_gemm.cli import main

    assert main(["list", "--arch", "sm90"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("best:"))
    words = re.sub(r"\s*\(gemm\(phase=\"best\"\)\)\s*$", "", line.strip()[len("best:"):]).strip()
    assert len(words) > 20, line
    readme = " ".join(_read("README.md").split())
    assert words in readme, words


def test_readme_states_the_reports_size():
    """The size the README and docs/report.md give the committed report ("about N MB") is within 20% of the
    report built from this checkout."""
    from tests.report_build import committed_report

    size_mb = os.path.getsize(committed_report()[0]) / 1e6
    for doc in ("README.md", "docs/report.md"):
        text = " ".join(_read(doc).split())
        stated = [float(x) for x in re.findall(r"(?:file of|it is|\() ?about (\d+(?:\.\d+)?) MB", text)]
        stated += [float(x) for x in re.findall(r"HTML file \((\d+(?:\.\d+)?) MB", text)]
        assert stated, f"{doc} does not state the report's size as 'about N MB'"
        for mb in stated:
            assert abs(mb - size_mb) <= 0.2 * size_mb, (doc, mb, size_mb)


# ------------------------------------------------------------------------------------ adding a phase
def _contract_attributes() -> list[str]:
    """The class attributes GemmPhase declares (annotated in its class body): the phase contract."""
    import ast

    tree = ast.parse(_read("phases/base.py"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "GemmPhase")
    return [n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]


def test_adding_a_phase_documents_the_whole_contract():
    doc = _read("docs/adding_a_phase.md")
    attrs = _contract_attributes()
    assert {"parent", "general_operands", "c_majors", "ragged", "Config"} <= set(attrs), attrs
    missing = [a for a in attrs if f"`{a}`" not in doc]
    assert not missing, missing


def test_adding_a_phase_names_only_what_exists():
    """In the how-to part of the page (before its layout section), every backticked name that a list item gives
    choose.py or base.py (the item names the file) exists there, every ALL_CAPS name exists in choose.py,
    base.py, GemmPhase or is assigned in the project's code (cute_gemm/, phases/, tests/), and the next new
    phase id is the one after PHASE_IDS."""
    import phases.base as base
    from cute_gemm.runtime import choose

    doc = _read("docs/adding_a_phase.md").split("## Layout of the project")[0]
    code = "\n".join(_read(p) for p in _tracked_text_files() if p.endswith(".py") and not p.startswith("bench"))
    owners = (choose, base, base.GemmPhase, base.TileConfig)
    bad = []
    for name in set(re.findall(r"`([A-Z][A-Z0-9_]{2,})\b[^`]*`", doc)):
        if not any(hasattr(o, name) for o in owners) and not re.search(rf"^\s*{name}\s*[:=]", code, re.M):
            bad.append(f"{name} (defined nowhere)")
    for item in re.findall(r"^- .*?(?=^- |^\S|\Z)", doc, re.S | re.M):
        modules = [m for f, m in (("choose.py", choose), ("base.py", base)) if f in item]
        for name in re.findall(r"`([A-Za-z_]\w*)(?:[\[(][^`]*)?`", item) if modules else ():
            if name not in ("phase", "sm90", "sm100") and not any(hasattr(o, name) for o in (*modules, base.GemmPhase)):
                bad.append(f"{name} (named beside {', '.join(m.__name__ for m in modules)})")
    assert not bad, bad
    numeric = [int(p) for p in base.PHASE_IDS if p.isdigit()]
    assert f"the next is {max(numeric) + 1}" in doc
    for taken in base.PHASE_IDS:
        assert f"a new id (a phase {taken})" not in doc


# ------------------------------------------------------------------------------------------ results.md
def test_results_starts_with_a_summary_then_an_index_of_every_section():
    rel = os.path.join("docs", "results.md")
    text = _read(rel)
    heads = _headings(text)
    h2 = [(t, a) for lvl, t, a in heads if lvl == 2]
    assert [t for t, _ in h2[:2]] == ["Summary", "Index"], h2[:2]
    summary = _section(text, "Summary")
    rows = [line for line in summary.splitlines() if line.startswith("| ") and not line.startswith("| set ")]
    assert len(rows) >= 6, rows
    anchors = {a for _, _, a in heads}
    for row in rows:  # each set: a number, a date, a link to the section that holds it
        assert re.search(r"\d\.\d{3}|\d+%|TFLOP/s|µs", row) and re.search(r"20\d\d-\d\d-\d\d", row), row
        links = re.findall(r"\]\(#([^)]+)\)", row)
        assert links and all(a in anchors for a in links), row
    index = _section(text, "Index")
    linked = re.findall(r"\]\(#([^)]+)\)", index)
    after = [a for _, _, a in heads].index("index") + 1
    sections = [a for lvl, _, a in heads[after:] if lvl in (2, 3)]
    assert linked == sections, sorted(set(sections) ^ set(linked))


def test_results_sections_run_newest_first():
    dates = []
    for lvl, title, _ in _headings(_read(os.path.join("docs", "results.md"))):
        m = re.search(r"(20\d\d-\d\d-\d\d)", title) if lvl == 2 else None
        if m:
            dates.append(m.group(1))
    assert len(dates) >= 10 and dates == sorted(dates, reverse=True), dates
