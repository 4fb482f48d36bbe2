"""Every registered phase compiles, without a GPU, for each of its targets, and its generated code shows
the PTX signature of its step (docs/ladder.md); no spills; smem and TMEM within the hardware's limits; and
what the harness reads from the kernel (threads, cluster) is what the PTX says.

The compile is the one that runs: symbolic M, N, K, one compile per (target, phase, config) for every
shape. This is what verifies the sm100 ladder here (no Blackwell GPU exists in this workplace)."""

import re
from functools import lru_cache

import pytest

from cute_gemm.runtime import arch, registry
from cute_gemm.profiling.codegen import census, idesc_fields, inspect_phase, instruction_descriptors
from cute_gemm.runtime.problem import Problem
from phases.operands import Operands

SMEM_LIMIT = 227 * 1024  # per-block opt-in dynamic smem on sm90 and sm100
TMEM_COLS = 512
BIG = Problem(4096, 4096, 4096)

# (arch, phase) -> (census entries that must be present, census entries that must be absent)
_TMA_SM100 = (["bulk tensor load", "mbarrier complete_tx", "tcgen05.mma cta_group::1", "tcgen05.commit", "tcgen05.ld"],
              ["cp.async.cg (16 B)"])
_PAIR_SM100 = (["bulk tensor load", "tcgen05.mma cta_group::2", "tcgen05.commit multicast", "multicast::cluster",
                "cluster launch"], ["cp.async.cg (16 B)", "tcgen05.mma cta_group::1"])
SIGNATURES = {
    ("sm100", "0"): (["cp.async.cg (16 B)", "tcgen05.mma cta_group::1", "tcgen05.commit", "tcgen05.ld",
                      "fence.proxy.async.shared::cta", "st.global"], ["bulk tensor load", "bulk tensor store"]),
    ("sm100", "1"): (["cp.async.cg (16 B)", "tcgen05.mma cta_group::1", "tcgen05.commit", "tcgen05.ld",
                      "fence.proxy.async.shared::cta", "st.global"], ["bulk tensor load", "bulk tensor store"]),
    ("sm100", "2a"): _TMA_SM100,
    ("sm100", "2b"): _TMA_SM100,
    ("sm100", "3"): _TMA_SM100,
    ("sm100", "4"): _PAIR_SM100,
    ("sm100", "5"): (_PAIR_SM100[0] + ["bulk tensor store", "fence.proxy.async.shared::cta"], _PAIR_SM100[1]),
    ("sm90", "0"): (["cp.async.cg (16 B)", "wgmma.mma_async", "fence.proxy.async.shared::cta", "st.global"],
                    ["bulk tensor load", "setmaxnreg"]),
    ("sm90", "1"): (["cp.async.cg (16 B)", "wgmma.mma_async", "fence.proxy.async.shared::cta", "st.global"],
                    ["bulk tensor load", "setmaxnreg"]),
    ("sm90", "2a"): (["bulk tensor load", "mbarrier complete_tx", "wgmma.mma_async"], ["cp.async.cg (16 B)", "setmaxnreg"]),
    ("sm90", "2b"): (["bulk tensor load", "wgmma.mma_async", "setmaxnreg"], ["cp.async.cg (16 B)"]),
    ("sm90", "3"): (["bulk tensor load", "wgmma.mma_async", "setmaxnreg"], ["cp.async.cg (16 B)"]),
    ("sm90", "4"): (["bulk tensor load", "wgmma.mma_async", "setmaxnreg", "multicast::cluster"],
                    ["cp.async.cg (16 B)"]),
    # stmatrix would be the natural instruction, but it moves 16-bit elements: a wgmma fp32 fragment gives each
    # lane two adjacent columns, which stmatrix would scatter to columns {0,2,4,6}. For fp32 C the
    # registers -> smem step is st.shared (as in CUTLASS's and quack's sm90 epilogues); see phase 5's docstring.
    ("sm90", "5"): (["bulk tensor load", "wgmma.mma_async", "setmaxnreg", "multicast::cluster", "bulk tensor store",
                     "st.shared", "fence.proxy.async.shared::cta"], ["cp.async.cg (16 B)", "st.global"]),
}
SIGNATURES[("sm90", "6")] = SIGNATURES[("sm90", "5")]  # everything of 5; the persistence is checked below
# everything of 6, plus the stream-K exchange: remote (DSMEM) stores counted on the peer's mbarrier
SIGNATURES[("sm90", "7")] = (SIGNATURES[("sm90", "6")][0] + ["st.async (DSMEM)"], SIGNATURES[("sm90", "6")][1])
# everything of 6, plus the turns: a warpgroup hands the tensor pipe / the staging buffers on with bar.arrive
SIGNATURES[("sm90", "8")] = (SIGNATURES[("sm90", "6")][0] + ["bar.arrive"], SIGNATURES[("sm90", "6")][1] + ["st.async (DSMEM)"])
# split-K in a cluster: phase 3's mainloop, partial tiles read from the peers' smem between cluster barriers
SIGNATURES[("sm90", "9")] = (["bulk tensor load", "wgmma.mma_async", "setmaxnreg", "cluster launch", "cluster barrier",
                              "ld.shared::cluster (DSMEM)", "st.global"],
                             ["cp.async.cg (16 B)", "bulk tensor store", "multicast::cluster", "st.async (DSMEM)"])
