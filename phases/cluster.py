"""Cluster launch shape in the kernel itself: PTX ``.explicitcluster .reqnctapercluster`` (both ladders)."""

from cutlass._mlir import ir


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
