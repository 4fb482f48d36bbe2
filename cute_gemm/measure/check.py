"""Correctness: a phase's C against cuBLASLt (the same dtypes and layout) and against a float64 reference.

A check returns data (``CheckResult``), never prints: the CLI, the bench and the tests decide what to say.

Tolerances (``tolerance(operands)``):
- fp32 C, the worklog's: elementwise against cuBLASLt ``|C - C_lt| <= atol + rtol |C_lt|`` with atol 0.01,
  rtol 0.001 (the worklog's, for its K = 4096; past that atol grows as sqrt(K / 4096), as the rounding of a
  length-K fp32 sum does: at K = 27648 cuBLAS and cuBLASLt themselves differ by 0.018-0.024 on randn data, and
  an element near zero has only atol to stand on -- a fixed 0.01 failed correct kernels, cuBLAS included, at
  random there, H200 2026-12-03); against float64 the relative Frobenius error ``||C - C64|| / ||C64|| <= 1e-4``. 16-bit
  products are exact in fp32 and the sums are fp32, so the error lands around 1e-7..1e-6 (measured on
  the H200 for every layout and dtype); anything near 1e-3 means a wrong element, not rounding.
- fp16 or bf16 C: the same plus what rounding the output once can move: rtol grows by one unit in the
  last place of C's type relative to the value (2^-10 for fp16, 2^-7 for bf16: our C and cuBLASLt's may
  round a near-tie apart), and by one of the inputs' type when the reference itself rounds twice (bf16 in,
  fp16 out: ``torch.mm`` in bf16, then ``.to``); the float64 limit grows by twice the unit roundoff u of
  C's type (2^-11 fp16, 2^-8 bf16): rounding every element once gives a relative Frobenius error of at
  most u, about u/sqrt(3) on random data.
"""

from __future__ import annotations

import dataclasses

from cute_gemm.measure import reference
from cute_gemm.measure.inputs import make_inputs, poisoned_output
from cute_gemm.runtime.problem import Problem, torch_dtype, validate_call
from phases.operands import WORKLOG, Operands

ATOL, RTOL = 0.01, 0.001  # the worklog's tolerance against cuBLASLt (fp32 C)
ATOL_K = 4096  # the worklog's K, where ATOL holds; past it atol x sqrt(K / ATOL_K)
REL_ERR_LIMIT = 1e-4  # against float64, fp32 C
ULP = {"fp32": 0.0, "fp16": 2.0**-10, "bf16": 2.0**-7}  # one unit in the last place, relative (upper bound)
UNIT_ROUNDOFF = {"fp32": 0.0, "fp16": 2.0**-11, "bf16": 2.0**-8}  # of the output rounding (fp32: in the 1e-4)
# Above this many FLOPs the float64 reference covers a random sample of rows of C (every element is still
# compared with cuBLASLt and checked for NaN): a float64 8192^3 product takes ~16 s even on an H200.
FLOAT64_FULL_FLOPS = 2 * 4096**3
FLOAT64_SAMPLE_ROWS = 512


@dataclasses.dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float
    rel_err_limit: float

    def describe(self) -> str:
        return (f"vs cuBLASLt atol={self.atol:g} rtol={self.rtol:.3g}, vs float64 rel Frobenius <= "
                f"{self.rel_err_limit:.3g}")


def tolerance(operands: Operands = WORKLOG, k: int | None = None) -> Tolerance:
    """The check's tolerances for a C type (and the reference's own rounding) at reduction length ``k`` (None: the
    worklog's K); see the module's doc."""
    c, ab = operands.c, operands.ab
    rtol = RTOL + ULP[c] + (ULP[ab] if c not in ("fp32", ab) else 0.0)
    atol = ATOL * max(1.0, (k / ATOL_K) ** 0.5) if k else ATOL
    return Tolerance(atol, rtol, REL_ERR_LIMIT + 2 * UNIT_ROUNDOFF[c])


