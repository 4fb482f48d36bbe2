"""Bad input is refused on the host, before anything compiles or launches, with a message that says
what was given and what is needed; good input in any of the four layouts and the dtypes poses the right
``Operands``. None of this needs a GPU."""

import pytest
import torch

from cute_gemm import InputError, UnsupportedError
from cute_gemm.runtime import registry
from cute_gemm.runtime.plan import Plan, entry_for
from cute_gemm.runtime.problem import Problem, validate, validate_call
from phases.operands import Operands


def test_cpu_tensors_are_refused():
    a = torch.randn(128, 64).half()
    b = torch.randn(64, 128).half()
    with pytest.raises(InputError, match="must be on a CUDA device"):
        validate(a, b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int8, torch.float64, torch.float8_e4m3fn])
def test_input_dtypes_other_than_fp16_and_bf16_are_refused_first(dtype):
    a = torch.zeros(128, 64).to(dtype)
    with pytest.raises(InputError, match=rf"A must be torch.float16 or torch.bfloat16, got {dtype}"):
        validate(a, torch.randn(64, 128).half())


def test_mixed_input_dtypes_are_refused():
    with pytest.raises(InputError, match="A is torch.float16 and B is torch.bfloat16: A and B must share one dtype"):
        validate(torch.randn(128, 64).half(), torch.randn(64, 128).bfloat16())


def test_not_2d():
    with pytest.raises(InputError, match="must be 2-D"):
        validate(torch.randn(2, 128, 64).half(), torch.randn(64, 128).half())


class FakeCuda:
    """Stand-in for CUDA tensors on a CPU machine: shape/stride/dtype/pointer checks are pure host logic."""

    _next_ptr = 1 << 20  # each tensor its own bytes unless a test gives the pointer

    def __init__(self, t, ptr=None):
        if ptr is None:
            ptr, FakeCuda._next_ptr = FakeCuda._next_ptr, FakeCuda._next_ptr + (t.numel() * t.element_size() + 255) // 256 * 256
        self._t, self._ptr = t, ptr
        self.shape, self.dtype, self.is_cuda, self.device = t.shape, t.dtype, True, torch.device("cuda:0")

    def numel(self):
        return self._t.numel()

    def element_size(self):
        return self._t.element_size()

    def dim(self):
        return self._t.dim()

    def stride(self, i=None):
        return self._t.stride() if i is None else self._t.stride(i)

    def data_ptr(self):
        return self._ptr

    def get_device(self):
        return 0


@pytest.fixture(autouse=True)
def _fake_tensor_type(monkeypatch):
    monkeypatch.setattr(torch, "Tensor", (torch.Tensor, FakeCuda))


def F(*shape, dtype=torch.float16, ptr=None):
    """A row-major FakeCuda of ``shape``."""
    return FakeCuda(torch.empty(*shape, dtype=dtype), ptr)


def T(rows, cols, dtype=torch.float16):
    """A column-major [rows, cols]: the .t() of a contiguous [cols, rows]."""
    return FakeCuda(torch.empty(cols, rows, dtype=dtype).t())


def test_inner_dimensions():
    with pytest.raises(InputError, match="inner dimensions differ"):
        validate(F(128, 64), F(96, 128))


@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_each_layout_poses_its_operands(layout, dtype):
    m, n, k = 136, 264, 72
    a = F(m, k, dtype=dtype) if layout[0] == "n" else T(m, k, dtype)
    b = F(k, n, dtype=dtype) if layout[1] == "n" else T(k, n, dtype)
    p, ops = validate_call(a, b)
    ab = "fp16" if dtype == torch.float16 else "bf16"
    assert p == Problem(m, n, k) and ops == Operands.of(layout, ab, "fp32")


@pytest.mark.parametrize("out_dtype,c", [(None, "fp32"), (torch.float32, "fp32"), (torch.float16, "fp16"),
                                         (torch.bfloat16, "bf16"), ("bf16", "bf16")])
