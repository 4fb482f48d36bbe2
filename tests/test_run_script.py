"""bench/run_h200.sh without a GPU: what each case would hand the H200 takes its shapes. Device time is scarce (30
minutes a session), and a config that cannot run a shape costs a run to find out: a ``--config SPEC@M,N,K`` the
kernel refuses, or a sanitizer / stress shape a config cannot take (it is skipped there, not checked), or a
``--set`` that does not exist."""

import re

import pytest

from bench_scripts import ROOT
from cute_gemm.measure.suite import SETS
from cute_gemm.runtime import registry

SCRIPT = open(f"{ROOT}/bench/run_h200.sh").read().replace("\\\n", " ")
CASES = dict(re.findall(r"^([a-z0-9-]+)\)\n(.*?)^  ;;", SCRIPT, flags=re.M | re.S))


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


@pytest.mark.parametrize("case", sorted(CASES))
def test_named_sets_exist(case):
    for name in re.findall(r"--set\s+(\w+)", CASES[case]):
        assert name in SETS, f"{case}: --set {name}"


def test_a_refused_shape_is_caught():
    """What the test above would have caught before a device run (2026-12-03): K = 4100 is not a multiple of 8,
    so fp16 rows are not 16-byte multiples for TMA and the sanitizers skipped the shape."""
    assert _refusal("10:bm=128,bn=80,bk=64,stages=8,split_k=1", (232, 3000, 4100))
    assert _refusal("10:bm=128,bn=80,bk=64,stages=8,split_k=1", (232, 3000, 4104)) == []