# the same kernel on C^T = B^T A^T, launched early (programmatic dependent launch)
SIGNATURES[("sm90", "10")] = (SIGNATURES[("sm90", "9")][0] + ["griddepcontrol (PDL)"], SIGNATURES[("sm90", "9")][1])
SIGNATURES[("sm100", "6")] = SIGNATURES[("sm100", "5")]  # everything of 5; persistence: test_sm100_phase6.py
SIGNATURES[("sm100", "7")] = SIGNATURES[("sm100", "6")]  # everything of 6; the split: test_sm100_phase7.py
# split-K in a cluster: phase 3's cta_group::1 mainloop per K range, partial tiles read from every CTA's smem
# between cluster barriers, st.global of C; mapa and the reduce order: tests/test_sm100_phase9.py
SIGNATURES[("sm100", "9")] = (_TMA_SM100[0] + ["cluster launch", "cluster barrier", "ld.shared::cluster (DSMEM)",
                                               "st.global"],
                              _TMA_SM100[1] + ["tcgen05.mma cta_group::2", "bulk tensor store", "multicast::cluster",
                                               "st.async (DSMEM)", "griddepcontrol (PDL)"])
# the same kernel on C^T = B^T A^T, launched early (programmatic dependent launch)
SIGNATURES[("sm100", "10")] = (SIGNATURES[("sm100", "9")][0] + ["griddepcontrol (PDL)"],
                               SIGNATURES[("sm100", "9")][1][:-1])

# phase 11's default (every epilogue field off) is phase 10's kernel: its signature, and its PTX apart from the
# entry's name (test_phase11_without_epilogue_is_phase10); the epilogue's own instructions:
# test_phase11_epilogue_in_the_ptx
SIGNATURES[("sm90", "11")] = SIGNATURES[("sm90", "10")]
SIGNATURES[("sm100", "11")] = SIGNATURES[("sm100", "10")]

# Other operands on every sm100 TMA phase (phases.operands): x @ W.T with a bf16 nn.Linear weight into a bf16 C
# (B K-major) and an M-major fp16 A into an fp16 C. Each keeps its step's signature; the instruction
# descriptor says the operands' type and majors, and a 16-bit C is rounded from the fp32 accumulator.
SM100_TMA_PHASES = ["2a", "2b", "3", "4", "5", "6", "7", "9", "10", "11"]
SM100_VARIANTS = [Operands.of("nt", "bf16", "bf16"), Operands.of("tn", "fp16", "fp16")]


