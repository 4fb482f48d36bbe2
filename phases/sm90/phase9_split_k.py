"""sm90 phase 9: split-K in a cluster -- a tile's K range over 2-8 CTAs, partial sums added through DSMEM (beyond the worklog).

Compared to phase 3 (one CTA per tile walks all of K), the ``split_k`` CTAs of a cluster (cluster
shape (split_k, 1, 1), consecutive block ids) compute the same C tile, CTA r over the k-tiles
[r K/S, (r+1) K/S), and add their partial sums before the store:
1. each CTA runs phase 3's producer/consumer mainloop over its K range only;
2. the consumers write their fp32 partial tile into their own smem over the A/B ring (after a named barrier:
   every stage has landed and been read), laid out like C, lines padded by 16 B against bank conflicts;
3. cluster barrier (``barrier.cluster.arrive.release`` / ``wait.acquire``): every partial tile of the
   cluster is in smem and visible to the other CTAs;
4. reduce-scatter: CTA r owns lines [r ceil(L/S), (r+1) ceil(L/S)) of the tile (L: lines of C's other mode); its
   consumer threads read 16-B vectors of those lines from the S partial tiles -- their own and the
   peers' through ``mapa`` + ``ld.shared::cluster`` -- add them in rank order 0, 1, ..., S-1, round to
   C's type and store them, predicated at C's edges, along C's contiguous mode (coalesced);
5. a second cluster barrier: no CTA leaves (its smem) while a peer may still read it.
The addition order never depends on timing, so repeats are bit-identical (deterministic); no workspace, no
atomics, no flag in global memory, and no wait on a CTA that might not be resident (a cluster is co-scheduled).

Why: when a problem has fewer tiles than SMs (M=1024 N=4096 has 64 tiles of 128x256 for 132 SMs; a
512^3 problem 16 of 128x128), each busy SM walks all of K alone and the rest idle; the worklog stops
its M=1024 column at phase 2 for exactly this ("that shape needs split-K"). S-way split-K puts S times
the CTAs on the same tiles, each running 1/S of the k-loop, for the price of one partial tile through
smem and DSMEM per CTA; split-K only where the grid is starved (``phase="best"`` picks ``split_k`` per
shape; ``split_k=1`` is phase 3's schedule with this epilogue).

Numbers: 128x128x64 tile, 6 stages x 32 KiB = 192 KiB, one CTA per SM; the partial tile (128 x 132 x 4 B =
66 KiB) overlays the ring; the reduce moves (S-1)/S of a partial tile per CTA over DSMEM. ``ctas_per_sm`` > 1
trades ring depth for residency; ``use_pdl`` is phase 10's. ``cluster_m`` > 1 (phase 4's B multicast, for phase
10's token tile shared by ``cluster_m`` weight tiles) makes the cluster ``cluster_m`` x ``split_k`` CTAs, rank
m + cluster_m k: CTAs of one K range and adjacent M tiles each load 1/cluster_m of B's box and multicast it,
arrive on each other's empty barriers (``mcast_mode_mn``), and the producer waits out the peers' last arrivals
before it leaves; the reduce adds its own M tile's K ranges. ``evict_first_a``: A's loads evict-first in L2.

Constraints:
- split_k in 1..8, cluster_m in (1, 2, 4), split_k x cluster_m <= 8 (a portable cluster); bm in (64, 128,
  192): one consumer warpgroup per 64 rows, or 256: two warpgroups of 128 rows, each issuing the m64 wgmma
  twice per k16 step (its 128 x bn accumulators limit bn to 144); bn a multiple of 8 x cluster_m.
- The partial tile must fit in the ring; C's contiguous extent a multiple of 8 (16-B rows).
- Any M, N, K (ragged through TMA bounds and the predicated store); any layout and dtype of A and B;
  C row-major, or column-major (the swap-AB plan of phase 10).
"""

import dataclasses

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import cpasync, warpgroup
from cutlass.tensor_utils import LayoutEnum

