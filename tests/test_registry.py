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
        registry.parse_phase("12")


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
    problems; 11 (the fused epilogue: bias, activation, residual) is phase 10 with an epilogue on both."""
    beyond = {"sm90": ["6", "7", "8", "9", "10", "11"], "sm100": ["6", "7", "9", "10", "11"]}[fam]
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
    with pytest.raises(LookupError, match=r"no sm100 kernel for phase 7 \(registered sm100 phases: 0, 1, 2a, 2b, 3, 4, 5, 6, 9, 10, 11\)"):
        registry.get("sm100", "7")
    with pytest.raises(ValueError, match="unknown phase"):
        registry.get("sm100", "2c")
    assert registry.resolve("sm100:2", "sm90").key == "sm100:2b"


# ------------------------------------------------------------------------------- config rules (issue 49)
REFUSED = [  # (arch, phase, overrides, what the one line says); each of these once reached the compiler
    ("sm90", "8", {"bn": 100}, "bn=100: bn is a multiple of 8 in 8..256"),
    ("sm90", "7", {"sm_count": 0}, "sm_count=0: a positive integer"),
    ("sm90", "8", {"bn": -64}, "bn=-64: a positive integer"),
    ("sm90", "6", {"epi_stages": 1}, "epi_stages >= 2"),
    ("sm90", "6", {"epi_stages": 3}, "must cycle through the buffers evenly"),
    ("sm90", "5", {"bn": 80}, "bn is a multiple of 32 (C is stored in slabs of 32 columns)"),
    ("sm90", "2a", {"bn": 264}, "bn is a multiple of 8 in 8..256"),
    ("sm90", "2b", {"bm": 96}, "bm is a multiple of 64"),
    ("sm90", "3", {"bm": 192}, "bm is a multiple of 128"),
    ("sm90", "2a", {"bk": 24}, "bk is a multiple of 16"),
    ("sm90", "3", {"stages": 20}, "over the 227 KiB of smem"),
    ("sm90", "4", {"group_m": 1}, "group_m >= cluster_m=2"),
    ("sm90", "7", {"bm": 64}, "phase 7 needs bm == 128"),
    ("sm90", "8", {"bm": 64}, "phase 8 needs bm == 128"),
    ("sm90", "9", {"bm": 96}, "bm is 64, 128 or 192"),
    ("sm90", "9", {"split_k": 9}, "split_k is 1..8"),
    ("sm90", "9", {"cluster_m": 3}, "cluster_m is 1, 2 or 4"),
    ("sm90", "9", {"cluster_m": 4, "split_k": 4}, "at most 8"),
    ("sm90", "10", {"bm": 256, "bn": 256, "stages": 2}, "256 accumulator registers per thread do not fit"),
    ("sm90", "10", {"ctas_per_sm": 2}, "x 2 CTAs per SM"),
    ("sm90", "0", {"stages": 3}, "fixed double buffer"),
    ("sm90", "1", {"bn": 96}, "needs 64, 128 or 256"),
    ("sm100", "7", {"sm_count": 150}, "multiple of 4 SMs"),
    ("sm100", "9", {"bm": 64}, "bm is 128"),
    ("sm100", "10", {"split_k": 9}, "split_k is 1..8"),
    ("sm100", "10", {"epi_warps": 8}, "4 epilogue warps"),
    ("sm100", "2a", {"epi_warps": 0}, "epi_warps=0: a positive integer"),
    ("sm90", "11", {"activation": "tanh"}, "activation='tanh': one of none, relu, gelu, silu"),
    ("sm100", "11", {"activation": "GELU"}, "activation='GELU': one of none, relu, gelu, silu"),
    ("sm90", "11", {"bias": True, "split_k": 9}, "split_k is 1..8"),  # phase 10's rules still hold
]


@pytest.mark.parametrize("arch_,phase,over,message", REFUSED, ids=[f"{a}:{p} {o}" for a, p, o, _ in REFUSED])
def test_config_rules_refuse_before_any_compile(arch_, phase, over, message):
    from cute_gemm.errors import UnsupportedError

    entry = registry.get(arch_, phase)
    label = " ".join(f"{k}={v}" for k, v in over.items())
    with pytest.raises(UnsupportedError, match=f"^{entry.key} cannot be built with {label}: ") as exc:
        entry.configured(dict(over))
    assert message in str(exc.value) and "\n" not in str(exc.value)
    # a config object is checked as a dict of overrides is; check=False hands it over as it is (compile_only's)
    cfg = entry.configured(dict(over), check=False)
    assert any(message in why for why in entry.config_problems(cfg))
    with pytest.raises(UnsupportedError):
        entry.configured(cfg)


@pytest.mark.parametrize("entry", registry.all_entries(), ids=lambda e: e.key)
def test_default_configs_pass_the_rules(entry):
    assert entry.config_problems(entry.default_config()) == []
    assert entry.make().config_problems() == []


def test_every_candidate_of_best_passes_the_rules():
    """best's candidates (each measured or compiled on the H200 before) are never refused by the rules."""
    import random

    from cute_gemm.runtime import choose

    rng = random.Random(49)
    shapes = [(m, n, k) for m in (1, 16, 100, 256, 1000, 4096) for n in (1024, 7168) for k in (1024, 14336)]
    shapes += [(rng.randint(1, 16384), 8 * rng.randint(1, 8192), 8 * rng.randint(1, 4096)) for _ in range(100)]
    seen = 0
    for fam in ("sm90", "sm100"):
        for m, n, k in shapes:
            for entry, cfg, _ in choose._candidates(fam, m, n, k):
                assert entry.config_problems(cfg) == [], (entry.key, cfg)
                seen += 1
    assert seen > 1000


@pytest.mark.parametrize("fam", ["sm90", "sm100"])
def test_epilogue_fields_from_text(fam):
    """Phase 11's word field comes through the same 'FIELD=VALUE' text as the integers and switches (the CLI's
    --config, gemm's config=); a value of the wrong kind is an InputError naming the field."""
    from cute_gemm.errors import InputError

    entry = registry.get(fam, "11")
    cfg = entry.configured("bias=true,activation=gelu,residual=false,bn=16")
    assert (cfg.bias, cfg.activation, cfg.residual, cfg.bn) == (True, "gelu", False, 16)
    assert entry.overrides_label(cfg) == "bias=True activation=gelu"
    assert registry.field_choices(entry.config_cls) == {"activation": ("none", "relu", "gelu", "silu")}
    assert registry.field_choices(registry.get(fam, "10").config_cls) == {}
    for act in ("none", "relu", "gelu", "silu"):
        assert entry.configured({"activation": act}).activation == act
    with pytest.raises(InputError, match=r"^activation=1 is not one of none, relu, gelu, silu$"):
        entry.configured({"activation": 1})
    with pytest.raises(InputError, match=r"^bias='gelu' is not a boolean$"):
        entry.configured("bias=gelu")
    with pytest.raises(InputError, match=r"^bn='wide' is not an integer$"):
        entry.configured("bn=wide")


def test_overrides_keep_words():
    assert registry.parse_overrides("activation=silu,bn=16,bias=true") == {"activation": "silu", "bn": 16,
                                                                          "bias": True}


def test_field_problems():
    from phases.base import TileConfig, field_problems

    assert field_problems(TileConfig()) == []
    assert field_problems(TileConfig(bn=-64, stages=0)) == ["bn=-64: a positive integer", "stages=0: a positive integer"]
