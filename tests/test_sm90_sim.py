"""Every sm90 phase's compiled PTX, run on the PTX machine for a small ragged problem (CPU only).

``sm90kit.harness90.simulate90`` runs each cluster of the launch on ``sm90kit.machine90.Sm90Machine``
and checks that every element of C is stored once with exactly its row of A times its column of B
over all of K, that nothing lands outside C, and that every shared-memory access is ordered by the
kernel's own synchronization (a missing or misplaced wait, fence, arrival, barrier or wgmma wait is
a race even when the simulated schedule was lucky; a state where no warp can proceed is a deadlock).
What the machine adds for sm90: wgmma (descriptors, the D fragment, groups retired by wait_group),
named-barrier arrives, DSMEM reads, programmatic dependent launch.

The problems are small and ragged (M, N, K not tile multiples; phases 0-1 take tile multiples): rings
that wrap, a persistent cluster walking several tiles (6, 8), a stream-K split (7), a split-K reduce
(9), the swap-AB kernel (10) and its fused epilogue (11: bias, silu and residual, loaded and computed in
the kernel's registers, each element evaluated by the check; tests/test_epilogue_sim.py runs every kind).
Configs shrink the tiles where the step does not depend on their size (bn=128 for the 128x256 phases): the
simulation's time is the wgmma's operand reads. ``-k phaseN`` selects a phase (``-k "phase1 and not phase10
and not phase11"`` phase 1 alone).
"""

import dataclasses

import pytest

from phases.operands import Operands

from cute_gemm.runtime import registry
from sm90kit.harness90 import simulate90

# phase -> (M, N, K, config overrides): what each run exercises
CASES = {
    "0": (128, 128, 96, {}),  # 3 k-blocks through the 2-stage double buffer
    "1": (128, 128, 192, {}),  # 6 k-blocks: the 4-slot cp.async ring wraps
    "2a": (130, 72, 200, {}),  # 2 CTAs (the second holds 2 rows), 4 k-tiles: the 3-stage ring wraps
    "2b": (130, 72, 200, {}),
    "3": (100, 120, 264, {"bn": 128}),  # two consumer warpgroups, 5 k-tiles through 4 stages
    "4": (200, 120, 200, {"bn": 128, "stages": 2}),  # the pair multicasts B; the ring wraps twice
    "5": (200, 120, 136, {"bn": 128}),  # TMA-store epilogue over the B ring, clipped at M and N
    "6": (300, 120, 72, {"bn": 128, "stages": 2, "sm_count": 2}),  # one cluster walks 2 tiles
    "7": (200, 264, 200, {"bn": 128, "sm_count": 4}),  # 3 tiles on 2 clusters: the third split along K
    "8": (520, 120, 72, {"bn": 128, "sm_count": 2}),  # 3 tiles: warpgroup 0 runs tiles 0 and 2
    "9": (100, 72, 136, {}),  # 3 k-tiles split 1 + 2 over the cluster, reduced through DSMEM
    "10": (40, 72, 264, {}),  # C^T: 2 weight-row tiles x 3 token tiles, split-K, PDL
    "11": (40, 72, 264, {"bias": True, "activation": "silu", "residual": True}),  # phase 10 + the fused epilogue
}


def case_id(phase: str) -> str:
    m, n, k, over = CASES[phase]
    return f"phase{phase}-{m}x{n}x{k}" + "".join(f"-{a}{b}" for a, b in over.items())


def config(phase: str):
    over = CASES[phase][3]
    return dataclasses.replace(registry.get("sm90", phase).default_config(), **over) if over else None


def simulate_config(phase: str, m: int, n: int, k: int, over: dict, ops=None):
    """Phase ``phase`` with the config overrides ``over`` (and ``ops``: None, the worklog's) run at (m, n, k) on the
    PTX machine; fails with the run's report unless every check passed."""
    cfg = dataclasses.replace(registry.get("sm90", phase).default_config(), **over)
    res = simulate90(f"sm90:{phase}", m, n, k, cfg, ops)
    assert res.ok, res.report()


