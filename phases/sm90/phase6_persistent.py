"""sm90 phase 6: a persistent kernel whose epilogue overlaps the next tile's loads (beyond the worklog).

Compared to phase 5 (one CTA per 128x256 tile: 512 CTAs at 4096^3 queued onto 132 SMs that hold one
CTA each), the grid is now one CTA per SM and each CTA walks the tiles itself:
1. persistent tile loop: ``min(cluster tiles, sm_count / cluster_m)`` clusters of 2; cluster c computes
   cluster tiles c, c + clusters, c + 2 clusters, ... in phase 5's grouped raster, and both CTAs of a
   pair walk the same sequence, so B multicast and the cluster-wide empty barriers work unchanged;
2. the producer does not stop at a tile boundary: its ring state simply continues into the next tile's
   k-tiles, so while the consumers run the epilogue of tile i the ring fills with tile i+1, and their
   next mainloop starts on NSTAGES landed stages instead of a cold TMA round trip;
3. the TMA store is asynchronous across tiles: the C staging tile can no longer overlay the B ring (the
   producer is refilling it), so it gets its own ``epi_stages`` buffers of one 128 x ``epi_n`` slab (16 KiB, SW128);
   slab j goes to buffer j % epi_stages, and the store thread waits (``cp.async.bulk.wait_group.read``) only until
   the buffer the *next* slab overwrites has been read: a tile's last stores drain under the next tile's mainloop;
4. ``use_pdl`` (on in what ``phase="best"`` runs): programmatic dependent launch, as phases 9 and 10 -- the next
   launch takes each SM as this CTA leaves it, runs its prologue, and waits (``griddepcontrol.wait``) to read.
The loads, the mainloop and the epilogue are ``common_tma``'s helpers; phases 7 and 8 reuse them and the host side.

Why: phase 5 pays per tile, with the tensor pipe idle, the CTA's launch and setup, the pipeline fill
(a first TMA round trip, ~1-2 us) and the epilogue (128 KiB of fp32 per tile through smem), which a CTA
must finish, stores included, before the next CTA may take its SM. Here setup and fill are paid once
per CTA, and only the consumers' register -> smem writes stay exposed (phase 8 hides those too).
What it does not change: waves. A static round robin over 66 clusters still gives some clusters
ceil(256 / 66) = 4 tiles at 4096^3 and ceil(144 / 66) = 3 at 3072^3 (2.2 on average): phase 7 splits
that partial last round. At M=1024 (64 cluster tiles) it is one tile per cluster, as in phase 5.

Numbers: tile, cluster, ring as phase 5 (128x256x64, 4 stages x 48 KiB, pairs along M, 384 threads) + 2 C staging
buffers x 16 KiB + 1 KiB of barriers = 230,400 of the 232,448 bytes a CTA may opt into. ``sm_count`` (132, H200/H100
SXM) is a config field (the kernel compiles without a GPU); on a GPU a default one becomes what fits (``plan``).
``cluster_n=2`` (a config): a second column of CTAs along N shares the A tile by multicast (``common_tma``), as the
pair shares B -- 1 x 2 with a 256 x 128 tile is cuBLAS's prefill arrangement; 2 x 2 shares both operands.

Constraints:
- N % 8 == 0 and K % 8 == 0 (16-B rows for the TMA descriptors); any M >= 1 (TMA bounds); C row-major.
- (BN / epi_n) % epi_stages == 0 (slab j's buffer the same static j % epi_stages in every tile), epi_stages >= 2
  (a slab's buffer is only waited for once the next slab has been written); ``epi_n`` 32, 64 for a 16-bit C, or 16
  (any multiple of 16 wide: tile rounds that fill the SMs); ring and staging in C's type within the 227 KiB.
- ``cluster_n`` 1 or 2; a cluster of ``cluster_m`` x ``cluster_n`` CTAs fits ``sm_count``.
- Phase 11's epilogue fields (off by default; 7, 8 too): each slab through ``phases.epilogue.apply_at`` before the
  rounding; ``gated``: a slab's 32 accumulator columns are 16 of C [M, N / 2], in (BM, 16) buffers and boxes.
"""

