"""The planted bugs: each a source-text substitution in one file, and the CPU checks that should catch it.

``checks`` are pytest arguments run in the mutated copy; ``-k phaseN`` selects that phase's PTX rules
(tests/test_sm100_ptx_static.py) and its runs on the PTX machine (tests/test_sm100_sim.py), which run
the kernel with the problem and config listed there (phase 6 walks 6 tiles on one cluster, phase 7
splits a tile between two pairs). ``fast`` marks the subset CI runs (``--fast``).
"""

from __future__ import annotations

import dataclasses

PHASES = "tests/test_sm100_ptx_static.py tests/test_sm100_sim.py".split()


def checks(phase: str, *extra: str, select: str = "") -> tuple:
    """The phase's static and simulation checks (+ ``extra`` files), selected by ``-k phaseN [or ...]``
    (``phase1`` without phase 10's and 11's)."""
    own = "(phase1 and not phase10 and not phase11)" if phase == "1" else f"phase{phase}"
    return (*PHASES, *extra, "-k", own + (f" or {select}" if select else ""))


@dataclasses.dataclass(frozen=True)
class Mutant:
    id: str
    kind: str  # what class of bug it is (the report groups by it)
    phase: str  # the phase whose file it changes or whose checks it runs
    path: str
    old: str
    new: str
    checks: tuple
    fast: bool = False
    note: str = ""


def _m(id, kind, phase, path, old, new, fast=False, extra=(), select="", note=""):
    return Mutant(id, kind, phase, path, old, new, checks(phase, *extra, select=select), fast, note)


P = "phases/sm100/"
CT = P + "common_tma.py"
P9, P10 = P + "phase9_split_k.py", P + "phase10_swap_ab.py"