@pytest.mark.parametrize("phase", list(CASES), ids=case_id)
def test_simulation(phase):
    m, n, k, _ = CASES[phase]
    res = simulate90(f"sm90:{phase}", m, n, k, config(phase))
    assert res.ok, res.report()
    # the descriptors the wgmma used: both operands from swizzled smem, the operands' majors
    assert res.mma_kinds, "no wgmma ran"
    for kind in res.mma_kinds:
        _, n_mma, a_desc, a_mn_major, b_desc, b_mn_major = kind
        assert a_desc.swizzle_mode and b_desc.swizzle_mode, kind
        if phase in ("10", "11"):  # C^T: the weights (a row-major B seen as B^T) are the MN-major A
            assert (a_mn_major, b_mn_major) == (True, False), kind
        else:  # the worklog's: A K-major, B N-major
            assert (a_mn_major, b_mn_major) == (False, True), kind


def test_every_phase_has_a_run():
    assert set(CASES) == {e.phase for e in registry.all_entries("sm90")}


# phase 10's token-tile multicast (``cluster_m``): the cluster's CTAs each load a slice of the token tile and
# multicast it, arrive on each other's empty barriers and (with a split) reduce with their own K-range peers
MULTICAST = {
    "cm2-ragged": (40, 136, 264, {"bm": 64, "bn": 16, "split_k": 1, "cluster_m": 2, "stages": 2}),  # 3 tiles: 1 past N
    "cm2-split2": (40, 200, 264, {"bm": 64, "bn": 16, "split_k": 2, "cluster_m": 2, "stages": 2}),  # rank m + 2 k
}


# three consumer warpgroups (192 weight rows: 3 tiles for N=400, the last ragged) and 3-way splits, whose tile
# lines do not divide by 3 (16 token lines: ranks reduce 6, 6 and 4)
WIDE = {
    "bm192-split3": ("10", 40, 400, 264, {"bm": 192, "bn": 16, "split_k": 3, "stages": 2}),
    "bm192-cm2": ("10", 40, 400, 264, {"bm": 192, "bn": 16, "split_k": 1, "cluster_m": 2, "stages": 2}),
    "bm64-split3": ("10", 40, 136, 264, {"bm": 64, "bn": 16, "split_k": 3, "stages": 2}),
    "phase9-bm192-split3": ("9", 200, 72, 136, {"bm": 192, "split_k": 3, "stages": 3}),
    # a token tile in a step of 16 that is no power of two (80 for 70 tokens), split, 3 k-tiles
    "bn80-split2": ("10", 70, 136, 264, {"bm": 64, "bn": 80, "split_k": 2, "stages": 2}),
    # 256 weight rows in two warpgroups of 128 (each issues the m64 wgmma for two row blocks): 2 tiles for N=296, the
    # second ragged (40 rows), unsplit (the register epilogue) and split 2 (the reduce over 256-row partial tiles)
    "bm256": ("10", 40, 296, 264, {"bm": 256, "bn": 16, "split_k": 1, "stages": 2}),
    "bm256-split2": ("10", 40, 296, 264, {"bm": 256, "bn": 16, "split_k": 2, "stages": 2}),
    # phase 9's 64 x 64 tile with 128-deep k-tiles (best's deep pair at 113-128 tokens): two token tiles (the second
    # 56 rows), two weight tiles (the second 8 columns), 3 k-tiles (the last 8 deep) through 2 stages, PDL
    "phase9-deep-pair": ("9", 120, 72, 264, {"bm": 64, "bn": 64, "bk": 128, "stages": 2, "split_k": 1, "use_pdl": True}),
}


@pytest.mark.parametrize("case", list(WIDE))
def test_simulation_wide_tiles_and_uneven_splits(case):
    simulate_config(*WIDE[case])


# 64-column C slabs for a 16-bit C (``epi_n=64``: 128-B slab rows, half the slabs): the persistent phases' staging
# views, boxes and phase 7's exchange halves (2 of 4 slabs); phase 8's 128 x 192 tile in 3 slabs through 3 buffers
SLAB64 = {
    "phase6": ("6", 300, 200, 72, {"bn": 128, "stages": 2, "sm_count": 2, "epi_n": 64}),
    "phase7-split": ("7", 200, 376, 200, {"bn": 128, "sm_count": 4, "epi_n": 64}),  # 2 tiles + 1 split in the pair
    "phase8-bn192": ("8", 520, 200, 72, {"bn": 192, "sm_count": 2, "epi_n": 64, "epi_stages": 3}),
    # the vendor's prefill tile, 256 x 128 in two warpgroups of 128 rows: 2 slabs of 64 per 64-row block
    "phase6-bm256": ("6", 600, 200, 72, {"bm": 256, "bn": 128, "stages": 2, "sm_count": 2, "epi_n": 64}),
}