import dataclasses

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass.cute.nvgpu import cpasync, warpgroup
from cutlass.tensor_utils import LayoutEnum

from phases import epilogue, operands
from phases.base import GemmPhase
from phases.cluster import require_cluster_dims
from phases.pdl import pdl_launch_dependents, pdl_wait
from phases.raster import ceil_div, persistent_clusters
from phases.sm90 import common
from phases.sm90 import common_tma as ct

SMEM_OPT_IN_MAX = 232_448  # 227 KiB: the most dynamic smem one CTA may ask for on sm90


@dataclasses.dataclass(frozen=True)
class Sm90Phase6Config(ct.TmaConfig, epilogue.EpilogueFields):
    bm: int = 128
    bn: int = 256
    bk: int = 64
    stages: int = 4  # 4 x 48 KiB = 192 KiB: one CTA per SM
    cluster_m: int = 2  # CTAs per cluster along M: they share (multicast) the B tile
    cluster_n: int = 1  # CTAs per cluster along N: they share (multicast) the A tile (1 or 2)
    epi_stages: int = 2  # C staging buffers of one 128x32 fp32 slab (16 KiB) each
    epi_n: int = 32  # columns per C slab; 64 for a 16-bit C: 128-B rows, half the slabs; 16: any multiple of 16 wide
    sm_count: int = 132  # SMs the persistent grid fills (H200); on a GPU: the cluster's CTAs x the clusters that fit
    use_pdl: bool = False  # programmatic dependent launch, as phases 9 and 10 (``phase="best"`` turns it on)
    accumulate: bool = False  # C += A @ B: the TMA store becomes a reduce-add (``gemm(..., accumulate=True)``)
    # the fused epilogue's arithmetic slab by slab, each after the previous slab's barrier (False: where ptxas puts
    # it -- all of the tile's at once, right after the wgmma wait)
    epi_spread: bool = False


def make_shared_storage(stages: int, sA_layout, sB_layout, sC_layout, types, bias_elems: int = 0):
    """Phase 5's smem struct (full/empty mbarriers, A and B rings) + the C staging buffers; with ``bias_elems``, a
    bias buffer of that many elements of A's type after them (phase 8's ``bias_smem``)."""

    @cute.struct
    class SharedStorage:
        full_empty: cute.struct.MemRange[cutlass.Int64, 2 * stages]
        sA: cute.struct.Align[cute.struct.MemRange[types.ab, cute.cosize(sA_layout)], common.SMEM_ALIGN]
        sB: cute.struct.Align[cute.struct.MemRange[types.ab, cute.cosize(sB_layout)], common.SMEM_ALIGN]
        sC: cute.struct.Align[cute.struct.MemRange[types.c, cute.cosize(sC_layout)], common.SMEM_ALIGN]

    if not bias_elems:
        return SharedStorage

    @cute.struct
    class SharedStorageBias:
        full_empty: cute.struct.MemRange[cutlass.Int64, 2 * stages]
        sA: cute.struct.Align[cute.struct.MemRange[types.ab, cute.cosize(sA_layout)], common.SMEM_ALIGN]
        sB: cute.struct.Align[cute.struct.MemRange[types.ab, cute.cosize(sB_layout)], common.SMEM_ALIGN]
        sC: cute.struct.Align[cute.struct.MemRange[types.c, cute.cosize(sC_layout)], common.SMEM_ALIGN]
        sBias: cute.struct.Align[cute.struct.MemRange[types.ab, bias_elems], 16]

    return SharedStorageBias