@pytest.mark.parametrize("target", ["sm_100a", "sm_103a"])
@pytest.mark.parametrize("ops", SM100_VARIANTS, ids=lambda o: o.label().replace(" ", "-"))
@pytest.mark.parametrize("phase", SM100_TMA_PHASES)
def test_sm100_operand_variants_keep_the_signature(phase, ops, target):
    from ptxkit.isa import KIND_F16_TYPES, decode_idesc
    from sm100_compiled import compiled, resources

    key = f"sm100:{phase}"
    kern, ptx = compiled(key, target, None, ops)
    counts = census(ptx)
    present, absent = SIGNATURES[("sm100", phase)]
    for name in present:
        assert counts[name] > 0, f"{key} {ops.label()} for {target}: expected {name} in the PTX"
    for name in absent:
        assert counts[name] == 0, f"{key} {ops.label()} for {target}: {name} must not appear"
    res = resources(key, target, None, ops)
    assert res["spill_stores"] == res["stack_bytes"] == 0 and res["registers"] <= 255, res
    attrs = kern.attributes()
    assert 0 < attrs["smem_bytes"] <= SMEM_LIMIT and attrs["tmem_cols"] <= TMEM_COLS
    ab = {"fp16": "f16", "bf16": "bf16"}[ops.ab]
    # constants that decode as a dense M=128/256 kind::f16 descriptor (others merely look like one)
    descs = [d for d in map(decode_idesc, instruction_descriptors(ptx))
             if d.reserved_ok and not (d.sparse or d.negate_a or d.negate_b) and d.m == kern.mma_tiler[0]]
    assert descs, f"{key}: no instruction descriptor constant in the PTX"
    kops = ops.swapped() if getattr(kern, "swap_ab", False) else ops  # the majors of the kernel's own views
    for d in descs:
        assert (d.atype, d.btype) == (KIND_F16_TYPES[ab], KIND_F16_TYPES[ab]), d
        assert (d.transpose_a, d.transpose_b) == (kops.a_major == "m", kops.b_major == "n"), d
    rounding = f"cvt.rn.{ab if ops.c == ops.ab else {'fp16': 'f16'}.get(ops.c, ops.c)}x2.f32"
    assert rounding in ptx, f"{key}: a 16-bit C is rounded from the fp32 accumulator ({rounding})"


def _cases():
    for e in registry.all_entries():
        for tgt in arch.TARGETS[e.arch]:
            yield pytest.param(e, tgt, id=f"{e.key}-{tgt}")


@lru_cache(maxsize=None)
def _inspect(key, tgt, p=BIG):
    e = registry.resolve(key, "sm90")
    return inspect_phase(e, tgt, p)


@pytest.mark.parametrize("entry,target", list(_cases()))
def test_signature_and_resources(entry, target):
    ins = _inspect(entry.key, target)
    present, absent = SIGNATURES[(entry.arch, entry.phase)]
    for name in present:
        assert ins.census[name] > 0, f"{entry.key} for {target}: expected {name} in the PTX"
    for name in absent:
        assert ins.census[name] == 0, f"{entry.key} for {target}: {name} must not appear ({ins.census[name]} found)"
    assert ins.spill_bytes == 0 and ins.stack_bytes == 0, f"{entry.key}: spills/stack {ins.spill_bytes}/{ins.stack_bytes}"
    assert ins.registers is not None and ins.registers <= 255
    assert ins.smem_bytes is not None and 0 < ins.smem_bytes <= SMEM_LIMIT, f"smem {ins.smem_bytes}"
    if entry.arch == "sm100":
        assert ins.tmem_cols is not None and 0 < ins.tmem_cols <= TMEM_COLS
        assert ins.census["wgmma.mma_async"] == 0
    else:
        assert ins.census["tcgen05.mma cta_group::1"] + ins.census["tcgen05.mma cta_group::2"] == 0


@pytest.mark.parametrize("phase", ["2b", "3"])
def test_sm90_consumer_warpgroups(phase):
    """2b: a producer + one consumer warpgroup; 3: a producer + two consumer warpgroups (128x256 tile)."""
    ins = _inspect(f"sm90:{phase}", "sm_90a")
    assert ins.threads == {"2b": 256, "3": 384}[phase]


def test_sm100_wide_tile_uses_n256():
    """Phase 3's MMA is m128n256k16: the accumulator needs 256 TMEM columns (BN=256 fp32)."""
    ins2, ins3 = _inspect("sm100:2b", "sm_100a"), _inspect("sm100:3", "sm_100a")
    assert ins2.tmem_cols >= 128 and ins3.tmem_cols >= 256
    assert ins3.threads >= 256, "phase 3 drains 256 columns with 8 warps"
    descs = [idesc_fields(v) for v in instruction_descriptors(ins3.ptx)]
    if descs:  # when the descriptor is a PTX constant, it must encode N=256 and MN-major B
        assert any(d["n"] == 256 and d["b_mn_major"] for d in descs), descs


