"""The planted sm90 bugs: each a source-text substitution in ``phases/sm90/``, the CPU checks that should
catch it, and the H200 GPU tests that run it (``python -m tests.mutants --ladder sm90 --gpu``).

``checks`` are pytest arguments run in the mutated copy: the phase's PTX protocol rules
(``tests/test_sm90_ptx_static.py``) and its run on the PTX machine (``tests/test_sm90_sim.py``, with the
problem and config listed there), selected by ``-k phaseN``. A failure in the first file is a kill by a
"CPU rule", in the second by the "PTX machine", anywhere else by an "existing CPU test". ``gpu`` lists
the GPU tests of the phase (``tests/test_gpu_phases.py`` node ids; ``gpu_tests``). ``fast`` marks the
CI subset.

Why these bugs: each is a plausible slip in the code it changes (a wait one group too shallow, a fence
on the wrong side of a barrier, a count that forgets the peer CTA, a coordinate that drops the rank, ...),
and together they cover what the sm90 ladder synchronizes and computes: proxy fences, wgmma groups,
mbarrier arrival counts and transaction bytes, multicast masks, the cluster barriers and the DSMEM
reduce of split-K, the stream-K exchange, programmatic dependent launch, the swap-AB relabel, the
ping-pong turns, tile coordinates, the raster and the epilogue's mapping.
"""

from __future__ import annotations

import dataclasses

from .catalog import Mutant

FILES = ("tests/test_sm90_ptx_static.py", "tests/test_sm90_sim.py")
CATEGORIES = {"tests/test_sm90_ptx_static.py": "CPU rule", "tests/test_sm90_sim.py": "PTX machine"}


def selector(phase: str) -> str:
    """``-k`` expression of one phase's test ids (``phase1`` is a prefix of ``phase10`` and ``phase11``)."""
    return f"phase{phase}" + (" and not phase10 and not phase11" if phase == "1" else "")


def selection(phase: str, select: str = "") -> str:
    """``-k`` expression of a mutant's checks: its phase's tests, or those and ``select`` (cases of a config
    its phase's defaults do not run)."""
    return selector(phase) + (f" or {select}" if select else "")


def checks(phase: str, *extra: str, select: str = "") -> tuple:
    return (*FILES, *extra, "-k", selection(phase, select))


@dataclasses.dataclass(frozen=True)
class Mutant90(Mutant):
    """An sm90 mutant: ``parts`` replaces (old, new) when the bug needs several substitutions;
    ``fast_checks``: the one check the CI subset runs (``--fast``: the check that must kill it, so the
    subset of both ladders stays within its time); the full run runs all of ``checks``."""

    parts: tuple = ()
    ladder: str = "sm90"
    fast_checks: tuple = ()
    gpu: tuple = ()  # pytest arguments of its GPU tests, where the phase's default ones do not run the code it changes


RULES, SIM = FILES
SASS = "tests/test_sm90_epilogue_sass.py"


def _m(id, kind, phase, path, old, new, fast="", extra=(), select="", note="", parts=(), gpu=()):
    """``fast``: "" (not in the CI subset), "rule:<test name part>" or "machine" (the check the subset runs)."""
    if fast.startswith("rule:"):
        fast_checks = (RULES, "-k", f"{selector(phase)} and nn_fp16 and {fast[5:]}")
    elif fast == "machine":
        fast_checks = (SIM, "-k", selection(phase, select))
    else:
        fast_checks = ()
    return Mutant90(id, kind, phase, path, old, new, checks(phase, *extra, select=select), bool(fast), note, parts,
                    "sm90", fast_checks, gpu)


P = "phases/sm90/"
CT = P + "common_tma.py"
# store_slab's wait for the previous slab's store (without store_overlap) and its barrier: the plain one, or one that returns 0 for the next slab's arithmetic (epi_spread)
_SLAB_WAIT = ("    if cutlass.const_expr(not overlap):\n        if store_thread:\n"
              "            cute.arch.cp_async_bulk_wait_group(epi_stages - 2, read=True)\n")
_SLAB_BARRIER = ("    zero = None\n    if cutlass.const_expr(hand_on):\n"
                 "        zero = common.barrier_zero(epi_barrier.barrier_id, epi_barrier.num_threads)\n    else:\n"
                 "        epi_barrier.arrive_and_wait()  # the slab is in smem, and the next slab's buffer is free\n")

