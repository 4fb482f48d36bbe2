"""The kernels the phases are measured beside: vendor libraries and other open implementations.

Each peer computes the same problem from the same torch tensors -- the run's layout and dtypes (A [M,K]
and B [K,N] fp16 or bf16, row- or column-major; C [M,N] fp32, fp16 or bf16) -- and is optional at run
time: one that is not installed, cannot take the run's operands (``takes``), fails, or computes a wrong
C is reported with its reason and not timed; it never stops the bench. cuBLAS and cuBLASLt are the
vendor libraries ("% of vendor" is against the better of the two, measured in the same run); they take
every layout and dtype (``torch.mm`` on the same tensors, ``reference.mm_into``).
"""

from __future__ import annotations

import dataclasses
import importlib.util
from typing import Callable

from cute_gemm.errors import one_line
from cute_gemm.measure import reference
from phases.operands import WORKLOG


@dataclasses.dataclass(frozen=True)
class Peer:
    name: str  # as given to --peers
    label: str  # what the table and the plots call it
    detail: str  # how it is called, recorded with every result
    missing: Callable[[], str | None]  # why it cannot run here, or None
    factory: Callable  # factory(a, b, c) -> zero-argument launch returning the C it computed
    takes: Callable = lambda ops: None  # takes(operands) -> why it cannot compute them, or None

    def cannot(self, ops) -> str | None:
        """Why this peer is not run for ``ops`` (not installed, or another layout or dtype), or None."""
        return self.missing() or self.takes(ops)


def _worklog_only(what: str):
    def takes(ops):
        if ops == WORKLOG:
            return None
        return f"{what} takes the worklog's operands only ({WORKLOG.label()}), not {ops.label()}"

    return takes


def _needs(module: str, package: str):
    def missing():
        return None if importlib.util.find_spec(module) else f"{package} is not installed"

    return missing


def _always():
    return None


def _blas(name: str):
    def factory(a, b, c):
        # into the run's NaN-poisoned C, like every other kernel (the check then also sees an element the
        # library left unwritten), rather than a C torch.mm allocates from each CUDA graph's pool
        def launch():
            with reference.blas_library(name):
                return reference.mm_into(a, b, c)

        return launch

    return factory


def _triton(a, b, c):
    from cute_gemm.measure.triton_mm import matmul_into

    return lambda: matmul_into(a, b, c)


def _quack(tuned: bool):
    def factory(a, b, c):
        from quack.gemm_interface import gemm

        # B goes in as the [K,N] row-major tensor it is: quack's gemm takes (K, N) and reads either major
        return lambda: gemm(a, b, out=c, tuned=tuned)

    return factory


_BLAS = "torch.mm on the run's tensors (fp32 C: out_dtype=torch.float32), out=c, fp32 reductions"
PEERS = {
    p.name: p
    for p in (
        Peer("cublas", "cuBLAS", f"{_BLAS}, preferred_blas_library('cublas')", _always, _blas("cublas")),
        Peer("cublaslt", "cuBLASLt", f"{_BLAS}, preferred_blas_library('cublaslt')", _always, _blas("cublaslt")),
        Peer("triton", "Triton", "cute_gemm/measure/triton_mm.py: tl.dot tiles, Triton's autotuner over a few configs",
             _needs("triton", "triton"), _triton, _worklog_only("this project's Triton kernel")),
        Peer("quack", "quack", "quack.gemm_interface.gemm(a, b, out=c, tuned=False): its heuristic config, "
             "B passed as the [K,N] row-major tensor", _needs("quack", "quack-kernels"), _quack(tuned=False),
             _worklog_only("the quack peer (called as measured)")),
        # opt-in: quack's autotuner compiles and times dozens of configs per shape (minutes on a sweep)
        Peer("quack-tuned", "quack (tuned)", "quack.gemm_interface.gemm(a, b, out=c, tuned=True): autotuned, "
             "B passed as the [K,N] row-major tensor", _needs("quack", "quack-kernels"), _quack(tuned=True),
             _worklog_only("the quack peer (called as measured)")),
    )
}
DEFAULT = ("cublas", "cublaslt", "triton", "quack")
VENDOR = ("cublas", "cublaslt")


def parse_peer_list(spec: str) -> list[str]:
    """'cublas,triton' -> ['cublas', 'triton']; 'none' -> []; an unknown name raises ValueError."""
    names = [s.strip().lower() for s in spec.split(",") if s.strip()]
    if names == ["none"]:
        return []
    unknown = [n for n in names if n not in PEERS]
    if unknown:
        raise ValueError(f"unknown peer {unknown[0]!r}: peers are {', '.join(PEERS)} (or 'none')")
    return list(dict.fromkeys(names))


def check_peer(peer: Peer, p, operands=WORKLOG) -> dict:
    """Run ``peer`` once on fresh random inputs in ``operands``' layout and dtypes (NaN-poisoned C) and
    compare it with cuBLASLt and float64 under the phases' criteria; the dict has the CheckResult fields
    that apply to a peer."""
    import torch

    from cute_gemm.measure.check import compare, passes, tolerance
    from cute_gemm.measure.inputs import make_inputs, poisoned_output
    from cute_gemm.runtime.problem import torch_dtype

    gen = torch.Generator(device="cuda")
    gen.manual_seed(torch.seed())
    a, b = make_inputs(p, "cuda", gen, operands)
    try:
        c = peer.factory(a, b, poisoned_output(p, operands=operands))()
        torch.cuda.synchronize()
    except Exception as exc:  # reported as data: the peer is listed with its error and not timed
        return {"passed": False, "error": one_line(exc)}
    tol = tolerance(operands, p.k)
    nums = compare(c, reference.cublaslt(a, b, torch_dtype(operands.c)), reference.float64(a, b), tol=tol)
    passed = passes(nums, tol)
    kernels = launched_kernels(peer.factory(a, b, c)) if passed else None
    return {"passed": passed, "error": None, **nums, "kernels": kernels}


def launched_kernels(launch) -> list[str] | None:
    """The names of the GPU kernels one call of ``launch`` runs (what cuBLAS picked for this shape, e.g.
    ``nvjet_sm90_hss_256x128_64x4_1x2_h_bz_coopA_NNT``: tile, stages, cluster), in launch order; None
    where torch's profiler cannot trace kernels here."""
    import torch

    try:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            launch()
            torch.cuda.synchronize()
        return kernel_names(prof.events())
    except Exception:  # the profiler (CUPTI) is optional: the bench goes on without the names
        return None


def kernel_names(events) -> list[str] | None:
    """Distinct names of the GPU-kernel events among profiler ``events`` (device_type CUDA), in order."""
    names = [e.name for e in events if str(getattr(e, "device_type", "")).endswith("CUDA")]
    return list(dict.fromkeys(names)) or None