class Sm90Phase6(GemmPhase):
    """Phase 5 made persistent: one CTA per SM walks its tiles; the epilogue's TMA stores drain behind it."""

    arch = "sm90"
    phase = "6"
    Config = Sm90Phase6Config
    summary = "phase 5 persistent: one CTA per SM loops over tiles, producer runs ahead, async TMA-store epilogue"
    adds = "persistent grouped-raster tile loop; loads of tile i+1 and stores of tile i overlap tile i's epilogue"
    worklog = ""

    consumer_warpgroups = 2  # warpgroup w owns rows 64w..64w+63

    @property
    def epi_n(self) -> int:
        """Columns per TMA-store slab (the config's ``epi_n``): 32 fp32 = 128 B, the SW128 box width; 64 16-bit too;
        16 (32 or 64 B, a narrower swizzle) for tile widths that are not multiples of 32."""
        return self.cfg.epi_n
    # One CTA per SM (224 KiB of smem): 384 threads start at 65,536 / 384 -> 168 registers each; the
    # producer drops to 40 and the consumers take 232: 128 x 40 + 256 x 232 = 64,512 of 65,536.
    ctas_per_sm = 1
    producer_regs = 40
    consumer_regs = 232
    # the smem struct; phase 7 adds its exchange barriers to it (phases 7 and 8 reuse this class's host
    # side: setup, launch; each has its own kernel)
    storage_struct = staticmethod(make_shared_storage)

    def config_problems(self) -> list[str]:
        """``_setup_attributes``'s asserts, from the config alone: the tile (``common.tile_problems``), C stored in
        whole slabs of ``epi_n`` columns through ``epi_stages`` >= 2 buffers that the slabs cycle through, and the
        A/B ring plus those buffers (at the smallest C: 16-bit) within a CTA's smem."""
        why = super().config_problems()
        if why:
            return why
        c = self.cfg
        why = common.store_tile_problems(c, common.WGMMA_M * self.consumer_warpgroups, self.epi_n)
        if c.epi_n not in (16, 32, 64):
            why.append(f"epi_n={c.epi_n}: 16, 32, or 64 with a 16-bit C (a slab row of 32-128 B, a swizzle's width)")
        if c.epi_stages < 2:
            why.append(f"epi_stages={c.epi_stages}: epi_stages >= 2 (a slab's buffer is freed while the next one is "
                       f"written)")
        elif c.bn % self.epi_n == 0 and (c.bn // self.epi_n) % c.epi_stages:
            why.append(f"epi_stages={c.epi_stages}: the {c.bn // self.epi_n} slabs of bn={c.bn} must cycle through "
                       f"the buffers evenly (slabs a multiple of epi_stages)")
        if c.cluster_n not in (1, 2):
            why.append(f"cluster_n={c.cluster_n}: 1, or 2 (a pair along N sharing the A tile)")
        elif c.sm_count < self.cluster_ctas:
            why.append(f"sm_count={c.sm_count}: at least one cluster of {self.cluster_ctas} CTAs")
        if not why:
            # the C staging at a 16-bit C, and a tile's bias where it goes through smem (phase 8's bias_smem)
            why += common.ring_problems(c, extra=self.staging_bytes(2) + self.bias_smem_elems() * 2)
        why += c.epilogue_problems()
        if c.accumulate and c.epilogue_active():
            why.append("accumulate with bias/activation/residual: C += act(A @ B + bias) is not a GEMM epilogue anyone "
                       "asks for; one or the other")
        return why

    def operand_problems(self, ops) -> list[str]:
        """Phase 5's, a slab row of at most 128 B (the SW128 box width): ``epi_n=64`` only with a 16-bit C, and the ring
        plus the C staging buffers in this C's type within a CTA's smem (``config_problems`` counts a 16-bit C)."""
        why = super().operand_problems(ops)
        c, c_bytes = self.cfg, 4 if ops.c == "fp32" else 2
        if c.epi_n * c_bytes > 128:
            why.append(f"epi_n={c.epi_n} with an fp32 C: a slab row of {c.epi_n * 4} B is over the 128 B of the SW128 "
                       f"box; epi_n=32")
        elif c_bytes == 4 and not self.config_problems():
            why += [f"{w} (with an fp32 C: a 16-bit C fits)"
                    for w in common.ring_problems(c, extra=self.staging_bytes(4) + common.SMEM_ALIGN)]
        return why

    def can_implement(self, m: int, n: int, k: int) -> list[str]:
        return super().can_implement(m, n, k) + self.cfg.shape_problems(n, self.divisibility()[1])

    def staging_bytes(self, c_bytes: int) -> int:
        """The C staging buffers' bytes at ``c_bytes`` a C element: ``epi_stages`` slabs of BM rows by a slab's C
        columns (half its accumulator columns with the gated pairs)."""
        return self.cfg.epi_stages * self.cfg.bm * (self.epi_n // self.c_per_acc()) * c_bytes

    def bias_smem_elems(self) -> int:
        """Elements of the smem bias buffer (0: none; phase 8's ``bias_smem``)."""
        return 0

    def c_per_acc(self) -> int:
        """Accumulator columns per C column: 2 with the gated pairs (C [M, N / 2]), else 1."""
        return 2 if self.cfg.gated else 1

    def gemm_n(self, mC):
        """The GEMM's N from C: with the gated pairs C has N / 2 columns."""
        return mC.shape[1] * 2 if self.cfg.gated else mC.shape[1]

    def problem_mnk(self, mA, mC):
        """(M, N, K) of the GEMM (``gemm_n``)."""
        return mA.shape[0], self.gemm_n(mC), mA.shape[1]

    def _setup_attributes(self):
        cfg = self.cfg
        assert cfg.epi_stages >= 2, "epi_stages >= 2: a slab's buffer is freed while the next one is written"
        assert (cfg.bn // self.epi_n) % cfg.epi_stages == 0, "slab j must map to the static buffer j % epi_stages"
        self.sA_layout, self.sB_layout = common.make_smem_layouts(cfg.bm, cfg.bn, cfg.bk, cfg.stages, self.types)
        # C staging: epi_stages buffers of one (BM, epi_n) slab each (32 columns; 64 of a 16-bit C are 128-B rows
        # too), swizzled, one TMA box each (the gated pairs: (BM, epi_n / 2), a slab's C columns)
        self.sC_layout = sm90_utils.make_smem_layout_epi(
            self.types.c, LayoutEnum.ROW_MAJOR, (cfg.bm, self.epi_n // self.c_per_acc()), cfg.epi_stages
        )
        extra = {"bias_elems": self.bias_smem_elems()} if self.bias_smem_elems() else {}
        self.shared_storage = self.storage_struct(cfg.stages, self.sA_layout, self.sB_layout, self.sC_layout,
                                                  self.types, **extra)
        self.smem_bytes = self.shared_storage.size_in_bytes()
        assert self.smem_bytes <= SMEM_OPT_IN_MAX, f"{self.smem_bytes} B of smem: fewer stages or epi_stages"
        self.threads = common.WARPGROUP_THREADS * (1 + self.consumer_warpgroups)  # producer + consumers
        self.cluster = (self.cluster_ctas, 1, 1)  # cluster_m x cluster_n CTAs, launched as one row

    @property
    def cluster_ctas(self) -> int:
        """CTAs per cluster: ``cluster_m`` along M (sharing B) x ``cluster_n`` along N (sharing A)."""
        return self.cfg.cluster_m * self.cfg.cluster_n

    def schedule(self, m, n, k):
        """(cluster tiles, clusters launched) for an (m, n, k) problem: one cluster per ``cluster_ctas`` SMs at most."""
        cfg = self.cfg
        tiles = ceil_div(m, cfg.tile_m()) * ceil_div(n, cfg.bn * cfg.cluster_n)
        return tiles, persistent_clusters(tiles, cfg.sm_count // self.cluster_ctas)

    def grid(self, m, n, k):
        return (self.schedule(m, n, k)[-1] * self.cluster_ctas, 1, 1)  # the last field: clusters launched

    def make_tiled_mma(self):
        """Both consumer warpgroups on one tile: warpgroup w issues the wgmma of rows 64w..64w+63."""
        return common.make_tiled_mma(self.cfg.bn, self.consumer_warpgroups, self.types)

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream, mBias=None, mD=None):
        self.types = operands.read(mA, mB, mC)  # element types and majors, as given
        self._setup_attributes()
        cfg = self.cfg
        tiled_mma = self.make_tiled_mma()
        # A: this CTA's box; with cluster_n > 1 each CTA of a row loads 1/cluster_n of it and multicasts it to the row
        tma_atom_a, tma_a = ct.make_tma_load(mA, self.sA_layout, (cfg.bm, cfg.bk), num_multicast=cfg.cluster_n)
        # B: each CTA of the pair loads 1/cluster_m of the box and multicasts it to the whole pair
        tma_atom_b, tma_b = ct.make_tma_load(mB, self.sB_layout, (cfg.bn, cfg.bk), num_multicast=cfg.cluster_m)
        # C's TMA store, or with ``accumulate`` its reduce-add (C += the tile); phases 7 and 8 build it here too
        tma_atom_c, tma_c = ct.make_tma_store(mC, self.sC_layout, (cfg.bm, self.epi_n // self.c_per_acc()),
                                              cfg.accumulate)
        # phase 11's fused epilogue on this kernel (``cfg.bias`` etc.): the bias seen with the GEMM's (M, N)
        m, n, _ = self.problem_mnk(mA, mC)
        bias = epilogue.bias_view(mBias, mC, n_mode=1, shape=(m, n)) if cutlass.const_expr(mBias is not None) else None
        self.kernel(
            tma_atom_a, tma_a, tma_atom_b, tma_b, tma_atom_c, tma_c, tiled_mma,
            self.sA_layout, self.sB_layout, self.sC_layout, bias, mD,
        ).launch(
            grid=self.grid(*self.problem_mnk(mA, mC)),
            block=[self.threads, 1, 1],
            cluster=[self.cluster_ctas, 1, 1],  # consecutive block ids form a cluster
            smem=self.smem_bytes,
            # .minnctapersm: fixes the entry register count (168) that setmaxnreg moves registers from
            min_blocks_per_mp=self.ctas_per_sm,
            preferred_smem_carveout=100,  # all 228 KiB of the SM as smem
            use_pdl=cfg.use_pdl,
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
        mBias,
        mD,
    ):
        cfg = self.cfg
        BM, BN, NSTAGES = cfg.bm, cfg.bn, cfg.stages
        EPI_STAGES, SLABS = cfg.epi_stages, BN // self.epi_n
        PAIR = self.c_per_acc()  # accumulator columns per C column (2: the gated pairs)
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        bidx, _, _ = cute.arch.block_idx()
        require_cluster_dims(self.cluster)  # PTX .reqnctapercluster 2, 1, 1: the pair is part of the kernel
        if warp_idx == 0:
            cpasync.prefetch_descriptor(tma_atom_a)
            cpasync.prefetch_descriptor(tma_atom_b)
            cpasync.prefetch_descriptor(tma_atom_c)

        # the persistent schedule: cluster c takes cluster tiles c, c + clusters, c + 2 clusters, ...
        # (both CTAs of a pair walk the same list: their multicasts and empty arrivals stay matched)
        M, N, K = mC.shape[0], self.gemm_n(mC), mA.shape[1]
        tiles_m, tiles_n = ceil_div(M, BM), ceil_div(N, BN)  # a partial last tile counts
        cluster_tiles, clusters = self.schedule(M, N, K)
        cta_rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
        cluster_id = bidx // self.cluster_ctas

        # ---- smem: barriers + A/B rings + C staging buffers ----
        smem = cutlass.memory.SmemAllocator()
        storage = smem.allocate(self.shared_storage)
        sA = storage.sA.get_tensor(sA_layout.outer, swizzle=sA_layout.inner)  # (BM, BK, NSTAGES)
        sB = storage.sB.get_tensor(sB_layout.outer, swizzle=sB_layout.inner)  # (BN, BK, NSTAGES)
        sC = storage.sC.get_tensor(sC_layout.outer, swizzle=sC_layout.inner)  # (BM, 32, EPI_STAGES)

        # the A/B ring, its full/empty mbarriers cluster-wide (empty: every consumer warp of both CTAs),
        # and B's multicast mask
        ab_pipeline, a_mcast_mask, b_mcast_mask = ct.make_pair_pipeline(
            storage, cfg, self.consumer_warpgroups * common.WARPS_PER_WARPGROUP, cta_rank
        )

        # ---- every tile's TMA partitions (the loop below only picks the tile coordinates) ----
        tAsA, tAgA, tBsB, tBgB, k_tiles = ct.tma_load_partitions(
            tma_atom_a, tma_atom_b, sA, sB, mA, mB, cfg, cta_rank
        )
        gC = cute.local_tile(mC, (BM, BN // PAIR), (None, None))  # (BM, BN, tiles_m, tiles_n); BN / 2 gated
        pdl_wait(cfg)

        warp_group_idx = cute.arch.make_warp_uniform(tidx // common.WARPGROUP_THREADS)

        # ---- producer warpgroup: one thread of warp 0 streams A/B k-tiles of all its tiles into the ring ----
        if warp_group_idx == 0:
            cute.arch.setmaxregister_decrease(self.producer_regs)
            if warp_idx == 0:
                prod_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, NSTAGES)
                for tile in cutlass.range(cluster_id, cluster_tiles, clusters, unroll=1):
                    m_tile, n_tile = ct.cluster_tile_coord(tile, tiles_m, tiles_n, cfg, cta_rank)
                    # no drain at the tile boundary: the ring state runs on, so these loads fill the
                    # slots the consumers free while they are still in the previous tile's epilogue
                    prod_state = ct.load_k_tiles(
                        ab_pipeline, prod_state, tma_atom_a, tAgA, tAsA, tma_atom_b, tBgB, tBsB,
                        m_tile, n_tile, 0, k_tiles, b_mcast_mask, a_mcast_mask,
                    )
                # do not exit while the peer may still arrive on this CTA's empty barriers
                ab_pipeline.producer_tail(prod_state)

        # ---- consumer warpgroups: per tile, the wgmma mainloop, then the epilogue ----
        if warp_group_idx > 0:
            cute.arch.setmaxregister_increase(self.consumer_regs)
            mma_tidx = tidx - common.WARPGROUP_THREADS
            thr_mma = tiled_mma.get_slice(mma_tidx)
            tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))  # smem descriptors, (MMA, MMA_M, MMA_K, NSTAGES)
            tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
            acc = cute.make_rmem_tensor(thr_mma.partition_shape_C((BM, BN)), cutlass.Float32)
            tiled_mma.set(warpgroup.Field.ACCUMULATE, True)

            # ---- epilogue views (tile-independent) ----
            epi_barrier = pipeline.NamedBarrier(
                barrier_id=1, num_threads=self.consumer_warpgroups * common.WARPGROUP_THREADS
            )
            # slab j of this thread's values and its place in the staging ring (slab j -> buffer j % EPI_STAGES)
            acc_slabs, tCsC_slabs = ct.epilogue_slab_views(thr_mma, sC, sC_layout, acc, self.epi_n, SLABS, EPI_STAGES,
                                                           PAIR)
            # one thread issues (and waits for) the stores: unlike TMA loads, the DSL does not elect a
            # lane for a TMA store, and bulk groups are per thread (warp 0 for the reduce-add: the DSL elects)
            store_thread = ct.store_issuers(mma_tidx, cfg.accumulate)

            read_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, NSTAGES)
            release_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, NSTAGES)
            for tile in cutlass.range(cluster_id, cluster_tiles, clusters, unroll=1):
                m_tile, n_tile = ct.cluster_tile_coord(tile, tiles_m, tiles_n, cfg, cta_rank)
                acc.fill(0.0)
                read_state, release_state = ct.mma_k_tiles(
                    ab_pipeline, read_state, release_state, tiled_mma, acc, tCrA, tCrB, k_tiles
                )

                # ---- epilogue: registers -> smem slab buffers -> asynchronous TMA stores ----
                # no wait at the end: the last slabs' stores drain while the next tile's mainloop runs
                bSG_sC, bSG_gC = ct.tma_store_boxes(tma_atom_c, sC, gC, m_tile, n_tile, BM, self.epi_n // PAIR)
                epi = ct.epilogue_args(cfg, thr_mma, (M, N), mBias, mD, m_tile, n_tile, (BM, BN), self.epi_n)
                ct.store_tile(acc_slabs, tCsC_slabs, bSG_sC, bSG_gC, tma_atom_c, epi_barrier, store_thread,
                              SLABS, EPI_STAGES, epi)

            pdl_launch_dependents(cfg)
            if store_thread:
                cute.arch.cp_async_bulk_wait_group(0, read=True)  # smem must outlive the stores' reads