MUTANTS = [
    # --- a wrong tile coordinate ---------------------------------------------------------------------
    _m("a-coord-m-zero", "tile coordinate (A)", "6", CT,
       "tAgA[(None, m_pair, k)]", "tAgA[(None, 0, k)]", fast=True,
       note="the A tile's M coordinate forced to 0 (planted by hand in an earlier review)"),
    _m("b-coord-k-zero", "tile coordinate (B)", "2b", P + "phase2b_ws.py",
       "tBgB[(None, kt)], tBsB[(None, ab_empty.index)]", "tBgB[(None, 0)], tBsB[(None, ab_empty.index)]",
       note="every stage of B loads k-tile 0"),
    _m("b-coord-n-zero", "tile coordinate (B)", "6", CT,
       "tBgB[(None, n_tile, k)]", "tBgB[(None, 0, k)]"),
    _m("c-box-col-zero", "tile coordinate (C)", "5", P + "phase5_tma_store.py",
       "tCgC_box[None, box, box_col]", "tCgC_box[None, box, 0]", fast=True),
    _m("c-tile-n-zero", "tile coordinate (C)", "6", P + "phase6_persistent.py",
       "tCgC[(None, None, None, m_pair, n_tile)]", "tCgC[(None, None, None, m_pair, 0)]"),
    _m("sk-k-half", "tile coordinate (K)", "7", P + "phase7_stream_k.py",
       "tBgB, tBsB, m_pair, n_tile, pair_q * k_half,", "tBgB, tBsB, m_pair, n_tile, 0,",
       note="both pairs of a split tile compute the first half of K"),
    # --- a dropped or moved wait --------------------------------------------------------------------
    _m("mma-no-full-wait", "dropped wait (mbarrier)", "2b", P + "phase2b_ws.py",
       "ab_full = ab_consumer.wait_and_advance()", "ab_full = ab_consumer.wait_and_advance(cutlass.Boolean(True))",
       fast=True, note="the MMA warp no longer waits for a stage's TMA bytes"),
    _m("producer-no-empty-wait", "dropped wait (mbarrier)", "4", P + "phase4_pair.py",
       "                ab_empty = ab_producer.acquire_and_advance()\n",
       "                ab_empty = ab_producer.acquire_and_advance(cutlass.Boolean(True))\n",
       note="the producer refills a slot without waiting for the MMAs that read it"),
    _m("epi-no-acc-wait", "dropped wait (mbarrier)", "6", P + "phase6_persistent.py",
       "acc_full = acc_consumer.wait_and_advance()", "acc_full = acc_consumer.wait_and_advance(cutlass.Boolean(True))"),
    _m("xchg-no-free-wait", "dropped wait (mbarrier)", "7", P + "phase7_stream_k.py",
       "                        common.mbarrier_wait_cluster(xchg_free, 0)  # the peer's ring is free for them\n", "",
       note="stream-K partial sums sent before the peer's ring is free"),
    _m("store-wait-conditional", "moved wait (cp.async.bulk wait_group)", "6", CT,
       "    cute.arch.cp_async_bulk_wait_group(epi_store_wait_depth(epi_stages), read=True)\n",
       "    if j >= epi_stages:\n        cute.arch.cp_async_bulk_wait_group(epi_store_wait_depth(epi_stages), read=True)\n",
       fast=True, note="the buffer-reuse wait made conditional again (planted by hand in an earlier review)"),
    _m("store-wait-depth", "moved wait (cp.async.bulk wait_group)", "6", CT,
       "    return epi_stages - 1\n", "    return epi_stages\n", extra=("tests/test_sm100_phase6.py",),
       note="one bulk group too many left in flight before a buffer is rewritten"),
    _m("store-no-final-wait", "dropped wait (cp.async.bulk wait_group)", "5", P + "phase5_tma_store.py",
       "        cute.arch.cp_async_bulk_wait_group(0, read=True)  # the staging smem must outlive the TMA's reads\n", "",
       note="the CTA may exit while its last TMA stores still read the staging smem"),
    _m("no-wait-ld-staged", "dropped wait (tcgen05.wait::ld)", "6", CT,
       "    cute.copy(tiled_t2r, tTR_tAcc[None, None, None, 0, j], tTR_rAcc)\n    cute.arch.fence_view_async_tmem_load()\n",
       "    cute.copy(tiled_t2r, tTR_tAcc[None, None, None, 0, j], tTR_rAcc)\n", fast=True),
    _m("no-wait-ld-st-global", "dropped wait (tcgen05.wait::ld)", "3", P + "common.py",
       "            cute.arch.fence_view_async_tmem_load()  # tcgen05.wait::ld before the registers are read\n"
       "            if cute.elem_less",
       "            if cute.elem_less"),
    _m("cpasync-wait-depth", "moved wait (cp.async.wait_group)", "1", P + "phase1_stages.py",
       "cute.arch.cp_async_wait_group(NSTAGES - 1)", "cute.arch.cp_async_wait_group(NSTAGES)",
       note="the MMA reads a tile whose cp.async copies may not have landed"),
    # --- wrong expect_tx bytes, wrong arrival counts -----------------------------------------------
    _m("tx-bytes-half", "expect_tx bytes", "4", P + "phase4_pair.py",
       "self.tx_bytes = (a_bytes + b_bytes) * c.cluster_m", "self.tx_bytes = a_bytes + b_bytes", fast=True,
       note="the leader arms its full barrier with its own bytes only, not the pair's"),
    _m("tx-bytes-extra", "expect_tx bytes", "2a", P + "phase2a_tma.py",
       "self.tx_bytes = a_bytes + b_bytes  #", "self.tx_bytes = a_bytes + b_bytes + 128  #"),
    _m("acc-arrivals-half", "arrive count", "6", P + "phase6_persistent.py",
       "pipeline.Agent.Thread, c.cluster_m * 32 * c.epi_warps", "pipeline.Agent.Thread, 32 * c.epi_warps",
       fast=True, note="the accumulator stage is free once one CTA's epilogue (not the pair's) has read it"),
    _m("epi-arrivals-double", "arrive count", "2b", P + "phase2b_ws.py",
       "consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32 * self.cfg.epi_warps),",
       "consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 64 * self.cfg.epi_warps),"),
    # --- descriptors that disagree with what the copies wrote --------------------------------------
    _m("desc-b-lbo-sbo", "descriptor (LBO/SBO)", "2a", P + "phase2a_tma.py",
       "self.types.ab, b_smem_layout.outer, byte_alignment=ct.SMEM_ALIGN, swizzle=b_smem_layout.inner",
       "self.types.ab, common.make_smem_layout_b_cpasync(tiled_mma, self.mma_tiler, NSTAGES).outer, "
       "byte_alignment=ct.SMEM_ALIGN, swizzle=b_smem_layout.inner",
       fast=True, note="B's MMA view packs the 64-column atoms N first (phase 0's LBO 1024 / SBO 2048) while the TMA "
            "writes K-first slabs (LBO 4096 / SBO 1024)"),
    _m("desc-b-swizzle", "descriptor (swizzle)", "2a", P + "phase2a_tma.py",
       "self.types.ab, b_smem_layout.outer, byte_alignment=ct.SMEM_ALIGN, swizzle=b_smem_layout.inner",
       "self.types.ab, b_smem_layout.outer, byte_alignment=ct.SMEM_ALIGN, swizzle=a_smem_layout.inner",
       note="B's smem descriptor says SW64 while its TMA box writes SW128"),
    _m("desc-b-major", "descriptor (major)", "2b", CT,
       "b_major = OperandMajorMode.MN if types is None else types.b.mma_major_mode()",
       "b_major = OperandMajorMode.K",
       note="B declared K-major (idesc transpose-B bit clear) while B is N-major in memory"),
    _m("desc-stage-zero", "descriptor (start address)", "2b", P + "phase2b_ws.py",
       "kcoord = (None, None, kb, ab_full.index)", "kcoord = (None, None, kb, 0)",
       note="every MMA reads stage 0's descriptors"),
    _m("copy-stage-read", "descriptor (start address)", "0", P + "phase0_serialized.py",
       "tAsA[None, None, None, 1 - stage])", "tAsA[None, None, None, stage])",
       note="phase 0 copies the next A tile into the stage the MMA is reading"),
    # --- multicast masks ----------------------------------------------------------------------------
    _m("commit-mask-cluster", "multicast mask", "7", P + "phase7_stream_k.py",
       "mcast_mode_mn=(1, 0),", "mcast_mode_mn=(1, 1),", fast=True,
       note="a pair's empty-slot commits reach the other pair's barriers too"),
    # --- proxy fences -------------------------------------------------------------------------------
    _m("no-fence-tma-store", "missing fence.proxy.async", "6", CT,
       '    cute.arch.fence_proxy("async.shared", space="cta")  # generic-proxy writes -> visible to the TMA\n', ""),

    _m("no-fence-cpasync", "missing fence.proxy.async", "0", P + "phase0_serialized.py",
       "            common.fence_cpasync_to_umma()  # ...makes them visible to the next MMA...\n", ""),
    # --- the epilogue's row / column mapping --------------------------------------------------------
    _m("epi-box-rows-swapped", "epilogue mapping (rows)", "6", CT,
       "tCgC_box[None, box, box_col]", "tCgC_box[None, box ^ 1, box_col]",
       note="a warp's two 16-row staging boxes stored to each other's rows of C"),
    _m("epi-box-row-shift", "epilogue mapping (rows)", "5", CT,
       "    return BOXES_PER_WARP * (warp % 4) + half\n", "    return BOXES_PER_WARP * (warp % 4 + 1) % 8 + half\n",
       extra=("tests/test_sm100_epilogue_coverage.py",), select="stored",
       note="each warp stages and stores its rows one warp's worth of rows down"),
    _m("epi-col-half-swapped", "epilogue mapping (columns)", "3", P + "common.py",
       "cute.local_tile(gC, (TMEM_LANES, cols), (0, half))", "cute.local_tile(gC, (TMEM_LANES, cols), (0, 1 - half))",
       note="8 epilogue warps: each warpgroup stores its columns into the other half of C"),
    _m("xchg-mailbox-thread", "epilogue mapping (stream-K mailbox)", "7", P + "phase7_stream_k.py",
       "mbox + cute.assume(((j * QUADS + i) * 128 + t) * 4, divby=4)", "mbox + cute.assume(((j * QUADS + i) * 128) * 4, divby=4)",
       note="every sending thread writes the same mailbox slot"),
    # --- TMEM allocation and deallocation order ------------------------------------------------------
    Mutant("tmem-alloc-before-sync", "TMEM alloc/dealloc order", "5", P + "phase5_tma_store.py",
           "", "", checks("5"), fast=True, note="tcgen05.alloc.cta_group::2 back before the pipelines' cluster sync"),
    _m("tmem-dealloc-early", "TMEM alloc/dealloc order", "2a", P + "phase2a_tma.py",
       "common.free_tmem(tmem, tmem_ptr, pipeline.NamedBarrier(barrier_id=1, num_threads=self.threads))",
       "tmem.free(tmem_ptr)",
       note="warp 0 frees the columns while other warps may still read them"),
    _m("init-not-published", "mbarrier initialisation", "4", P + "phase4_pair.py",
       "            barrier_storage=storage.acc_mbar.data_ptr(),\n            cta_layout_vmnk=cluster_vmnk,\n",
       "            barrier_storage=storage.acc_mbar.data_ptr(),\n            cta_layout_vmnk=cluster_vmnk,\n"
       "            defer_sync=True,\n",
       note="the accumulator barriers are initialised after the last cluster sync: the peer may arrive on "
            "them before it sees them initialised"),
    _m("producer-no-tail", "dropped wait (mbarrier)", "4", P + "phase4_pair.py",
       "            ab_producer.tail()  # wait for the last empty arrivals so no commit lands after this CTA exits\n", "",
       note="the producer warp exits without waiting for the last commits into its CTA's empty barriers"),
    _m("epi-barrier-count", "arrive count", "6", P + "phase6_persistent.py",
       "pipeline.NamedBarrier(barrier_id=2, num_threads=32 * c.epi_warps)",
       "pipeline.NamedBarrier(barrier_id=2, num_threads=32 * (c.epi_warps - 1))",
       note="the named barrier before TMEM is freed counts one epilogue warp too few"),
    _m("mma-first-accumulates", "tile coordinate (K)", "6", CT,
       "    tiled_mma.set(tcgen05.Field.ACCUMULATE, False)\n", "",
       note="a tile's first MMA adds to what the accumulator stage held from the tile two before"),
    _m("epi-stage-zero", "epilogue mapping (TMEM stage)", "6", P + "phase6_persistent.py",
       "tCtAcc_base[(None, None, None, acc_full.index)], tCgC[(None, None, None, m_pair, n_tile)]",
       "tCtAcc_base[(None, None, None, 0)], tCgC[(None, None, None, m_pair, n_tile)]",
       note="the epilogue always drains accumulator stage 0"),
    _m("predicate-rows-only", "epilogue mapping (partial tiles)", "2b", P + "common.py",
       "if cute.elem_less(tDcC[None, None, i][0], mn_limit):", "if tDcC[None, None, i][0][0] < mn_limit[0]:",
       note="the partial-tile predicate checks the row only: columns past N are stored"),
    _m("smem-request-short", "smem request", "6", P + "phase6_persistent.py",
       "self.smem_bytes = common.smem_request(used, self.tmem_cols)",
       "self.smem_bytes = common.smem_request(used - 2048, self.tmem_cols)",
       note="the launch asks for 2 KiB less dynamic smem than the kernel uses"),
    # --- the audit's other rules ---------------------------------------------------------------------
    _m("tma-store-elect", "TMA store issue lane", "6", CT,
       "    if cute.arch.lane_idx() == 0:\n        box_col", "    with cute.arch.elect_one():\n        box_col",
       note="TMA stores from the elect.sync lane: its bulk groups may belong to another lane than the waiter"),
    _m("residency-unbounded", "residency", "3", P + "phase3_wide.py",
       "self.smem_bytes = common.smem_request(used, self.tmem_cols)", "self.smem_bytes = used"),
    # --- operands (fp16/bf16, either major, 16-bit C): the runs with other operands ------------------
    _m("op-mma-type-f16", "operand type", "2a", CT,
       "ab = AB_DTYPE if types is None else types.ab", "ab = AB_DTYPE",
       note="the MMA multiplies fp16 whatever A and B hold (the idesc's type fields stay 0)"),
    _m("op-round-to-f16", "operand type", "5", P + "common.py",
       "    out = cute.make_rmem_tensor(acc.layout, c_dtype)\n    out.store(acc.load().to(c_dtype))",
       "    out = cute.make_rmem_tensor(acc.layout, cutlass.Float16)\n    out.store(acc.load().to(cutlass.Float16))",
       note="a 16-bit C is rounded to fp16 whatever its type (bf16 C receives fp16 bit patterns)"),
    # --- split-K in a cluster (phase 9) and swap-AB (phase 10) ----------------------------------------
    _m("sk-reduce-reversed", "split-K reduce order", "9", P9,
       "add_in_rank_order(parts, idx, total)", "add_in_rank_order(parts[::-1], idx, total)", fast=True,
       note="the partial tiles added in reverse rank order: deterministic, but not the documented sum"),
    _m("sk-reduce-own-first", "split-K reduce order", "9", P9,
       "cute.arch.map_dsmem_ptr(sP.iterator, r)", "cute.arch.map_dsmem_ptr(sP.iterator, (rank + r) % split_k)",
       note="each CTA starts the sum with its own partial tile: the order depends on which CTA reduces a line"),
    _m("sk-reduce-own-only", "split-K DSMEM address", "9", P9,
       "cute.arch.map_dsmem_ptr(sP.iterator, r)", "cute.arch.map_dsmem_ptr(sP.iterator, rank)",
       note="every term of the sum is read from the CTA's own partial tile (mapa to its own rank)"),
    _m("sk-no-partials-barrier", "split-K cluster barrier", "9", P9,
       "        # --- every partial tile of the cluster is in smem and visible (release / acquire at cluster scope) ---\n"
       "        cute.arch.cluster_arrive()\n        cute.arch.cluster_wait()\n", "", fast=True,
       note="the reduce reads the peers' partial tiles without waiting for them to be written"),
    _m("sk-partials-arrive-relaxed", "split-K cluster barrier", "9", P9,
       "scope) ---\n        cute.arch.cluster_arrive()\n", "scope) ---\n        cute.arch.cluster_arrive_relaxed()\n",
       note="barrier.cluster.arrive.relaxed: the arrival no longer releases the partial tile's st.shared"),
    _m("sk-no-exit-barrier", "split-K cluster barrier", "9", P9,
       "        # --- no CTA leaves (with its smem) while a peer may still read its partial tile ---\n"
       "        cute.arch.cluster_arrive()\n        cute.arch.cluster_wait()\n", "",
       note="a CTA may exit while a peer still reads its partial tile over DSMEM"),
    _m("sk-k-even-split", "split-K K range", "9", P9,
       "k_count = (rank + 1) * k_tiles // S - k_first", "k_count = k_tiles // S",
       note="every rank takes K/S k-tiles, rounded down: the remainder of K is never computed"),
    _m("sk-rank-zero", "split-K K range", "9", P9,
       "rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())",
       "rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster()) * 0",
       note="every CTA of the cluster takes rank 0's K range and lines"),
    _m("sk-tile-per-cta", "tile coordinate (split-K)", "9", P9,
       "grouped_tile_coord(bidx // S, tiles_m, tiles_n, c.group_m)", "grouped_tile_coord(bidx, tiles_m, tiles_n, c.group_m)",
       note="each CTA of a cluster computes another tile: the partial tiles of different tiles are added"),
    _m("sk-lines-not-scattered", "split-K reduce lines", "9", P9,
       "line = rank * my_lines + v // per_line", "line = v // per_line",
       note="every CTA reduces and stores the first L/S lines of the tile"),
    _m("sk-no-acc-wait", "dropped wait (mbarrier)", "9", P9,
       "acc_full = acc_consumer.wait_and_advance()  # the last MMA is done",
       "acc_full = acc_consumer.wait_and_advance(cutlass.Boolean(True))  # the last MMA is done",
       note="the partial tile overwrites the ring (and TMEM is read) before the last MMA is done"),
    _m("sk-empty-range-reads-tmem", "split-K K range", "10", P9,
       "sP, tidx, k_count > 0, c.epi_warps)", "sP, tidx, True, c.epi_warps)",
       note="a CTA whose K range is empty drains a TMEM accumulator no MMA wrote instead of writing zeros"),
    _m("pdl-wait-not-in-producer", "programmatic dependent launch", "10", P9,
       "        pdl_wait(c)\n",
       "        if warp_idx != TMA_WARP:\n            pdl_wait(c)\n",
       note="the TMA warp loads before griddepcontrol.wait: it may read what the previous kernel still writes"),
    # the persistent phases with use_pdl (phase="best"'s candidates; phases.pdl's helpers, as in sm90's 6-8); the
    # phases' own checks run them with it
    _m("persistent-pdl-no-wait", "programmatic dependent launch", "6", P + "phase6_persistent.py",
       "        pdl_wait(c)  #", "        pass  #",
       note="use_pdl: launched early, and nothing waits for the previous kernel before the loads and stores"),
    _m("persistent-pdl-wait-not-in-producer", "programmatic dependent launch", "7", P + "phase7_stream_k.py",
       "        pdl_wait(c)  #", "        if warp_idx != TMA_WARP:\n            pdl_wait(c)\n        #",
       note="use_pdl: the TMA warp loads before griddepcontrol.wait: it may read what the previous kernel still writes"),
    _m("swap-lines-rows", "swap-AB C^T store", "10", P9,
       "lines = BM if row_major else BN", "lines = BM",
       note="the reduce splits C^T's 128 weight rows over the CTAs instead of its token lines"),
    _m("swap-vec-along-tokens", "swap-AB C^T store", "10", P9,
       "vec_tiler = (1, VEC) if row_major else (VEC, 1)", "vec_tiler = (1, VEC)",
       note="the reduce's vectors run along C^T's tokens (strided in the partial tile and in C)"),
    _m("swap-grid-unswapped", "swap-AB C^T store", "10", P10,
       "return super().grid(n, m, k)", "return super().grid(m, n, k)",
       extra=("tests/test_sm100_phase9.py",), note="the grid of the unswapped problem: tiles of C^T never launched"),
    _m("swap-problem-unswapped", "swap-AB C^T store", "10", P10,
       "return mC.shape[1], mC.shape[0], mA.shape[1]", "return mC.shape[0], mC.shape[1], mA.shape[1]",
       extra=("tests/test_sm100_phase9.py",),
       note="the launch reads the problem's M and N from C^T unswapped (the grid of the wrong problem)"),
]

