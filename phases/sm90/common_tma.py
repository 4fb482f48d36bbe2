"""Plumbing shared by the sm90 TMA phases (2a, 2b, 3, 4, 5); none of it changes between them.

- ``TmaConfig``: the tile/stage fields of those phases (BK=64, the grouped raster's band height).
- the wgmma tiled MMA for one or two consumer warpgroups (``m64nBNk16``, A K-major and B N-major
  read from smem, fp32 accumulators).
- the TMA load atoms for A and B, and the shared-storage struct: full/empty mbarriers + the stage ring.
- the grouped raster: which (m, n) tile a CTA (or a cluster) computes.
Re-exported from ``phases.sm90.common`` (phases 0-1's plumbing, unchanged): the staged smem layouts
wgmma reads (``make_smem_layouts``; with BK=64 A gets SW128: a 64-element fp16 K-row is exactly one
128-B swizzle span; N-major B is SW128 as before) and the register epilogue ``store_acc_to_gmem``
(accumulators -> ``st.global.v2.f32``; phases 2a-4, phase 5 replaces it).

Nothing here is a kernel; the phases' ``kernel`` bodies read top to bottom on their own.
"""

import dataclasses

import cutlass
import cutlass.cute as cute
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass.cute.nvgpu import OperandMajorMode, cpasync

from phases.base import TileConfig
from phases.raster import grouped_tile_coord  # noqa: F401  (the phases call it as common.grouped_tile_coord)
from phases.sm90.common import SMEM_ALIGN, WGMMA_M, make_smem_layouts, store_acc_to_gmem  # noqa: F401

WARPGROUP = 128  # threads per warpgroup: the unit that issues one wgmma
WARPS_PER_WARPGROUP = 4


@dataclasses.dataclass(frozen=True)
class TmaConfig(TileConfig):
    """Fields of the TMA phases. BK=64 instead of the worklog's 32: see phase 2a's docstring."""

    bm: int = 128
    bn: int = 128
    bk: int = 64
    stages: int = 4
    group_m: int = 8  # raster band height in M-tiles (a multiple of cluster_m)

    def stage_bytes(self) -> int:
        """Bytes one A+B stage holds (what the full barrier's expect_tx arms, summed over the cluster)."""
        return (self.bm + self.bn) * self.bk * 2


def make_tiled_mma(bn: int, consumer_warpgroups: int) -> cute.TiledMma:
    """``m64n{bn}k16`` wgmma, fp16 A (K-major) and B (N-major) from smem, fp32 accumulators.

    The atom covers 64 rows. With one consumer warpgroup and BM=128 the warpgroup issues it twice per
    k16 (rows 0-63 and 64-127); with two, warpgroup w owns rows 64w..64w+63.
    """
    return sm90_utils.make_trivial_tiled_mma(
        cutlass.Float16,
        cutlass.Float16,
        OperandMajorMode.K,  # A (M,K) stride (K,1)
        OperandMajorMode.MN,  # B (N,K) stride (1,N): the transpose bit of the wgmma instruction
        cutlass.Float32,
        (consumer_warpgroups, 1, 1),
        tiler_mn=(WGMMA_M, bn),
    )


def make_tma_load(gmem: cute.Tensor, smem_layout_staged, tile_mk, num_multicast: int = 1):
    """TMA load atom + TMA coordinate tensor for one operand; one ``cp.async.bulk.tensor`` per stage.

    With ``num_multicast`` > 1 the box is split across that many CTAs: each loads its slice and the
    multicast writes it into every CTA of the mask.
    """
    op = cpasync.CopyBulkTensorTileG2SOp() if num_multicast == 1 else cpasync.CopyBulkTensorTileG2SMulticastOp()
    smem_layout = cute.slice_(smem_layout_staged, (None, None, 0))
    return cpasync.make_tiled_tma_atom(op, gmem, smem_layout, tile_mk, num_multicast=num_multicast)


def make_shared_storage(stages: int, sA_layout, sB_layout):
    """Struct of the CTA's dynamic smem: NSTAGES full + NSTAGES empty mbarriers, then the A and B rings."""

    @cute.struct
    class SharedStorage:
        # full[s]: TMA bytes of stage s landed (expect_tx); empty[s]: every consumer warp is done reading s.
        full_empty: cute.struct.MemRange[cutlass.Int64, 2 * stages]
        sA: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, cute.cosize(sA_layout)], SMEM_ALIGN]
        sB: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, cute.cosize(sB_layout)], SMEM_ALIGN]

    return SharedStorage
