"""sm90 phase 6: a persistent kernel whose epilogue overlaps the next tile's loads (beyond the worklog).

Compared to phase 5 (one CTA per 128x256 tile, 512 CTAs at 4096^3 queued onto 132 SMs that hold one
CTA each), the grid is now one CTA per SM and each CTA walks the tiles itself:
1. persistent tile loop: ``sm_count`` CTAs (``sm_count / cluster_m`` clusters of 2); cluster c computes
   cluster tiles c, c + 66, c + 132, ... in the same grouped raster as phase 5 (bands of ``group_m``
   M-tiles), and both CTAs of a pair walk the same sequence, so B multicast and the cluster-wide
   empty barriers work unchanged. CTA launch, barrier init, cluster sync and tensor-map prefetch are
   paid once per CTA instead of once per tile;
2. the producer does not stop at a tile boundary: its ring state simply continues into the next tile's
   k-tiles, so while the consumers run the epilogue of tile i the ring fills with tile i+1 and their
   next mainloop starts on NSTAGES landed stages instead of a cold TMA round trip (the pipeline fill is
   paid once per CTA);
3. the TMA store is asynchronous across tiles: the C staging tile can no longer overlay the B ring
   (the producer is refilling it during the epilogue), so it gets its own ``epi_stages`` buffers of one
   128x32 fp32 slab (16 KiB, SW128). Slab j of a tile goes to buffer j % epi_stages; after writing it
   (st.shared + ``fence.proxy.async.shared::cta``) and before the consumers' named barrier, the storing
   thread waits with ``cp.async.bulk.wait_group.read`` until the buffer the *next* slab will overwrite
   has been read by its store, then issues slab j's TMA store and commits it as its own bulk group.
   No one waits for a store to reach global memory, and the last slab's store of tile i drains while
   tile i+1's mainloop runs; only the CTA's very last stores are waited for, before it exits.

Why (numbers, H200, 4096^3): phase 5 runs 4 rounds of one tile per SM (512 tiles / 132 SMs = 3.9) at
721 TFLOP/s (190 us, ~48 us per round) against 64 k-tiles x 1024 tensor cycles = 65,536 cycles = ~36 us
of wgmma per tile at 1.83 GHz. Each round pays, with the tensor pipe idle: the CTA's launch and setup,
the pipeline fill (a first TMA round trip, ~1-2 us), and the epilogue (128 KiB of fp32 per tile through
smem, >= 1024 cycles at 128 B/clk to write plus the stores' smem reads), which a CTA must finish, stores
read included, before the next CTA may take its SM. Here the setup and fill are paid once per CTA, and
only the consumers' register -> smem writes of the epilogue stay exposed (both consumer warpgroups share
one tile; hiding that too needs ping-pong: two tiles in flight, one per warpgroup).
What it does not change: waves. A static round-robin over 66 clusters still gives some clusters
ceil(256 / 66) = 4 tiles at 4096^3 and ceil(144 / 66) = 3 at 3072^3 (2.2 on average), and M=1024
(64 cluster tiles) is one tile per cluster as in phase 5.

Measured on the H200 (TFLOP/s, L2-resident, median of 10 after 5 warm-ups, one run, all checks PASS
vs cuBLASLt/float64 with NaN-poisoned C, repeat identical): 4096^3 720 (phase 5 in the same run 705,
cuBLAS 728-729); 1024x4096x4096 696 (cuBLAS 694); 3072^3 535 (cuBLAS 695: the 3-round wave above);
512x256x768 13.6 (cuBLAS 10.9); 2048x1024x512 140 (cuBLAS 105). Variants at 4096^3 / 3072^3:
3 stages + 4 staging buffers 719 / 538, group_m=16 725 / 533, i.e. within noise of the default.
So the per-tile fixed costs were worth ~2% at 4096^3, not the ~8% between phase 5 and the 780 target:
a tile still takes ~48 us (190.9 us / 4 rounds) against ~36 us of wgmma at 1.83 GHz, and that time is
now spent in the mainloop itself (smem bandwidth of the SS wgmma + TMA writes, phase 5's estimate (a),
and the clock the tensor pipe holds under load), which persistence does not touch.

Numbers: tile, cluster, ring as phase 5 (128x256x64, 4 stages x 48 KiB, pairs along M, 384 threads)
+ 2 C staging buffers x 16 KiB = 224 KiB + 1 KiB of barriers/alignment = 230,400 of the 232,448 bytes
a CTA may opt into. Grid: min(cluster tiles, sm_count / cluster_m) x cluster_m CTAs.
``sm_count`` is a config field (default 132, the H200/H100 SXM) rather than a device query because the
kernel also compiles on machines without a GPU and the config is the compile-cache key; clusters of 2
tile the 66 TPCs of a 132-SM part exactly. On a GPU with fewer SMs, a grid larger than the number of
co-resident clusters is still correct, only slower (the extra clusters run as a second wave).

Stream-K option (``stream_k``, on by default since it measured +15% at 3072^3 on the H200, bit-identical
repeats, all checks passing): split the partial last round along K inside each pair.
The busiest cluster sets the time: at 3072^3, 144 cluster tiles = 2 rounds of 66 + 12, so the third
round runs 12 tiles on 12 of 66 clusters (3 tile times where 144 / 66 = 2.2 would do). With the option,
the R = tiles % 66 leftover cluster tiles become 2R units, one per cluster (when 2R <= 66): unit u is
CTA tile u % 2 of leftover tile u // 2, and the two CTAs of cluster u compute its k-tiles [0, K/2) and
[K/2, K) (each loads the whole B box itself, multicast to itself only: nothing is shared). The pair then
exchanges halves: each CTA st.async's the half of its fp32 partial tile the peer finalizes (64 KiB,
16 B per thread and store) into the peer's A/B ring, free by then, counted on the peer's mbarrier, adds
the half it receives to its own registers and stores its 4 slabs with the TMA-store epilogue above.
- Why inside a pair: the contract gives the kernel no memory besides A, B, C, so partial sums of
  different clusters would have nowhere to go and no flag to wait on (C holds one value per element and
  starts with arbitrary content). Inside a cluster the peer's smem is the workspace and its mbarriers
  the flags, and a cluster's CTAs are co-scheduled by the hardware: no wait depends on another
  cluster, whatever the occupancy. Every element is p_lo + p_hi, a sum of two fp32 terms, which
  commutes: the same bits on every run.
- Rounds: 3072^3 3 -> 2.5 tile times + the exchange (expect ~+15%); 2048x1024x512 (32 tiles) and
  512x256x768 (2 tiles) have no full round, so every tile is split and twice the clusters run half
  the k-tiles. 4096^3 is unchanged: its last round holds 58 tiles, 116 halves do not fit on 66 clusters,
  and even a perfect split would gain at most 4 / 3.88 - 1 = 3%. 1024x4096x4096 (64 tiles) fills
  one round: unchanged.
- Measured (H200, 2026-11-29, one run, TFLOP/s, L2-resident): 3072^3 535 -> 614 (cuBLAS 698);
  4096^3 725 -> 726 (cuBLAS 734); every split shape passes vs cuBLASLt/float64 with repeats bit-identical.
- Cost: smem unchanged (two mbarriers in the bytes before the 1024-B aligned A ring); the kernel is
  the same as without the option for shapes where no split happens.

Constraints:
- M % 256 == 0 (a cluster covers 2 x BM rows), N % 256 == 0, K % 64 == 0.
- A K-major, B N-major (MN-major wgmma operand), C fp32 row-major, 16-B aligned rows.
- (BN / 32) % epi_stages == 0, so slab j's buffer is the same static j % epi_stages in every tile.
- stream_k splits only with cluster_m == 2 and an even number of k-tiles (both CTAs of a pair must run
  the same number of ring stages: the empty barriers count both CTAs' releases); otherwise it is off.
"""

