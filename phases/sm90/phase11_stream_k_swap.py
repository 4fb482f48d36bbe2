"""sm90 phase 11: stream-K for few tokens -- every SM an equal share of all tiles' k-loops, partial tiles
fixed up in a fixed order through a workspace in global memory (beyond the worklog).

Compared to phase 10 (swap-AB tiles, each tile's K range split over the ``split_k`` CTAs of a cluster),
the work is not cut into tiles x splits at all. The units are (tile, k-tile) pairs, tile-major; the grid
is one CTA per SM (``sm_count``), and CTA c takes the units [c U / G, (c + 1) U / G) of the U = tiles x
k-tiles (``phases.raster.stream_k_range``), whatever the tile count:
1. a CTA's share is a run of tile segments: the tail of one tile, whole tiles, the head of another. It
   walks them from its last tile back to its first, each segment's k-tiles in order, the ring running on
   across segments as in phase 6;
2. a segment that is a whole tile is stored as phase 10 stores an unsplit tile (registers to C);
3. a segment that ends before the tile's last k-tile (the head of a tile whose rest is the next CTAs')
   comes first in its CTA's walk: its fp32 partial tile goes to the CTA's slot of the workspace, and
   after a barrier of the consumers one thread publishes it (``fence.acq_rel.gpu`` +
   ``st.release.gpu`` of the CTA's flag);
4. the segment that holds a tile's last k-tile but not its first (the tile's owner) comes last in its
   CTA's walk: one thread waits for the flag of CTA c-1 (``ld.acquire.gpu``), resets it, the consumers
   add that CTA's slot to their accumulators, then the same for c-2, ... down to the CTA that holds the
   tile's first k-tile; then the tile is stored.
The partial tiles are added in one order (c-1, c-2, ...) fixed by the shape and the grid, never by
timing: repeats are bit-identical. The flags are back at zero when the kernel ends (the owner resets each
one it consumed), so the workspace needs zeroing once, when it is allocated (the harness holds one per
device and stream: ``workspace_words``). A CTA waits only for CTAs with smaller block ids, which
the GPU dispatches first (the forward-progress assumption of every stream-K and decoupled-look-back
kernel); the grid is never larger than the SMs, one CTA each, so on an idle GPU all of it is resident.

Why: phase 10's grid is tiles x splits, fixed per config, and the tile counts of real layers rarely
fill 132 SMs: 144x6144x6144 has 96 tiles of 64 x 144 (96 busy SMs; a 2-way split needs 192), 128x4096x14336
has 64 tiles (x 2 = 128 CTAs, 4 SMs idle), 72x9216x9216 has 144 (more than one wave). With stream-K every SM
gets the same share of MMAs and weight bytes, and no split has to divide anything.

Numbers: phase 10's tile (64-192 weight rows x ``bn`` tokens, ``bk`` x ``stages`` ring); the workspace is
``sm_count`` slots of bm x bn fp32 (64 x 144: 36 KiB each, 4.6 MiB for 132 SMs, L2-resident) and
``sm_count`` flags. A tile is fixed up from at most ceil(k-tiles / share) + 1 slots.

Constraints: phase 10's (any M, N, K; any layout and dtype of A and B, any C dtype), without a cluster:
``split_k`` and ``cluster_m`` stay 1, ``ctas_per_sm`` 1.
"""

import dataclasses

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import cpasync, warpgroup

from phases import operands
from phases.raster import ceil_div, stream_k_range
from phases.sm90 import common
from phases.sm90 import common_tma as ct
from phases.sm90.phase10_swap_ab import Sm90Phase10, Sm90Phase10Config


@dataclasses.dataclass(frozen=True)
class Sm90Phase11Config(Sm90Phase10Config):
    """Phase 10's tile and ring; the split is the schedule's (``split_k`` stays 1), the grid one CTA per SM."""

    bn: int = 16
    stages: int = 8
    split_k: int = 1  # no cluster: stream-K shares cross tiles instead
    sm_count: int = 132  # CTAs launched (one per SM; an H100/H200 SXM has 132); on a GPU: its SM count