def test_out_dtype_sets_c(out_dtype, c):
    assert validate_call(F(64, 64), F(64, 64), out_dtype=out_dtype)[1].c == c


def test_out_sets_c_and_must_agree_with_out_dtype():
    assert validate_call(F(64, 32), F(32, 16), F(64, 16, dtype=torch.bfloat16))[1].c == "bf16"
    with pytest.raises(InputError, match="out is torch.float16 but out_dtype=torch.float32"):
        validate_call(F(64, 32), F(32, 16), F(64, 16, dtype=torch.float16), out_dtype=torch.float32)
    with pytest.raises(InputError, match=r"out \(C\) must be torch.float32, torch.float16 or torch.bfloat16, got "
                                         r"torch.int32"):
        validate_call(F(64, 32), F(32, 16), F(64, 16, dtype=torch.int32))
    with pytest.raises(InputError, match=r"out_dtype=torch.float64: C is torch.float32"):
        validate_call(F(64, 32), F(32, 16), out_dtype=torch.float64)
    with pytest.raises(InputError, match=r"out \(C\) must be 64x16, got \(64, 8\)"):
        validate_call(F(64, 32), F(32, 16), F(64, 8))
    with pytest.raises(InputError, match=r"out \(C\) must be row-major"):
        validate_call(F(64, 32), F(32, 16), T(64, 16, torch.float32))


def test_neither_row_nor_column_major_is_refused():
    strided = FakeCuda(torch.empty(128, 128).half()[:, ::2])  # [128, 64], stride (128, 2)
    with pytest.raises(InputError, match=r"A \[M,K\] must be row-major \(stride \(64, 1\)\) or column-major"):
        validate(strided, F(64, 128))
    with pytest.raises(InputError, match=r"B \[K,N\] must be row-major .* or column-major .* nn.Linear weight"):
        validate(F(128, 64), FakeCuda(torch.empty(64, 256).half()[:, ::2]))


def test_misaligned_leading_dimensions_say_which_and_why():
    # A column-major: M is its contiguous extent
    with pytest.raises(InputError, match=r"tn fp16->fp32: M=12 must be a multiple of 8: it is the contiguous extent "
                                         r"of A, column-major"):
        validate(T(12, 64), F(64, 128))
    # B column-major (x @ W.T): N is only C's row now, K is A's and B's
    with pytest.raises(InputError, match=r"N=12 must be a multiple of 8: it is the contiguous extent of C, "
                                         r"row-major \[M,N\], whose rows TMA moves in 16-byte units .*an fp32 C"):
        validate(F(64, 64), T(64, 12))
    with pytest.raises(InputError, match=r"K=60 must be a multiple of 8: .* of A, row-major \[M,K\] .* and of B, "
                                         r"column-major"):
        validate(F(64, 60), T(60, 64))
    # a column-major A and a row-major B leave K free: any K
    assert validate_call(T(64, 61), F(61, 128))[1].layout == "tn"


def test_an_extent_of_one_takes_the_major_that_makes_the_call_legal():
    # M = 1: A [1, K] is both row- and column-major; row-major (the worklog's) is legal
    a1 = FakeCuda(torch.empty(64, 1).half().t())  # stride (1, 1)
    assert validate_call(a1, F(64, 128))[1] == Operands.of("nn")
    # K = 1: only A column-major / B row-major leave K free (tn); both tensors are either major
    a = FakeCuda(torch.empty(1, 8).half().t())  # [8, 1]
    b = F(1, 16)
    p, ops = validate_call(a, b)
    assert p == Problem(8, 16, 1) and ops.layout == "tn"
    # no legal pair: the worklog's is the one the error speaks of
    with pytest.raises(InputError, match="nn fp16->fp32: K=1 must be a multiple of 8"):
        validate(F(3, 1), F(1, 16))


