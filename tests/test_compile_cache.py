"""One compile per (target, phase, config), kept across processes: the exported object file loads back as
the same TVM-FFI entry (CPU only: the loaded function is checked by its refusal of CPU tensors)."""

import dataclasses
import subprocess
import sys
import os

import pytest

from cute_gemm.runtime import cache, registry

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTE_GEMM_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_names_separate_configs_and_targets():
    e = registry.get("sm90", "1")
    a = cache.entry_name(e.key, "sm_90a", e.default_config())
    b = cache.entry_name(e.key, "sm_90a", dataclasses.replace(e.default_config(), stages=3))
    c = cache.entry_name("sm100:1", "sm_100a", registry.get("sm100", "1").default_config())
    assert len({a, b, c}) == 3 and all(x.isidentifier() for x in (a, b, c))


def test_export_then_load_in_another_process(cache_dir):
    from cute_gemm.runtime.plan import compile_plan

    e = registry.get("sm90", "2a")
    plan = compile_plan(e, "sm_90a", 0)
    assert plan.source == "compiled"
    name = cache.entry_name(e.key, "sm_90a", e.default_config())
    path = cache.path_for(name)
    assert path.is_file() and path.stat().st_size > 1000
    assert path.parent.parent == cache_dir

    # a second process finds it on disk instead of compiling: load it and call it with CPU tensors, which
    # the compiled entry itself must refuse (it checks the device type before launching anything)
    code = (
        "import time, torch; from cute_gemm.runtime import registry; from cute_gemm.runtime.plan import compile_plan\n"
        "p = compile_plan(registry.get('sm90', '2a'), 'sm_90a', 0)\n"
        "a = torch.zeros(128, 64, dtype=torch.float16); b = torch.zeros(64, 128, dtype=torch.float16)\n"
        "c = torch.zeros(128, 128)\n"
        "try:\n    p.fn(a, b, c)\nexcept Exception as e:\n    print('refused:', e)\n"
        "print(p.source, round(p.seconds, 3))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "CUTE_GEMM_CACHE_DIR": str(cache_dir)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "expected device_type=cuda" in out.stdout, out.stdout
    source, seconds = out.stdout.strip().splitlines()[-1].split()
    assert source == "disk" and float(seconds) < plan.seconds


def test_disabled_cache_writes_nothing(cache_dir, monkeypatch):
    from cute_gemm.runtime.plan import compile_plan

    monkeypatch.setenv("CUTE_GEMM_NO_DISK_CACHE", "1")
    plan = compile_plan(registry.get("sm90", "2a"), "sm_90a", 0)
    assert plan.source == "compiled" and not any(cache_dir.rglob("*.o"))


def test_a_broken_file_is_compiled_again(cache_dir):
    from cute_gemm.runtime.plan import compile_plan

    e = registry.get("sm90", "2a")
    path = cache.path_for(cache.entry_name(e.key, "sm_90a", e.default_config()))
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not an object file")
    plan = compile_plan(e, "sm_90a", 0)
    assert plan.source == "compiled" and path.stat().st_size > 1000