@pytest.mark.parametrize("entry,target", list(_cases()))
def test_attributes_match_the_ptx(entry, target):
    """What the harness reads from a kernel (declared on GemmPhase, filled by _setup_attributes) is what the
    generated code says: .reqntid = threads; a cluster launch has .reqnctapercluster = cluster."""
    ins = _inspect(entry.key, target)
    reqntid = re.findall(r"\.reqntid\s+(\d+),\s*(\d+),\s*(\d+)", ins.ptx)
    assert reqntid, f"{entry.key}: no .reqntid in the PTX"
    assert {int(x) * int(y) * int(z) for x, y, z in reqntid} == {ins.threads}
    cluster = re.findall(r"\.reqnctapercluster\s+(\d+),\s*(\d+),\s*(\d+)", ins.ptx)
    assert entry.cluster_ctas() == ins.cluster  # what `cute-gemm list` says without compiling
    if ins.cluster > 1:
        assert cluster and {int(x) * int(y) * int(z) for x, y, z in cluster} == {ins.cluster}
    else:
        assert not cluster or {int(x) * int(y) * int(z) for x, y, z in cluster} == {1}


@pytest.mark.parametrize("p", [Problem(4096, 4096, 4096), Problem(1000, 3000, 520), Problem(1, 8, 8),
                               Problem(129, 264, 4104)], ids=str)
