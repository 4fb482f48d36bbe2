"""The check harness for every layout and dtype, on the CPU: the inputs a check makes are the tensors a caller
would pass (majors, dtypes), the poisoned C has the C type, the tolerances per C type accept one rounding of
the output and nothing more, and the vendor libraries' call for each pair of dtypes is what the results
record."""

import pytest
import torch

from cute_gemm.measure import check, reference
from cute_gemm.measure.inputs import make_inputs, poisoned_output, timing_inputs
from cute_gemm.runtime.problem import Problem
from phases.operands import AB_DTYPES, C_DTYPES, LAYOUTS, Operands


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("ab", AB_DTYPES)
def test_inputs_are_in_the_layout_and_dtype(layout, ab):
    ops = Operands.of(layout, ab, "bf16")
    a, b = make_inputs(Problem(24, 40, 16), "cpu", None, ops)
    dt = torch.float16 if ab == "fp16" else torch.bfloat16
    assert a.shape == (24, 16) and b.shape == (16, 40) and a.dtype == b.dtype == dt
    assert a.is_contiguous() == (layout[0] == "n") and a.t().is_contiguous() == (layout[0] == "t")
    assert b.is_contiguous() == (layout[1] == "n") and b.t().is_contiguous() == (layout[1] == "t")
    c = poisoned_output(Problem(24, 40, 16), "cpu", ops)
    assert c.dtype == torch.bfloat16 and c.is_contiguous() and bool(torch.isnan(c).all())
    with pytest.raises(ValueError, match="unknown data kind 'zeros'"):
        timing_inputs(Problem(8, 8, 8), "zeros", 1, ops)


def test_tolerances_per_c_type():
    fp32 = check.tolerance(Operands())
    assert (fp32.atol, fp32.rtol, fp32.rel_err_limit) == (0.01, 0.001, 1e-4)  # the worklog's, unchanged
    fp16 = check.tolerance(Operands.of("nt", "fp16", "fp16"))
    assert fp16.rtol == pytest.approx(0.001 + 2**-10) and fp16.rel_err_limit == pytest.approx(1e-4 + 2**-10)
    bf16 = check.tolerance(Operands.of("nt", "bf16", "bf16"))
    assert bf16.rtol == pytest.approx(0.001 + 2**-7) and bf16.rel_err_limit == pytest.approx(1e-4 + 2**-7)
    # bf16 in, fp16 out: the reference rounds twice (torch.mm in bf16, then .to(fp16))
    assert check.tolerance(Operands.of("nn", "bf16", "fp16")).rtol == pytest.approx(0.001 + 2**-10 + 2**-7)


def test_atol_grows_with_k_past_the_worklogs():
    """The worklog's atol up to its K = 4096; past it x sqrt(K / 4096) (a length-K fp32 sum's rounding); rtol and
    the float64 limit do not move."""
    assert check.tolerance(Operands(), 1).atol == check.tolerance(Operands(), 4096).atol == 0.01
    long = check.tolerance(Operands(), 4 * 4096)
    assert long.atol == pytest.approx(0.02) and long.rtol == 0.001 and long.rel_err_limit == 1e-4
    assert check.tolerance(Operands(), 27648).atol == pytest.approx(0.01 * (27648 / 4096) ** 0.5)


@pytest.mark.parametrize("c_type", C_DTYPES)
def test_one_rounding_of_the_output_passes_and_a_wrong_element_does_not(c_type):
    """C = the exact product rounded once to C's type, against a reference rounded by the other side's
    rules, passes; the same C with one element off by 1% (or left NaN) fails."""
    torch.manual_seed(0)
    ab = "bf16"
    ops = Operands.of("nt", ab, c_type)
    a, b = make_inputs(Problem(64, 96, 512), "cpu", None, ops)
    c64 = a.double() @ b.double()
    ct = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[c_type]
    c = c64.to(ct)  # ours: fp32 accumulate, rounded once
    c_lt = reference.mm_out(a, b, ct) if c_type != "fp32" else (a.float() @ b.float())  # the library's rules
    tol = check.tolerance(ops)
    nums = check.compare(c, c_lt, c64, tol=tol)
    assert check.passes(nums, tol), nums
    wrong = c.clone()
    wrong[3, 5] = wrong[3, 5].float() * 1.01 + 0.5
    assert not check.passes(check.compare(wrong, c_lt, c64, tol=tol), tol)
    wrong[3, 5] = float("nan")
    bad = check.compare(wrong, c_lt, c64, tol=tol)
    assert bad["unwritten"] == 1 and not check.passes(bad, tol)


def test_the_library_call_per_dtype_pair():
    assert reference.describe("fp16", "fp32") == "torch.mm(a, b, out_dtype=torch.float32, out=c)"
    assert reference.describe("bf16", "bf16") == "torch.mm(a, b, out=c)"
    assert "no single library call for bf16 -> fp16" in reference.describe("bf16", "fp16")
    a, b = torch.randn(8, 16).bfloat16(), torch.randn(16, 8).bfloat16()
    for ct in (torch.bfloat16, torch.float16):
        c = torch.empty(8, 8, dtype=ct)
        assert reference.mm_into(a, b, c).data_ptr() == c.data_ptr()  # into the run's C
        torch.testing.assert_close(c.float(), (a.float() @ b.float()).to(ct).float(), atol=0.02, rtol=0.02)
