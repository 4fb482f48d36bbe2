"""Compiling a phase: for a GPU launch (real tensors) or for inspection only (fake tensors, any arch, no GPU).

Both go through ``cute.compile`` with an explicit ``--gpu-arch``: without it the DSL silently assumes
sm_100a, and a Hopper kernel then fails to compile.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
import threading
import time

from cute_gemm import arch as _arch

_LOCK = threading.Lock()


@dataclasses.dataclass
class Compiled:
    """A compiled kernel and what the compiler said about it."""

    key: str  # "sm90:3"
    target: str  # "sm_90a"
    fn: object  # the callable the DSL returns
    kernel: object  # the phase instance (holds smem_bytes / tmem_cols after tracing)
    seconds: float
    ptx: str | None = None
    cubin: bytes | None = None
    ptxas: str = ""  # raw ptxas remarks text


def _options(target: str, dump_dir: str | None, remarks: str | None) -> str:
    opts = [f"--gpu-arch {target}"]
    if dump_dir:
        opts += ["--keep-ptx", "--keep-cubin", f"--dump-dir {dump_dir}"]
    if remarks:
        opts += [f"--remark-output {remarks}", "--remark-filter '.*'"]
    return " ".join(opts)


def fake_operands(m: int, n: int, k: int):
    """Fake (M,K) A K-major, (N,K) B N-major, (M,N) C row-major and a fake stream: no GPU needed."""
    import cutlass
    from cutlass.cute.runtime import make_fake_stream, make_fake_tensor

    a = make_fake_tensor(cutlass.Float16, (m, k), stride=(k, 1), assumed_align=16)
    b = make_fake_tensor(cutlass.Float16, (n, k), stride=(1, n), assumed_align=16)
    c = make_fake_tensor(cutlass.Float32, (m, n), stride=(n, 1), assumed_align=16)
    return a, b, c, make_fake_stream()


def compile_kernel(kernel, target: str, a, b, c, stream, *, keep: bool = False) -> Compiled:
    """Compile ``kernel`` (a phase instance) for ``target`` on the given (real or fake) operands.

    With ``keep``, the PTX, cubin and ptxas remarks (registers, spills) are kept on the result.
    """
    import cutlass.cute as cute

    target = _arch.target(target)
    key = f"{kernel.arch}:{kernel.phase}"
    with _LOCK, tempfile.TemporaryDirectory(prefix="cute-gemm-") as tmp:
        dump = os.path.join(tmp, "dump") if keep else None
        remarks = os.path.join(tmp, "remarks.yaml") if keep else None
        if dump:
            os.makedirs(dump)  # the DSL writes into it but does not create it
        t0 = time.perf_counter()
        fn = cute.compile(kernel, a, b, c, stream, options=_options(target, dump, remarks))
        out = Compiled(key=key, target=target, fn=fn, kernel=kernel, seconds=time.perf_counter() - t0)
        if keep:
            out.ptx = fn.__ptx__ if isinstance(fn.__ptx__, str) else None
            out.cubin = fn.__cubin__ if isinstance(fn.__cubin__, bytes) else None
            if remarks and os.path.exists(remarks):
                with open(remarks) as f:
                    out.ptxas = f.read()
    return out


def compile_fake(kernel, target: str, m: int, n: int, k: int, *, keep: bool = True) -> Compiled:
    """Compile for inspection: fake tensors of the given shape, nothing launched, no GPU needed."""
    return compile_kernel(kernel, target, *fake_operands(m, n, k), keep=keep)


_REGS = re.compile(r"Used (\d+) registers")
_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_SMEM = re.compile(r"(\d+) bytes smem")


def ptxas_resources(text: str) -> dict:
    """Registers, stack, spills and static smem from ptxas remarks (the largest over the kernels seen)."""
    res = {"registers": None, "stack_bytes": 0, "spill_stores": 0, "spill_loads": 0, "static_smem": 0}
    regs = [int(x) for x in _REGS.findall(text)]
    if regs:
        res["registers"] = max(regs)
    for stack, st, ld in _SPILL.findall(text):
        res["stack_bytes"] = max(res["stack_bytes"], int(stack))
        res["spill_stores"] = max(res["spill_stores"], int(st))
        res["spill_loads"] = max(res["spill_loads"], int(ld))
    smem = [int(x) for x in _SMEM.findall(text)]
    if smem:
        res["static_smem"] = max(smem)
    return res