@pytest.mark.parametrize("case", list(SLAB64))
def test_simulation_64_column_slabs(case):
    simulate_config(*SLAB64[case], Operands.of("nt", "bf16", "bf16"))


def test_64_column_slabs_need_a_16_bit_c_and_even_halves():
    """A slab row is at most 128 B (32 fp32 columns); phase 7's split pair takes half the slabs each (an even count)."""
    e6, e7 = registry.get("sm90", "6"), registry.get("sm90", "7")
    fp32, bf16 = Operands.of("nt", "bf16", "fp32"), Operands.of("nt", "bf16", "bf16")
    cfg64 = dataclasses.replace(e6.default_config(), epi_n=64)
    assert any("epi_n=64 with an fp32 C" in w for w in e6.make(cfg64, fp32).can_implement(256, 256, 64))
    assert not e6.make(cfg64, bf16).can_implement(256, 256, 64)
    assert e6.configured("epi_n=64") == cfg64  # a field any C takes at the config's level
    odd = dataclasses.replace(e7.default_config(), epi_n=64, bn=192)
    assert any("even number of slabs" in w for w in e7.make(odd, bf16).config_problems())
    assert not e7.make(dataclasses.replace(odd, epi_n=32), bf16).config_problems()


# 16-column C slabs (``epi_n=16``: 32-B rows of a 16-bit C, 64 B of an fp32 one): tile widths that are multiples of 16
# but not of 32, whose tile rounds fill the SMs where 192 leaves a last round part-empty (1024 x 11008: 504 tiles of
# 128 x 176 in 4 full rounds of 132 against 464 of 128 x 192 in 3.5). Phase 8's 176-wide tile in 11 slabs through 11
# buffers, ragged in M and N (the last tile 8 columns wide), in the forward's and dX's layouts, with the fused
# bias + gelu, and 144 wide with an fp32 C (9 slabs): ``choose.fitted_width``'s configs
SLAB16 = {
    "phase8-bn176-nt": ("8", 300, 360, 72, {"bn": 176, "epi_n": 16, "epi_stages": 11, "sm_count": 2},
                        Operands.of("nt", "bf16", "bf16")),
    "phase8-bn176-nn": ("8", 300, 360, 72, {"bn": 176, "epi_n": 16, "epi_stages": 11, "sm_count": 2},
                        Operands.of("nn", "bf16", "bf16")),
    "phase8-bn176-gelu": ("8", 300, 360, 72, {"bn": 176, "epi_n": 16, "epi_stages": 11, "sm_count": 2, "bias": True,
                                              "activation": "gelu"}, Operands.of("nt", "bf16", "bf16")),
    "phase8-bn144-fp32": ("8", 300, 360, 72, {"bn": 144, "epi_n": 16, "epi_stages": 9, "sm_count": 2},
                          Operands.of("nt", "bf16", "fp32")),
    # the third of choose.FITTED_WIDTHS: 160 wide in 32-column slabs, each its own buffer (5)
    "phase8-bn160": ("8", 300, 360, 72, {"bn": 160, "epi_stages": 5, "sm_count": 2}, Operands.of("nt", "bf16", "bf16")),
}


@pytest.mark.parametrize("case", list(SLAB16))
def test_simulation_16_column_slabs(case):
    simulate_config(*SLAB16[case])


def test_16_column_slabs_make_any_multiple_of_16_a_tile_width():
    """bn=176 is refused in slabs of 32 (5.5 slabs) and taken in slabs of 16 cycling through 11 buffers; a slab is at
    least 16 columns (8 would be 16-B rows and 22 stores a tile) and 16 does not help 8-column widths."""
    e8 = registry.get("sm90", "8")
    base = e8.default_config()
    assert any("multiple of 32" in w for w in e8.config_problems(dataclasses.replace(base, bn=176)))
    assert not e8.config_problems(dataclasses.replace(base, bn=176, epi_n=16, epi_stages=11))
    assert any("16, 32, or 64" in w for w in e8.config_problems(dataclasses.replace(base, bn=176, epi_n=8,
                                                                                     epi_stages=11)))
    assert any("multiple of 16" in w for w in e8.config_problems(dataclasses.replace(base, bn=168, epi_n=16,
                                                                                     epi_stages=21)))