class Sm90Phase11(Sm90Phase10):
    """Phase 10's tiles under a stream-K schedule: equal shares of every tile's k-loop, fixed-order fix-up."""

    phase = "11"
    Config = Sm90Phase11Config
    summary = "stream-K swap-AB: one CTA per SM, equal shares of all tiles' k-tiles, partial tiles fixed up in order"
    adds = "stream-K: every SM the same share of the (tile, k-tile) units, a workspace fix-up in a fixed order"
    worklog = ""
    parent = "10"

    def _setup_attributes(self):
        cfg = self.cfg
        assert cfg.split_k == 1 and cfg.cluster_m == 1, "phase 11 splits by its schedule: split_k and cluster_m are 1"
        assert cfg.ctas_per_sm == 1, "phase 11 runs one CTA per SM"
        super()._setup_attributes()

    def units(self, m, n, k):
        """(tiles, k-tiles) of the problem in the kernel's coordinates (weight rows x tokens)."""
        cfg = self.cfg
        return ceil_div(n, cfg.bm) * ceil_div(m, cfg.bn), ceil_div(k, cfg.bk)

    def grid(self, m, n, k):
        tiles, k_tiles = self.units(m, n, k)
        return (cutlass.min(self.cfg.sm_count, tiles * k_tiles), 1, 1)

    def flag_words(self) -> int:
        """The flags' part of the workspace: one int32 per CTA, rounded up to 16-byte multiples."""
        return ceil_div(self.cfg.sm_count, 4) * 4

    def workspace_words(self) -> int:
        return self.flag_words() + self.cfg.sm_count * self.cfg.bm * self.cfg.bn

    def fragment_values(self) -> int:
        """fp32 accumulators per consumer thread: the bm x bn tile over the consumer threads."""
        return self.cfg.bm * self.cfg.bn // self.threads_of_consumers()

    def slot(self, mW: cute.Tensor, cta, tidx) -> cute.Tensor:
        """Consumer thread ``tidx``'s values in CTA ``cta``'s slot of the workspace (after the flags), as (4, V/4):
        fragment value j at word [(j / 4) x threads + tidx] x 4 + j % 4, so a warp's 16-byte vectors of one j / 4
        lie side by side (512 contiguous bytes per store or load). Writer and reader index their fragments alike."""
        threads, v = self.threads_of_consumers(), self.fragment_values()
        offset = cute.assume(self.flag_words() + cta * (self.cfg.bm * self.cfg.bn) + tidx * 4, divby=4)
        return cute.make_tensor(cute.recast_ptr(mW.iterator + offset, dtype=cutlass.Float32),
                                cute.make_layout((4, v // 4), stride=(1, 4 * threads)))

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, mW: cute.Tensor, stream):
        self.types = operands.read(mA, mB, mC)
        self._setup_attributes()
        cfg = self.cfg
        tiled_mma = common.make_tiled_mma(cfg.bn, self.consumer_warpgroups, self.types)
        tma_atom_a, tma_a = ct.make_tma_load(mA, self.sA_layout, (cfg.bm, cfg.bk))
        tma_atom_b, tma_b = ct.make_tma_load(mB, self.sB_layout, (cfg.bn, cfg.bk))
        self.kernel(tma_atom_a, tma_a, tma_atom_b, tma_b, mC, mW, tiled_mma, self.sA_layout, self.sB_layout).launch(
            grid=self.grid(*self.problem_mnk(mA, mC)),
            block=[self.threads, 1, 1],
            smem=self.smem_bytes,
            min_blocks_per_mp=1,  # .minnctapersm: the entry register count setmaxnreg moves registers from
            preferred_smem_carveout=100,
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
        mW: cute.Tensor,
        tiled_mma: cute.TiledMma,
        sA_layout: cute.ComposedLayout,
        sB_layout: cute.ComposedLayout,
    ):
        cfg = self.cfg
        BM, BN, NSTAGES = cfg.bm, cfg.bn, cfg.stages
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        bidx, _, _ = cute.arch.block_idx()
        ctas, _, _ = cute.arch.grid_dim()
        if warp_idx == 0:
            cpasync.prefetch_descriptor(tma_atom_a)
            cpasync.prefetch_descriptor(tma_atom_b)

        # ---- the schedule: this CTA's units [first, last), walked from its last tile back to its first ----
        tiles_m = ceil_div(mC.shape[0], BM)
        k_tiles = ceil_div(mA.shape[1], cfg.bk)
        units = tiles_m * ceil_div(mC.shape[1], BN) * k_tiles
        first, last = stream_k_range(bidx, ctas, units)
        last_tile = (last - 1) // k_tiles
        segments = last_tile - first // k_tiles + 1

        flags = mW.iterator  # the workspace: a flag per CTA, then its slot (``slot``)

        # ---- smem: barriers + A/B rings; the ring is this CTA's alone ----
        smem = cutlass.memory.SmemAllocator()
        storage = smem.allocate(self.shared_storage)
        sA = storage.sA.get_tensor(sA_layout.outer, swizzle=sA_layout.inner)  # (BM, BK, NSTAGES)
        sB = storage.sB.get_tensor(sB_layout.outer, swizzle=sB_layout.inner)  # (BN, BK, NSTAGES)
        ab_pipeline = pipeline.PipelineTmaAsync.create(
            barrier_storage=storage.full_empty.data_ptr(),
            num_stages=NSTAGES,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(
                pipeline.Agent.Thread, self.consumer_warpgroups * common.WARPS_PER_WARPGROUP
            ),
            tx_count=cfg.stage_bytes(),
            cta_layout_vmnk=cute.make_layout((1, 1, 1, 1)),
        )
        tAsA, tAgA, tBsB, tBgB, _ = ct.tma_load_partitions(tma_atom_a, tma_atom_b, sA, sB, mA, mB, cfg, 0)

        if cutlass.const_expr(cfg.use_pdl):
            # launched early (programmatic dependent launch): no global access -- operands, C, the
            # workspace -- before the previous kernel of the stream has finished and flushed
            cute.arch.griddepcontrol_wait()

        warp_group_idx = cute.arch.make_warp_uniform(tidx // common.WARPGROUP_THREADS)

        # ---- producer warpgroup: one thread streams the segments' k-tiles, the ring running across them ----
        if warp_group_idx == 0:
            cute.arch.setmaxregister_decrease(self.producer_regs)
            if warp_idx == 0:
                prod_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, NSTAGES)
                for seg in cutlass.range(segments, unroll=1):
                    tile = last_tile - seg
                    k_begin = cutlass.max(first - tile * k_tiles, 0)
                    k_end = cutlass.min(last - tile * k_tiles, k_tiles)
                    prod_state = ct.load_k_tiles(
                        ab_pipeline, prod_state, tma_atom_a, tAgA, tAsA, tma_atom_b, tBgB, tBsB,
                        tile % tiles_m, tile // tiles_m, k_begin, k_end - k_begin, None,
                    )

        # ---- consumer warpgroups: per segment the wgmma mainloop, then store, publish or fix up ----
        if warp_group_idx > 0:
            cute.arch.setmaxregister_increase(self.consumer_regs)
            mma_tidx = tidx - common.WARPGROUP_THREADS
            thr_mma = tiled_mma.get_slice(mma_tidx)
            tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))  # smem descriptors, (MMA, MMA_M, MMA_K, NSTAGES)
            tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
            acc = cute.make_rmem_tensor(thr_mma.partition_shape_C((BM, BN)), cutlass.Float32)
            v = self.fragment_values()
            acc_v = cute.make_tensor(acc.iterator, cute.make_layout((4, v // 4), stride=(1, 4)))  # as the slot holds it
            tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
            consumers = pipeline.NamedBarrier(barrier_id=1, num_threads=self.threads_of_consumers())
            read_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, NSTAGES)
            release_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, NSTAGES)
            for seg in cutlass.range(segments, unroll=1):
                tile = last_tile - seg
                k_begin = cutlass.max(first - tile * k_tiles, 0)
                k_end = cutlass.min(last - tile * k_tiles, k_tiles)
                acc.fill(0.0)
                read_state, release_state = ct.mma_k_tiles(
                    ab_pipeline, read_state, release_state, tiled_mma, acc, tCrA, tCrB, k_end - k_begin
                )
                if cutlass.const_expr(cfg.use_pdl):
                    if seg == segments - 1:
                        cute.arch.griddepcontrol_launch_dependents()  # the last mainloop is done: the next kernel may start
                if k_end < k_tiles:
                    # the head of a tile whose rest is later CTAs': the partial tile to this CTA's slot, published
                    cute.autovec_copy(acc_v, self.slot(mW, bidx, mma_tidx))
                    consumers.arrive_and_wait()  # every consumer's stores are done
                    if mma_tidx == 0:
                        cute.arch.fence_acq_rel_gpu()
                        cute.arch.store(flags + bidx, cutlass.Int32(1), sem="release", scope="gpu")
                else:
                    if k_begin > 0:
                        # the tile's owner: add the heads of CTAs bidx-1, bidx-2, ... (the one that holds the
                        # tile's first k-tile last), in that order on every run
                        fix_up(acc_v, self.slot(mW, 0, mma_tidx), BM * BN, flags, bidx, tile * k_tiles, ctas, units,
                               mma_tidx, consumers)
                    common.store_acc_to_gmem(tiled_mma, mma_tidx, acc, mC, (BM, BN), tile % tiles_m, tile // tiles_m)


@cute.jit
def fix_up(acc_v: cute.Tensor, slot0: cute.Tensor, slot_words: cutlass.Constexpr, flags, cta, tile_start, ctas, units,
           tidx, consumers):
    """Add to this thread's accumulators (``acc_v``, indexed as the slots are) the partial tiles that CTAs cta-1,
    cta-2, ... left for the tile whose first unit is ``tile_start``: each CTA whose share ends past
    ``tile_start``, in that order (``slot0``: this thread's values in CTA 0's slot; the others follow it,
    ``slot_words`` apart). Thread 0 of the consumers waits for each one's flag (``ld.acquire.gpu``) and resets
    it; the consumers' barrier orders every thread's reads of the slot after that acquire."""
    for i in cutlass.range_constexpr(cute.size(acc_v)):
        acc_v[i] = common.fence_register(acc_v[i])  # read the accumulators after the last wgmma.wait_group only
    part = cute.make_rmem_tensor(acc_v.layout, cutlass.Float32)
    peer = cta - 1
    while (peer + 1) * units // ctas > tile_start:  # the peer's share ends inside this tile
        if tidx == 0:
            seen = cute.arch.load(flags + peer, cutlass.Int32, sem="acquire", scope="gpu")
            while seen == 0:
                seen = cute.arch.load(flags + peer, cutlass.Int32, sem="acquire", scope="gpu")
            cute.arch.store(flags + peer, cutlass.Int32(0))  # consumed: zero again for the next launch
        consumers.arrive_and_wait()
        cute.autovec_copy(cute.make_tensor(slot0.iterator + cute.assume(peer * slot_words, divby=4), slot0.layout), part)
        for i in cutlass.range_constexpr(cute.size(acc_v)):
            acc_v[i] = acc_v[i] + part[i]
        peer = peer - 1
