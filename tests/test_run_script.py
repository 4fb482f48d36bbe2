"""bench/run_h200.sh without a GPU. The script is a short dispatcher over topic files in bench/runs/ (one ``case`` arm
per past device run); docs/results.md, the README and code comments cite the cases by name, so every name must keep
resolving, and ``--list`` must show each with a line of what it runs.

Then what each case would hand the H200 takes its shapes. Device time is scarce (30 minutes a session), and a config
that cannot run a shape costs a run to find out: a ``--config SPEC@M,N,K`` the kernel refuses, or a sanitizer / stress
shape a config cannot take (it is skipped there, not checked), or a ``--set`` that does not exist."""

import glob
import os
import re
import subprocess

import pytest

from bench_scripts import ROOT
from cute_gemm.measure.suite import SETS
from cute_gemm.runtime import registry

DISPATCHER = f"{ROOT}/bench/run_h200.sh"
TOPICS = sorted(glob.glob(f"{ROOT}/bench/runs/*.sh"))
ARM = re.compile(r"^([a-z0-9][a-z0-9|-]*)\)[^\n]*\n(.*?)^  ;;", flags=re.M | re.S)


def _arms(path: str) -> dict:
    """{case name: its arm's text} of one shell file; an arm ``a|b)`` gives both names its text."""
    text = open(path).read().replace("\\\n", " ")
    return {name: body for label, body in ARM.findall(text) for name in label.split("|")}


WHERE = {name: path for path in TOPICS for name in _arms(path)}
CASES = {name: body for path in TOPICS for name, body in _arms(path).items()}

# Every case the one-file script had (2026-12-04), in its order: the names the docs cite.
CITED = """
sweep sustained top target regime regime2 regime3 regime4 regime6 regime7 tokens wide regime8 regime9 tune1 tune2
tune3 pdl1 pdl2 pdl3 tokens16 tokens16-checks stream-k families1 families2 families3 model5 model5-sets model6
families5 ring64 model6-sample ring192 tokens2 wmcast wmcast-checks stalls deep64 evict evict-checks evict2 evict3
l2probe reduce-cost p9pairs p9pairs-128 reread reread2 model7 tiles3 tok2 tiles3m tiles3-heldout tiles3-80
tiles3-checks model8 tiles3-mc4 mc4-fresh skinny-mcast region256 reduce-cap reduce-cap-checks reduce-cap2 model9
mcast192 tok8 tok8-moved tok8-checks tok8-sets tok8-4864 heldout10 heldout10-tuned oneround m512 bm256 bm256-moved
bm256-checks bm256-tail criteria9 heldout11 gen512 gen512-checks criteria10 m512-stress w64pairs gaps512 tiles3x
w64more t3w64-moved t3w64-checks criteria11 criteria11-big heldout12 m512-moved m512-checks tok8-ragged
tune-families
""".split()


def _dispatch(*args, out=None):
    env = dict(os.environ, OUT=str(out)) if out else None
    return subprocess.run(["bash", DISPATCHER, *args], cwd=ROOT, capture_output=True, text=True, env=env, timeout=60)


def test_the_dispatcher_is_short():
    assert len(open(DISPATCHER).read().splitlines()) <= 100


@pytest.mark.parametrize("path", [DISPATCHER, *TOPICS])
def test_every_shell_file_parses(path):
    assert subprocess.run(["bash", "-n", path], capture_output=True).returncode == 0, path


def test_every_cited_case_is_in_one_topic_file():
    assert len(CITED) == len(set(CITED)) == 97
    names = [name for path in TOPICS for name in _arms(path)]
    assert len(names) == len(set(names)), "a case in two files"
    assert set(CITED) <= set(names)


def test_the_dispatcher_resolves_every_case():
    for name in sorted(set(WHERE) | set(CITED)):
        r = _dispatch("--which", name)
        assert r.returncode == 0 and name in WHERE, (name, r.stdout, r.stderr)
        assert os.path.samefile(r.stdout.strip(), WHERE[name]), (name, r.stdout)


def test_list_prints_one_line_per_case():
    r = _dispatch("--list")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert sorted(line.split()[0] for line in lines) == sorted(WHERE) and set(CITED) <= set(WHERE)
    for line in lines:
        name, file, *what = line.split()
        assert file == os.path.basename(WHERE[name]), line
        assert len(what) >= 3 and "no line" not in line, line