import dataclasses

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass._mlir.dialects import nvvm
from cutlass.cute.nvgpu import cpasync, warpgroup
from cutlass.tensor_utils import LayoutEnum

from phases.base import GemmPhase
from phases.sm90 import common_tma as common

SMEM_OPT_IN_MAX = 232_448  # 227 KiB: the most dynamic smem one CTA may ask for on sm90


@dataclasses.dataclass(frozen=True)
class Sm90Phase6Config(common.TmaConfig):
    bm: int = 128
    bn: int = 256
    bk: int = 64
    stages: int = 4  # 4 x 48 KiB = 192 KiB: one CTA per SM
    cluster_m: int = 2  # CTAs per cluster along M: they share (multicast) the B tile
    epi_stages: int = 2  # C staging buffers of one 128x32 fp32 slab (16 KiB) each
    sm_count: int = 132  # SMs the persistent grid fills (H200); not queried, see the module docstring
    stream_k: bool = True  # split the partial last round along K inside each cluster (module docstring)


def make_shared_storage(stages: int, sA_layout, sB_layout, sC_layout, stream_k: bool = False):
    """Phase 5's smem struct (full/empty mbarriers, A and B rings) + the C staging buffers.

    With ``stream_k``, two more mbarriers for the stream-K exchange (free, full); they fit in the 1 KiB
    before the 1024-B aligned A ring, so the struct's size does not change.
    """

    @cute.struct
    class SharedStorage:
        full_empty: cute.struct.MemRange[cutlass.Int64, 2 * stages]
        sA: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, cute.cosize(sA_layout)], common.SMEM_ALIGN]
        sB: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, cute.cosize(sB_layout)], common.SMEM_ALIGN]
        sC: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, cute.cosize(sC_layout)], common.SMEM_ALIGN]

    @cute.struct
    class SharedStorageStreamK:
        full_empty: cute.struct.MemRange[cutlass.Int64, 2 * stages]
        xchg: cute.struct.MemRange[cutlass.Int64, 2]  # [0] free: the peer's ring may take my half; [1] full
        sA: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, cute.cosize(sA_layout)], common.SMEM_ALIGN]
        sB: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, cute.cosize(sB_layout)], common.SMEM_ALIGN]
        sC: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, cute.cosize(sC_layout)], common.SMEM_ALIGN]

    return SharedStorageStreamK if stream_k else SharedStorage