from phases import epilogue, operands
from phases.base import GemmPhase
from phases.cluster import add_in_rank_order, require_cluster_dims
from phases.pdl import pdl_launch_dependents, pdl_wait
from phases.raster import ceil_div
from phases.sm90 import common
from phases.sm90 import common_tma as ct

SMEM_PER_SM = 232_448  # the most dynamic smem the SM's CTAs may share (and one CTA may opt into)
REGS_PER_SM = 65_536
VEC = 4  # fp32 per vector of the reduce: 16 B, one ld.shared::cluster.v4 / st.global.v4
EVICT_FIRST = 0x12F0000000000000  # a TMA load's L2 cache policy: evict-first (the encoding CUTLASS's CacheHintSm90 names)
PAD = 4  # fp32 appended to each line of the partial tile: rows start 16 B apart in the banks


@dataclasses.dataclass(frozen=True)
class Sm90Phase9Config(ct.TmaConfig):
    bm: int = 128
    bn: int = 128
    bk: int = 64
    stages: int = 6  # 6 x 32 KiB = 192 KiB: one CTA per SM
    split_k: int = 2  # CTAs per cluster, one K range each
    ctas_per_sm: int = 1  # residency the smem and register budgets are cut for
    use_pdl: bool = False  # programmatic dependent launch (phase 10 turns it on)
    cluster_m: int = 1  # M tiles per cluster sharing (multicasting) the B tile, as in phase 4; x split_k CTAs
    evict_first_a: bool = False  # A's TMA loads ask L2 to evict their lines first (an operand read once: phase 10's)

    def box_n(self) -> int:
        """B's TMA box and smem stage rows: ``bn``, or ``bn`` + 8 where ``bn`` is 8 x an odd number past 8 (the DSL
        4.8.1 compiler aborts building a TMA box of such a tile; the MMA takes it): the MMA reads the first ``bn``."""
        return self.bn if self.bn == 8 or self.bn % 16 == 0 else self.bn + 8

    def consumer_warpgroups(self) -> int:
        """One per 64 rows; at 256 rows two of 128, each issuing the m64 wgmma twice per k16 step (a 512-thread CTA
        of four would leave 96 registers a thread)."""
        return 2 if self.bm == 256 else self.bm // common.WGMMA_M

    def entry_registers(self) -> int:
        """What .minnctapersm leaves every thread of the CTA (the producer warpgroup and the consumers): ptxas compiles
        the kernel to that count."""
        threads = common.WARPGROUP_THREADS * (1 + self.consumer_warpgroups())
        return min(240, REGS_PER_SM // (self.ctas_per_sm * threads) // 8 * 8)

    def accumulator_registers(self) -> int:
        """fp32 accumulators per consumer thread: a warpgroup's rows x bn / 128."""
        return self.bm // self.consumer_warpgroups() * self.bn // common.WARPGROUP_THREADS

    def accumulators_fit(self) -> bool:
        """The accumulators plus addressing fit the entry count: 32 registers of addressing (ptxas refused 192 x 208
        at 24: "insufficient registers"), 24 for the 256-row tiles (bn <= 144: each of them compiles without a
        spill; 152 spilled). ``phase="best"`` offers only tiles that pass (``choose``)."""
        return self.accumulator_registers() + (24 if self.bm == 256 else 32) <= self.entry_registers()


class Sm90Phase9(GemmPhase):
    """Phase 3 + split-K: the CTAs of a cluster share one tile's k-loop and add their partial sums via DSMEM."""

    arch = "sm90"
    phase = "9"
    Config = Sm90Phase9Config
    summary = "split-K in a cluster: split_k CTAs share a tile's k-loop, partial tiles added in rank order via DSMEM"
    adds = "split-K: a starved grid gets split_k CTAs per tile, partial sums reduced through DSMEM (deterministic)"
    worklog = ""
    parent = "3"
    c_majors = ("n", "m")  # the reduce stores along C's contiguous mode, either one

    producer_regs = 40

    def operand_problems(self, ops):
        """The base rules, and the one the operands and the tile share: a ``bn`` of 8 x an odd number loads a box 8 rows
        taller than its MMA (``box_n``), which only a K-major kernel B (rows of 8-row swizzle atoms along K) allows --
        ``_setup_attributes`` asserts it; checked here so that ``phase="best"`` never offers such a tile."""
        why = super().operand_problems(ops)
        swapped = getattr(self, "swap_ab", False)
        kernel_b = (ops.swapped() if swapped else ops).b_major
        if self.cfg.box_n() != self.cfg.bn and kernel_b != "k":
            side = "a row-major A (layouts nn, nt)" if swapped else "a column-major B (layouts nt, tt)"
            why.append(f"bn={self.cfg.bn} (8 x an odd number) needs {side}, got {ops.layout}: "
                       f"bn a multiple of 16, or 8")
        return why

    def config_problems(self) -> list[str]:
        """``_setup_attributes``'s asserts that read the config alone (the one that reads B's major is
        ``operand_problems``'); the smem and the partial tile checked at their lower bounds (barriers and
        alignment come on top: the compile's asserts have the last word)."""
        why = super().config_problems()
        if why:
            return why
        c = self.cfg
        if c.bm not in (64, 128, 192, 256):
            why.append(f"bm={c.bm}: bm is 64, 128 or 192 (one consumer warpgroup per 64 rows) or 256 (two of 128 rows)")
        if c.bn % 8 or not 8 <= c.bn <= 256:
            why.append(f"bn={c.bn}: bn is a multiple of 8 in 8..256 (wgmma's N)")
        if c.bk % 16:
            why.append(f"bk={c.bk}: bk is a multiple of 16 (a k-tile is whole k16 wgmmas)")
        if c.split_k > 8:
            why.append(f"split_k={c.split_k}: split_k is 1..8 (a portable cluster)")
        if c.cluster_m not in (1, 2, 4):
            why.append(f"cluster_m={c.cluster_m}: cluster_m is 1, 2 or 4")
        elif c.split_k <= 8 < c.split_k * c.cluster_m:
            why.append(f"split_k={c.split_k}, cluster_m={c.cluster_m}: split_k x cluster_m CTAs per cluster is at "
                       f"most 8 (a portable cluster)")
        if c.group_m < c.cluster_m:
            why.append(f"group_m={c.group_m}: a raster band is at least one cluster (group_m >= cluster_m={c.cluster_m})")
        if why:
            return why
        if c.box_n() % (8 * c.cluster_m):
            why.append(f"bn={c.bn}: bn must split into {c.cluster_m} slices of 8-row multiples (B's box over cluster_m)")
        why += common.ring_problems(c, c.box_n(), ctas=c.ctas_per_sm)
        if not c.accumulators_fit():
            why.append(f"bn={c.bn}: {c.accumulator_registers()} accumulator registers per thread do not fit the "
                       f"{c.entry_registers()} a thread starts with at ctas_per_sm={c.ctas_per_sm}: a narrower bn or "
                       f"fewer CTAs per SM")
        ring = c.stages * (c.bm + c.box_n()) * c.bk * 2
        partial = min((c.bm - 1) * (c.bn + PAD) + c.bn, (c.bn - 1) * (c.bm + PAD) + c.bm) * 4
        if partial > ring:
            why.append(f"stages={c.stages}: the fp32 partial tile ({partial // 1024} KiB) must fit in the A/B ring "
                       f"({ring // 1024} KiB): more stages or a smaller tile")
        return why

    def _setup_attributes(self):
        cfg = self.cfg
        assert cfg.bm in (64, 128, 192, 256), \
            "bm is 64, 128 or 192 (one consumer warpgroup per 64 rows) or 256 (two of 128 rows)"
        assert 1 <= cfg.split_k <= 8, "split_k is 1..8: a portable cluster"
        assert cfg.cluster_m in (1, 2, 4), "cluster_m is 1, 2 or 4"
        assert cfg.split_k * cfg.cluster_m <= 8, "split_k x cluster_m CTAs per cluster: at most 8 (a portable cluster)"
        # each CTA of the cluster loads box_n / cluster_m rows of B's box: whole 8-row swizzle atoms
        assert cfg.bn % 8 == 0 and 8 <= cfg.bn <= 256, f"bn={cfg.bn}: wgmma's N is 8..256 in steps of 8"
        assert cfg.box_n() % (8 * cfg.cluster_m) == 0, \
            f"bn={cfg.bn} must split into {cfg.cluster_m} slices of 8-row multiples"
        # wgmma takes any N in 8..256 step 8, but the DSL 4.8.1 compiler aborts the process building a TMA box
        # of 8 x odd > 8 rows (24, 40, ..., 88): such a tile loads 8 rows more (box_n) than its MMA reads, which
        # only rows of 8-row swizzle atoms along B's contiguous K allow
        assert cfg.box_n() == cfg.bn or self.types.b == LayoutEnum.ROW_MAJOR, \
            f"bn={cfg.bn}: 8 x an odd number takes a K-major B (the swapped tokens); else bn is 8 or a multiple of 16"
        self.consumer_warpgroups = cfg.consumer_warpgroups()
        self.sA_layout, self.sB_layout = common.make_smem_layouts(cfg.bm, cfg.box_n(), cfg.bk, cfg.stages, self.types)
        self.shared_storage = ct.make_shared_storage(cfg.stages, self.sA_layout, self.sB_layout, self.types.ab)
        self.smem_bytes = self.shared_storage.size_in_bytes()
        assert self.smem_bytes * cfg.ctas_per_sm <= SMEM_PER_SM, \
            f"{self.smem_bytes} B of smem x {cfg.ctas_per_sm} CTAs per SM: fewer stages or a smaller tile"
        self.threads = common.WARPGROUP_THREADS * (1 + self.consumer_warpgroups)  # producer + consumers
        self.cluster = (cfg.split_k * cfg.cluster_m, 1, 1)
        # registers: every thread starts with what .minnctapersm leaves it (ptxas compiles the kernel to
        # that count); the producer gives back down to 40, and the consumers may grow only by what it gave
        # back -- asking for more than the CTA's pool holds makes setmaxnreg.inc wait forever
        entry_regs = cfg.entry_registers()
        pool = self.threads * entry_regs - common.WARPGROUP_THREADS * self.producer_regs
        self.consumer_regs = min(240, pool // self.threads_of_consumers() // 8 * 8)
        assert cfg.accumulators_fit(), \
            f"{cfg.accumulator_registers()} accumulator registers per thread do not fit the {entry_regs} a thread " \
            f"starts with at {cfg.ctas_per_sm} CTAs per SM: a narrower bn or fewer CTAs per SM"
        ring_bytes = (cute.cosize(self.sA_layout) + cute.cosize(self.sB_layout)) * self.types.ab.width // 8
        assert cute.cosize(self.partial_layout()) * 4 <= ring_bytes, "the fp32 partial tile must fit in the A/B ring"

    def partial_layout(self) -> cute.Layout:
        """The fp32 partial tile, laid out like C: its contiguous mode contiguous, each line padded by PAD."""
        bm, bn = self.cfg.bm, self.cfg.bn
        row_major = self.types.c_layout == LayoutEnum.ROW_MAJOR
        return cute.make_layout((bm, bn), stride=(bn + PAD, 1) if row_major else (1, bm + PAD))

    def register_epilogue(self) -> bool:
        """No split and fp32 C: the accumulators go straight to C (phase 3's epilogue)."""
        return self.cfg.split_k == 1 and self.types.c == cutlass.Float32

    def activation(self) -> str:
        """The fused epilogue's activation: none here (phase 11 has the field)."""
        return "none"

    def gated(self) -> bool:
        """Phase 11's gated pairs: C is half the GEMM's width (its tiles are counted on the kernel's A, below)."""
        return False

    def threads_of_consumers(self) -> int:
        return common.WARPGROUP_THREADS * self.consumer_warpgroups

    def tiles(self, m, n, k) -> int:
        """C tiles of the problem (before the split)."""
        return ceil_div(m, self.cfg.bm) * ceil_div(n, self.cfg.bn)

    def grid(self, m, n, k):
        # split_k consecutive CTAs per tile, or cluster_m per cluster_m tiles along M: 1-D for the raster
        cfg = self.cfg
        return (ceil_div(ceil_div(m, cfg.bm), cfg.cluster_m) * cfg.cluster_m * ceil_div(n, cfg.bn) * cfg.split_k, 1, 1)

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream, mBias=None, mD=None):
        self.types = operands.read(mA, mB, mC)  # element types and majors, as given
        self._setup_attributes()
        cfg = self.cfg
        sA_layout, sB_layout = self.sA_layout, self.sB_layout
        tiled_mma = common.make_tiled_mma(cfg.bn, self.consumer_warpgroups, self.types)
        tma_atom_a, tma_a = ct.make_tma_load(mA, sA_layout, (cfg.bm, cfg.bk))
        # B: with cluster_m > 1 each CTA loads 1/cluster_m of the box and multicasts it (phase 4)
        tma_atom_b, tma_b = ct.make_tma_load(mB, sB_layout, (cfg.box_n(), cfg.bk), num_multicast=cfg.cluster_m)

        # consecutive block ids share a tile (split) or B (multicast); else no cluster (the quicker launch)
        split = {"cluster": list(self.cluster)} if self.cluster[0] > 1 else {}
        self.kernel(tma_atom_a, tma_a, tma_atom_b, tma_b, mC, tiled_mma, sA_layout, sB_layout, mBias, mD).launch(
            grid=self.grid(*self.problem_mnk(mA, mC)),
            block=[self.threads, 1, 1],
            **split,
            smem=self.smem_bytes,
            # .minnctapersm: fixes the entry register count that setmaxnreg moves registers from
            min_blocks_per_mp=cfg.ctas_per_sm,
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
        mC: cute.Tensor,
        tiled_mma: cute.TiledMma,
        sA_layout: cute.ComposedLayout,
        sB_layout: cute.ComposedLayout,
        mBias,
        mD,
    ):
        cfg = self.cfg
        BM, BN, BK, NSTAGES, S, CM = cfg.bm, cfg.bn, cfg.bk, cfg.stages, cfg.split_k, cfg.cluster_m
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        bidx, _, _ = cute.arch.block_idx()
        if cutlass.const_expr(S * CM > 1):
            require_cluster_dims(self.cluster)  # PTX .reqnctapercluster: the cluster is part of the kernel
        if warp_idx == 0:
            cpasync.prefetch_descriptor(tma_atom_a)
            cpasync.prefetch_descriptor(tma_atom_b)

        # a partial last tile counts; the GEMM's M is C's, or A's rows where phase 11's gated pairs halve C's
        tiles_m = ceil_div(mA.shape[0] if cutlass.const_expr(self.gated()) else mC.shape[0], BM)
        tiles_n = ceil_div(mC.shape[1], BN)
        # a cluster: CM adjacent M tiles of one N tile (the same B k-tiles) x S K ranges; CTA rank
        # m_rank + CM k_rank takes M tile m_rank, K range k_rank
        cta_rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
        m_rank = cta_rank % CM if cutlass.const_expr(CM > 1) else 0
        rank = cta_rank // CM if cutlass.const_expr(S > 1) else 0
        m_tile, n_tile = ct.cluster_tile_coord(bidx // (S * CM), tiles_m, tiles_n, cfg, m_rank)
        # this CTA's K range: k-tiles [rank K/S, (rank + 1) K/S) (some may be empty when K is short)
        k_tiles = ceil_div(mA.shape[1], BK)
        k_first = rank * k_tiles // S
        k_count = (rank + 1) * k_tiles // S - k_first

        # ---- smem: barriers + A/B rings ----
        smem = cutlass.memory.SmemAllocator()
        storage = smem.allocate(self.shared_storage)
        sA = storage.sA.get_tensor(sA_layout.outer, swizzle=sA_layout.inner)  # (BM, BK, NSTAGES)
        sB = storage.sB.get_tensor(sB_layout.outer, swizzle=sB_layout.inner)  # (BN, BK, NSTAGES)

        # full: 1 arrival (the producer's arrive.expect_tx) + the stage's TMA bytes.
        # empty: one arrival per consumer warp (lane 0 of each), after its wgmma reading the stage is done.
        consumer_warps = self.consumer_warpgroups * common.WARPS_PER_WARPGROUP
        if cutlass.const_expr(CM > 1):
            # B multicast: phase 4's ring -- empty[s] counts the consumers of every CTA of the cluster
            ab_pipeline, _, b_mcast_mask = ct.make_pair_pipeline(storage, cfg, consumer_warps, cta_rank, split_k=S)
        else:
            # the ring is this CTA's alone (nothing is multicast): CTA-local barriers, a CTA-wide init sync
            ab_pipeline = pipeline.PipelineTmaAsync.create(
                barrier_storage=storage.full_empty.data_ptr(),
                num_stages=NSTAGES,
                producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
                consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, consumer_warps),
                tx_count=cfg.stage_bytes(),
                cta_layout_vmnk=cute.make_layout((1, 1, 1, 1)),
            )
            b_mcast_mask = None

        # ---- this CTA's tiles and their TMA / MMA partitions ----
        gA = cute.local_tile(mA, (BM, BK), (m_tile, None))  # (BM, BK, k_tiles)
        gB = cute.local_tile(mB, (BN, BK), (n_tile, None))  # (BN, BK, k_tiles)
        if cutlass.const_expr(cfg.box_n() != BN):  # the box's rows: the tile's BN and the 8 after it (TMA zero-fills past M)
            gB = cute.make_tensor(gB.iterator, cute.make_layout((cfg.box_n(), BK, gB.shape[2]), stride=gB.stride))
        # A is this CTA's alone: the TMA partition is the whole box; of B, rank r loads slice r (CM > 1)
        tAsA, tAgA = cpasync.tma_partition(
            tma_atom_a, 0, cute.make_layout(1), cute.group_modes(sA, 0, 2), cute.group_modes(gA, 0, 2)
        )
        tBsB, tBgB = cpasync.tma_partition(
            tma_atom_b, m_rank, cute.make_layout(CM),
            cute.group_modes(sB, 0, 2), cute.group_modes(gB, 0, 2),
        )

        # launched early (programmatic dependent launch, ``use_pdl``): the prologue above overlapped the previous
        # kernel's tail; no global memory access before that kernel has finished and flushed
        pdl_wait(cfg)

        warp_group_idx = cute.arch.make_warp_uniform(tidx // common.WARPGROUP_THREADS)
        mma_tidx = tidx - common.WARPGROUP_THREADS
        # the partial tile over the ring (fp32, C's major); valid once both warpgroups' wgmma are done
        sP = cute.make_tensor(cute.recast_ptr(storage.sA.data_ptr(), dtype=cutlass.Float32), self.partial_layout())

        # ---- producer warpgroup: one thread of warp 0 streams this CTA's A/B k-tiles into the ring ----
        if warp_group_idx == 0:
            cute.arch.setmaxregister_decrease(self.producer_regs)
            if warp_idx == 0:
                prod_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, NSTAGES)
                # an L2 policy for A's lines, or none (the DSL's default operand)
                a_policy = cutlass.Int64(EVICT_FIRST) if cutlass.const_expr(cfg.evict_first_a) else None
                for kt in cutlass.range(k_count, unroll=1):
                    ab_pipeline.producer_acquire(prod_state)  # empty wait + arrive.expect_tx on full[s]
                    full = ab_pipeline.producer_get_barrier(prod_state)
                    cute.copy(tma_atom_a, tAgA[(None, k_first + kt)], tAsA[(None, prod_state.index)], tma_bar_ptr=full,
                              cache_policy=a_policy)
                    cute.copy(tma_atom_b, tBgB[(None, k_first + kt)], tBsB[(None, prod_state.index)], tma_bar_ptr=full,
                              mcast_mask=b_mcast_mask)
                    prod_state.advance()
                if cutlass.const_expr(CM > 1):
                    # the peers' consumers arrive on this CTA's empty barriers: stay until the last of them has
                    ab_pipeline.producer_tail(prod_state)

        # ---- consumer warpgroups: wgmma mainloop over this CTA's K range, then the partial tile to smem ----
        if warp_group_idx > 0:
            cute.arch.setmaxregister_increase(self.consumer_regs)
            thr_mma = tiled_mma.get_slice(mma_tidx)
            tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))  # smem descriptors, (MMA, MMA_M, MMA_K, NSTAGES)
            # the MMA reads the stage's first BN rows of B (all of it but where box_n pads the box)
            sB_mma = sB if cutlass.const_expr(cfg.box_n() == BN) else cute.local_tile(sB, (BN, BK, NSTAGES), (0, 0, 0))
            tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB_mma))
            acc = cute.make_rmem_tensor(thr_mma.partition_shape_C((BM, BN)), cutlass.Float32)
            acc.fill(0.0)
            tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
            if k_count > 0:
                read_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, NSTAGES)
                release_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, NSTAGES)
                read_state, release_state = ct.mma_k_tiles(
                    ab_pipeline, read_state, release_state, tiled_mma, acc, tCrA, tCrB, k_count
                )
            pdl_launch_dependents(cfg)  # the next kernel may start its prologue
            if cutlass.const_expr(self.register_epilogue()):
                # no split, fp32 C: phase 3's register epilogue, nothing to add up
                common.store_acc_to_gmem(tiled_mma, mma_tidx, acc, mC, (BM, BN), m_tile, n_tile)
            else:
                # both warpgroups' last wgmma have read the ring (and every stage has landed): it is free
                consumers = pipeline.NamedBarrier(barrier_id=1, num_threads=self.threads_of_consumers())
                consumers.arrive_and_wait()
                cute.autovec_copy(acc, thr_mma.partition_C(sP))
                if cutlass.const_expr(S == 1):
                    # a 16-bit C without a split: the partial tile is the tile; the rounding reads smem,
                    # not the accumulators (rounding those in registers made ptxas serialize every wgmma)
                    consumers.arrive_and_wait()
                    reduce_store(sP, mC, m_tile, n_tile, 0, mma_tidx, (BM, BN), 1, self.threads_of_consumers(),
                                 m_rank, CM, mBias, mD, self.activation(), self.gated())

        if cutlass.const_expr(S > 1):
            # ---- the cluster's partial tiles are all in smem (release/acquire at cluster scope) ----
            cute.arch.cluster_arrive()
            cute.arch.cluster_wait()
            if warp_group_idx > 0:
                reduce_store(sP, mC, m_tile, n_tile, rank, mma_tidx, (BM, BN), S, self.threads_of_consumers(),
                             m_rank, CM, mBias, mD, self.activation(), self.gated())
            # no CTA leaves while a peer may still read its partial tile
            cute.arch.cluster_arrive()
            cute.arch.cluster_wait()


