"""Compiling a phase: once per (target, phase, config), for every M, N, K it accepts, with or without a GPU.

What gets compiled is ``TorchFace(kernel)``: it takes the operands as torch lays them out (A [M,K],
B [K,N], C [M,N], all row-major) and hands the phase its contract's views (B seen as (N, K)). The
extents are symbolic (``cute.sym_int32``), so one compiled function serves every shape; the divisibility
the phase declares is part of the compiled signature, and the generated entry checks it on every call.
Compiled with ``--enable-tvm-ffi``: the function takes torch tensors directly and launches on the
caller's current torch stream (also inside CUDA-graph capture); its entry checks dtype, rank, shapes,
strides, device type and 16-byte alignment before launching.

Always with an explicit ``--gpu-arch``: without it the DSL silently assumes sm_100a, and a Hopper
kernel then fails to compile. This module imports the DSL, so the rest of the runtime imports it inside
functions (the first compile). The compile cache's fingerprint hashes this file (``cache.sources``): an
edit here starts a fresh cache.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time

import cutlass
import cutlass.cute as cute

from cute_gemm.runtime import arch as _arch


class TorchFace:
    """The compiled entry: (A [M,K], B [K,N], C [M,N]) as torch holds them -> ``kernel(A, B as (N,K), C, stream)``."""

    def __init__(self, kernel):
        self.kernel = kernel

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream):
        # B [K, N] seen as (N, K): the same bytes, modes swapped (row-major B: stride (1, N), N-major)
        mB_nk = _transposed(mB)
        if cutlass.const_expr(getattr(self.kernel, "swap_ab", False)):
            # C^T = B^T A^T: B^T (N, K) is the kernel's A, A (M, K) its B, C^T (N, M) its C
            self.kernel(mB_nk, mA, _transposed(mC), stream)
        else:
            self.kernel(mA, mB_nk, mC, stream)


class TorchBiasFace(TorchFace):
    """(A, B, C, bias [N]) -> the kernel with the bias (phase 11's fused epilogue; C^T's plans too)."""

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, mBias: cute.Tensor, stream):
        _call(self.kernel, mA, mB, mC, stream, mBias, None)


class TorchResidualFace(TorchFace):
    """(A, B, C, residual [M,N]) -> the kernel with the residual, transposed with C where C is."""

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, mD: cute.Tensor, stream):
        _call(self.kernel, mA, mB, mC, stream, None, mD)


class TorchBiasResidualFace(TorchFace):
    """(A, B, C, bias [N], residual [M,N]) -> the kernel with both."""

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, mBias: cute.Tensor, mD: cute.Tensor,
                 stream):
        _call(self.kernel, mA, mB, mC, stream, mBias, mD)


def _call(kernel, mA, mB, mC, stream, mBias, mD):
    """The epilogue faces' call: TorchFace's views, and the residual seen as C is (C^T for swap-AB)."""
    mB_nk = _transposed(mB)
    if cutlass.const_expr(getattr(kernel, "swap_ab", False)):
        mD_k = _transposed(mD) if cutlass.const_expr(mD is not None) else None
        kernel(mB_nk, mA, _transposed(mC), stream, mBias, mD_k)
    else:
        kernel(mA, mB_nk, mC, stream, mBias, mD)


def epilogue_inputs(kernel) -> tuple[str, ...]:
    """The tensors a kernel's fused epilogue reads beyond A, B and C, in call order: () or a subset of
    ("bias", "residual"), from its config (phase 11's ``bias`` / ``residual`` fields)."""
    cfg = kernel.cfg
    return tuple(name for name in ("bias", "residual") if getattr(cfg, name, False))


def face_for(kernel) -> TorchFace:
    """The compiled entry for ``kernel``: ``fn(a, b, c)``, plus ``bias`` and/or ``residual`` after C when its
    config's fused epilogue reads them."""
    faces = {(): TorchFace, ("bias",): TorchBiasFace, ("residual",): TorchResidualFace,
             ("bias", "residual"): TorchBiasResidualFace}
    return faces[epilogue_inputs(kernel)](kernel)


def _transposed(t: cute.Tensor) -> cute.Tensor:
    """The same bytes with the two modes swapped."""
    return cute.make_tensor(t.iterator, cute.select(t.layout, mode=[1, 0]))


@dataclasses.dataclass
class Compiled:
    """A compiled kernel and what the compiler said about it."""

    key: str  # "sm90:3"
    target: str  # "sm_90a"
    fn: object  # the callable: fn(a, b, c) on torch tensors
    kernel: object  # the phase instance (its attributes are filled while tracing)
    seconds: float
    ptx: str | None = None
    cubin: bytes | None = None
    ptxas: str = ""  # raw ptxas remarks text


def _options(target: str, dump_dir: str | None, remarks: str | None) -> str:
    opts = [f"--gpu-arch {target}", "--enable-tvm-ffi"]
    if dump_dir:
        opts += ["--keep-ptx", "--keep-cubin", f"--dump-dir {dump_dir}"]
    if remarks:
        opts += [f"--remark-output {remarks}", "--remark-filter '.*'"]
    return " ".join(opts)


def fake_operands(kernel):
    """Symbolic-extent stand-ins for A [M,K], B [K,N], C [M,N] (then the fused epilogue's bias [N] and residual
    [M,N], where the config has them; C and the residual [M,N/2] with its gated pairs) and the stream: no GPU, no
    shapes.

    M, N, K are one symbol each, shared by every tensor that has that extent (and by the row strides,
    so the generated entry checks that each tensor is contiguous), with the phase's divisibility.
    """
    import cutlass
    from cutlass.cute.runtime import make_fake_tensor
    from cutlass.runtime import make_fake_stream

    from phases.operands import dtype

    ops = kernel.operands
    dm, dn, dk = kernel.divisibility()
    m = cute.sym_int32(divisibility=dm, symbol="M")
    n = cute.sym_int32(divisibility=dn, symbol="N")
    k = cute.sym_int32(divisibility=dk, symbol="K")
    a = make_fake_tensor(dtype(ops.ab), (m, k), stride=(k, 1) if ops.a_major == "k" else (1, m), assumed_align=16)
    b = make_fake_tensor(dtype(ops.ab), (k, n), stride=(n, 1) if ops.b_major == "n" else (1, k), assumed_align=16)
    # phase 11's gated pairs: C (and the residual) hold N / 2 columns, a symbol of their own
    n_c = cute.sym_int32(divisibility=dn, symbol="NC") if getattr(kernel.cfg, "gated", False) else n
    c = make_fake_tensor(dtype(ops.c), (m, n_c), stride=(n_c, 1), assumed_align=16)
    extra = {
        "bias": lambda: make_fake_tensor(dtype(ops.ab), (n,), stride=(1,), assumed_align=16),
        "residual": lambda: make_fake_tensor(dtype(ops.c), (m, n_c), stride=(n_c, 1), assumed_align=16),
    }
    return (a, b, c, *(extra[name]() for name in epilogue_inputs(kernel)),
            make_fake_stream(use_tvm_ffi_env_stream=True))


def compile_kernel(kernel, target: str, *, keep: bool = False) -> Compiled:
    """Compile ``kernel`` (a phase instance) for ``target``; no GPU needed.

    With ``keep``, the PTX, cubin and ptxas remarks (registers, spills) are kept on the result.
    """
    target = _arch.target(target)
    key = f"{kernel.arch}:{kernel.phase}"
    with tempfile.TemporaryDirectory(prefix="cute-gemm-") as tmp:
        dump = os.path.join(tmp, "dump") if keep else None
        remarks = os.path.join(tmp, "remarks.yaml") if keep else None
        if dump:
            os.makedirs(dump)  # the DSL writes into it but does not create it
        t0 = time.perf_counter()
        fn = cute.compile(face_for(kernel), *fake_operands(kernel), options=_options(target, dump, remarks))
        out = Compiled(key=key, target=target, fn=fn, kernel=kernel, seconds=time.perf_counter() - t0)
        if keep:
            out.ptx = fn.__ptx__ if isinstance(fn.__ptx__, str) else None
            out.cubin = fn.__cubin__ if isinstance(fn.__cubin__, bytes) else None
            if remarks and os.path.exists(remarks):
                with open(remarks) as f:
                    out.ptxas = f.read()
    return out
