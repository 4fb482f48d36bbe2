"""The runtime's handling of layouts and dtypes without a GPU: the plan key and the fast path carry the
operands (and stay cheap: the Python part of a call is measured here with the compiled function mocked),
a phase that cannot take the operands is refused before anything compiles, ``compile_only`` and the
torch ops (fake implementations, torch.compile fullgraph tracing) know layouts and dtypes, and
``cute_gemm.linear`` refuses what F.linear or the kernels cannot take."""

import dataclasses
import time

import pytest
import torch

import cute_gemm
from cute_gemm import InputError, UnsupportedError
from cute_gemm.runtime import plan, registry
from phases.operands import Operands


class Recorder:
    """A compiled function stand-in: records which plan ran on which tensors."""

    def __init__(self, name):
        self.name, self.calls = name, []

    def __call__(self, a, b, c):
        self.calls.append((a, b, c))


@pytest.fixture
def clean_plans(monkeypatch):
    """Empty plan and fast-path tables for the test (restored after), and CUDA's device context a no-op."""
    import contextlib

    monkeypatch.setattr(plan, "_PLANS", {})
    monkeypatch.setattr(plan, "_FAST", {})
    monkeypatch.setattr(plan, "_FAMILY", {})
    monkeypatch.setattr(plan, "_BIAS_FUSES", {})
    monkeypatch.setattr(torch.cuda, "device", lambda d: contextlib.nullcontext())
    return plan


class Cpu(torch.Tensor):
    """A CPU tensor that says it is on CUDA device 0 (validation and the plan lookup are host logic)."""

    @property
    def is_cuda(self):
        return True

    @property
    def device(self):
        return torch.device("cuda:0")

    def get_device(self):
        return 0


def cuda_like(t):
    return t.as_subclass(Cpu)