@cute.jit
def reduce_store(sP: cute.Tensor, mC: cute.Tensor, m_tile, n_tile, rank, tidx, tile_mn: cutlass.Constexpr,
                 split_k: cutlass.Constexpr, threads: cutlass.Constexpr, m_rank=0, cluster_m: cutlass.Constexpr = 1,
                 mBias=None, mD=None, activation: cutlass.Constexpr = "none", gated: cutlass.Constexpr = False):
    """Reduce-scatter of the cluster's ``split_k`` partial tiles (``sP`` in every CTA) into C's tile.

    CTA ``rank`` owns lines [rank ceil(L/S), (rank + 1) ceil(L/S)) of the tile's L lines of C's other mode
    (rows for row-major C; the last rank fewer where S does not divide L). Thread ``tidx`` of ``threads``
    takes 16-B vectors of them along C's contiguous mode,
    reads each vector from the partial tile of CTA 0, 1, ..., S-1 of its M tile (cluster rank
    ``m_rank + cluster_m r``: ``mapa`` + ``ld.shared::cluster``),
    adds them in that order (the same bits on every run), rounds to C's type and stores it; vectors
    past C's edges are skipped (C's contiguous extent is a multiple of 8: a vector is in or out whole).
    Phase 11's fused epilogue (``mBias``, ``mD``: views with C's shape; ``activation``) applies to the sum,
    before the rounding: once per element, after the reduce (``phases.epilogue.apply``). With ``gated`` C is half
    the tile's width along its contiguous mode: each vector's (gate, up) pairs store one value each.
    """
    BM, BN = tile_mn
    row_major = sP.layout.stride[1] == 1
    vec_tiler = (1, VEC) if row_major else (VEC, 1)
    half = 2 if cutlass.const_expr(gated) else 1  # C's values per vector of the partial tile
    out_tile = (BM, BN // half) if row_major else (BM // half, BN)
    out_vec = (1, VEC // half) if row_major else (VEC // half, 1)
    lines = BM if row_major else BN
    per_line = (BN if row_major else BM) // VEC  # vectors along the contiguous mode
    my_lines = -(-lines // split_k)  # the last rank owns fewer where L % S != 0 (e.g. 80 lines over 3)
    vecs = per_line * my_lines
    gC = cute.zipped_divide(cute.local_tile(mC, out_tile, (m_tile, n_tile)), out_vec)  # ((vec), (lines, vecs))
    cC = cute.zipped_divide(
        cute.local_tile(cute.make_identity_tensor(mC.shape), out_tile, (m_tile, n_tile)), out_vec
    )
    parts = [cute.zipped_divide(cute.make_tensor(cute.arch.map_dsmem_ptr(sP.iterator, m_rank + cluster_m * r),
                                                 sP.layout), vec_tiler)
             for r in range(split_k)]
    gBias = epilogue.tile_vectors(mBias, tile_mn, m_tile, n_tile, vec_tiler)
    gD = epilogue.tile_vectors(mD, out_tile, m_tile, n_tile, out_vec)
    total = cute.make_rmem_tensor(gC[(None, 0)].layout if cutlass.const_expr(half == 1) else cute.make_layout(VEC),
                                  cutlass.Float32)
    for i in cutlass.range_constexpr((vecs + threads - 1) // threads):
        v = tidx + i * threads
        line = rank * my_lines + v // per_line
        idx = (line, v % per_line) if row_major else (v % per_line, line)
        # the last rank's share is short where S does not divide L (80 lines over 3: 27, 27, 26); else no test
        in_tile = True if cutlass.const_expr(lines % split_k == 0) else line < lines
        if v < vecs:
            if in_tile:
                if cute.elem_less(cC[(0, idx)], mC.shape):
                    add_in_rank_order(parts, idx, total)
                    out = total
                    if cutlass.const_expr(mBias is not None or mD is not None or activation != "none" or gated):
                        out = epilogue.apply(total, epilogue.vector_at(gBias, idx), epilogue.vector_at(gD, idx),
                                             activation, gated)
                    cute.autovec_copy(common.to_c_type(out, mC.element_type), gC[(None, idx)])