def test_each_topic_file_indexes_its_cases_and_shares_the_preamble():
    """Each file opens with ``#   NAME  N. what it runs`` per case (what --list prints) and sources common.sh, the one
    place the shell options, $OUT and beside() live."""
    assert f"{ROOT}/bench/runs/common.sh" in TOPICS and len(TOPICS) > 2
    for path in TOPICS:
        text = open(path).read()
        if path.endswith("/common.sh"):
            assert "beside() {" in text and "OUT=${OUT:-out}" in text
            continue
        index = re.findall(r"^#   ([a-z0-9-]+)  +\d+\. \S", text, flags=re.M)
        assert sorted(index) == sorted(_arms(path)), path
        assert '/common.sh"' in text and "beside() {" not in text, path
        assert not re.search(r"^OUT=", text, flags=re.M), path


def test_an_unknown_case_is_one_line_and_runs_nothing(tmp_path):
    r = _dispatch("no-such-case", out=tmp_path / "out")
    assert r.returncode != 0 and r.stderr.count("\n") == 1 and "--list" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


def _refusal(spec: str, shape: tuple) -> list:
    """What the kernel ``spec`` ('10:bm=128,bn=80' or a bare phase id) says against ``shape``: [] if it takes it."""
    phase, over = registry.split_spec(spec)
    entry = registry.get("sm90", phase)
    return entry.make(entry.configured(over) if over else entry.default_config()).can_implement(*shape)


def _shell_vars(body: str) -> dict:
    """A case's variables (C="..." or C1=...; C2=...), as the shell would expand them."""
    return {k: v.strip('"') for k, v in re.findall(r'(?:^|;)\s*([A-Z]\w*)=("[^"]*"|[^\s;]+)', body, flags=re.M)}


def _expand(line: str, env: dict) -> str:
    for name in sorted(env, key=len, reverse=True):
        line = line.replace("$" + name, env[name])
    return line


def test_the_script_has_its_cases():
    assert {"sweep", "regime", "reread2", "model7", "tiles3-80", "tiles3-checks"} <= set(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_configs_at_a_shape_take_it(case):
    for spec, m, n, k in re.findall(r'--config\s+"?([^\s@"]+)@(\d+),(\d+),(\d+)', CASES[case]):
        assert _refusal(spec, (int(m), int(n), int(k))) == [], f"{case}: --config {spec}@{m},{n},{k}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_checked_configs_take_every_checked_shape(case):
    """The sanitizers and the stress run: every --config at every --shapes of the same command."""
    body = CASES[case]
    env = _shell_vars(body)
    for line in body.splitlines():
        if not re.search(r"bench/(sanitize|stress)\.py", line):
            continue
        line = _expand(line, env)
        shapes = re.search(r"--shapes\s+((?:\d+,\d+,\d+\s*)+)", line)
        if shapes is None:  # the tool's own shapes
            continue
        for spec in re.findall(r"--config\s+(\S+)", line):
            for shape in shapes.group(1).split():
                shape = tuple(map(int, shape.split(",")))
                assert _refusal(spec, shape) == [], f"{case}: {spec} at {shape}"


# cases that ran on another checkout, whose configs this tree's phases need not take (stream-k: a58f7fa's phase 11)
OTHER_CHECKOUT = {"stream-k"}


@pytest.mark.parametrize("case", sorted(set(CASES) - OTHER_CHECKOUT))
def test_every_config_builds(case):
    """Every --config SPEC of a case passes its phase's config rules. bench refuses a config that cannot be built
    before it times anything, so one such spec costs the whole call: prefill-epi64 as first written timed 256 x 128
    with 64-column slabs at 4 stages, 256 KiB of smem."""
    body = CASES[case]
    commands = _expand("\n".join(line for line in body.splitlines() if not line.lstrip().startswith("#")),
                       _shell_vars(body))
    specs = set()
    for line in commands.splitlines():  # bench's --config PHASE:FIELDS, or a script's --phase PHASE --config FIELDS
        phase_arg = re.search(r"--phase\s+(\w+)", line)
        for spec in re.findall(r'--config\s+"?([^\s@"]+)', line):
            specs.add(f"{phase_arg.group(1)}:{spec}" if phase_arg and ":" not in spec and "=" in spec else spec)
    for spec in sorted(specs):
        phase, over = registry.split_spec(spec)
        entry = registry.get("sm90", phase)
        assert entry.config_problems(entry.configured(over) if over else entry.default_config()) == [], f"{case}: {spec}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_named_sets_exist(case):
    for name in re.findall(r"--set\s+([\w-]+)", CASES[case]):  # a hyphenated name whole (prefill-fwd)
        assert name in SETS, f"{case}: --set {name}"


def test_a_refused_shape_is_caught():
    """What the test above would have caught before a device run (2026-12-03): K = 4100 is not a multiple of 8,
    so fp16 rows are not 16-byte multiples for TMA and the sanitizers skipped the shape."""
    assert _refusal("10:bm=128,bn=80,bk=64,stages=8,split_k=1", (232, 3000, 4100))
    assert _refusal("10:bm=128,bn=80,bk=64,stages=8,split_k=1", (232, 3000, 4104)) == []