@pytest.fixture
def fake_compile(clean_plans, monkeypatch):
    """compile_plan replaced by one that makes a Plan around a Recorder (no DSL compile); device_target
    answers sm_90a. Returns the list of (phase, operands) compiled."""
    compiled = []

    def compile_plan(entry, target, device, config=None, operands=None):
        kern = entry.make(config, operands)
        compiled.append((entry.phase, kern.operands))
        return plan.Plan(entry, kern, target, device, Recorder(f"{entry.phase} {kern.operands.label()}"), 0.0,
                         "compiled", kern.divisibility(), kern.operands,
                         {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[kern.operands.c])

    real_empty = torch.empty

    def empty(*shape, device=None, **kw):  # C allocated "on the GPU": a CPU tensor that says it is
        return cuda_like(real_empty(*shape, **kw))

    monkeypatch.setattr(plan, "compile_plan", compile_plan)
    monkeypatch.setattr(plan, "device_target", lambda device: "sm_90a")
    monkeypatch.setattr(plan, "device_name", lambda dev: "NVIDIA H200")  # no tuned table there: see tmp_cache
    monkeypatch.setattr(torch, "empty", empty)
    return compiled


def _operands_for(layout, dtype=torch.float16, m=64, n=128, k=72):
    a = torch.randn(m, k).to(dtype) if layout[0] == "n" else torch.randn(k, m).to(dtype).t()
    b = torch.randn(k, n).to(dtype) if layout[1] == "n" else torch.randn(n, k).to(dtype).t()
    return cuda_like(a), cuda_like(b)


@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_a_plan_per_layout_and_dtype_then_the_fast_path(layout, fake_compile, monkeypatch):
    a, b = _operands_for(layout, torch.bfloat16)
    c = cute_gemm.gemm(a, b, phase="5", out_dtype=torch.bfloat16)
    ops = Operands.of(layout, "bf16", "bf16")
    assert fake_compile == [("5", ops)] and c.dtype == torch.bfloat16 and tuple(c.shape) == (64, 128)
    (p,) = plan._PLANS.values()
    assert p.operands == ops and len(p.fn.calls) == 1
    # the second call with the same key takes the fast path: no validation, no compile, the same plan
    validate_call = plan.validate_call
    monkeypatch.setattr(plan, "validate_call", lambda *a, **k: pytest.fail("the fast path validated"))
    c2 = cute_gemm.gemm(a, b, phase="5", out_dtype=torch.bfloat16)
    assert c2.dtype == torch.bfloat16 and len(p.fn.calls) == 2 and p.fn.calls[-1][2] is c2
    # a call with out= is a key of its own (C's dtype read from out): checked once, then fast, same plan
    out = cuda_like(torch.empty(64, 128, dtype=torch.bfloat16))
    monkeypatch.setattr(plan, "validate_call", validate_call)
    assert cute_gemm.gemm(a, b, phase="5", out=out) is out
    monkeypatch.setattr(plan, "validate_call", lambda *a, **k: pytest.fail("the fast path validated"))
    assert cute_gemm.gemm(a, b, phase="5", out=out) is out
    assert len(p.fn.calls) == 4 and p.fn.calls[-1][2] is out and len(fake_compile) == 1


def test_dtypes_and_layouts_do_not_share_plans(fake_compile):
    for layout in ("nn", "nt"):
        for dtype in (torch.float16, torch.bfloat16):
            a, b = _operands_for(layout, dtype)
            for out_dtype in (None, torch.float16):
                cute_gemm.gemm(a, b, phase="7", out_dtype=out_dtype)
                cute_gemm.gemm(a, b, phase="7", out_dtype=out_dtype)  # fast path: the same plan
    assert len(fake_compile) == len(set(fake_compile)) == 8
    assert {p.operands.label() for p in plan._PLANS.values()} == {
        f"{lay} {ab}->{c}" for lay in ("nn", "nt") for ab in ("fp16", "bf16") for c in ("fp32", "fp16")}
    assert all(len(p.fn.calls) == 2 for p in plan._PLANS.values())


def test_an_ambiguous_tensor_takes_the_checked_path_every_time(fake_compile):
    """K = 1: A [8,1] and B [1,16] are each either major; only tn is legal. The fast path's cheap key
    (contiguous -> nn) would stand for a plan that cannot take K=1, so such calls stay on the checked path,
    which picks tn, and never register the cheap key for it."""
    a, b = cuda_like(torch.randn(8, 1).half()), cuda_like(torch.randn(1, 16).half())
    for _ in range(2):
        cute_gemm.gemm(a, b, phase="5")
    assert [ops.layout for _, ops in fake_compile] == ["tn"] and not plan._FAST


def test_best_passes_the_operands_to_choose(fake_compile, monkeypatch):
    from cute_gemm.runtime import choose

    asked = []
    real = choose.pick

    def pick(arch, m, n, k, operands=None):
        asked.append((arch, m, n, k, operands))
        return real(arch, m, n, k, operands)

    monkeypatch.setattr(choose, "pick", pick)
    a, b = _operands_for("nt", torch.bfloat16, m=16, n=4096, k=4096)
    cute_gemm.gemm(a, b, phase="best", out_dtype=torch.bfloat16)
    cute_gemm.gemm(a, b, phase="best", out_dtype=torch.bfloat16)  # the fast path: the pick is kept per shape
    ops = Operands.of("nt", "bf16", "bf16")
    assert asked == [("sm90", 16, 4096, 4096, ops)]
    a2, b2 = _operands_for("nt", torch.bfloat16, m=64, n=4096, k=4096)
    cute_gemm.gemm(a2, b2, phase="best", out_dtype=torch.bfloat16)  # another shape: picked again
    assert asked[-1] == ("sm90", 64, 4096, 4096, ops) and len(asked) == 2
    ph, cfg = real("sm90", 16, 4096, 4096, ops)
    p = plan._PLANS[(ph, cfg, None, 0, ops)]
    assert len(p.fn.calls) == 2 + (real("sm90", 64, 4096, 4096, ops) == (ph, cfg))
    with pytest.raises(UnsupportedError, match='phase="best" picks its own config'):
        cute_gemm.gemm(a, b, phase="best", config=p.kernel.cfg)


def test_best_runs_the_gpus_tuned_pick_where_its_table_has_one(fake_compile, monkeypatch, tmp_path):
    """A row of the GPU's tuned table decides that shape (with its operands) only; another shape, other operands,
    another GPU's table or CUTE_GEMM_TUNED=0 leave the model's pick."""
    from cute_gemm.runtime import cache, choose, tuned

    monkeypatch.setenv("CUTE_GEMM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "fingerprint", lambda: "f" * 16)
    monkeypatch.setattr(tuned, "_TABLES", {})
    ops = Operands.of("nt", "bf16", "bf16")
    model = choose.pick("sm90", 16, 4096, 4096, ops)
    assert model[0] == "10"  # the tuned row below is a config the model does not pick
    tuned.store("NVIDIA H200", "sm90", 16, 4096, 4096, ops, "9", {"bm": 64, "bn": 64, "split_k": 2}, us=9.0)
    tuned.store("Other GPU", "sm90", 64, 4096, 4096, ops, "7", {})
    a, b = _operands_for("nt", torch.bfloat16, m=16, n=4096, k=4096)
    cute_gemm.gemm(a, b, phase="best", out_dtype=torch.bfloat16)
    want = dataclasses.replace(registry.get("sm90", "9").default_config(), bm=64, bn=64, split_k=2)
    assert ("9", want, None, 0, ops) in plan._PLANS
    a2, b2 = _operands_for("nt", torch.bfloat16, m=64, n=4096, k=4096)  # tuned on another GPU only: the model
    cute_gemm.gemm(a2, b2, phase="best", out_dtype=torch.bfloat16)
    assert (*choose.pick("sm90", 64, 4096, 4096, ops), None, 0, ops) in plan._PLANS
    assert choose.resolve("sm90", 16, 4096, 4096, Operands.of("nn", "bf16", "bf16"), "NVIDIA H200")[2] == "model"
    monkeypatch.setenv("CUTE_GEMM_TUNED", "0")
    assert choose.resolve("sm90", 16, 4096, 4096, ops, "NVIDIA H200") == (*model, "model")


def test_a_phase_that_cannot_take_the_operands_is_refused_before_compiling(fake_compile, monkeypatch):
    from phases.sm90.phase5_tma_store import Sm90Phase5

    class WorklogOnly(Sm90Phase5):
        general_operands = False

    entry = registry.get("sm90", "5")
    monkeypatch.setattr(plan, "entry_for", lambda phase, target, arch: type(entry)(
        entry.arch, entry.phase, WorklogOnly, entry.config_cls, entry.summary, entry.adds, entry.worklog))
    a, b = _operands_for("nt")
    with pytest.raises(UnsupportedError, match=r"sm90:5 cannot do 64x128x72 with nt fp16->fp32: sm90:5 takes the "
                                               r"worklog's operands only"):
        cute_gemm.gemm(a, b, phase="5")
    assert fake_compile == []
    cute_gemm.gemm(*_operands_for("nn"), phase="5")  # the worklog's operands still go
    assert fake_compile == [("5", Operands())]


@pytest.mark.parametrize("arch", ["sm90", "sm100"])
@pytest.mark.parametrize("phase", ["0", "1"])
def test_phases_0_and_1_take_the_worklog_operands_only(arch, phase, fake_compile):
    """The cp.async phases (whole tiles, copies written for the worklog's layout and types): any other
    operands are refused in one line by the runtime before anything compiles -- gemm(), compile_only and
    the bench's rows alike (plan.refusals)."""
    for ops in (Operands.of("nt", "fp16", "fp32"), Operands.of("nn", "bf16", "fp32"), Operands.of("nn", "fp16", "bf16")):
        why = plan.refusals(registry.get(arch, phase).make(None, ops), 128, 128, 128)
        assert len([w for w in why if "worklog's operands only" in w]) == 1, why
    assert plan.refusals(registry.get(arch, phase).make(None, Operands()), 128, 128, 128) == []
    if arch == "sm90":  # the stand-in GPU is an sm90 one
        a, b = _operands_for("nn", torch.bfloat16, 128, 128, 128)
        with pytest.raises(UnsupportedError, match=rf"sm90:{phase} cannot do 128x128x128 with nn bf16->fp32: "
                                                   rf"sm90:{phase} takes the worklog's operands only"):
            cute_gemm.gemm(a, b, phase=phase)
    assert fake_compile == []


@pytest.mark.parametrize("phase", ["0", "1"])
def test_phases_0_and_1_say_so_themselves(phase):
    kern = registry.get("sm90", phase).make(None, Operands.of("nt", "bf16", "bf16"))
    assert any("worklog's operands only" in w for w in kern.can_implement(128, 128, 128))


def test_bad_inputs_raise_before_anything_compiles(fake_compile):
    a, b = _operands_for("nn")
    cases = [
        ((a.float(), b), {}, InputError, "A must be torch.float16 or torch.bfloat16, got torch.float32"),
        ((a, b.bfloat16()), {}, InputError, "A and B must share one dtype"),
        ((a.to(torch.int8), b.to(torch.int8)), {}, InputError, "got torch.int8"),
        ((a, b), {"out_dtype": torch.float64}, InputError, "out_dtype=torch.float64"),
        ((a, b), {"out": cuda_like(torch.empty(64, 128, dtype=torch.float16)), "out_dtype": torch.bfloat16},
         InputError, "out is torch.float16 but out_dtype=torch.bfloat16"),
        ((a, b), {"out": cuda_like(torch.empty(64, 120))}, InputError, r"out \(C\) must be 64x128"),
        ((a, cuda_like(torch.randn(72, 256).half()[:, ::2])), {}, InputError, "B \\[K,N\\] must be row-major"),
        ((cuda_like(torch.randn(70, 12).half().t()), b[:70] if False else cuda_like(torch.randn(70, 128).half())), {},
         InputError, "M=12 must be a multiple of 8"),
        ((a, b), {"phase": "12"}, InputError, "unknown phase '12'"),
        ((a, b), {"phase": "0"}, UnsupportedError, "sm90:0 cannot do 64x128x72"),
        ((a, b), {"arch": "sm100"}, UnsupportedError, "asked for sm100 kernels"),
    ]
    for args, kw, error, message in cases:
        with pytest.raises(error, match=message):
            cute_gemm.gemm(*args, **kw)
    assert fake_compile == []


def test_host_overhead_of_the_fast_path(fake_compile, capsys):
    """The Python part of a call, the compiled function mocked: a few attribute reads and two dict lookups.
    Measured here on a shared CPU (the H200 numbers are `cute-gemm bench --api`'s); the bound only catches
    a gross regression, e.g. a validation slipping into the fast path."""
    a, b = _operands_for("nt", torch.bfloat16, m=256, n=256, k=256)
    out = cuda_like(torch.empty(256, 256))
    cute_gemm.gemm(a, b, phase="5", out=out)  # the checked path: the key and the plan registered
    ((key, p),) = plan._FAST.items()
    # plain CPU tensors (device -1) for the timing: the stand-in subclass costs microseconds per attribute
    a, b, out = (t.as_subclass(torch.Tensor) for t in (a, b, out))
    p = dataclasses.replace(p, device=-1, fn=lambda a, b, c: None)
    plan._FAST[(*key[:3], -1, *key[4:])] = p

    def per_call_us(fn, n=5000):
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            best = min(best, (time.perf_counter() - t0) / n * 1e6)
        return best

    run = plan.run
    us = per_call_us(lambda: run(a, b, "5", out))
    base = per_call_us(lambda: p.fn(a, b, out))
    with capsys.disabled():
        print(f"\n  fast path, Python part: {us:.2f} us per call (the mocked kernel call alone {base:.2f} us)")
    assert us < 20, us


def test_compile_only_takes_layout_and_dtypes(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTE_GEMM_CACHE_DIR", str(tmp_path))
    p = cute_gemm.compile_only("5", None, "sm90", layout="nt", dtype="bf16", out_dtype=torch.bfloat16)
    assert p.operands == Operands.of("nt", "bf16", "bf16") and p.source == "compiled"
    assert p.divisibility == (1, 8, 8) and p.c_dtype == torch.bfloat16
    names = [f.name for f in tmp_path.rglob("*.o")]
    assert len(names) == 1 and "_nt_bf16_bf16_" in names[0]
    assert cute_gemm.compile_only("5", None, "sm90", "nt", torch.bfloat16, "bf16").source == "disk"


@pytest.mark.parametrize("kw,error,message", [
    ({"layout": "nx"}, InputError, "layout 'nx'"),
    ({"dtype": "fp32"}, InputError, "dtype 'fp32'"),
    ({"out_dtype": "int8"}, InputError, "out_dtype 'int8'"),
    ({"phase": "0", "layout": "nt"}, UnsupportedError, "sm90:0 takes the worklog's operands only"),
    ({"phase": "1", "out_dtype": "bf16"}, UnsupportedError, "sm90:1 takes the worklog's operands only"),
])
def test_compile_only_refuses_bad_operands(kw, error, message, monkeypatch):
    monkeypatch.setenv("CUTE_GEMM_NO_DISK_CACHE", "1")
    monkeypatch.setattr(plan, "compile_plan", lambda *a, **k: pytest.fail("compiled"))
    kw = {"phase": "5", **kw}
    with pytest.raises(error, match=message):
        cute_gemm.compile_only(kw.pop("phase"), None, "sm90", **kw)


def test_torch_ops_fake_implementations_give_shape_and_dtype():
    from cute_gemm.runtime import torch_ops  # noqa: F401

    a = torch.empty(37, 64, device="meta", dtype=torch.bfloat16)
    w = torch.empty(96, 64, device="meta", dtype=torch.bfloat16)
    assert torch.ops.cute_gemm.gemm(a, w.t(), "5").dtype == torch.float32
    c = torch.ops.cute_gemm.gemm(a, w.t(), "5", torch.float16)
    assert c.dtype == torch.float16 and tuple(c.shape) == (37, 96)
    x = torch.empty(2, 37, 64, device="meta", dtype=torch.bfloat16)
    y = torch.ops.cute_gemm.linear(x, w, None, "best", None)
    assert tuple(y.shape) == (2, 37, 96) and y.dtype == torch.bfloat16
    assert torch.ops.cute_gemm.linear(x, w, None, "best", torch.float32).dtype == torch.float32


def test_torch_compile_fullgraph_traces_gemm_and_linear():
    """Dynamo traces a small block using cute_gemm.linear and cute_gemm.gemm into one graph of the custom ops
    (no graph break); the backend here records the graph instead of running it (no GPU)."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return lambda *args: [torch.zeros(2, 37, 64, dtype=torch.bfloat16)]

    def block(x, w_up, b_up, w_down):
        h = torch.nn.functional.gelu(cute_gemm.linear(x, w_up, b_up))
        return cute_gemm.linear(h, w_down) + cute_gemm.gemm(x[0], w_down.t().t()[:, :64].t().t(), phase="5",
                                                            out_dtype="bf16").sum()

    x = torch.randn(2, 37, 64, dtype=torch.bfloat16)
    w_up, b_up = torch.randn(128, 64, dtype=torch.bfloat16), torch.randn(128, dtype=torch.bfloat16)
    w_down = torch.randn(64, 128, dtype=torch.bfloat16)
    torch.compile(block, fullgraph=True, backend=backend)(x, w_up, b_up, w_down)
    (gm,) = graphs
    code = gm.code
    assert code.count("torch.ops.cute_gemm.linear") == 2 and "torch.ops.cute_gemm.gemm(" in code
    assert "torch.bfloat16" in code  # out_dtype="bf16" reached the op as a dtype


def test_linear_refuses_what_f_linear_or_the_kernels_cannot_take():
    x = torch.randn(2, 3, 64).bfloat16()
    w = torch.randn(32, 64).bfloat16()
    cases = [
        ((x, w[:, :32]), "linear takes x \\[..., K\\] and w \\[N, K\\]"),
        ((x, w.half()), "x is torch.bfloat16 and w is torch.float16"),
        ((x.float(), w.float()), "both must be torch.float16 or both torch.bfloat16"),
        ((x, w, torch.randn(31)), "bias must be a tensor of shape \\(32,\\)"),
        ((x, w, torch.randn(32).to(torch.int32)), "bias is torch.int32 but x is torch.bfloat16"),
        ((x, w, torch.randn(32)), "bias is torch.float32 but x is torch.bfloat16: F.linear takes a bias of x's"),
        ((x, w.unsqueeze(0)), "linear takes x"),
        ((x, w), "linear\\(x, w\\): A must be on a CUDA device"),
    ]
    for args, message in cases:
        with pytest.raises(InputError, match=message):
            cute_gemm.linear(*args)


def test_linear_flattens_without_a_copy_and_transposes_w_in_place(fake_compile):
    x = cuda_like(torch.randn(2, 37, 64).bfloat16())
    w = cuda_like(torch.randn(96, 64).bfloat16())
    bias = cuda_like(torch.zeros(96).bfloat16())
    y = cute_gemm.linear(x, w, bias, phase="5")
    (p,) = plan._PLANS.values()
    a, b, c = p.fn.calls[0]
    assert p.operands == Operands.of("nt", "bf16", "bf16")
    assert a.data_ptr() == x.data_ptr() and tuple(a.shape) == (74, 64)  # a view of x
    assert b.data_ptr() == w.data_ptr() and b.stride() == (1, 64)  # w.t(), read in place
    assert tuple(y.shape) == (2, 37, 96) and y.dtype == torch.bfloat16 and y.data_ptr() == c.data_ptr()
    cute_gemm.linear(x, w, phase="5", out_dtype=torch.float32)
    assert {q.operands.c for q in plan._PLANS.values()} == {"bf16", "fp32"}


def test_precompile_fills_the_disk_cache_from_worker_processes(tmp_path, monkeypatch):
    """What the GPU tests run first: many kernels compiled in parallel processes into the disk cache, each
    job's outcome reported (a bad one does not stop the others), a job past the timeout reported as such."""
    from cute_gemm.runtime.gemm import precompile

    monkeypatch.setenv("CUTE_GEMM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CUTE_GEMM_NO_DISK_CACHE", raising=False)
    jobs = [("5", None, "sm90", "nt", "bf16", "bf16"), ("9", None, "sm90", "tn", "fp16", "fp32"),
            ("5", {"tile": 1}, "sm90", "nn", "fp16", "fp32")]
    done = precompile(jobs, workers=2, timeout=600)
    assert [r["job"] for r in done] == jobs and [r["source"] for r in done] == ["compiled", "compiled", None]
    assert done[0]["error"] is None and "'tile' is not a field" in done[2]["error"]
    assert cute_gemm.compile_only("9", None, "sm90", "tn", "fp16", "fp32").source == "disk"
    (late,) = precompile([("7", None, "sm90", "tt", "bf16", "fp16")], workers=1, timeout=0.01)
    assert late["source"] is None and late["error"] == "not done within 0.01 s"
    monkeypatch.setenv("CUTE_GEMM_NO_DISK_CACHE", "1")
    with pytest.raises(UnsupportedError, match="CUTE_GEMM_NO_DISK_CACHE"):
        precompile(jobs)


def test_a_config_as_field_overrides(fake_compile):
    """config= takes what compile_only takes: the phase's dataclass, or a dict / 'FIELD=V' of overrides; an
    unknown field is an InputError before anything compiles."""
    a, b = _operands_for("nt", torch.bfloat16)
    cute_gemm.gemm(a, b, phase="7", config={"bn": 192})
    cute_gemm.gemm(a, b, phase="7", config="bn=192")
    cfg = registry.get("sm90", "7").configured({"bn": 192})
    cute_gemm.gemm(a, b, phase="7", config=cfg)
    assert fake_compile == [("7", Operands.of("nt", "bf16", "fp32"))] and plan._PLANS[
        ("7", cfg, None, 0, Operands.of("nt", "bf16", "fp32"))].kernel.cfg.bn == 192
    with pytest.raises(InputError, match="'tile' is not a field of phase 7's config"):
        cute_gemm.gemm(a, b, phase="7", config={"tile": 3})