# phase 8 as best runs it with a 16-bit C (choose.RING5: a 5-stage ring, raster bands of 16 M-tiles), its turn handed
# on at issue (the default) or, in its first form, after the wgmmas complete (``early_turn=False``): 3 tiles on one
# pair of CTAs, so warpgroup 0 runs tiles 0 and 2 and its second turn comes from the other warpgroup's arrival; the
# fused bias + gelu through the same turns
RING_TURN = {
    "phase8-ring5": ("8", 520, 200, 136, {"stages": 5, "group_m": 16, "sm_count": 2},
                     Operands.of("nt", "bf16", "bf16")),
    "phase8-late-turn": ("8", 520, 120, 136, {"bn": 128, "sm_count": 2, "early_turn": False},
                         Operands.of("tn", "bf16", "bf16")),
    "phase8-early-turn-gelu": ("8", 520, 200, 72, {"stages": 5, "sm_count": 2, "early_turn": True, "bias": True,
                                                   "activation": "gelu"}, Operands.of("nt", "bf16", "bf16")),
    # 128 wide in a 6-stage ring (choose.EXPLORE), 8 k-tiles a tile: the ring wraps inside each tile
    "phase8-bn128-stages6": ("8", 264, 200, 456, {"bn": 128, "stages": 6, "sm_count": 2},
                             Operands.of("nn", "bf16", "bf16")),
    # phase 7 with 4 C staging buffers (choose.EXPLORE): 8 slabs cycling through 4, a split tile's half through them too
    "phase7-4-buffers": ("7", 200, 520, 200, {"sm_count": 4, "epi_stages": 4, "use_pdl": True},
                         Operands.of("nt", "bf16", "bf16")),
    # the tile's bias through smem (bias_smem): cp.async as each tile's mainloop starts, ld.shared slab by slab; N = 200
    # ends in a partial tile (its chunks past N copy the last whole one), and each warpgroup's buffer is reused
    "phase8-bias-smem": ("8", 520, 200, 72, {"stages": 5, "group_m": 16, "sm_count": 2, "bias": True,
                                             "activation": "gelu", "bias_smem": True},
                         Operands.of("nt", "bf16", "bf16")),
    "phase8-bias-smem-gated": ("8", 260, 208, 72, {"stages": 5, "sm_count": 2, "bias": True, "activation": "silu",
                                                   "gated": True, "bias_smem": True},
                               Operands.of("nt", "bf16", "bf16")),
    # the fused epilogue's arithmetic slab by slab behind each slab's barrier.red (epi_spread), a residual included
    "phase8-epi-spread": ("8", 260, 200, 72, {"stages": 5, "sm_count": 2, "bias": True, "activation": "gelu",
                                              "residual": True, "epi_spread": True}, Operands.of("nt", "bf16", "bf16")),
    # ... with deeper store pipelines (bench/runs/epilogue.sh, epi-spread): 3 buffers of 32 columns, 6 of 16
    "phase8-epi-spread-3-buffers": ("8", 260, 200, 72, {"stages": 5, "sm_count": 2, "bias": True, "activation": "gelu",
                                                        "epi_spread": True, "epi_stages": 3},
                                    Operands.of("nt", "bf16", "bf16")),
    "phase8-epi-spread-6x16": ("8", 260, 200, 72, {"stages": 5, "sm_count": 2, "bias": True, "activation": "gelu",
                                                   "epi_spread": True, "epi_n": 16, "epi_stages": 6},
                               Operands.of("nt", "bf16", "bf16")),
    # ... and with the bias preloaded (no residual), which then carries the barrier's value: SwiGLU's pairs
    "phase8-epi-spread-gated": ("8", 130, 208, 72, {"stages": 5, "sm_count": 2, "bias": True, "activation": "silu",
                                                    "gated": True, "epi_spread": True}, Operands.of("nt", "bf16", "bf16")),
    # each slab computed while the previous slab's store reads smem (store_overlap): two barriers a slab, the wait for
    # the store epi_stages slabs back; plain in 2 buffers (an fp32 C too), 3, and 11 of 16 columns (176 wide), the fused
    # bias + gelu through smem, SwiGLU's pairs
    "phase8-store-overlap": ("8", 520, 200, 136, {"stages": 5, "group_m": 16, "sm_count": 2, "store_overlap": True},
                             Operands.of("nt", "bf16", "bf16")),
    "phase8-store-overlap-fp32": ("8", 260, 200, 72, {"sm_count": 2, "store_overlap": True},
                                  Operands.of("nn", "bf16", "fp32")),
    "phase8-store-overlap-3-buffers": ("8", 260, 200, 72, {"stages": 5, "sm_count": 2, "epi_stages": 3,
                                                           "store_overlap": True}, Operands.of("nt", "bf16", "bf16")),
    "phase8-store-overlap-bn176": ("8", 300, 360, 72, {"bn": 176, "epi_n": 16, "epi_stages": 11, "sm_count": 2,
                                                       "store_overlap": True}, Operands.of("nt", "bf16", "bf16")),
    "phase8-store-overlap-bias-smem": ("8", 520, 200, 72, {"stages": 5, "sm_count": 2, "bias": True,
                                                           "activation": "gelu", "bias_smem": True,
                                                           "store_overlap": True}, Operands.of("nt", "bf16", "bf16")),
    "phase8-store-overlap-gated": ("8", 260, 208, 72, {"stages": 5, "sm_count": 2, "bias": True, "activation": "silu",
                                                       "gated": True, "residual": True, "store_overlap": True},
                                   Operands.of("nt", "bf16", "bf16")),
}