MUTANTS += [
    # --- issue 19: the classes an independent mutation run found surviving -----------------------------
    # bugs that only show with two or more clusters in the persistent loop
    _m("p6-slot-cluster-of-4", "persistent: two or more clusters", "6", P + "phase6_persistent.py",
       "        slot = bidx // self.cluster_ctas\n", "        slot = bidx // 4\n", fast=True,
       note="the cluster slot from the CTA index divided by phase 7's cluster size: with one cluster every "
            "slot is 0, with three the second cluster recomputes the first one's tiles"),
    _m("p6-acc-stage-by-tile", "persistent: two or more clusters", "6", P + "phase6_persistent.py",
       "tCtAcc_base[(None, None, None, acc_full.index)], tCgC[(None, None, None, m_pair, n_tile)]",
       "tCtAcc_base[(None, None, None, tile % c.acc_stages)], tCgC[(None, None, None, m_pair, n_tile)]",
       note="the epilogue drains the accumulator stage of the tile's parity, not the pipeline's: the same on "
            "one cluster (tiles 0, 1, 2, ...), not on cluster 1 of 3 (tiles 1, 4)"),
    _m("p7-split-tile-of-cluster-0", "persistent: two or more clusters", "7", P + "phase7_stream_k.py",
       "                    m_pair, n_tile = grouped_pair_tile(dp_tiles + cluster_id, pair_tiles_m, tiles_n, c.group_m)\n"
       "                    acc_full = acc_consumer.wait_and_advance()  # no MMA reads",
       "                    m_pair, n_tile = grouped_pair_tile(dp_tiles, pair_tiles_m, tiles_n, c.group_m)\n"
       "                    acc_full = acc_consumer.wait_and_advance()  # no MMA reads",
       note="every cluster's split tile is stored as the first split tile: right while only one tile is split"),
    # pairs along N sharing A (phase 6's cluster_n=2; its default 1 leaves these lines inert: the machine's
    # test_pairs_along_n_share_a cases run them)
    _m("p6-cn-empty-one-pair", "arrive count", "6", P + "phase6_persistent.py",
       "consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, c.cluster_n),",
       "consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),", select="pairs_along_n",
       note="a slot's empty barrier waits for one pair's commit: the other pair may still read the A slice it refills"),
    _m("p6-cn-a-slice-zero", "multicast slice", "6", P + "phase6_persistent.py",
       "tma_atom_a, pair_n, cute.make_layout(c.cluster_n),", "tma_atom_a, 0, cute.make_layout(c.cluster_n),",
       select="pairs_along_n", note="both pairs load and multicast the first half of each CTA's A box"),
    _m("p6-cn-a-mask-pair", "multicast mask", "6", P + "phase6_persistent.py",
       "get_flat_coord(bidx % self.cluster_ctas), mcast_mode=2", "get_flat_coord(bidx % self.cluster_ctas), mcast_mode=0",
       select="pairs_along_n", note="A's slice multicast to the pair's two CTAs instead of the same rank of both pairs"),
    _m("p6-cn-n-tile-pair-dropped", "tile coordinate (N)", "6", P + "phase6_persistent.py",
       "return m_pair, n_group * c.cluster_n + pair_n", "return m_pair, n_group * c.cluster_n",
       select="pairs_along_n", note="both pairs of a cluster compute its first N tile"),
    # bugs that only show with more than one raster band
    _m("p6-epilogue-band-default", "persistent: several raster bands", "6", P + "phase6_persistent.py",
       "                    m_pair, n_tile = self.pair_tile(tile, pair_tiles_m, tiles_n, groups_n, pair_n)\n"
       "                    acc_full = acc_consumer.wait_and_advance()",
       "                    m_pair, n_tile = grouped_pair_tile(tile, pair_tiles_m, tiles_n, 8)\n"
       "                    acc_full = acc_consumer.wait_and_advance()",
       note="the epilogue rasters in the default bands of 8 pair rows while the loads use group_m"),
    _m("p7-dp-band-default", "persistent: several raster bands", "7", P + "phase7_stream_k.py",
       "            for tile in cutlass.range(slot, dp_tiles, slots, unroll=1):\n"
       "                m_pair, n_tile = grouped_pair_tile(tile, pair_tiles_m, tiles_n, c.group_m)\n"
       "                ab_producer",
       "            for tile in cutlass.range(slot, dp_tiles, slots, unroll=1):\n"
       "                m_pair, n_tile = grouped_pair_tile(tile, pair_tiles_m, tiles_n, 8)\n"
       "                ab_producer",
       note="the producer loads the data-parallel tiles in the default bands of 8 pair rows, not group_m's"),
    # an odd number of (pair) slots in the stream-K schedule
    _m("p7-grid-floor", "persistent: odd cluster count", "7", P + "phase7_stream_k.py",
       "return (ceil_div(self.schedule(m, n, k)[2], c.pairs) * c.cluster_m * c.pairs, 1, 1)",
       "return (self.schedule(m, n, k)[2] // c.pairs * c.cluster_m * c.pairs, 1, 1)", extra=("tests/test_sm100_phase7.py",),
       note="clusters launched = pair slots // 2: with an odd number of slots in use the last slot's tiles are never computed"),
    _m("p7-idle-pair-works", "persistent: odd cluster count", "7", P + "phase7_stream_k.py",
       "        dp_tiles, sk_tiles, slots = self.schedule(mC_tma.shape[0], mC_tma.shape[1], mA_tma.shape[1])\n",
       "        dp_tiles, sk_tiles, slots = self.schedule(mC_tma.shape[0], mC_tma.shape[1], mA_tma.shape[1])\n"
       "        slot = slot % slots\n",
       note="a pair beyond the used slots (the last cluster's second pair, odd slot count) wraps to slot 0 and "
            "computes its tiles again"),
    # configs that should be refused: a guard lost
    _m("lost-guard-epi-stages", "lost guard", "6", P + "phase6_persistent.py",
       "        assert ct.epi_chunks(c.epi_warps, c.bn) % c.epi_stages == 0, \"chunks per warp must be a multiple of epi_stages\"\n",
       "", extra=("tests/test_sm100_guards.py",),
       note="phase 6 no longer refuses epi_stages that do not divide the chunks: the static buffer-reuse wait breaks"),
    _m("lost-guard-sm-count", "lost guard", "7", P + "phase7_stream_k.py",
       "return why + common.persistent_problems(c, c.cluster_m * c.pairs, c.cluster_m * c.pairs)",
       "return why + common.persistent_problems(c, c.cluster_m * c.pairs, c.cluster_m)",
       extra=("tests/test_sm100_guards.py",),
       note="phase 7 takes an sm_count of 2 mod 4: an odd number of pair slots, the extra pair recomputes slot 0's tiles"),
    _m("lost-guard-two-ctas", "lost guard", "5", P + "phase5_tma_store.py",
       "        assert 2 * (self.smem_bytes + common.SMEM_RESERVED_PER_CTA) <= common.SMEM_PER_SM, (",
       "        assert True or 2 * (self.smem_bytes + common.SMEM_RESERVED_PER_CTA) <= common.SMEM_PER_SM, (",
       extra=("tests/test_sm100_guards.py",),
       note="phase 5 no longer refuses a ring that leaves one CTA per SM"),
    _m("lost-guard-bm", "lost guard", "6", P + "common.py",
       "    if c.bm != TMEM_LANES:\n", "    if c.bm > TMEM_LANES:\n", extra=("tests/test_sm100_guards.py",),
       note="bm=64 is accepted: an M=64 MMA's accumulator is not one row per TMEM lane"),
    # --- the audit's memory-model points ----------------------------------------------------------------
    _m("no-fence-before-release", "tcgen05 thread-sync fence", "6", P + "phase6_persistent.py",
       "                    common.tmem_reads_done()  # this thread's tcgen05.ld's of the stage, before the release\n",
       "", fast=True,
       note="the epilogue releases an accumulator stage without tcgen05.fence::before_thread_sync"),
    _m("no-fence-after-acc-full", "tcgen05 thread-sync fence", "6", P + "phase6_persistent.py",
       "                    common.tmem_acquired()  # the tcgen05.ld's below read what the MMAs wrote\n", "",
       note="the epilogue reads TMEM after the accumulator-full wait without tcgen05.fence::after_thread_sync"),
    _m("no-fence-mma-after-empty", "tcgen05 thread-sync fence", "6", P + "phase6_persistent.py",
       "                        common.tmem_acquired()  # the MMAs below overwrite what both epilogues read\n", "",
       note="the next tile's MMAs overwrite a stage the epilogues read, without tcgen05.fence::after_thread_sync "
            "after the accumulator-empty wait (only the PTX machine sees the MMA side)"),
    _m("no-fence-before-dealloc", "tcgen05 thread-sync fence", "0", P + "common.py",
       "    tmem_reads_done()\n    barrier.arrive_and_wait()\n    tmem.free(tmem_ptr)\n",
       "    barrier.arrive_and_wait()\n    tmem.free(tmem_ptr)\n",
       note="the warps meet before the dealloc without fencing their tcgen05.ld's (phases 0-1 release nothing before)"),
    _m("no-fence-after-dealloc-barrier", "tcgen05 thread-sync fence", "2a", P + "common.py",
       "            tmem_acquired()\n            cute.arch.dealloc_tmem(", "            cute.arch.dealloc_tmem(",
       note="the allocator warp deallocates after the barrier without tcgen05.fence::after_thread_sync"),
    _m("acc-wait-cta-scope", "cluster-scope signal", "6", P + "phase6_persistent.py",
       "        acc_producer, acc_consumer = common.cluster_scoped(pipeline.PipelineUmmaAsync.create(",
       "        acc_producer, acc_consumer = (pipeline.PipelineUmmaAsync.create(",
       note="the accumulator pipeline's waits acquire at CTA scope (the peer CTA's releases and the leader's "
            "multicast commits are not acquired), its remote arrives release at CTA scope"),
    _m("xchg-arrive-cta-scope", "cluster-scope signal", "7", P + "phase7_stream_k.py",
       "common.mbarrier_arrive_cluster(xchg_free, peer)  # phase 1: received",
       "cute.arch.mbarrier_arrive(xchg_free, peer)  # phase 1: received",
       note="the stream-K receiver tells the peer pair 'received' with a CTA-scope release"),
    _m("dealloc-wait-cta-scope", "cluster-scope signal", "4", P + "common.py",
       "                mbarrier_wait_cluster(self._two_cta_tmem_dealloc_mbar_ptr, 0)",
       "                cute.arch.mbarrier_wait(self._two_cta_tmem_dealloc_mbar_ptr, 0)",
       note="a pair's dealloc handshake waits for the peer's arrive at CTA scope"),
]

# the two-part substitution of tmem-alloc-before-sync: the allocation moves back before the pipelines
_ALLOC = ("        tmem.allocate(self.tmem_cols)\n"
          "        tmem.relinquish_alloc_permit()  # nothing else to allocate: a co-resident CTA's alloc need not wait\n")
SPECIAL = {
    "tmem-alloc-before-sync": [
        ("        # TMEM columns, allocated only after the pipelines' cluster-wide arrive/wait: a cta_group::2 alloc is\n"
         "        # performed by a warp of each CTA of the pair together, and the PTX ISA requires the issuing warp to\n"
         "        # know that the peer CTA has launched and is still running\n" + _ALLOC, ""),
        ("            two_cta_tmem_dealloc_mbar_ptr=storage.tmem_dealloc_mbar.ptr,\n        )\n",
         "            two_cta_tmem_dealloc_mbar_ptr=storage.tmem_dealloc_mbar.ptr,\n        )\n" + _ALLOC),
    ],
}


def substitutions(m: Mutant) -> list:
    """The (old, new) pairs of a mutant, applied in order."""
    return SPECIAL.get(m.id, [(m.old, m.new)])