def test_alignment_of_the_pointers():
    with pytest.raises(InputError, match="A's data pointer must be 16-byte aligned"):
        validate(F(128, 64, ptr=258), F(64, 128))
    with pytest.raises(InputError, match=r"out \(C\)'s data pointer must be 16-byte aligned"):
        validate(F(128, 64), F(64, 128), F(128, 128, dtype=torch.float32, ptr=8))


def test_valid_problem_and_output_checks():
    a, b = F(256, 64), F(64, 128)
    assert validate(a, b) == Problem(256, 128, 64)
    with pytest.raises(InputError, match=r"out \(C\) must be 256x128"):
        validate(a, b, F(128, 128, dtype=torch.float32))


def test_empty_problems_are_valid():
    """M, N or K == 0 passes validation: cute_gemm.gemm returns an empty C or zeros without a launch."""
    assert validate(F(0, 64), F(64, 128)) == Problem(0, 128, 64)
    assert validate(F(32, 0), F(0, 128)) == Problem(32, 128, 0)


def test_tile_phases_refuse_ragged_shapes():
    why = registry.get("sm90", "0").make().can_implement(100, 128, 64)
    assert any("M=100 is not a multiple of 128" in w for w in why), why
    assert any("phase 2a or later" in w for w in why), why
    why = registry.get("sm90", "1").make().can_implement(128, 128, 48)
    assert any("K=48 is not a multiple of BK=32" in w for w in why), why


@pytest.mark.parametrize("phase", ["2a", "2b", "3", "4", "5", "6", "7", "8", "9", "10"])
def test_tma_phases_take_any_shape(phase):
    k = registry.get("sm90", phase).make()
    for m, n, kk in [(1, 8, 8), (7, 264, 72), (129, 3000, 520), (1000, 8, 4104), (3000, 3000, 4104)]:
        assert k.can_implement(m, n, kk) == [], (phase, m, n, kk)
    why = k.can_implement(1000, 3001, 520)
    assert any("N=3001 is not a multiple of 8" in w for w in why), why
    why = k.can_implement(1000, 3000, 522)
    assert any("K=522 is not a multiple of 8" in w for w in why), why
    why = k.can_implement(70000, 70000, 8)
    assert any("2^31" in w for w in why), why


@pytest.mark.parametrize("phase", ["2a", "5", "7", "8", "9", "10"])
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_tma_phases_take_every_layout_and_dtype(phase, layout):
    for ab in ("fp16", "bf16"):
        for c in ("fp32", "fp16", "bf16"):
            ops = Operands.of(layout, ab, c)
            m = 8 if layout[0] == "t" else 1
            assert registry.get("sm90", phase).make(None, ops).can_implement(m, 264, 72) == [], (phase, ops)


def test_other_ladder_is_refused():
    with pytest.raises(UnsupportedError, match="asked for sm100 kernels but this GPU is sm_90a"):
        entry_for("5", "sm_90a", "sm100")
    assert entry_for("2", "sm_90a", None).key == "sm90:2b"
    assert entry_for("5", "sm_100a", "sm100").key == "sm100:5"
    with pytest.raises(InputError, match="unknown phase '12'"):
        entry_for("12", "sm_90a", None)
    assert entry_for("11", "sm_90a", None).key == "sm90:11" and entry_for("11", "sm_100a", None).key == "sm100:11"
    with pytest.raises(UnsupportedError, match="no sm100 kernel for phase 8"):
        entry_for("8", "sm_100a", None)


@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_plan_fast_shape_test_matches_can_implement(layout):
    """The per-call shape test of a plan (no Python lists, a few integer ops) agrees with can_implement."""
    for phase in ("0", "1", "3", "5", "7", "10"):
        ops = Operands.of(layout, "bf16", "fp16") if phase not in ("0", "1") else Operands()
        kern = registry.get("sm90", phase).make(None, ops)
        plan = Plan(None, kern, "sm_90a", 0, None, 0.0, "compiled", kern.divisibility(), ops)
        for m, n, k in [(4096, 4096, 4096), (1000, 3000, 520), (128, 128, 32), (129, 256, 64), (0, 256, 64),
                        (256, 0, 64), (256, 256, 0), (256, 260, 64), (256, 256, 36), (70000, 70000, 8), (1, 264, 72),
                        (12, 264, 73)]:
            assert plan.fits(m, n, k) == (min(m, n, k) > 0 and kern.can_implement(m, n, k) == []), (phase, m, n, k)