@pytest.mark.parametrize("case", list(RING_TURN))
def test_simulation_ring5_and_early_turn(case):
    simulate_config(*RING_TURN[case])


# clusters along N sharing the A tile (``cluster_n=2``) in the persistent phases: cuBLAS's 1 x 2 prefill cluster and the
# 2 x 2 that shares both operands. Ragged in M, N and K, so some CTAs of a cluster compute tiles past M or N (they load
# and multicast zero-filled slices all the same); the 2 x 2 cluster (4 CTAs) walks its tiles in the grouped raster
CLUSTER_N = {
    "phase6-1x2": ("6", 200, 328, 136, {"bn": 128, "stages": 2, "sm_count": 2, "cluster_m": 1, "cluster_n": 2}, None),
    "phase6-2x2": ("6", 300, 328, 136, {"bn": 128, "stages": 2, "sm_count": 4, "cluster_n": 2}, None),
    # A M-major (dW's layout): the A slice of each rank is one 64-row SW128 atom of M
    "phase6-2x2-tn": ("6", 296, 328, 136, {"bn": 128, "stages": 2, "sm_count": 4, "cluster_n": 2},
                      Operands.of("tn", "bf16", "fp32")),
    "phase8-2x2": ("8", 300, 328, 136, {"bn": 128, "stages": 2, "sm_count": 4, "cluster_n": 2},
                   Operands.of("nt", "bf16", "bf16")),
    # the vendor's prefill arrangement: 256 x 128 tiles in two warpgroups of 128 rows, a pair along N sharing A
    "phase6-bm256-1x2": ("6", 300, 328, 72, {"bm": 256, "bn": 128, "stages": 2, "sm_count": 2, "cluster_m": 1,
                                             "cluster_n": 2, "epi_n": 64}, Operands.of("nt", "bf16", "bf16")),
}


def test_bias_smem_takes_a_bias_without_a_residual_and_two_tiles_of_smem():
    """Phase 8's ``bias_smem`` is in effect only with a bias and no residual (its slabs read the tile's bias at the
    tile's own coordinates; a residual's slabs load their bias beside it), and inert otherwise, so a config may carry it
    into any fused call (``cute-gemm bench --epilogue ... --config 8:bias_smem=true``). In effect it adds one tile's
    bias per consumer warpgroup to the smem (2 x 192 bf16 values; RING5 with it: 218 KiB of the 227)."""
    e8 = registry.get("sm90", "8")
    base = dataclasses.replace(e8.default_config(), bias_smem=True, stages=5)
    assert not e8.config_problems(base)
    on = dataclasses.replace(base, bias=True, activation="gelu")
    assert on.bias_in_smem() and not base.bias_in_smem()
    assert not dataclasses.replace(on, residual=True).bias_in_smem()
    from cute_gemm.runtime.compile import compile_kernel

    ops = Operands.of("nt", "bf16", "bf16")
    off, with_it = (compile_kernel(e8.make(c, ops), "sm_90a").kernel for c in (dataclasses.replace(on, residual=True),
                                                                              on))
    assert (with_it.bias_smem_elems(), off.bias_smem_elems()) == (384, 0)  # with a residual: inert
    assert 384 * 2 <= with_it.smem_bytes - off.smem_bytes <= 384 * 2 + 1024  # the struct keeps its 1 KiB alignment


