"""The registry: phase ids, the two ladders, and what every entry must carry."""

import dataclasses

import pytest

from cute_gemm.runtime import arch, registry

LADDER = ["0", "1", "2a", "2b", "3", "4", "5"]


def test_phase_ids_parse():
    assert registry.parse_phase("2") == "2b"
    assert registry.parse_phase(3) == "3"
    assert registry.parse_phase(" 2A ") == "2a"
    with pytest.raises(ValueError, match="unknown phase"):
        registry.parse_phase("11")


def test_phase_lists():
    assert registry.parse_phase_list("0-3,5") == ["0", "1", "2a", "2b", "3", "5"]
    assert registry.parse_phase_list("2") == ["2b"]
    assert registry.parse_phase_list("2-2b") == ["2a", "2b"]
    assert registry.parse_phase_list("5,0,5") == ["5", "0"]
    with pytest.raises(ValueError):
        registry.parse_phase_list("4-1")


def test_arch_names():
    assert arch.family("sm_100a") == "sm100" and arch.family("sm_103a") == "sm100"
    assert arch.family("sm90") == "sm90" and arch.family("sm_90a") == "sm90"
    assert arch.target("sm100") == "sm_100a" and arch.target("sm90") == "sm_90a"
    assert arch.target_of_capability(10, 3) == "sm_103a"
    assert arch.family_of_capability(8, 0) is None
    with pytest.raises(ValueError, match="unknown arch"):
        arch.family("sm_80")


@pytest.mark.parametrize("fam", ["sm90", "sm100"])
def test_each_ladder_is_complete(fam):
    """Phases 0-5 (the worklog's), 6 (persistent) and 7 (stream-K), beyond it, on both arches; 8 (ping-pong
    consumer warpgroups) is a Hopper lesson: on sm100 the MMA never waits for the epilogue already (phase 6's
    double-buffered TMEM accumulator); 9 (split-K in a cluster) and 10 (swap-AB) serve small and skinny
    problems."""
    beyond = {"sm90": ["6", "7", "8", "9", "10"], "sm100": ["6", "7", "9", "10"]}[fam]
    assert [e.phase for e in registry.all_entries(fam)] == LADDER + beyond


@pytest.mark.parametrize("fam", ["sm90", "sm100"])
def test_phase_ids_from_file_names_are_the_registered_ones(fam):
    """Help texts list a ladder from its file names (no DSL import); the names must say what the classes say."""
    assert registry.phase_ids(fam) == [e.phase for e in registry.all_entries(fam)]


@pytest.mark.parametrize("entry", registry.all_entries(), ids=lambda e: e.key)
def test_entry_carries_what_the_cli_shows(entry):
    assert entry.summary and entry.adds, f"{entry.key} needs a summary and an 'adds' line"
    cfg = entry.default_config()
    assert dataclasses.is_dataclass(cfg)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.bm = 1  # frozen: the config doubles as a compile-cache key
    import sys

    doc = (entry.kernel_cls.__doc__ or "") + (sys.modules[entry.kernel_cls.__module__].__doc__ or "")
    assert "Constraints" in doc, f"{entry.key}'s docstring needs a Constraints list"
    assert entry.kernel_cls.arch == entry.arch and entry.kernel_cls.phase == entry.phase


def test_seed_configs():
    """The worklog's tile configs (docs/ladder.md) are the defaults."""
    for fam in ("sm90", "sm100"):
        c0 = registry.get(fam, "0").default_config()
        assert (c0.bm, c0.bn, c0.bk, c0.stages) == (128, 128, 32, 2)
    c3 = registry.get("sm100", "3").default_config()
    assert (c3.bm, c3.bn) == (128, 256)
    assert registry.get("sm100", "4").default_config().cluster_m == 2
    assert registry.get("sm90", "4").default_config().cluster_m == 2
    assert registry.get("sm90", "3").default_config().bn == 256


def test_unknown_lookup_says_what_exists(monkeypatch):
    full = registry._ladder("sm100")
    monkeypatch.setattr(registry, "_ladder", lambda fam: {k: v for k, v in full.items() if k != "7"})
    with pytest.raises(LookupError, match=r"no sm100 kernel for phase 7 \(registered sm100 phases: 0, 1, 2a, 2b, 3, 4, 5, 6, 9, 10\)"):
        registry.get("sm100", "7")
    with pytest.raises(ValueError, match="unknown phase"):
        registry.get("sm100", "2c")
    assert registry.resolve("sm100:2", "sm90").key == "sm100:2b"