class Sm90Phase6(GemmPhase):
    """Phase 5 made persistent: one CTA per SM walks its tiles; the epilogue's TMA stores drain behind it."""

    arch = "sm90"
    phase = "6"
    Config = Sm90Phase6Config
    summary = "phase 5 persistent: one CTA per SM loops over tiles, producer runs ahead, async TMA-store epilogue"
    adds = ("persistent grouped-raster tile loop; loads of tile i+1 and stores of tile i overlap tile i's epilogue; "
            "the partial last round split along K inside each cluster pair")
    worklog = ""

    consumer_warpgroups = 2  # warpgroup w owns rows 64w..64w+63
    epi_n = 32  # columns per TMA-store slab: 32 fp32 = 128 B, the SW128 box width
    # One CTA per SM (224 KiB of smem): 384 threads start at 65,536 / 384 -> 168 registers each; the
    # producer drops to 40 and the consumers take 232: 128 x 40 + 256 x 232 = 64,512 of 65,536.
    ctas_per_sm = 1
    producer_regs = 40
    consumer_regs = 232

    def can_implement(self, m: int, n: int, k: int) -> list[str]:
        why = super().can_implement(m, n, k)  # includes M % (BM x cluster_m)
        if why and m % (self.cfg.bm * self.cfg.cluster_m):
            why.append("phase 6 pairs CTAs along M; phase 3 needs only M % 128 == 0")
        return why

    def schedule(self, m: int, n: int, k: int) -> tuple[int, int, int]:
        """(data-parallel cluster tiles, stream-K cluster tiles, clusters launched) for an (m, n, k) problem.

        Data-parallel: cluster c computes cluster tiles c, c + clusters, ... below the first number.
        Stream-K (``stream_k``): the R = tiles % slots cluster tiles of the partial last round are split
        only when that shortens it, i.e. when their 2R CTA tiles fit on the slots clusters (2R <= slots)
        and both CTAs of a cluster get the same number of k-tiles (the empty barriers count both CTAs'
        releases, so the two rings must advance in step): unit u (= cluster u) is CTA tile u % 2 of
        cluster tile dp + u // 2, each CTA of the cluster computes half of its k-tiles.
        """
        cfg = self.cfg
        tiles = m // cfg.tile_m() * (n // cfg.bn)
        slots = cfg.sm_count // cfg.cluster_m
        rest = tiles % slots
        k_tiles = k // cfg.bk
        if cfg.stream_k and cfg.cluster_m == 2 and 0 < rest * cfg.cluster_m <= slots and k_tiles % cfg.cluster_m == 0:
            dp = tiles - rest
            return dp, rest, slots if dp else rest * cfg.cluster_m
        return tiles, 0, min(tiles, slots)

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream):
        cfg = self.cfg
        tiled_mma = common.make_tiled_mma(cfg.bn, self.consumer_warpgroups)
        sA_layout, sB_layout = common.make_smem_layouts(cfg.bm, cfg.bn, cfg.bk, cfg.stages)
        tma_atom_a, tma_a = common.make_tma_load(mA, sA_layout, (cfg.bm, cfg.bk))
        # B: each CTA of the pair loads 1/cluster_m of the box and multicasts it to the whole pair
        tma_atom_b, tma_b = common.make_tma_load(mB, sB_layout, (cfg.bn, cfg.bk), num_multicast=cfg.cluster_m)
        # C staging: epi_stages buffers of one (BM, 32) fp32 slab each, SW128-swizzled, one TMA box each
        assert (cfg.bn // self.epi_n) % cfg.epi_stages == 0, "slab j must map to the static buffer j % epi_stages"
        sC_layout = sm90_utils.make_smem_layout_epi(
            cutlass.Float32, LayoutEnum.ROW_MAJOR, (cfg.bm, self.epi_n), cfg.epi_stages
        )
        tma_atom_c, tma_c = cpasync.make_tiled_tma_atom(
            cpasync.CopyBulkTensorTileS2GOp(), mC, cute.slice_(sC_layout, (None, None, 0)), (cfg.bm, self.epi_n)
        )

        # persistent grid: at most one cluster per sm_count / cluster_m SM group, never more than the tiles
        # (or, with a stream-K split, than its units); see ``schedule``
        self.dp_tiles, self.sk_tiles, self.clusters = self.schedule(
            cute.size(mA, mode=[0]), cute.size(mC, mode=[1]), cute.size(mA, mode=[1])
        )
        self.grid_ctas = self.clusters * cfg.cluster_m

        self.shared_storage = make_shared_storage(
            cfg.stages, sA_layout, sB_layout, sC_layout, stream_k=self.sk_tiles > 0
        )
        self.smem_bytes = self.shared_storage.size_in_bytes()
        assert self.smem_bytes <= SMEM_OPT_IN_MAX, f"{self.smem_bytes} B of smem: fewer stages or epi_stages"
        self.threads = common.WARPGROUP * (1 + self.consumer_warpgroups)  # producer + consumers

        self.kernel(
            tma_atom_a, tma_a, tma_atom_b, tma_b, tma_atom_c, tma_c, tiled_mma, sA_layout, sB_layout, sC_layout
        ).launch(
            grid=[self.grid_ctas, 1, 1],
            block=[self.threads, 1, 1],
            cluster=[cfg.cluster_m, 1, 1],  # consecutive block ids pair up
            smem=self.smem_bytes,
            # .minnctapersm: fixes the entry register count (168) that setmaxnreg moves registers from
            min_blocks_per_mp=self.ctas_per_sm,
            preferred_smem_carveout=100,  # all 228 KiB of the SM as smem
            stream=stream,
        )

    @cute.kernel
    def kernel(
        self,
        tma_atom_a: cute.CopyAtom,
        mA: cute.Tensor,
        tma_atom_b: cute.CopyAtom,
        mB: cute.Tensor,
        tma_atom_c: cute.CopyAtom,
        mC: cute.Tensor,
        tiled_mma: cute.TiledMma,
        sA_layout: cute.ComposedLayout,
        sB_layout: cute.ComposedLayout,
        sC_layout: cute.ComposedLayout,
    ):
        cfg = self.cfg
        BM, BN, BK, NSTAGES = cfg.bm, cfg.bn, cfg.bk, cfg.stages
        EPI_STAGES, SLABS = cfg.epi_stages, BN // self.epi_n
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        bidx, _, _ = cute.arch.block_idx()
        if warp_idx == 0:
            cpasync.prefetch_descriptor(tma_atom_a)
            cpasync.prefetch_descriptor(tma_atom_b)
            cpasync.prefetch_descriptor(tma_atom_c)

        tiles_m = cute.size(mC, mode=[0]) // BM
        tiles_n = cute.size(mC, mode=[1]) // BN
        # the persistent schedule: cluster c takes cluster tiles c, c + clusters, c + 2 clusters, ...
        # (both CTAs of a pair walk the same list: their multicasts and empty arrivals stay matched)
        cta_rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
        cluster_id = bidx // cfg.cluster_m
        cluster_tiles = tiles_m // cfg.cluster_m * tiles_n
        assert cluster_tiles == self.dp_tiles + self.sk_tiles
        # stream-K units (one per cluster 0 .. SK_UNITS-1, after its data-parallel tiles): see ``schedule``
        SK_UNITS = self.sk_tiles * cfg.cluster_m

        # ---- smem: barriers + A/B rings + C staging buffers ----
        smem = cutlass.memory.SmemAllocator()
        storage = smem.allocate(self.shared_storage)
        sA = storage.sA.get_tensor(sA_layout.outer, swizzle=sA_layout.inner)  # (BM, BK, NSTAGES)
        sB = storage.sB.get_tensor(sB_layout.outer, swizzle=sB_layout.inner)  # (BN, BK, NSTAGES)
        sC = storage.sC.get_tensor(sC_layout.outer, swizzle=sC_layout.inner)  # (BM, 32, EPI_STAGES)
        if cutlass.const_expr(SK_UNITS > 0):
            # the stream-K exchange's mbarriers, initialised before the pipeline's fence.mbarrier_init and
            # cluster sync below, which publish them to the peer CTA too (it arrives on them remotely).
            # free: one arrival per phase from the peer's store thread (phase 0: its ring may be
            # overwritten with my half; phase 1: it has received my half). full: my own arrive.expect_tx
            # plus the bytes of the peer's st.async stores.
            xchg_free = storage.xchg.data_ptr()
            xchg_full = xchg_free + 1
            if warp_idx == 0:
                with cute.arch.elect_one():
                    cute.arch.mbarrier_init(xchg_free, 1)
                    cute.arch.mbarrier_init(xchg_full, 1)

        # full: 1 arrival (the producer's arrive.expect_tx) + the stage's TMA bytes (own A, both B halves).
        # empty: one arrival per consumer warp of *both* CTAs (the peer multicasts into this slot too).
        # Created without defer_sync: barrier init, then a cluster-wide arrive/wait before any use.
        cta_layout_vmnk = cute.make_layout((1, cfg.cluster_m, 1, 1))
        ab_pipeline = pipeline.PipelineTmaAsync.create(
            barrier_storage=storage.full_empty.data_ptr(),
            num_stages=NSTAGES,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(
                pipeline.Agent.Thread, cfg.cluster_m * self.consumer_warpgroups * common.WARPS_PER_WARPGROUP
            ),
            tx_count=cfg.stage_bytes(),
            cta_layout_vmnk=cta_layout_vmnk,
        )
        # B's multicast mask: every CTA of the cluster along M (mode 1 of V,M,N,L) -> 0b11
        b_mcast_mask = cpasync.create_tma_multicast_mask(
            cta_layout_vmnk, cta_layout_vmnk.get_flat_coord(cta_rank), mcast_mode=1
        )

        # ---- every tile's TMA / MMA partitions (the loop below only picks the tile coordinates) ----
        gA = cute.local_tile(mA, (BM, BK), (None, None))  # (BM, BK, tiles_m, k_tiles)
        gB = cute.local_tile(mB, (BN, BK), (None, None))  # (BN, BK, tiles_n, k_tiles)
        gC = cute.local_tile(mC, (BM, BN), (None, None))  # (BM, BN, tiles_m, tiles_n)
        # A is this CTA's alone: the TMA partition is the whole box
        tAsA, tAgA = cpasync.tma_partition(
            tma_atom_a, 0, cute.make_layout(1), cute.group_modes(sA, 0, 2), cute.group_modes(gA, 0, 2)
        )
        # B: rank r of the pair loads slice r of the box (and writes it into both CTAs)
        tBsB, tBgB = cpasync.tma_partition(
            tma_atom_b, cta_rank, cute.make_layout(cfg.cluster_m), cute.group_modes(sB, 0, 2), cute.group_modes(gB, 0, 2)
        )
        if cutlass.const_expr(SK_UNITS > 0):
            # the stream-K unit's B loads: rank r's slice of the box, to this CTA only (mode 0 of V,M,N,L
            # has one CTA: the mask is this CTA's bit)
            tBsB_0, tBgB_0 = cpasync.tma_partition(
                tma_atom_b, 0, cute.make_layout(cfg.cluster_m), cute.group_modes(sB, 0, 2), cute.group_modes(gB, 0, 2)
            )
            tBsB_1, tBgB_1 = cpasync.tma_partition(
                tma_atom_b, 1, cute.make_layout(cfg.cluster_m), cute.group_modes(sB, 0, 2), cute.group_modes(gB, 0, 2)
            )
            self_mask = cpasync.create_tma_multicast_mask(
                cta_layout_vmnk, cta_layout_vmnk.get_flat_coord(cta_rank), mcast_mode=0
            )
        k_tiles = cute.size(gA, mode=[3])
        K_SPLIT = k_tiles // cfg.cluster_m  # k-tiles per CTA in a stream-K unit

        warp_group_idx = cute.arch.make_warp_uniform(tidx // common.WARPGROUP)

        # ---- producer warpgroup: one thread of warp 0 streams A/B k-tiles of all its tiles into the ring ----
        if warp_group_idx == 0:
            cute.arch.setmaxregister_decrease(self.producer_regs)
            if warp_idx == 0:
                prod_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, NSTAGES)
                for tile in cutlass.range(cluster_id, self.dp_tiles, self.clusters, unroll=1):
                    # raster over clusters; the pair's CTAs take adjacent M tiles of the same N tile (same B)
                    m_pair, n_tile = common.grouped_tile_coord(
                        tile, tiles_m // cfg.cluster_m, tiles_n, cfg.group_m // cfg.cluster_m
                    )
                    m_tile = m_pair * cfg.cluster_m + cta_rank
                    # no drain at the tile boundary: the ring state runs on, so these loads fill the
                    # slots the consumers free while they are still in the previous tile's epilogue
                    for k_tile in cutlass.range(k_tiles, unroll=1):
                        ab_pipeline.producer_acquire(prod_state)  # empty wait + arrive.expect_tx on full[s]
                        full = ab_pipeline.producer_get_barrier(prod_state)
                        cute.copy(
                            tma_atom_a, tAgA[(None, m_tile, k_tile)], tAsA[(None, prod_state.index)], tma_bar_ptr=full
                        )
                        cute.copy(
                            tma_atom_b, tBgB[(None, n_tile, k_tile)], tBsB[(None, prod_state.index)],
                            tma_bar_ptr=full, mcast_mask=b_mcast_mask,
                        )
                        prod_state.advance()
                if cutlass.const_expr(SK_UNITS > 0):
                    if cluster_id < SK_UNITS:
                        # stream-K unit: both CTAs of the pair compute the same CTA tile, this one over
                        # k-tiles [rank * K_SPLIT, (rank + 1) * K_SPLIT). No operand is shared, so each
                        # CTA loads the whole B box itself: both ranks' slices, each multicast to this
                        # CTA only (same bytes per stage as before: the full barrier's tx count holds).
                        # Both CTAs load K_SPLIT stages here after the same data-parallel tiles, so the
                        # two rings stay in step and the cluster-wide empty barriers count as before.
                        m_pair, n_tile = common.grouped_tile_coord(
                            self.dp_tiles + cluster_id // cfg.cluster_m, tiles_m // cfg.cluster_m, tiles_n,
                            cfg.group_m // cfg.cluster_m,
                        )
                        m_tile = m_pair * cfg.cluster_m + cluster_id % cfg.cluster_m
                        k_first = cta_rank * K_SPLIT
                        for k_tile in cutlass.range(K_SPLIT, unroll=1):
                            ab_pipeline.producer_acquire(prod_state)
                            full = ab_pipeline.producer_get_barrier(prod_state)
                            cute.copy(
                                tma_atom_a, tAgA[(None, m_tile, k_first + k_tile)], tAsA[(None, prod_state.index)],
                                tma_bar_ptr=full,
                            )
                            cute.copy(
                                tma_atom_b, tBgB_0[(None, n_tile, k_first + k_tile)], tBsB_0[(None, prod_state.index)],
                                tma_bar_ptr=full, mcast_mask=self_mask,
                            )
                            cute.copy(
                                tma_atom_b, tBgB_1[(None, n_tile, k_first + k_tile)], tBsB_1[(None, prod_state.index)],
                                tma_bar_ptr=full, mcast_mask=self_mask,
                            )
                            prod_state.advance()
                # do not exit while the peer may still arrive on this CTA's empty barriers
                ab_pipeline.producer_tail(prod_state)

        # ---- consumer warpgroups: per tile, the wgmma mainloop, then the epilogue ----
        if warp_group_idx > 0:
            cute.arch.setmaxregister_increase(self.consumer_regs)
            mma_tidx = tidx - common.WARPGROUP
            thr_mma = tiled_mma.get_slice(mma_tidx)
            tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))  # smem descriptors, (MMA, MMA_M, MMA_K, NSTAGES)
            tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
            acc = cute.make_rmem_tensor(thr_mma.partition_C(gC[(None, None, 0, 0)]).shape, cutlass.Float32)
            tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
            num_k_blocks = cute.size(tCrA, mode=[2])  # BK / 16

            # ---- epilogue views (tile-independent) ----
            epi_barrier = pipeline.NamedBarrier(
                barrier_id=1, num_threads=self.consumer_warpgroups * common.WARPGROUP
            )
            # the MMA's view of the staging ring as the (BM, BN) tile: column c + 32 j (slab j) lives in
            # buffer j % EPI_STAGES, i.e. the slab mode is (EPI_STAGES, SLABS / EPI_STAGES) with stride
            # (one buffer, 0); same swizzle as sC, so each thread writes where the TMA box reads
            slab = cute.slice_(sC_layout.outer, (None, None, 0))  # (BM, 32)
            ring = cute.make_layout(
                (slab.shape[0], slab.shape[1], (EPI_STAGES, SLABS // EPI_STAGES)),
                stride=(slab.stride[0], slab.stride[1], (cute.cosize(slab), 0)),
            )
            sC_tile = cute.make_tensor(sC.iterator, ring)  # (BM, 32, SLABS) aliasing the EPI_STAGES buffers
            tCsC = thr_mma.partition_C(cute.group_modes(sC_tile, 1, 3))
            # this thread's values of slab j: the wgmma fragment is ((2, 2, BN/8), 1, 1), 8 columns per
            # N-block, so slab j is N-blocks 4j..4j+3: split that mode into (4, BN/32) and slice
            acc_slabs = cute.logical_divide(acc, (cute.make_layout((2, 2, self.epi_n // 8)),))
            tCsC_slabs = cute.logical_divide(tCsC, (cute.make_layout((2, 2, self.epi_n // 8)),))
            # one thread issues (and waits for) the stores: unlike TMA loads, the DSL does not elect a
            # lane for a TMA store, and bulk groups are per thread
            store_thread = mma_tidx == 0
            if cutlass.const_expr(SK_UNITS > 0):
                # stream-K exchange views. Both CTAs of the pair hold the same tile with the same thread
                # -> fragment map, so thread t's value i of slab j means the same C element in both.
                # Mailbox (in the B ring, free by then): fp32 [slab jj][quad q][thread t][4], i.e. value
                # i of slab jj of thread t at ((jj * VALS/4 + i // 4) * 256 + t) * 4 + i % 4.
                MMA_THREADS = self.consumer_warpgroups * common.WARPGROUP
                HALF = SLABS // 2
                slab_frag = cute.make_rmem_tensor(acc_slabs[(None, 0), 0, 0].shape, cutlass.Float32)
                recv_frag = cute.make_rmem_tensor(acc_slabs[(None, 0), 0, 0].shape, cutlass.Float32)
                VALS = cute.size(slab_frag)  # values of one slab per thread (16)
                assert slab_frag.shape == ((2, 2, VALS // 4),), "a thread's slab: 2 x 2 x (VALS / 4) values"
                # flat order i = a + 2b + 4c of ((2, 2, VALS/4)) -> mailbox offset a + 2b + 4*256*c
                mbox_slab = cute.make_layout(slab_frag.shape, stride=((1, 2, 4 * MMA_THREADS),))
                XCHG_BYTES = HALF * VALS * 4 * MMA_THREADS  # the peer's half, received into my ring
                assert XCHG_BYTES <= cute.cosize(sB_layout) * 2, "the mailbox must fit in the B ring"
                mbox_ptr = cute.recast_ptr(storage.sB.data_ptr(), dtype=cutlass.Float32)

            read_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, NSTAGES)
            release_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, NSTAGES)
            for tile in cutlass.range(cluster_id, self.dp_tiles, self.clusters, unroll=1):
                m_pair, n_tile = common.grouped_tile_coord(
                    tile, tiles_m // cfg.cluster_m, tiles_n, cfg.group_m // cfg.cluster_m
                )
                m_tile = m_pair * cfg.cluster_m + cta_rank

                acc.fill(0.0)
                for k_tile in cutlass.range(k_tiles, unroll=1):
                    ab_pipeline.consumer_wait(read_state)  # full[s]: the stage's TMA bytes have landed
                    warpgroup.fence()
                    for kb in cutlass.range_constexpr(num_k_blocks):
                        kc = (None, None, kb, read_state.index)
                        cute.gemm(tiled_mma, acc, tCrA[kc], tCrB[kc], acc)
                    warpgroup.commit_group()
                    # keep this batch in flight; the previous one is now done, so its stage may be refilled
                    warpgroup.wait_group(1)
                    if k_tile > 0:
                        ab_pipeline.consumer_release(release_state)
                        release_state.advance()
                    read_state.advance()

                warpgroup.wait_group(0)
                # the tile's last stage: released now, the producer may already load the next tile into it
                ab_pipeline.consumer_release(release_state)
                release_state.advance()

                # ---- epilogue: registers -> smem slab buffers -> asynchronous TMA stores ----
                # TMA store partition: buffer b of smem -> box j (columns 32 j..) of this tile of C
                bSG_sC, bSG_gC = cpasync.tma_partition(
                    tma_atom_c, 0, cute.make_layout(1), cute.group_modes(sC, 0, 2),
                    cute.zipped_divide(gC[(None, None, m_tile, n_tile)], (BM, self.epi_n)),
                )
                for j in cutlass.range_constexpr(SLABS):
                    # buffer j % EPI_STAGES is free: checked before the previous slab's barrier (below)
                    cute.autovec_copy(acc_slabs[(None, j), 0, 0], tCsC_slabs[(None, j), 0, 0])
                    cute.arch.fence_proxy("async.shared", space="cta")  # st.shared -> visible to the TMA (async proxy)
                    if store_thread:
                        # the next slab overwrites the buffer of the store EPI_STAGES - 1 before this one:
                        # let at most EPI_STAGES - 2 younger stores still be reading smem (for 2 buffers:
                        # all of them, i.e. slab j-1's store, issued one slab of st.shared ago)
                        cute.arch.cp_async_bulk_wait_group(EPI_STAGES - 2, read=True)
                    # all 256 threads' parts of slab j are in smem, and the next slab's buffer is free
                    epi_barrier.arrive_and_wait()
                    if store_thread:
                        cute.copy(tma_atom_c, bSG_sC[(None, j % EPI_STAGES)], bSG_gC[(None, (0, j))])
                        cute.arch.cp_async_bulk_commit_group()
                # no wait here: the last slabs' stores drain while the next tile's mainloop runs

            if cutlass.const_expr(SK_UNITS > 0):
                if cluster_id < SK_UNITS:
                    # ---- stream-K unit: this CTA's half of the k-tiles of the pair's common CTA tile ----
                    m_pair, n_tile = common.grouped_tile_coord(
                        self.dp_tiles + cluster_id // cfg.cluster_m, tiles_m // cfg.cluster_m, tiles_n,
                        cfg.group_m // cfg.cluster_m,
                    )
                    m_tile = m_pair * cfg.cluster_m + cluster_id % cfg.cluster_m

                    acc.fill(0.0)
                    for k_tile in cutlass.range(K_SPLIT, unroll=1):  # the mainloop above, over K_SPLIT k-tiles
                        ab_pipeline.consumer_wait(read_state)
                        warpgroup.fence()
                        for kb in cutlass.range_constexpr(num_k_blocks):
                            kc = (None, None, kb, read_state.index)
                            cute.gemm(tiled_mma, acc, tCrA[kc], tCrB[kc], acc)
                        warpgroup.commit_group()
                        warpgroup.wait_group(1)
                        if k_tile > 0:
                            ab_pipeline.consumer_release(release_state)
                            release_state.advance()
                        read_state.advance()
                    warpgroup.wait_group(0)
                    ab_pipeline.consumer_release(release_state)
                    release_state.advance()

                    # ---- exchange: rank 0 finalizes slabs 0..HALF-1, rank 1 slabs HALF..SLABS-1; each
                    # sends the other's half of its partial sums (registers -> st.async into the peer's
                    # ring, counted on the peer's full barrier) and adds the half it receives to its own.
                    # Element e of C is always p_lo(e) + p_hi(e) (fp32 addition of two terms commutes),
                    # so the result is the same bits on every run.
                    peer = cta_rank ^ 1
                    # both warpgroups' wgmma have completed: this CTA's ring is read by nobody any more
                    # (every stage it will ever receive has landed and been consumed), so the peer may
                    # overwrite it with its half
                    epi_barrier.arrive_and_wait()
                    if store_thread:
                        cute.arch.mbarrier_arrive_and_expect_tx(xchg_full, XCHG_BYTES)
                        cute.arch.mbarrier_arrive(xchg_free, peer, scope=nvvm.MemScopeKind.CLUSTER)
                    cute.arch.mbarrier_wait(xchg_free, 0)  # phase 0: the peer's ring is free for my half
                    is_rank0 = cute.full(slab_frag.shape, cta_rank == 0, cutlass.Boolean)
                    for jj in cutlass.range_constexpr(HALF):
                        lo = acc_slabs[(None, jj), 0, 0].load()
                        hi = acc_slabs[(None, jj + HALF), 0, 0].load()
                        slab_frag.store(cute.where(is_rank0, hi, lo))  # the peer's slab jj of its half
                        for q in cutlass.range_constexpr(VALS // 4):
                            # 16 B per thread and quad, a warp's 32 quads contiguous (512 B)
                            cute.arch.store_async_dsmem(
                                mbox_ptr + cute.assume(((jj * (VALS // 4) + q) * MMA_THREADS + mma_tidx) * 4, divby=4),
                                (
                                    slab_frag[4 * q].bitcast(cutlass.Int32),
                                    slab_frag[4 * q + 1].bitcast(cutlass.Int32),
                                    slab_frag[4 * q + 2].bitcast(cutlass.Int32),
                                    slab_frag[4 * q + 3].bitcast(cutlass.Int32),
                                ),
                                xchg_full,
                                peer,
                            )
                    # keep the wait below after this thread's remote stores
                    cute.arch.fence_acq_rel_cta()
                    cute.arch.mbarrier_wait(xchg_full, 0)  # the peer's half of my slabs has landed
                    if store_thread:
                        # phase 1 of the peer's free barrier: its stores into this CTA are complete
                        cute.arch.mbarrier_arrive(xchg_free, peer, scope=nvvm.MemScopeKind.CLUSTER)

                    # ---- epilogue of my half: as above, slabs keep_first + jj through buffers jj % EPI_STAGES
                    bSG_sC, bSG_gC = cpasync.tma_partition(
                        tma_atom_c, 0, cute.make_layout(1), cute.group_modes(sC, 0, 2),
                        cute.zipped_divide(gC[(None, None, m_tile, n_tile)], (BM, self.epi_n)),
                    )
                    keep_first = cta_rank * HALF
                    for jj in cutlass.range_constexpr(HALF):
                        lo = acc_slabs[(None, jj), 0, 0].load()
                        hi = acc_slabs[(None, jj + HALF), 0, 0].load()
                        recv = cute.make_tensor(
                            mbox_ptr + cute.assume((jj * (VALS // 4) * MMA_THREADS + mma_tidx) * 4, divby=4), mbox_slab
                        )
                        cute.autovec_copy(recv, recv_frag)
                        slab_frag.store(cute.where(is_rank0, lo, hi) + recv_frag.load())
                        cute.autovec_copy(slab_frag, tCsC_slabs[(None, jj), 0, 0])
                        cute.arch.fence_proxy("async.shared", space="cta")
                        if store_thread:
                            cute.arch.cp_async_bulk_wait_group(EPI_STAGES - 2, read=True)
                        epi_barrier.arrive_and_wait()
                        if store_thread:
                            cute.copy(
                                tma_atom_c, bSG_sC[(None, jj % EPI_STAGES)], bSG_gC[(None, (0, keep_first + jj))]
                            )
                            cute.arch.cp_async_bulk_commit_group()
                    # phase 1 of my free barrier: the peer has received my half, so no st.async of mine
                    # is still in flight and the peer no longer touches this CTA's smem: safe to exit
                    cute.arch.mbarrier_wait(xchg_free, 1)

            if store_thread:
                cute.arch.cp_async_bulk_wait_group(0, read=True)  # smem must outlive the stores' reads
