"""Cluster helpers of both ladders: the launch shape in the kernel itself (PTX ``.explicitcluster
.reqnctapercluster``), a vector load from a peer CTA's shared memory (DSMEM), and the split-K reduce's sum
of one vector over the cluster's partial tiles in rank order."""

from cutlass import Float32
from cutlass._mlir import ir
from cutlass._mlir.dialects import llvm
from cutlass.cutlass_dsl import T, dsl_user_op


def require_cluster_dims(dims: tuple[int, int, int]) -> None:
    """Put the cluster shape into the kernel being traced: PTX ``.explicitcluster .reqnctapercluster``.

    The worklog's ``__cluster_dims__(2,1,1)``. The DSL launches clusters through cudaLaunchKernelEx's
    cluster attribute only and leaves the PTX without a cluster directive; a kernel whose CTAs multicast
    into each other's smem (or, on sm100, share one cta_group::2 MMA) is meaningless without its peers,
    so the shape also goes into the kernel (MLIR NVVM's ``nvvm.cluster_dim`` kernel attribute), where
    ptxas and the driver see it and refuse a launch of any other shape. Call it from inside a
    ``@cute.kernel`` body.
    """
    op = ir.InsertionPoint.current.block.owner
    while op is not None and op.operation.name not in ("cuda.kernel", "gpu.func", "lir.func"):
        op = op.operation.parent
    assert op is not None, "require_cluster_dims must be called while tracing a @cute.kernel"
    op.operation.attributes["nvvm.cluster_dim"] = ir.Attribute.parse("array<i32: {}, {}, {}>".format(*dims))


@dsl_user_op
def load_shared_cluster_f32x4(ptr, *, loc=None, ip=None):
    """Four fp32 at a 16-B aligned address of a cluster CTA's smem (a pointer from
    ``cute.arch.map_dsmem_ptr``): one ``ld.shared::cluster.v4.f32``. The DSL's tensors do not load from
    the DSMEM address space, so the instruction is written out; the memory clobber keeps it after the
    cluster barrier that made the peer's data visible."""
    addr = llvm.ptrtoint(T.i32(), ptr.to_llvm_ptr(loc=loc, ip=ip), loc=loc, ip=ip)
    res = llvm.inline_asm(
        llvm.StructType.get_literal([T.f32()] * 4),
        [addr],
        "ld.shared::cluster.v4.f32 {$0, $1, $2, $3}, [$4];",
        "=f,=f,=f,=f,r,~{memory}",
        has_side_effects=True,
        loc=loc,
        ip=ip,
    )
    return tuple(Float32(llvm.extractvalue(T.f32(), res, [i], loc=loc, ip=ip)) for i in range(4))


def add_in_rank_order(parts, idx, total) -> None:
    """``total`` (4 fp32 in registers) = the 16-B vector ``idx`` of ``parts[0]`` + ``parts[1]`` + ... (the cluster
    CTAs' partial tiles, DSMEM views from ``cute.arch.map_dsmem_ptr``), added in that order whatever the timing:
    the split-K reduce of both ladders, deterministic (the same bits on every run). Called while tracing a
    ``@cute.jit`` function: the Python loops unroll there."""
    for r, tile in enumerate(parts):
        part = load_shared_cluster_f32x4(tile[(None, idx)].iterator)
        for e in range(4):
            total[e] = part[e] if r == 0 else total[e] + part[e]