@dataclasses.dataclass
class CheckResult:
    key: str  # "sm90:3"
    shape: str  # "4096x4096x4096"
    passed: bool
    unwritten: int  # NaN elements left in C (the output is poisoned before the launch)
    mismatches: int  # elements outside atol + rtol*|ref| against cuBLASLt
    max_abs_err: float  # against cuBLASLt
    rel_fro_err: float  # ||C - C64|| / ||C64||
    cublaslt_rel_fro_err: float  # the same for cuBLASLt itself, for scale
    repeat_identical: bool | None = None  # a second launch on the same inputs gave bit-identical C
    error: str | None = None  # set when the phase could not run at all
    float64_rows: int | None = None  # rows the float64 comparison covered (None: all of them)
    operands: str = WORKLOG.label()  # layout and dtypes the kernel ran with: "nt bf16->bf16"

    def summary(self) -> str:
        ops = "" if self.operands == WORKLOG.label() else f" [{self.operands}]"
        if self.error:
            return f"{self.key} {self.shape}{ops}: ERROR {self.error}"
        verdict = "PASS" if self.passed else "FAIL"
        rep = "" if self.repeat_identical is None else f", repeat {'identical' if self.repeat_identical else 'DIFFERS'}"
        return (
            f"{self.key} {self.shape}{ops}: {verdict} (vs cuBLASLt: {self.mismatches} mismatches, max |err| "
            f"{self.max_abs_err:.3g}; vs float64: rel err {self.rel_fro_err:.2e} [cuBLASLt {self.cublaslt_rel_fro_err:.2e}]; "
            f"unwritten {self.unwritten}{rep})"
        )


def compare(c, c_lt, c64, rows=None, tol: Tolerance | None = None) -> dict:
    """Numbers that decide pass/fail, from C, cuBLASLt's C and the float64 C (of ``rows`` only, if given)."""
    import torch

    tol = tol or tolerance()
    c, c_lt = c.float(), c_lt.float()
    nan = int(torch.isnan(c).sum().item())
    finite = torch.nan_to_num(c, nan=float("inf"))
    bad = ~torch.isclose(finite, c_lt, atol=tol.atol, rtol=tol.rtol)
    diff = (finite - c_lt).abs()
    c_s, lt_s = (c, c_lt) if rows is None else (c[rows], c_lt[rows])
    ref_norm = torch.linalg.vector_norm(c64).item() or 1.0
    rel = torch.linalg.vector_norm(c_s.double() - c64).item() / ref_norm if nan == 0 else float("inf")
    rel_lt = torch.linalg.vector_norm(lt_s.double() - c64).item() / ref_norm
    return {
        "unwritten": nan,
        "mismatches": int(bad.sum().item()),
        "max_abs_err": float(diff.max().item()) if diff.numel() else 0.0,
        "rel_fro_err": rel,
        "cublaslt_rel_fro_err": rel_lt,
    }


def passes(nums: dict, tol: Tolerance) -> bool:
    """Nothing unwritten, nothing outside the elementwise tolerance, the float64 error within its limit."""
    return nums["unwritten"] == 0 and nums["mismatches"] == 0 and nums["rel_fro_err"] <= tol.rel_err_limit


def check_phase(entry, p: Problem, config=None, repeat: bool = True, seed: int | None = None,
                operands: Operands = WORKLOG) -> CheckResult:
    """Fresh random inputs in ``operands``' layout and dtypes, poisoned C of its C type, one launch,
    compared to cuBLASLt on the same tensors and to float64.

    With ``repeat``, a second launch into a re-poisoned C must give a bit-identical result.
    """
    import torch

    from cute_gemm.runtime.plan import launcher

    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed if seed is not None else torch.seed())
    a, b = make_inputs(p, "cuda", gen, operands)
    c = poisoned_output(p, operands=operands)
    ran = operands.label()
    try:
        ran = validate_call(a, b, c)[1].label()  # what the tensors pose (an extent of 1 is either major)
        launch = launcher(entry, a, b, c, config)
        launch()
        torch.cuda.synchronize()
    except Exception as exc:  # surfaced as data: the bench reports it and does not time the phase
        return CheckResult(entry.key, str(p), False, -1, -1, float("nan"), float("nan"), float("nan"),
                           error=f"{type(exc).__name__}: {exc}", operands=ran)
    c_lt = reference.cublaslt(a, b, torch_dtype(operands.c))
    rows = None
    if p.flops > FLOAT64_FULL_FLOPS:  # a random sample of rows, the first and the last included
        rows = torch.randperm(p.m, device="cuda", generator=gen)[:FLOAT64_SAMPLE_ROWS]
        rows = torch.cat([rows, torch.tensor([0, p.m - 1], device="cuda")]).unique()
    c64 = reference.float64(a if rows is None else a[rows], b)
    tol = tolerance(operands, p.k)
    nums = compare(c, c_lt, c64, rows, tol)
    identical = None
    if repeat:
        first = c.clone()
        c.fill_(float("nan"))
        launch()
        torch.cuda.synchronize()
        identical = bool(torch.equal(first, c))
    passed = passes(nums, tol) and identical is not False
    return CheckResult(entry.key, str(p), passed, repeat_identical=identical,
                       float64_rows=None if rows is None else int(rows.numel()), operands=ran, **nums)