MULTICAST_GPU = ("tests/test_gpu_split_swap.py", "-k", "test_split_and_swap_configs and cluster_m")
# three consumer warpgroups (bm=192), two of 128 rows (bm=256) and 3-way splits: the split/swap GPU tests of those configs
CLUSTER_N_GPU = ("tests/test_gpu_phases.py", "-k", "test_persistent_prefill_configs and cluster_n2")
WIDE_GPU = ("tests/test_gpu_split_swap.py", "-k", "test_split_and_swap_configs and (bm192 or bm256 or split_k3)")

PDL_GPU = ("tests/test_gpu_phases.py", "-k", "persistent_phases_with_pdl")


MUTANTS = [
    # --- the two races of the independent run: proxy fence after the barrier, wgmma wait depth -----------
    _m("store-fence-after-barrier", "fence.proxy.async (TMA store)", "6", CT,
       '    cute.arch.fence_proxy("async.shared", space="cta")  # st.shared -> visible to the TMA (async proxy)\n'
       + _SLAB_WAIT + _SLAB_BARRIER, _SLAB_WAIT + _SLAB_BARRIER + '    cute.arch.fence_proxy("async.shared", space="cta")\n',
       fast="rule:proxy_fence", note="the async-proxy fence of the C staging placed after the barrier instead of before it"),
    _m("release-before-wgmma-wait", "wgmma wait depth", "9", CT,
       "        warpgroup.commit_group()\n        warpgroup.wait_group(1)\n        if kt > 0:\n"
       "            ab_pipeline.consumer_release(release_state)\n            release_state.advance()\n",
       "        warpgroup.commit_group()\n        if kt > 0:\n            ab_pipeline.consumer_release(release_state)\n"
       "            release_state.advance()\n        warpgroup.wait_group(1)\n",
       fast="rule:retired", note="the previous stage is released before the wgmma reading it is waited for"),
    _m("store-no-fence", "fence.proxy.async (TMA store)", "5", P + "phase5_tma_store.py",
       '                cute.arch.fence_proxy("async.shared", space="cta")  # st.shared -> visible to the TMA (async proxy)\n',
       "", note="the C staging is stored by the TMA without the async-proxy fence"),
    _m("wgmma-wait-depth", "wgmma wait depth", "2b", P + "phase2b_ws.py",
       "warpgroup.wait_group(1)", "warpgroup.wait_group(2)",
       note="two wgmma batches left in flight: the released stage may still be read"),
    _m("last-release-no-wait", "wgmma wait depth", "3", P + "phase3_wide.py",
       "            warpgroup.wait_group(0)\n            ab_pipeline.consumer_release(release_state)\n",
       "            ab_pipeline.consumer_release(release_state)\n",
       note="the last stage released (and the accumulators read) before the last wgmma completes"),
    _m("wgmma-no-fence", "wgmma.fence", "6", CT, "        warpgroup.fence()\n", "",
       note="no wgmma.fence between zeroing the accumulators and the tile's first wgmma"),
    _m("cpasync-no-proxy-fence", "fence.proxy.async (cp.async)", "1", P + "phase1_stages.py",
       '            cute.arch.fence_proxy("async.shared", space="cta")\n', "",
       note="cp.async data read by wgmma (async proxy) without the proxy fence"),
    _m("cpasync-wait-depth", "cp.async wait depth", "1", P + "phase1_stages.py",
       "cute.arch.cp_async_wait_group(NSTAGES - 2)", "cute.arch.cp_async_wait_group(NSTAGES - 1)",
       note="the wgmma reads a slot whose cp.async copies may not have landed"),
    _m("cpasync-no-barrier-after-wgmma-wait", "wgmma wait depth", "1", P + "phase1_stages.py",
       "            warpgroup.wait_group(1)\n            cute.arch.sync_threads()\n",
       "            warpgroup.wait_group(1)\n",
       note="a warp refills the slot once its own wgmma share is done, while the other warps' still read it"),
    _m("reduce-add-one-lane", "elect.sync (TMA reduce-add)", "6", CT,
       "    return tidx < 32 if accumulate else tidx == 0\n", "    return tidx == 0\n",
       extra=("tests/test_accumulate.py",), select="machine_adds",
       note="the reduce-add issued by one thread: the DSL wraps it in an elect.sync over the full warp, which one "
            "lane alone never completes (the accumulate epilogue's hang on the H200)"),
    # --- arrival counts, transaction bytes, multicast masks -------------------------------------------
    _m("empty-arrivals-one-cta", "arrive count", "6", CT,
       "pipeline.CooperativeGroup(pipeline.Agent.Thread, (cfg.cluster_m + cn - 1) * consumer_warps)",
       "pipeline.CooperativeGroup(pipeline.Agent.Thread, consumer_warps)",
       note="the cluster-wide empty barrier counts one CTA's consumer warps, not the pair's"),
    _m("empty-arrivals-one-warpgroup", "arrive count", "3", P + "phase3_wide.py",
       "pipeline.Agent.Thread, self.consumer_warpgroups * common.WARPS_PER_WARPGROUP",
       "pipeline.Agent.Thread, common.WARPS_PER_WARPGROUP",
       note="the empty barrier counts one consumer warpgroup's warps of two"),
    _m("pingpong-empty-both-warpgroups", "arrive count", "8", P + "phase8_pingpong.py",
       "ct.make_pair_pipeline(storage, cfg, common.WARPS_PER_WARPGROUP, cta_rank)",
       "ct.make_pair_pipeline(storage, cfg, 2 * common.WARPS_PER_WARPGROUP, cta_rank)",
       note="ping-pong: the empty barrier waits for both warpgroups, but each stage is read by one"),
    _m("tx-bytes-own-b-half", "expect_tx bytes", "4", P + "phase4_cluster.py",
       "            tx_count=cfg.stage_bytes(),\n", "            tx_count=cfg.stage_bytes() - cfg.bn * cfg.bk,\n",
       note="the full barrier expects this CTA's half of B only, not the peer's multicast half"),
    _m("mcast-mask-self", "multicast mask", "4", P + "phase4_cluster.py",
       "get_flat_coord(cta_rank), mcast_mode=1", "get_flat_coord(cta_rank), mcast_mode=0", fast="machine",
       note="B's half is multicast to this CTA only"),
    _m("sk-mask-both", "multicast mask", "7", P + "phase7_stream_k.py",
       "get_flat_coord(cta_rank), mcast_mode=0", "get_flat_coord(cta_rank), mcast_mode=1",
       note="a stream-K unit's B loads land in the peer CTA too"),
    # --- clusters along N sharing the A tile (the persistent phases' cluster_n; its default 1 leaves these inert) --
    _m("clustern-empty-column-only", "arrive count", "6", CT,
       "pipeline.CooperativeGroup(pipeline.Agent.Thread, (cfg.cluster_m + cn - 1) * consumer_warps)",
       "pipeline.CooperativeGroup(pipeline.Agent.Thread, cfg.cluster_m * consumer_warps)", select="along_n",
       gpu=CLUSTER_N_GPU, note="the empty barrier counts the CTAs sharing B, not those of the row that multicast A into it"),
    _m("clustern-a-mask-self", "multicast mask", "6", CT,
       "coord, mcast_mode=2) if cn > 1", "coord, mcast_mode=0) if cn > 1", select="along_n",
       gpu=CLUSTER_N_GPU, note="A's slice is multicast to this CTA only: the row's other CTA never gets it"),
    _m("clustern-a-slice-rank-zero", "multicast slice", "6", CT,
       "tma_atom_a, rank_n, cute.make_layout(cluster_n(cfg)),", "tma_atom_a, 0, cute.make_layout(cluster_n(cfg)),",
       select="along_n", gpu=CLUSTER_N_GPU, note="both CTAs of a row load and multicast slice 0 of the A box"),
    _m("clustern-tile-n-rank-dropped", "tile coordinate (N)", "6", CT,
       "(n_group * cn + rank_n if cn > 1 else n_group)", "(n_group * cn if cn > 1 else n_group)", select="along_n",
       gpu=CLUSTER_N_GPU, note="both CTAs of a row compute the first N tile of the cluster's pair"),
    _m("clustern-ranks-row-major", "tile coordinate (ranks)", "6", CT,
       "    return cta_rank % cfg.cluster_m, cta_rank // cfg.cluster_m\n",
       "    return cta_rank // cluster_n(cfg), cta_rank % cluster_n(cfg)\n", select="along_n", gpu=CLUSTER_N_GPU,
       note="ranks read row-major while the multicast masks (the cluster layout) number them column-major"),
    _m("clustern-cluster-id-pair", "tile coordinate (cluster)", "6", P + "phase6_persistent.py",
       "        cluster_id = bidx // self.cluster_ctas\n", "        cluster_id = bidx // cfg.cluster_m\n",
       select="along_n", gpu=CLUSTER_N_GPU,
       note="a 2 x 2 cluster's CTAs take two cluster ids: the halves walk different tiles"),
    # --- the split-K reduce through DSMEM ----------------------------------------------------------------
    _m("splitk-no-first-cluster-barrier", "cluster barrier (DSMEM)", "9", P + "phase9_split_k.py",
       "            cute.arch.cluster_arrive()\n            cute.arch.cluster_wait()\n            if warp_group_idx > 0:\n",
       "            if warp_group_idx > 0:\n",
       note="the reduce reads the peers' partial tiles without waiting for them"),
    _m("splitk-no-last-cluster-barrier", "cluster barrier (DSMEM)", "9", P + "phase9_split_k.py",
       "            # no CTA leaves while a peer may still read its partial tile\n"
       "            cute.arch.cluster_arrive()\n            cute.arch.cluster_wait()\n", "",
       note="a CTA may exit while a peer still reads its partial tile"),
    _m("splitk-arrive-relaxed", "cluster barrier (DSMEM)", "9", P + "phase9_split_k.py",
       "            cute.arch.cluster_arrive()\n            cute.arch.cluster_wait()\n            if warp_group_idx > 0:\n",
       "            cute.arch.cluster_arrive_relaxed()\n            cute.arch.cluster_wait()\n"
       "            if warp_group_idx > 0:\n",
       note="the cluster arrive before the reduce has no release semantics"),
    _m("splitk-reduce-own-rank", "DSMEM reduce (ranks)", "9", P + "phase9_split_k.py",
       "map_dsmem_ptr(sP.iterator, m_rank + cluster_m * r)", "map_dsmem_ptr(sP.iterator, m_rank + cluster_m * rank)",
       fast="rule:dsmem", note="the reduce adds its own partial tile split_k times instead of every rank's"),
    _m("splitk-k-range-floor", "K range split", "9", P + "phase9_split_k.py",
       "k_count = (rank + 1) * k_tiles // S - k_first", "k_count = k_tiles // S",
       note="each CTA takes K/S k-tiles: the remainder of an uneven split is dropped"),
    # --- the token tile multicast over cluster_m weight tiles (phase 10 cluster_m, alone and x split_k) ------
    # (phase 10's default is cluster_m=1, where these lines are inert: on the GPU they run the multicast configs)
    _m("swapmc-reduce-m-rank-dropped", "DSMEM reduce (ranks)", "10", P + "phase9_split_k.py",
       "map_dsmem_ptr(sP.iterator, m_rank + cluster_m * r)", "map_dsmem_ptr(sP.iterator, cluster_m * r)",
       select="multicast", gpu=MULTICAST_GPU, note="with cluster_m x split_k CTAs, every M tile adds the partial tiles of M rank 0"),
    _m("swapmc-k-rank-from-m-mode", "K range split", "10", P + "phase9_split_k.py",
       "rank = cta_rank // CM if cutlass.const_expr(S > 1) else 0",
       "rank = cta_rank % S if cutlass.const_expr(S > 1) else 0", select="multicast", gpu=MULTICAST_GPU,
       note="the K range is read from the cluster rank's M mode: two CTAs of one M tile walk the same K range"),
    _m("swapmc-empty-to-k-peers", "arrive count", "10", CT,
       '        **({"mcast_mode_mn": (0, 1)} if split_k > 1 else {}),\n', "", select="multicast", gpu=MULTICAST_GPU,
       note="with a split, a consumer's empty arrivals go to the CTAs of the other K ranges too, not its B partners only"),
    _m("swapmc-slice-rank-zero", "multicast slice", "10", P + "phase9_split_k.py",
       "tma_atom_b, m_rank, cute.make_layout(CM),", "tma_atom_b, 0, cute.make_layout(CM),", select="multicast", gpu=MULTICAST_GPU,
       fast="machine", note="every CTA of the cluster loads and multicasts slice 0 of the token tile"),
    _m("swapmc-no-producer-tail", "producer tail", "10", P + "phase9_split_k.py",
       "                    ab_pipeline.producer_tail(prod_state)\n", "                    pass\n", select="multicast", gpu=MULTICAST_GPU,
       note="a producer leaves while the peers' consumers may still arrive on its empty barriers"),
    _m("swapmc-cluster-tile-rank", "tile coordinate (M)", "10", P + "phase9_split_k.py",
       "ct.cluster_tile_coord(bidx // (S * CM), tiles_m, tiles_n, cfg, m_rank)",
       "ct.cluster_tile_coord(bidx // (S * CM), tiles_m, tiles_n, cfg, 0)", select="multicast", gpu=MULTICAST_GPU,
       note="the CTAs of a multicast cluster all compute its first weight tile"),
    # --- three consumer warpgroups (bm=192) and splits that do not divide the tile's lines (split_k=3) ------
    _m("wide-consumers-two-warpgroups", "named barrier count", "10", P + "phase9_split_k.py",
       "return common.WARPGROUP_THREADS * self.consumer_warpgroups", "return common.WARPGROUP_THREADS * 2",
       select="wide", gpu=WIDE_GPU, fast="machine",
       note="the consumers' named barrier counts two warpgroups: with three, the partial tile overwrites the ring "
            "while the third may still be reading it"),
    _m("wide-uneven-lines-floor", "split-K reduce lines", "10", P + "phase9_split_k.py",
       "my_lines = -(-lines // split_k)", "my_lines = lines // split_k", select="wide", gpu=WIDE_GPU,
       note="each rank reduces floor(L/S) lines: with 3 ranks over 16 lines, line 15 is never stored"),
    _m("wide-uneven-lines-unguarded", "split-K reduce lines", "10", P + "phase9_split_k.py",
       "in_tile = True if cutlass.const_expr(lines % split_k == 0) else line < lines", "in_tile = True",
       select="wide", gpu=WIDE_GPU,
       note="the last rank's share runs past the tile: it adds lines of the next tile's rows and stores them there"),
    # 256 weight rows: two warpgroups of 128, each covering two m64 row blocks of the tiled MMA
    _m("wide-256-rows-four-mma-warpgroups", "tile coordinate (M)", "10", P + "phase9_split_k.py",
       "tiled_mma = common.make_tiled_mma(cfg.bn, self.consumer_warpgroups, self.types)",
       "tiled_mma = common.make_tiled_mma(cfg.bn, cfg.bm // common.WGMMA_M, self.types)", select="wide",
       gpu=WIDE_GPU,
       note="the tiled MMA laid out as one warpgroup per 64 rows: at bm=256 its four warpgroups' rows go to two "
            "warpgroups of threads, and rows 128-255 of every tile are never computed"),
    # --- programmatic dependent launch ------------------------------------------------------------------
    _m("pdl-no-wait", "PDL order", "10", P + "phase9_split_k.py",
       "        pdl_wait(cfg)\n", "        pass\n", fast="rule:griddepcontrol",
       note="launched early, and nothing waits for the previous kernel"),
    _m("pdl-wait-in-consumers", "PDL order", "10", P + "phase9_split_k.py", "", "",
       note="griddepcontrol.wait moved to the consumers: the producer's first loads run before it",
       parts=(("        pdl_wait(cfg)\n\n        warp_group_idx", "\n        warp_group_idx"),
              ("            cute.arch.setmaxregister_increase(self.consumer_regs)\n",
               "            cute.arch.setmaxregister_increase(self.consumer_regs)\n            pdl_wait(cfg)\n"))),
    # the persistent phases' (phases.pdl's helpers, called by 6-8; what phase="best" runs); on the GPU the chained
    # launches, the second reading the first's output
    _m("persistent-pdl-no-wait", "PDL order", "6", P + "phase6_persistent.py",
       "        pdl_wait(cfg)\n", "        pass\n",
       gpu=PDL_GPU,
       note="use_pdl: launched early, and nothing waits for the previous kernel before the first loads and stores"),
    _m("persistent-pdl-wait-in-consumers", "PDL order", "7", P + "phase7_stream_k.py", "", "",
       gpu=PDL_GPU,
       note="use_pdl: griddepcontrol.wait only in the consumers: the producer's first TMA loads run before it",
       parts=(("        pdl_wait(cfg)\n\n        warp_group_idx", "\n        warp_group_idx"),
              ("            cute.arch.setmaxregister_increase(self.consumer_regs)\n",
               "            cute.arch.setmaxregister_increase(self.consumer_regs)\n            pdl_wait(cfg)\n"))),
    # --- tile coordinates, raster, epilogue mapping -----------------------------------------------------
    _m("cluster-tile-rank-dropped", "tile coordinate (M)", "6", CT,
       "return m_group * cfg.cluster_m + rank_m, (", "return m_group * cfg.cluster_m, (", fast="machine",
       note="both CTAs of a pair compute the pair's first M tile"),
    _m("b-coord-k-zero", "tile coordinate (K)", "2b", P + "phase2b_ws.py",
       "tBgB[(None, prod_state.count)]", "tBgB[(None, 0)]", note="every stage of B loads k-tile 0"),
    _m("raster-tiles-swapped", "raster", "2b", P + "phase2b_ws.py",
       "grouped_tile_coord(bidx, tiles_m, tiles_n, cfg.group_m)", "grouped_tile_coord(bidx, tiles_n, tiles_m, cfg.group_m)",
       note="the grouped raster walks an N x M grid of tiles"),
    _m("epi-slab-column", "epilogue mapping (columns)", "6", CT,
       "bSG_gC[(None, (0, j))], tma_atom_c", "bSG_gC[(None, (0, j % epi_stages))], tma_atom_c",
       note="slab j stored to the columns of its staging buffer's first slab"),
    _m("epi-predicate-rows-only", "epilogue mapping (partial tiles)", "3", P + "common.py",
       "if cute.elem_less(tCcC[i], mC.shape):", "if tCcC[i][0] < mC.shape[0]:",
       note="the register epilogue's predicate checks the row only: columns past N are stored"),
    _m("acc-not-zeroed", "accumulator init", "6", P + "phase6_persistent.py", "                acc.fill(0.0)\n", "",
       note="a persistent CTA's second tile accumulates onto its first"),
    _m("store-wait-depth", "TMA store wait", "6", CT,
       "cp_async_bulk_wait_group(epi_stages - 2, read=True)", "cp_async_bulk_wait_group(epi_stages - 1, read=True)",
       note="a staging buffer is rewritten while its TMA store may still read it"),
    # --- stream-K, swap-AB, ping-pong -------------------------------------------------------------------
    _m("sk-k-first-zero", "stream-K exchange", "7", P + "phase7_stream_k.py",
       "k_first = cta_rank * k_split", "k_first = 0", note="both CTAs of a split tile compute the first half of K"),
    _m("sk-send-wrong-half", "stream-K exchange", "7", P + "phase7_stream_k.py",
       "slab_frag.store(cute.where(is_rank0, hi, lo))", "slab_frag.store(cute.where(is_rank0, lo, hi))",
       note="each CTA sends the half of its partial tile it keeps"),
    _m("sk-no-free-wait", "stream-K exchange", "7", P + "phase7_stream_k.py",
       "                cute.arch.mbarrier_wait(xchg_free, 0)  # phase 0: the peer's ring is free for my half\n", "",
       note="partial sums sent into the peer's ring before the peer's wgmma are done with it"),
    _m("swap-problem-mnk", "swap-AB relabel", "10", P + "phase10_swap_ab.py",
       "return mC.shape[1], mC.shape[0], mA.shape[1]", "return mC.shape[0], mC.shape[1], mA.shape[1]",
       note="the swapped kernel's grid sized for the unswapped problem"),
    _m("pingpong-no-epi-store-wait", "ping-pong turns", "8", P + "phase8_pingpong.py",
       "                if store_thread:\n                    cute.arch.cp_async_bulk_wait_group(0, read=True)\n"
       "                next_epi_turn.arrive()", "                next_epi_turn.arrive()",
       note="the epilogue turn handed on before this warpgroup's TMA stores have read the staging buffers"),
    _m("pingpong-turn-not-handed-on", "ping-pong turns", "8", P + "phase8_pingpong.py",
       "                    next_mma_turn.arrive()  # the other warpgroup's tile may take the tensor pipe\n",
       "                    pass\n", note="with early_turn=False, a warpgroup never hands the mainloop turn on"),
    _m("pingpong-early-turn-not-handed-on", "ping-pong turns", "8", P + "common_tma.py",
       "        issued.arrive()\n", "        pass\n",
       note="the turn is handed on neither at issue nor after the wait: the other warpgroup waits"),
    # --- the fused epilogue's arithmetic held below the slab barriers (epi_spread) -----------------------
    _m("spread-value-not-added", "epilogue schedule", "8", CT,
       "            bias_groups = plus_zero(bias_groups, after)  # the slab's few bias values carry it: every sum reads "
       "one\n", "            pass\n",
       extra=(SASS,), select="epi_spread",
       note="the slab's bias values do not carry the previous barrier's value: ptxas hoists the arithmetic above "
            "the first slab again (the SASS test; the results stay right)"),
    _m("spread-barrier-count", "epilogue schedule", "8", P + "common.py",
       "barrier.red.popc.u32 z, {barrier_id}, {num_threads}, p;", "barrier.red.popc.u32 z, {barrier_id}, "
       "{num_threads - 32}, p;", select="epi_spread",
       note="the slab barrier that returns 0 counts one warp too few: a warp runs on before the slab is staged"),
    # --- phase 8's bias through smem (bias_smem) ---------------------------------------------------------
    _m("bias-smem-no-copy-wait", "epilogue loads", "8", P + "phase8_pingpong.py",
       "                    cute.arch.cp_async_wait_group(0)  # this thread's bias copy landed; the barrier shows it "
       "to all\n", "                    pass\n",
       note="the epilogue reads the tile's bias from smem without waiting for its cp.async to land"),
    _m("bias-smem-first-tile-only", "epilogue loads", "8", CT,
       "        chunk = cutlass.min(n_tile * (bn // 8) + tidx, row.shape[0] // 8 - 1)",
       "        chunk = cutlass.min(tidx, row.shape[0] // 8 - 1)",
       note="every tile copies the first tile column's bias (the tile's offset along N dropped)"),
    # --- phase 8's slabs computed while the previous slab's store reads smem (store_overlap) -------------
    _m("store-overlap-wait-depth", "TMA store wait", "8", CT,
       "            cute.arch.cp_async_bulk_wait_group(epi_stages - 1, read=True)",
       "            cute.arch.cp_async_bulk_wait_group(epi_stages, read=True)",
       note="with store_overlap, a slab is written into its buffer while the store that last read it may still read"),
    _m("store-overlap-no-buffer-barrier", "TMA store wait", "8", CT,
       "        epi_barrier.arrive_and_wait()  # this slab's buffer is free\n", "",
       note="with store_overlap, the threads write a slab before the store thread has seen its buffer read"),
    # --- registers and the pair's exit ------------------------------------------------------------------
    _m("setmaxnreg-over-budget", "setmaxnreg", "3", P + "phase3_wide.py",
       "    consumer_regs = 232\n", "    consumer_regs = 240\n",
       note="the consumers ask for more registers than the producer gave back"),
    _m("producer-no-tail", "producer tail", "4", P + "phase4_cluster.py",
       "                ab_pipeline.producer_tail(prod_state)\n", "",
       note="the producer exits without waiting for the peer's last arrivals on its empty barriers"),
]


def substitutions(m) -> list:
    """The (old, new) pairs of a mutant, applied in order."""
    return list(m.parts) or [(m.old, m.new)]


# --- the GPU tests of each phase (tests/test_gpu_phases.py): a few aligned and ragged shapes each -------
_ALIGNED = ("1024x4096x4096", "2048x1024x512", "256x512x1024")
_RAGGED = ("1x8x8", "7x264x72", "129x3000x520", "1000x264x4104", "3000x264x8")
_TILE_MULTIPLES = ("1024x4096x4096", "2048x1024x512", "256x512x1024", "512x256x768")


def gpu_tests(phase: str) -> list[str]:
    """Node ids of the GPU checks a mutant of ``phase`` runs on the H200 (tests/test_gpu_phases.py)."""
    key = f"sm90:{phase}"
    t = "tests/test_gpu_phases.py::"
    if phase in ("0", "1"):  # tile multiples only
        return [f"{t}test_phase_matches_cublaslt[{key}-{s}]" for s in _TILE_MULTIPLES]
    return ([f"{t}test_phase_matches_cublaslt[{key}-{s}]" for s in _ALIGNED]
            + [f"{t}test_ragged_shapes[{key}-{s}]" for s in _RAGGED])