def test_sm90_grids_cover_ragged_shapes(p):
    """One CTA per (partial) tile for phases 2a-5; phase 6 at most one CTA per SM; no grid is empty."""
    ceil = lambda a, b: -(-a // b)  # noqa: E731
    for phase, (bm, bn) in {"2a": (128, 128), "2b": (128, 128), "3": (128, 256)}.items():
        assert registry.get("sm90", phase).make().grid(p.m, p.n, p.k) == (ceil(p.m, bm) * ceil(p.n, bn), 1, 1)
    for phase in ("4", "5"):  # pairs along M: a pair whose second tile is past M still launches both CTAs
        assert registry.get("sm90", phase).make().grid(p.m, p.n, p.k) == (ceil(p.m, 256) * 2 * ceil(p.n, 256), 1, 1)
    k6 = registry.get("sm90", "6").make()
    tiles = ceil(p.m, 256) * ceil(p.n, 256)
    assert k6.grid(p.m, p.n, p.k) == (2 * min(tiles, k6.cfg.sm_count // 2), 1, 1)
    k8 = registry.get("sm90", "8").make()  # pairs of 128x192 tiles, each warpgroup a whole tile
    tiles8 = ceil(p.m, 256) * ceil(p.n, 192)
    assert k8.grid(p.m, p.n, p.k) == (2 * min(tiles8, k8.cfg.sm_count // 2), 1, 1)


def test_sm90_phase8_ping_pong_resources():
    """Phase 8: a producer + two consumer warpgroups, each holding a whole 128x192 fp32 tile in registers
    (192 per thread) under setmaxnreg, no spills; 4 stages of 40 KiB + the shared C staging; 4 k16 steps x
    2 row blocks = 8 wgmma per stage; the turns are handed on with bar.arrive (2 turns x handing on + start)."""
    ins = _inspect("sm90:8", "sm_90a")
    assert ins.threads == 384 and ins.cluster == 2 and ins.spill_bytes == 0
    assert ins.smem_bytes >= 4 * (128 + 192) * 64 * 2 + 2 * 128 * 32 * 4
    assert ins.census["wgmma.mma_async"] == 8 and ins.census["setmaxnreg"] == 2
    assert ins.census["bar.arrive"] == 4 and ins.census["bar.arrive"] <= ins.census["bar.sync"]


def test_sm90_phase6_is_persistent():
    """Phase 6 launches at most one CTA per SM and loops over tiles; phase 5 launches one CTA per tile."""
    p = BIG
    ins5, ins6 = _inspect("sm90:5", "sm_90a"), _inspect("sm90:6", "sm_90a")
    tiles = (p.m // 128) * (p.n // 256)
    assert ins5.grid_ctas == tiles
    sm_count = ins6.config["sm_count"]
    assert ins6.grid_ctas <= sm_count < tiles
    assert ins6.grid_ctas % ins6.cluster == 0
    assert ins6.config["epi_stages"] >= 2, "the TMA store of tile i must drain while tile i+1 runs"
    # the tile loops step by the (runtime) cluster count: no compile-time tile count is baked in
    assert "st.async" not in ins6.ptx, "phase 6 is the persistent lesson; the stream-K exchange is phase 7's"


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("fam,target", [("sm100", "sm_100a"), ("sm100", "sm_103a"), ("sm90", "sm_90a")])
def test_phase1_nstages_configurable(fam, target, stages):
    """Phase 1's ring depth is a config knob: each NSTAGES compiles, with one cp.async group per stage in
    flight and smem growing by one stage (16 KiB of A+B) per step."""
    import dataclasses

    e = registry.get(fam, "1")
    cfg = dataclasses.replace(e.default_config(), stages=stages)
    ins = inspect_phase(e, target, BIG, config=cfg)
    assert ins.config["stages"] == stages
    assert ins.census["cp.async.cg (16 B)"] > 0 and ins.spill_bytes == 0
    stage_bytes = (cfg.bm + cfg.bn) * cfg.bk * 2
    assert stages * stage_bytes <= ins.smem_bytes < (stages + 1) * stage_bytes


@pytest.mark.parametrize("key,over,message", [
    # the stream-K exchange moves one 64-row block per warpgroup: a 256-row tile computed wrong C on the
    # H200 (half of each split tile summed) before phase 7 refused it
    ("sm90:7", {"bm": 256, "bn": 192, "bk": 32, "stages": 5}, "phase 7 needs bm == 128"),
    # one C staging buffer: the slab wait would have to come before the slab's own smem writes
    ("sm90:6", {"epi_stages": 1}, "epi_stages >= 2"),
    ("sm90:8", {"bm": 64}, "a warpgroup's tile is two wgmma row blocks"),
    ("sm90:9", {"bm": 320}, "bm is 64, 128 or 192"),
    # 256 weight rows: two warpgroups of 128, each holding 128 x bn / 128 accumulators -- 152 tokens spilled
    ("sm90:10", {"bm": 256, "bn": 152, "bk": 64, "stages": 4, "split_k": 1}, "accumulator registers per thread"),
    # three warpgroups of 64 rows keep 32 registers of addressing: 192 x 208 (104 + 24 of 128) failed in ptxas
    ("sm90:10", {"bm": 192, "bn": 208, "bk": 64, "stages": 4, "split_k": 1}, "accumulator registers per thread"),
    ("sm90:9", {"split_k": 16}, "split_k is 1..8"),
    ("sm90:9", {"bm": 128, "bn": 256, "stages": 8}, "fewer stages or a smaller tile"),
    # the CTA's register pool would not hold the accumulators at 2 CTAs per SM (ptxas refused it, late)
    ("sm90:10", {"bn": 256, "bk": 64, "stages": 2, "ctas_per_sm": 2}, "accumulator registers per thread"),
    ("sm90:10", {"bn": 32, "split_k": 16}, "split_k is 1..8"),
    ("sm90:10", {"bn": 12}, "wgmma's N is 8..256 in steps of 8"),
])
def test_sm90_configs_a_phase_cannot_run_are_refused_at_compile(key, over, message):
    """A config a kernel would run wrong (or not build) fails its compile with the reason, before any launch."""
    import dataclasses

    e = registry.get(*key.split(":"))
    with pytest.raises(AssertionError, match=message):
        inspect_phase(e, "sm_90a", BIG, config=dataclasses.replace(e.default_config(), **over))


def test_sm90_a_tile_of_8_x_odd_columns_with_n_major_b_is_refused_before_the_compile():
    """A tile of 8 x an odd number loads a box 8 rows taller than its MMA (its 8-row swizzle atoms run along K): not
    with N-major weights. The kernel asserts it at compile time; the phase's operand rules say it first (so
    ``phase="best"`` never offers it), before anything is traced."""
    import dataclasses

    e = registry.get("sm90", "9")
    with pytest.raises(ValueError, match=r"bn=88 \(8 x an odd number\) needs a column-major B"):
        inspect_phase(e, "sm_90a", BIG, config=dataclasses.replace(e.default_config(), bn=88))


def test_sm90_phase9_splits_k_only_in_a_cluster():
    """split_k=1: a plain launch (no cluster, no DSMEM), phase 3's register epilogue; split_k=4: a cluster of
    4 whose reduce reads every peer's partial tile (one ld.shared::cluster per rank and vector)."""
    import dataclasses

    e = registry.get("sm90", "9")
    one = inspect_phase(e, "sm_90a", BIG, config=dataclasses.replace(e.default_config(), split_k=1))
    assert one.cluster == 1 and one.census["cluster barrier"] == 0 and one.census["ld.shared::cluster (DSMEM)"] == 0
    four = inspect_phase(e, "sm_90a", BIG, config=dataclasses.replace(e.default_config(), split_k=4))
    assert four.cluster == 4 and four.census["cluster barrier"] == 4
    # each CTA reduces 1/S of the tile from S ranks: as many vector loads per thread as with S=2
    assert four.census["ld.shared::cluster (DSMEM)"] == _inspect("sm90:9", "sm_90a").census["ld.shared::cluster (DSMEM)"]
    assert four.grid_ctas == 4 * one.grid_ctas


def test_sm90_phase10_puts_the_tokens_on_the_mma_n():
    """Phase 10 computes C^T: its wgmma is m64n{bn}k16 with bn the token tile (16 by default), the weights
    (a row-major B seen as B^T) its MN-major A; the grid is N/64 weight-row tiles x the split."""
    ins = _inspect("sm90:10", "sm_90a")
    assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n16k16\.f32\.f16\.f16", ins.ptx)
    cfg = registry.get("sm90", "10").default_config()
    assert ins.grid_ctas == (BIG.n // 64) * (-(-BIG.m // cfg.bn)) * cfg.split_k


def test_sm90_phase10_weights_evict_first_only_when_asked():
    """``evict_first_a``: the weights' TMA loads (phase 10's A) carry the evict-first L2 policy (CUTLASS's
    CacheHintSm90::EVICT_FIRST, 0x12F0000000000000) as their cache-hint operand; the tokens' loads keep the DSL's
    operand 0, and without the switch nothing carries it (the PTX of every config that leaves it off is the old one)."""
    import dataclasses

    from phases.sm90.phase9_split_k import EVICT_FIRST

    e = registry.get("sm90", "10")
    cfg = dataclasses.replace(e.default_config(), bm=128, bn=128, bk=64, stages=7, split_k=1)
    policy = re.compile(r"mov\.b64\s+(%rd\d+),\s*(\d+);")
    loads = re.compile(r"cp\.async\.bulk\.tensor\.2d\.shared::cta\.global\.tile\.mbarrier::complete_tx::bytes"
                       r"\.L2::cache_hint \[[^]]+\], \[[^]]+\], \[[^]]+\], (%rd\d+);")
    for on in (True, False):
        ins = inspect_phase(e, "sm_90a", BIG, config=dataclasses.replace(cfg, evict_first_a=on))
        values = dict(policy.findall(ins.ptx))
        hints = [int(values[r]) for r in loads.findall(ins.ptx)]
        # per stage, A's box (the weights: two loads of 64 rows, one per 128-B swizzle atom of its M-major rows), then B's
        assert len(hints) == 3, hints
        assert hints == ([EVICT_FIRST, EVICT_FIRST, 0] if on else [0, 0, 0]), hints


@pytest.mark.parametrize("bn", __import__("cute_gemm.runtime.choose", fromlist=["x"]).TOKEN_TILES)
def test_sm90_phase10_every_token_tile_compiles(bn):
    """Every token tile ``phase="best"`` may pick builds, with an m64n{bn}k16 wgmma (the DSL's compiler aborts the process
    building a TMA box of 8 x an odd number of rows: those tiles load a box 8 rows taller, which the ring holds)."""
    import dataclasses

    from cute_gemm.runtime.choose import box_rows

    e = registry.get("sm90", "10")
    bk = 128 if bn <= 128 else 64
    stages = min(8, (227 * 1024 - 2048) // ((64 + box_rows(bn)) * bk * 2))
    cfg = dataclasses.replace(e.default_config(), bn=bn, bk=bk, stages=stages, split_k=2)
    ins = inspect_phase(e, "sm_90a", Problem(bn, 4096, 4096), config=cfg)
    assert ins.spill_bytes == 0 and re.search(rf"wgmma\.mma_async\.sync\.aligned\.m64n{bn}k16\.", ins.ptx)


def _weight_tiles_of_256_rows():
    """Every 256-row weight tile ``phase="best"`` may pick past 256 tokens (2-4 token tiles, split 1 or 2)."""
    from cute_gemm.runtime.choose import split_candidates

    seen = {}
    for m in range(257, 513):
        for phase, over in split_candidates(m, 8192, 4096):
            if phase == "10" and over["bm"] == 256:
                seen[tuple(sorted(over.items()))] = over
    return list(seen.values())


@pytest.mark.parametrize("over", _weight_tiles_of_256_rows(), ids=lambda o: f"bn{o['bn']}-split{o['split_k']}")
def test_sm90_phase10_weight_tiles_of_256_rows(over):
    """Two consumer warpgroups of 128 weight rows each (384 threads): each issues the m64 wgmma twice per k16 step
    (8 per 64-deep k-tile), its 128 x bn accumulators held without a spill at the entry count of 168 registers."""
    import dataclasses

    e = registry.get("sm90", "10")
    cfg = dataclasses.replace(e.default_config(), **over)
    ins = inspect_phase(e, "sm_90a", Problem(320, 8192, 4096), config=cfg)
    assert ins.threads == 384 and ins.spill_bytes == 0 and ins.stack_bytes == 0, ins.as_dict()
    assert ins.census["wgmma.mma_async"] == 8 and re.search(rf"wgmma\.mma_async\.sync\.aligned\.m64n{over['bn']}k16\.",
                                                            ins.ptx)
    assert ins.smem_bytes <= 232_448


def test_sm90_phase9_deep_pair_compiles():
    """Phase 9's 64 x 64 tile with phase 10's 128-deep ring (``phase="best"`` at 113-128 tokens): one consumer warpgroup
    (256 threads), 8 m64n64k16 wgmma per k-tile, 7 stages of 32 KiB in one CTA's smem, no spill."""
    import dataclasses

    e = registry.get("sm90", "9")
    cfg = dataclasses.replace(e.default_config(), bm=64, bn=64, bk=128, stages=7, split_k=1, use_pdl=True)
    ins = inspect_phase(e, "sm_90a", Problem(128, 4096, 4096), config=cfg)
    assert ins.threads == 256 and ins.spill_bytes == 0 and ins.stack_bytes == 0, ins.as_dict()
    assert ins.census["wgmma.mma_async"] == 8 and re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n64k16\.", ins.ptx)
    assert 7 * 32 * 1024 <= ins.smem_bytes <= 232_448


@pytest.mark.parametrize("m,n,k", [(434, 5120, 6144), (512, 5120, 3072), (259, 2560, 7168), (404, 5120, 10240)])
def test_sm90_phase10_three_token_tiles(m, n, k):
    """The three-token-tile configs ``phase="best"`` picks or ranks first among them past 256 tokens build without a
    spill, their token tile a third of the tokens (8 x odd ones load a box 8 rows taller: ``box_n``)."""
    from cute_gemm.runtime import choose

    third = choose._ceil(choose._ceil(m, 3), 8) * 8
    e = registry.get("sm90", "10")
    rows = [r for r in choose.explain("sm90", m, n, k) if r["phase"] == "10" and r["config"].bn == third]
    cfg = min(rows, key=lambda r: r["cost"])["config"]
    ins = inspect_phase(e, "sm_90a", Problem(m, n, k), config=cfg)
    assert ins.spill_bytes == 0 and ins.stack_bytes == 0 and ins.smem_bytes <= 232_448, ins.as_dict()
    assert re.search(rf"wgmma\.mma_async\.sync\.aligned\.m64n{third}k16\.", ins.ptx)


# ------------------------------------------------------------------------------- phase 11: the fused epilogue
_ENTRY = re.compile(r"\.entry\s+(\w+)")


def _ptx(fam, target, phase, over=None, ops=None):
    e = registry.get(fam, phase)
    return inspect_phase(e, target, Problem(16, 4096, 4096), e.configured(dict(over)) if over else None, ops)


@pytest.mark.parametrize("fam,target", [("sm90", "sm_90a"), ("sm100", "sm_100a")])
def test_phase11_without_epilogue_is_phase10(fam, target):
    """Every epilogue field off: phase 11 compiles to phase 10's PTX, instruction for instruction; only the kernel's
    entry name (it carries the class's module and name) differs."""
    ten, eleven = _ptx(fam, target, "10").ptx, _ptx(fam, target, "11").ptx
    (name10,), (name11,) = _ENTRY.findall(ten), _ENTRY.findall(eleven)
    assert "phase11" in name11 and "phase10" in name10
    assert eleven != ten and eleven.replace(name11, "KERNEL") == ten.replace(name10, "KERNEL")


EPILOGUES = [  # (fields, operands): every activation, each term alone and all together, a 16-bit C
    ({"bias": True, "activation": "gelu", "residual": True}, None),
    ({"bias": True}, None),
    ({"activation": "relu"}, None),
    ({"activation": "silu", "residual": True}, None),
    ({"bias": True, "activation": "gelu", "residual": True}, Operands.of("nt", "bf16", "bf16")),
]


@pytest.mark.parametrize("fam,target", [("sm90", "sm_90a"), ("sm100", "sm_100a"), ("sm100", "sm_103a")])
@pytest.mark.parametrize("over,ops", EPILOGUES, ids=["bias+gelu+residual", "bias", "relu", "silu+residual",
                                                      "bias+gelu+residual-nt-bf16"])
def test_phase11_epilogue_in_the_ptx(fam, target, over, ops):
    """The epilogue on: the activation's ``tanh.approx.f32`` (gelu, silu) or ``max.f32`` (relu), the bias's and the
    residual's vectors loaded with ``ld.global`` straight to registers (phase 10 loads nothing with it), and
    otherwise phase 10's kernel: the same census (the wgmma / tcgen05 mainloop, the DSMEM reduce of the split,
    the cluster, the one store path), the same smem, no spill."""
    ins, ten = _ptx(fam, target, "11", over, ops), _ptx(fam, target, "10", None, ops)
    act = over.get("activation", "none")
    tanh = len(re.findall(r"\btanh\.approx\.f32\b", ins.ptx))
    assert (tanh > 0) == (act in ("gelu", "silu")) and not re.search(r"\btanh\.approx", ten.ptx)
    assert bool(re.search(r"\bmax\.f32\b", ins.ptx)) == (act == "relu")
    loads = re.findall(r"\bld\.global\.(v\d\.b\d+)", ins.ptx)
    assert not re.search(r"\bld\.global\.", ten.ptx)
    if over.get("bias"):
        assert "v4.b16" in loads, loads  # 16-bit bias values, 4 per load
    if over.get("residual") and (ops is None or ops.c == "fp32"):
        assert "v4.b32" in loads, loads  # fp32 residual values, one 16-B vector per C vector
    assert bool(loads) == bool(over.get("bias") or over.get("residual"))
    assert ins.census == ten.census, {k: (ins.census[k], ten.census[k]) for k in ins.census if ins.census[k] != ten.census[k]}
    assert ins.smem_bytes == ten.smem_bytes and ins.cluster == ten.cluster and ins.grid_ctas == ten.grid_ctas
    assert ins.spill_bytes == 0 and ins.stack_bytes == 0 and ins.registers <= 255


def test_phase11_sm90_split_k_1_keeps_the_smem_epilogue():
    """sm90 phase 9's register epilogue (split_k = 1, fp32 C: st.global straight from the wgmma fragment) has no
    16-B C vector to add a bias vector to: with an epilogue on, phase 11 keeps the partial-tile path -- the tile
    stored to smem, read back as C's vectors (through the cluster window, a cluster of one) -- which loads the bias."""
    over = {"bias": True, "activation": "gelu", "split_k": 1}
    ins = _ptx("sm90", "sm_90a", "11", over)
    plain = _ptx("sm90", "sm_90a", "11", {"split_k": 1})
    assert ins.cluster == plain.cluster == 1 and ins.census["cluster barrier"] == plain.census["cluster barrier"] == 0
    assert plain.census["st.shared"] == plain.census["ld.shared::cluster (DSMEM)"] == 0  # the register epilogue
    assert ins.census["st.shared"] > 0 and ins.census["ld.shared::cluster (DSMEM)"] > 0  # the partial-tile path
    assert re.search(r"\bld\.global\.v4\.b16", ins.ptx) and re.search(r"\btanh\.approx\.f32", ins.ptx)
    assert ins.spill_bytes == 0
