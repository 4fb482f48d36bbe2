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