@pytest.mark.parametrize("case", list(CLUSTER_N))
def test_simulation_clusters_along_n(case):
    simulate_config(*CLUSTER_N[case])


def test_clusters_along_n_are_the_persistent_phases_1_or_2():
    """cluster_n is 1 or 2 in phases 6 and 8 (cluster_m x cluster_n CTAs per cluster, as ``cute-gemm list`` counts them);
    phase 7 refuses it (its stream-K split is a pair along M)."""
    e6, e7, e8 = (registry.get("sm90", p) for p in "678")
    two = dataclasses.replace(e6.default_config(), cluster_n=2)
    assert not e6.config_problems(two) and not e8.config_problems(dataclasses.replace(e8.default_config(), cluster_n=2))
    assert e6.cluster_ctas(two) == 4 and e6.make(two).schedule(4096, 4096, 4096) == (128, 33)  # 16 x 8 of 256 x 512
    assert any("cluster_n=3: 1, or 2" in w for w in e6.config_problems(dataclasses.replace(two, cluster_n=3)))
    assert any("phase 7 splits a tile inside a pair along M" in w
               for w in e7.config_problems(dataclasses.replace(e7.default_config(), cluster_n=2)))


def test_an_fp32_c_counts_its_staging_in_the_smem():
    """The config's smem rule counts a 16-bit C's staging; with an fp32 C the operands' rule counts its own, twice the
    bytes: 256 x 128 at 4 stages fits with a bf16 C and is refused, before anything compiles, with an fp32 one."""
    e6 = registry.get("sm90", "6")
    wide = dataclasses.replace(e6.default_config(), bm=256, bn=128)
    assert not e6.config_problems(wide)
    assert not e6.make(wide, Operands.of("nt", "bf16", "bf16")).can_implement(1000, 3000, 520)
    why = e6.make(wide, Operands.of("nt", "bf16", "fp32")).can_implement(1000, 3000, 520)
    assert len(why) == 1 and "257 KiB" in why[0] and "with an fp32 C" in why[0], why
    assert not e6.make(dataclasses.replace(wide, stages=3), Operands.of("nt", "bf16", "fp32")).can_implement(8, 8, 8)


def test_the_gated_pairs_count_half_a_slab_of_staging():
    """The gated pairs store half a slab's accumulator columns (C [M, N/2]), so the smem rule counts half the staging:
    phase 8's RING5 (200 KiB of ring) takes 64-column slabs through 3 buffers with SwiGLU's pairs (24 KiB of a 16-bit
    C's staging) and refuses them for bias + gelu (48 KiB). A call's epilogue fields are set before the rule reads the
    config (``plan.epilogue_config``), so the same overrides pass or fail as the call will build them."""
    from cute_gemm.errors import UnsupportedError
    from cute_gemm.runtime.plan import epilogue_config

    e8 = registry.get("sm90", "8")
    wide = dataclasses.replace(e8.default_config(), stages=5, group_m=16, epi_n=64, epi_stages=3, epi_spread=True)
    assert not e8.config_problems(dataclasses.replace(wide, gated=True, activation="silu"))
    why = e8.config_problems(dataclasses.replace(wide, bias=True, activation="gelu"))
    assert len(why) == 1 and "248 KiB" in why[0], why
    over = "stages=5,group_m=16,epi_n=64,epi_stages=3,epi_spread=true"
    assert epilogue_config(e8, over, False, "silu", False, gated=True).epi_n == 64
    with pytest.raises(UnsupportedError, match="248 KiB"):
        epilogue_config(e8, over, True, "gelu", False)


@pytest.mark.parametrize("case", list(MULTICAST))
def test_simulation_token_tile_multicast(case):
    m, n, k, over = MULTICAST[case]
    cfg = dataclasses.replace(registry.get("sm90", "10").default_config(), **over)
    res = simulate90("sm90:10", m, n, k, cfg)
    assert res.ok, res.report()
