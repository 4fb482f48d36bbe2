"""Correctness: a phase's C against cuBLASLt (the worklog's tolerance) and against a float64 reference.

A check returns data (``CheckResult``), never prints: the CLI, the bench and the tests decide what to say.
"""

from __future__ import annotations

import dataclasses

from cute_gemm.measure import reference
from cute_gemm.measure.inputs import make_inputs, poisoned_output
from cute_gemm.runtime.problem import Problem

ATOL, RTOL = 0.01, 0.001  # the worklog's tolerance against cuBLASLt
# fp16 products are exact in fp32 and the sums are fp32: the relative Frobenius error to float64 lands
# around 1e-7..1e-6; anything near 1e-3 means a wrong element, not rounding.
REL_ERR_LIMIT = 1e-4
# Above this many FLOPs the float64 reference covers a random sample of rows of C (every element is still
# compared with cuBLASLt and checked for NaN): a float64 8192^3 product takes ~16 s even on an H200.
FLOAT64_FULL_FLOPS = 2 * 4096**3
FLOAT64_SAMPLE_ROWS = 512


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

    def summary(self) -> str:
        if self.error:
            return f"{self.key} {self.shape}: ERROR {self.error}"
        verdict = "PASS" if self.passed else "FAIL"
        rep = "" if self.repeat_identical is None else f", repeat {'identical' if self.repeat_identical else 'DIFFERS'}"
        return (
            f"{self.key} {self.shape}: {verdict} (vs cuBLASLt: {self.mismatches} mismatches, max |err| "
            f"{self.max_abs_err:.3g}; vs float64: rel err {self.rel_fro_err:.2e} [cuBLASLt {self.cublaslt_rel_fro_err:.2e}]; "
            f"unwritten {self.unwritten}{rep})"
        )


def compare(c, c_lt, c64, rows=None) -> dict:
    """Numbers that decide pass/fail, from C, cuBLASLt's C and the float64 C (of ``rows`` only, if given)."""
    import torch

    nan = int(torch.isnan(c).sum().item())
    finite = torch.nan_to_num(c, nan=float("inf"))
    bad = ~torch.isclose(finite, c_lt, atol=ATOL, rtol=RTOL)
    diff = (finite - c_lt).abs()
    c_s, lt_s = (c, c_lt) if rows is None else (c[rows], c_lt[rows])
    ref_norm = torch.linalg.vector_norm(c64).item() or 1.0
    rel = torch.linalg.vector_norm(c_s.double() - c64).item() / ref_norm if nan == 0 else float("inf")
    rel_lt = torch.linalg.vector_norm(lt_s.double() - c64).item() / ref_norm
    return {
        "unwritten": nan,
        "mismatches": int(bad.sum().item()),
        "max_abs_err": float(diff.max().item()),
        "rel_fro_err": rel,
        "cublaslt_rel_fro_err": rel_lt,
    }


def check_phase(entry, p: Problem, config=None, repeat: bool = True, seed: int | None = None) -> CheckResult:
    """Fresh random inputs, poisoned C, one launch, compared to cuBLASLt and float64.

    With ``repeat``, a second launch into a re-poisoned C must give a bit-identical result.
    """
    import torch

    from cute_gemm.runtime.plan import launcher

    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed if seed is not None else torch.seed())
    a, b = make_inputs(p, "cuda", gen)
    c = poisoned_output(p)
    try:
        launch = launcher(entry, a, b, c, config)
        launch()
        torch.cuda.synchronize()
    except Exception as exc:  # surfaced as data: the bench reports it and does not time the phase
        return CheckResult(entry.key, str(p), False, -1, -1, float("nan"), float("nan"), float("nan"),
                           error=f"{type(exc).__name__}: {exc}")
    c_lt = reference.cublaslt(a, b)
    rows = None
    if p.flops > FLOAT64_FULL_FLOPS:  # a random sample of rows, the first and the last included
        rows = torch.randperm(p.m, device="cuda", generator=gen)[:FLOAT64_SAMPLE_ROWS]
        rows = torch.cat([rows, torch.tensor([0, p.m - 1], device="cuda")]).unique()
    c64 = reference.float64(a if rows is None else a[rows], b)
    nums = compare(c, c_lt, c64, rows)
    identical = None
    if repeat:
        first = c.clone()
        c.fill_(float("nan"))
        launch()
        torch.cuda.synchronize()
        identical = bool(torch.equal(first, c))
    passed = (
        nums["unwritten"] == 0
        and nums["mismatches"] == 0
        and nums["rel_fro_err"] <= REL_ERR_LIMIT
        and identical is not False
    )
    return CheckResult(entry.key, str(p), passed, repeat_identical=identical,
                       float64_rows=None if rows is None else int(rows.numel()), **nums)