def test_problem_parse_and_bytes():
    assert Problem.parse("4096") == Problem(4096, 4096, 4096)
    assert Problem.parse("1024x4096x4096") == Problem(1024, 4096, 4096)
    with pytest.raises(ValueError, match="M,N,K"):
        Problem.parse("1,2")
    with pytest.raises(ValueError):
        Problem.parse("a,b,c")
    p = Problem(16, 4096, 8192)
    assert p.bytes_per_set == p.bytes() == 2 * (16 * 8192 + 8192 * 4096) + 4 * 16 * 4096
    assert p.bytes(Operands.of("nt", "bf16", "bf16")) == 2 * (16 * 8192 + 8192 * 4096) + 2 * 16 * 4096


def test_out_overlapping_an_input_is_refused():
    """C = A @ B cannot be written over A or B (the kernel reads them while it stores C): ``gemm(a, b, out=a)``."""
    a, b = F(64, 64), F(64, 64, ptr=1 << 40)  # B far from A
    for name, inp in (("A", a), ("B", b)):
        with pytest.raises(InputError, match=rf"out \(C\) overlaps {name} in memory"):
            validate_call(a, b, FakeCuda(torch.empty(64, 64, dtype=torch.float16), inp._ptr))
    # a C that starts at A's last element overlaps it; one right after A's bytes does not
    last = FakeCuda(torch.empty(64, 64, dtype=torch.float32), a._ptr + 64 * 64 * 2 - 16)
    with pytest.raises(InputError, match="overlaps A"):
        validate_call(a, b, last)
    after = FakeCuda(torch.empty(64, 64, dtype=torch.float32), a._ptr + 64 * 64 * 2)
    assert validate_call(a, b, after)[1].c == "fp32"


@pytest.mark.parametrize("arch", [None, 90, 100.0, ("sm90",)])
def test_compile_only_refuses_an_arch_that_is_not_a_name(arch):
    """Issue 49: compile_only("8", None, None) raised AttributeError ('NoneType' has no attribute 'strip')."""
    from cute_gemm import compile_only

    with pytest.raises(InputError, match=r"^arch .*: give one of sm90, sm100, sm_90a, sm_100a, sm_103a$"):
        compile_only("8", None, arch)


@pytest.mark.parametrize("phase,config,arch,message", [
    ("8", {"bn": 100}, "sm90", "sm90:8 with bn=100 does not compile for sm_90a: bn=100: bn is a multiple of 8"),
    ("7", {"sm_count": 0}, "sm90", "sm90:7 with sm_count=0 does not compile for sm_90a: sm_count=0: a positive"),
    ("8", "bn=-64", "sm_90a", "sm90:8 with bn=-64 does not compile for sm_90a: bn=-64: a positive integer"),
    ("10", {"split_k": 9}, "sm100", "sm100:10 with split_k=9 does not compile for sm_100a: split_k=9: split_k is 1..8"),
])
def test_compile_only_refuses_a_config_before_compiling(phase, config, arch, message, monkeypatch):
    """The phase's rules answer before the compiler (whose AssertionError, empty MLIRError or DSL ValueError it was)."""
    from cute_gemm import compile_only
    from cute_gemm.runtime import plan

    monkeypatch.setattr(plan, "compile_plan", lambda *a, **k: pytest.fail("compiled a config the rules refuse"))
    with pytest.raises(UnsupportedError) as exc:
        compile_only(phase, config, arch)
    assert str(exc.value).startswith(message) and "\n" not in str(exc.value)
