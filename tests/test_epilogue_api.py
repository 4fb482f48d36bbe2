"""The fused epilogue's API without a GPU: ``cute_gemm.gemm(a, b, bias=, activation=, residual=)``,
``cute_gemm.linear(..., activation=)``, ``phase="best"`` with an epilogue and the torch ops.

The plans are mocked (no compile, no GPU): CPU tensors that say they are on CUDA device 0 (tests/
test_operands_runtime.py's ``cuda_like``), and a compiled function that computes what phase 11's kernel computes
-- act(A @ B + bias) + residual in float64 from the plan's config fields, rounded once to C's type -- and records
its arguments. So what is tested is the host side: every refusal comes as one clear error before anything
compiles, the kernel is handed the bias and the residual in the order the compile face takes them
(``compile.epilogue_inputs``), "best" runs phase 11 with the tile the model picks for phase 10 (and plain calls
never run phase 11), K == 0 is computed on the host, ``linear``'s activation is fused where nothing is recorded
and torch's where autograd records it, and the ops' fake implementations give shapes and dtypes while
``torch.compile(fullgraph=True)`` traces them. The kernels' own numbers are tests/test_gpu_epilogue.py's.
"""

import dataclasses

import pytest
import torch
import torch.nn.functional as F

import cute_gemm
from cute_gemm import InputError, UnsupportedError
from cute_gemm.runtime import choose, plan, registry, torch_ops  # noqa: F401  (torch_ops registers the ops)
from phases.operands import Operands
from test_operands_runtime import _operands_for, clean_plans, cuda_like  # noqa: F401  (fixtures)

ACTS = {"none": lambda y: y, "relu": F.relu, "gelu": lambda y: F.gelu(y, approximate="tanh"), "silu": F.silu}


class Kernel:
    """A compiled phase's stand-in: C = act(A @ B + bias) + residual in float64 by the plan's config (the fields
    decide which tensors it takes after C, as ``compile.face_for`` does; with ``gated`` C [M, N/2] = act(gate) * up
    of the column pairs), rounded once into C; records its calls."""

    def __init__(self, cfg):
        self.cfg, self.calls = cfg, []

    def __call__(self, a, b, c, *extra):
        names = [n for n in ("bias", "residual") if getattr(self.cfg, n, False)]
        assert len(extra) == len(names), f"the kernel takes {names} after C, got {len(extra)} tensors"
        self.calls.append((a, b, c, *extra))
        got = dict(zip(names, extra))
        y = a.double() @ b.double()
        if "bias" in got:
            y = y + got["bias"].double()
        act = ACTS[getattr(self.cfg, "activation", "none")]
        y = act(y[:, 0::2]) * y[:, 1::2] if getattr(self.cfg, "gated", False) else act(y)
        assert tuple(c.shape) == tuple(y.shape), f"C is {tuple(c.shape)}, the kernel writes {tuple(y.shape)}"
        if "residual" in got:
            y = y + got["residual"].double()
        c.copy_(y.to(c.dtype))


@pytest.fixture
def compiled(clean_plans, monkeypatch):
    """compile_plan replaced by one that makes a Plan around a ``Kernel`` (no DSL); device_target answers sm_90a
    (``arch`` below switches it). Returns the list of (phase, config) compiled."""
    out = []

    def compile_plan(entry, target, device, config=None, operands=None):
        kern = entry.make(config, operands)
        out.append((entry.phase, kern.cfg))
        return plan.Plan(entry, kern, target, device, Kernel(kern.cfg), 0.0, "compiled", kern.divisibility(),
                         kern.operands, {"fp32": torch.float32, "fp16": torch.float16,
                                         "bf16": torch.bfloat16}[kern.operands.c])

    real_empty = torch.empty

    def empty(*shape, device=None, **kw):  # C allocated "on the GPU": a CPU tensor that says it is
        return cuda_like(real_empty(*shape, **kw))

    monkeypatch.setattr(plan, "compile_plan", compile_plan)
    monkeypatch.setattr(plan, "device_target", lambda device: "sm_90a")
    monkeypatch.setattr(plan, "device_name", lambda dev: None)  # no tuned table: the model picks
    monkeypatch.setattr(torch, "empty", empty)
    return out


def _t(*shape, dtype=torch.float32, seed=0):
    return cuda_like(torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype))


def _want(a, b, bias=None, act="none", residual=None, dtype=torch.float32):
    y = a.double() @ b.double()
    y = ACTS[act](y + (bias.double() if bias is not None else 0))
    return (y + (residual.double() if residual is not None else 0)).to(dtype)


def _plans():
    return list(plan._PLANS.values())


# ---- refusals: one clear error each, before anything compiles ----

def test_a_bad_activation_is_refused_with_the_names(compiled):
    a, b = _operands_for("nn")
    for bad in ("tanh", "GELU", 3, "gelu_erf"):
        with pytest.raises(InputError, match=r"activation=.*one of None or 'none'.*'relu', 'gelu'.*'silu'"):
            cute_gemm.gemm(a, b, phase="11", activation=bad)
    with pytest.raises(InputError, match="activation='tanh'"):
        cute_gemm.linear(cuda_like(torch.randn(4, 64).half()), cuda_like(torch.randn(32, 64).half()),
                         activation="tanh")
    assert compiled == []


@pytest.mark.parametrize("phase", ["5", "9", "10", "2a"])
def test_another_phase_with_an_epilogue_names_phase_11(phase, compiled):
    a, b = _operands_for("nt")
    bias = _t(128, dtype=torch.float16)
    for kw in ({"bias": bias}, {"activation": "relu"}, {"residual": _t(64, 128)}):
        with pytest.raises(UnsupportedError, match=rf"sm90:{phase} has no fused epilogue .*phase 11 has it"):
            cute_gemm.gemm(a, b, phase=phase, **kw)
    assert compiled == []


def test_accumulate_with_an_epilogue_is_refused(compiled):
    a, b = _operands_for("nn")
    out = _t(64, 128)
    for phase in ("6", "11", "best"):
        with pytest.raises(UnsupportedError, match="accumulate=True .* and a fused epilogue .* do not go together"):
            cute_gemm.gemm(a, b, phase=phase, out=out, accumulate=True, activation="gelu")
    assert compiled == []


def test_bad_bias_and_residual_tensors_are_refused(compiled):
    a, b = _operands_for("nn", m=64, n=128, k=72)  # fp16 A and B, fp32 C by default
    bias, res = _t(128, dtype=torch.float16), _t(64, 128)
    wide = _t(256, dtype=torch.float16)
    big = _t(64 * 128 + 8)
    out = cuda_like(torch.empty(64, 128))
    cases = [
        ({"bias": _t(64, dtype=torch.float16)}, r"bias must be 1-D \[N\] = \(128,\), got shape \(64,\)"),
        ({"bias": _t(1, 128, dtype=torch.float16)}, r"bias must be 1-D \[N\]"),
        ({"bias": _t(128)}, r"bias is torch.float32 but A is torch.float16: the bias takes A's dtype"),
        ({"bias": torch.randn(128).half()}, r"bias is on cpu, A on cuda:0"),
        ({"bias": wide[::2]}, r"bias must be contiguous \(stride \(1,\)\), got stride \(2,\)"),
        ({"bias": wide[1:129]}, r"bias's data pointer must be 16-byte aligned"),
        ({"bias": [0.0] * 128}, r"bias must be a torch.Tensor, got list"),
        ({"residual": _t(64, 120)}, r"residual must be \[M, N\] = \(64, 128\) as C is, got shape \(64, 120\)"),
        ({"residual": _t(64, 128, dtype=torch.bfloat16)}, r"residual is torch.bfloat16 but C is torch.float32"),
        ({"residual": _t(128, 64).t()}, r"residual must be row-major contiguous \[M,N\] \(stride \(128, 1\)\)"),
        ({"residual": big[1:].view(-1)[:64 * 128].view(64, 128)}, r"residual's data pointer must be 16-byte"),
        ({"residual": torch.randn(64, 128)}, r"residual is on cpu, A on cuda:0"),
        ({"residual": res, "out_dtype": torch.bfloat16}, r"residual is torch.float32 but C is torch.bfloat16"),
    ]
    for kw, message in cases:
        with pytest.raises(InputError, match=message):
            cute_gemm.gemm(a, b, phase="11", **kw)
        with pytest.raises(InputError, match=message):  # the same from "best", before any pick
            cute_gemm.gemm(a, b, phase="best", **kw)
    # overlaps: out and the bias; the residual in part over out, over A
    flat = cuda_like(torch.zeros(64 * 128 + 128))
    with pytest.raises(InputError, match="out \\(C\\) overlaps bias"):
        cute_gemm.gemm(a, b, phase="11", out=flat[:64 * 128].view(64, 128), bias=flat.view(torch.float16)[:128])
    shifted = cuda_like(torch.zeros(65 * 128))
    with pytest.raises(InputError, match="residual overlaps out \\(C\\) in part: give out itself"):
        cute_gemm.gemm(a, b, phase="11", out=shifted[:64 * 128].view(64, 128),
                       residual=shifted[128:].view(64, 128))
    half = cuda_like(torch.zeros(64 * 72 * 2, dtype=torch.float16))
    a2 = half[:64 * 72].view(64, 72)
    with pytest.raises(InputError, match="residual overlaps A in memory"):
        cute_gemm.gemm(a2, b, phase="11", out_dtype=torch.float16, residual=half[:64 * 128].view(64, 128))
    # the epilogue's fields as a config of a plain call: the tensors go as arguments
    with pytest.raises(InputError, match="config reads a bias or a residual .*gemm\\(..., bias=, residual=\\)"):
        cute_gemm.gemm(a, b, phase="11", config={"bias": True}, out=out)
    gated = dataclasses.replace(registry.get("sm90", "11").default_config(), gated=True, activation="silu")
    with pytest.raises(InputError, match=r"config has gated=True: C is then \[M, N/2\].*gemm\(..., gated=True\)"):
        cute_gemm.gemm(a, b, phase="11", config=gated)  # a plain call with the gated config: the call must say so
    with pytest.raises(UnsupportedError, match='phase="best" picks its own config; pass phase="11"'):
        cute_gemm.gemm(a, b, phase="best", config={"bn": 32}, bias=bias)
    assert compiled == []


# ---- the call: a plan of its own, the tensors in the face's order, the fast path ----

@pytest.mark.parametrize("bias_on,act,res_on", [(True, "none", False), (False, "gelu", False), (False, "none", True),
                                                 (True, "silu", True), (True, "relu", False)])
def test_the_kernel_gets_bias_then_residual_after_c(bias_on, act, res_on, compiled, monkeypatch):
    a, b = _operands_for("nt", torch.bfloat16, m=40, n=128, k=72)
    bias = _t(128, dtype=torch.bfloat16, seed=1) if bias_on else None
    res = _t(40, 128, dtype=torch.bfloat16, seed=2) if res_on else None
    c = cute_gemm.gemm(a, b, phase="11", out_dtype=torch.bfloat16, bias=bias, activation=act, residual=res)
    ((phase, cfg),) = compiled
    assert phase == "11" and (cfg.bias, cfg.activation, cfg.residual) == (bias_on, act, res_on)
    (p,) = _plans()
    assert p.fn.calls[0] == (a, b, c, *[t for t in (bias, res) if t is not None])
    torch.testing.assert_close(c, _want(a, b, bias, act, res, torch.bfloat16), atol=0, rtol=0)
    # the same call again: the fast path (no validation), the same plan
    monkeypatch.setattr(plan, "validate_call", lambda *x, **k: pytest.fail("the fast path validated"))
    c2 = cute_gemm.gemm(a, b, phase="11", out_dtype=torch.bfloat16, bias=bias, activation=act, residual=res)
    assert len(p.fn.calls) == 2 and p.fn.calls[1][2] is c2 and len(compiled) == 1


def test_epilogue_keys_do_not_share_plans_with_plain_calls(compiled):
    a, b = _operands_for("nn")
    bias = _t(128, dtype=torch.float16)
    cute_gemm.gemm(a, b, phase="11")  # phase 11 without an epilogue: its default config, a plain call
    cute_gemm.gemm(a, b, phase="11", bias=bias)
    cute_gemm.gemm(a, b, phase="11", bias=bias, activation="gelu")
    cute_gemm.gemm(a, b, phase="11", activation="none", bias=bias)  # 'none' is no activation: the bias plan again
    assert [(c.bias, c.activation) for _, c in compiled] == [(False, "none"), (True, "none"), (True, "gelu")]
    plain, with_bias, with_gelu = _plans()
    assert len(plain.fn.calls) == 1 and len(with_bias.fn.calls) == 2 and len(with_gelu.fn.calls) == 1
    assert {key[0] for key in plan._FAST} == {"11", ("11", (True, "none", False, False)),
                                              ("11", (True, "gelu", False, False))}


def test_residual_may_be_out_itself(compiled):
    a, b = _operands_for("nn")
    out = _t(64, 128, seed=3)
    before = out.clone()
    assert cute_gemm.gemm(a, b, phase="11", out=out, residual=out, activation="relu") is out
    (p,) = _plans()
    assert p.fn.calls[0][2] is out and p.fn.calls[0][3] is out
    torch.testing.assert_close(out, _want(a, b, None, "relu", before), atol=0, rtol=0)
    again = out.view(64, 128)  # another view of the same memory is out too
    cute_gemm.gemm(a, b, phase="11", out=out, residual=again, activation="relu")
    assert len(p.fn.calls) == 2


def test_a_refused_argument_on_the_fast_path_is_said_by_the_checked_path(compiled):
    a, b = _operands_for("nn")
    bias = _t(128, dtype=torch.float16)
    cute_gemm.gemm(a, b, phase="11", bias=bias)
    (p,) = _plans()

    def refuse(*args):
        raise RuntimeError("the entry refused an argument")

    p.fn = refuse
    with pytest.raises(InputError, match="bias is torch.float32 but A is torch.float16"):  # checked first
        cute_gemm.gemm(a, b, phase="11", bias=_t(128))
    with pytest.raises(InputError, match="sm90:11: the entry refused an argument"):
        cute_gemm.gemm(a, b, phase="11", bias=bias)


def test_empty_problems_launch_nothing_and_k_zero_is_the_epilogue_of_zero(compiled):
    a, b = cuda_like(torch.empty(40, 0).bfloat16()), cuda_like(torch.empty(0, 128).bfloat16())
    bias, res = _t(128, dtype=torch.bfloat16, seed=4), _t(40, 128, seed=5)
    for phase in ("11", "best"):
        for act in ("none", "relu", "gelu", "silu"):
            c = cute_gemm.gemm(a, b, phase=phase, bias=bias, activation=act, residual=res)
            want = ACTS[act](bias.float().expand(40, 128)) + res
            assert c.dtype == torch.float32 and torch.allclose(c, want, atol=1e-6, rtol=1e-6)
        out = _t(40, 128, seed=6)
        assert cute_gemm.gemm(a, b, phase=phase, out=out, residual=out, activation="silu") is out
        torch.testing.assert_close(out, _t(40, 128, seed=6))  # act(0) + out = out
    m0 = cute_gemm.gemm(cuda_like(torch.empty(0, 64).half()), cuda_like(torch.empty(64, 128).half()),
                        phase="best", bias=_t(128, dtype=torch.float16), activation="gelu")
    assert tuple(m0.shape) == (0, 128)
    assert compiled == []  # nothing compiled, nothing launched


def test_plain_calls_never_touch_the_epilogue_path(compiled, monkeypatch):
    monkeypatch.setattr(plan, "run_epilogue", lambda *x, **k: pytest.fail("the epilogue path ran"))
    a, b = _operands_for("nt", torch.bfloat16, m=16, n=4096, k=4096)
    cute_gemm.gemm(a, b, phase="best")
    cute_gemm.gemm(a, b, phase="best", bias=None, activation=None, residual=None)
    cute_gemm.gemm(a, b, phase="5", activation="none")
    assert [ph for ph, _ in compiled] == ["10", "5"]


# ---- best: phase 11 with phase 10's pick ----

@pytest.mark.parametrize("shape", [(16, 4096, 4096), (100, 4096, 4096), (64, 8192, 1024), (256, 4096, 4096)])
def test_best_runs_phase_11_with_the_tile_phase_10_would_run(shape, compiled):
    m, n, k = shape
    ops = Operands.of("nt", "bf16", "bf16")
    phase10, cfg10 = choose.pick("sm90", m, n, k, ops)
    assert phase10 == "10"  # the plain pick at these decode shapes
    cfg10 = cfg10 or registry.get("sm90", "10").default_config()
    a, b = _operands_for("nt", torch.bfloat16, m=m, n=n, k=k)
    bias = _t(n, dtype=torch.bfloat16)
    cute_gemm.gemm(a, b, phase="best", out_dtype=torch.bfloat16, bias=bias, activation="gelu")
    ((phase, cfg),) = compiled
    assert phase == "11" and (cfg.bias, cfg.activation, cfg.residual) == (True, "gelu", False)
    assert {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg10)} == dataclasses.asdict(cfg10)
    cute_gemm.gemm(a, b, phase="best", out_dtype=torch.bfloat16)  # the same shape plainly: phase 10's plan
    assert [ph for ph, _ in compiled] == ["11", "10"]


def test_best_past_decode_takes_the_persistent_phases_epilogue():
    """Past 512 tokens the plain pick is a persistent phase: the epilogue's pick is the model's cheapest row whose
    phase takes the epilogue (sm90 6 or 8, sm100 6: the same fields) -- never phase 7's stream-K, which refuses it --
    with the fields set and the rest of that row's config kept, on both ladders (sm90's phase 8 with its slabs
    spread: ``choose.spread_slabs``)."""
    ops = Operands.of("nn", "fp16", "fp32")
    for arch in ("sm90", "sm100"):
        for m, n, k in [(1000, 3000, 520), (4096, 4096, 4096), (2048, 4096, 4096)]:
            assert choose.pick(arch, m, n, k, ops)[0] != "10"
            phase, cfg = choose.pick_epilogue(arch, m, n, k, ops, True, "silu", True)
            assert phase in choose.EPILOGUE_PERSISTENT[arch], (arch, m, n, k, phase)
            assert cfg.bias and cfg.residual and cfg.activation == "silu" and not cfg.gated
            entry = registry.get(arch, phase)
            assert not entry.make(cfg, ops).can_implement(m, n, k) and not entry.config_problems(cfg)
            row = next(r for r in choose.explain(arch, m, n, k, ops) if r["phase"] in choose.EPILOGUE_PERSISTENT[arch])
            want = dataclasses.replace(row["config"], bias=True, activation="silu", residual=True)
            if (arch, phase) == ("sm90", "8"):
                want = choose.spread_slabs(want)
            assert (row["phase"], want) == (phase, cfg)


def test_the_persistent_phases_take_the_epilogue(compiled):
    """sm90 phases 6, 7 (stream-K: a split tile's halves summed first) and 8 run an epilogue call in their own
    config (the gated pairs too: ``tests/test_gated_api.py``)."""
    a, b = _operands_for("nt")
    for phase in ("6", "7", "8"):
        cute_gemm.gemm(a, b, phase=phase, activation="relu")
    assert [(ph, cfg.activation) for ph, cfg in compiled] == [("6", "relu"), ("7", "relu"), ("8", "relu")]


def test_plain_best_never_picks_phase_11():
    import random

    rnd = random.Random(47)
    for arch in ("sm90", "sm100"):
        for _ in range(60):
            m, n, k = rnd.choice([1, 7, 16, 100, 1000, 4096]), 8 * rnd.randint(1, 2048), 8 * rnd.randint(1, 1024)
            ops = Operands.of(rnd.choice(["nn", "nt", "tn", "tt"]), "bf16", rnd.choice(["fp32", "bf16"]))
            if ops.a_major == "m" and m % 8:
                m = 8
            assert all(r["phase"] != "11" for r in choose.explain(arch, m, n, k, ops)), (arch, m, n, k)
            assert choose.pick(arch, m, n, k, ops)[0] != "11"


def test_sm100_best_runs_sm100_phase_11(compiled, monkeypatch):
    monkeypatch.setattr(plan, "device_target", lambda device: "sm_100a")
    a, b = _operands_for("nt", torch.bfloat16, m=16, n=4096, k=4096)
    cute_gemm.gemm(a, b, phase="best", out_dtype=torch.bfloat16, bias=_t(4096, dtype=torch.bfloat16))
    ((phase, cfg),) = compiled
    _, cfg10 = choose.pick("sm100", 16, 4096, 4096, Operands.of("nt", "bf16", "bf16"))
    assert phase == "11" and cfg.bias and type(cfg).__name__ == "Sm100Phase11Config"
    assert (cfg.bn, cfg.stages, cfg.split_k) == (cfg10.bn, cfg10.stages, cfg10.split_k)


def test_a_tuned_pick_that_is_not_phase_10_falls_back_to_the_model(monkeypatch, tmp_path):
    from cute_gemm.runtime import cache, tuned

    monkeypatch.setenv("CUTE_GEMM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "fingerprint", lambda: "f" * 16)
    monkeypatch.setattr(tuned, "_TABLES", {})
    ops = Operands.of("nt", "bf16", "bf16")
    tuned.store("NVIDIA H200", "sm90", 16, 4096, 4096, ops, "9", {"bm": 64, "bn": 64, "split_k": 2})
    tuned.store("NVIDIA H200", "sm90", 32, 4096, 4096, ops, "10", {"bn": 32, "split_k": 3})
    phase, cfg, how = choose.resolve_epilogue("sm90", 16, 4096, 4096, ops, "NVIDIA H200", True, "relu", False)
    assert (phase, how) == ("11", "model") and cfg == choose.pick_epilogue("sm90", 16, 4096, 4096, ops, True,
                                                                           "relu", False)[1]
    phase, cfg, how = choose.resolve_epilogue("sm90", 32, 4096, 4096, ops, "NVIDIA H200", False, "gelu", True)
    assert (phase, how) == ("11", "tuned") and (cfg.bn, cfg.split_k, cfg.activation, cfg.residual) == (32, 3, "gelu",
                                                                                                        True)


# ---- linear(activation=) ----

def _linear_args(dtype=torch.bfloat16, bias=True):
    x = cuda_like(torch.randn(2, 5, 64).to(dtype))
    w = cuda_like((torch.randn(96, 64) / 8).to(dtype))
    return x, w, (cuda_like(torch.randn(96).to(dtype)) if bias else None)


@pytest.mark.parametrize("act", ["relu", "gelu", "silu"])
def test_linear_inference_fuses_bias_and_activation_in_one_call(act, compiled):
    x, w, bias = _linear_args()
    y = cute_gemm.linear(x, w, bias, activation=act)
    ((phase, cfg),) = compiled
    assert phase == "11" and (cfg.bias, cfg.activation, cfg.residual) == (True, act, False)
    (p,) = _plans()
    ((a, b, c, bb),) = p.fn.calls
    assert a.data_ptr() == x.data_ptr() and b.stride() == (1, 64) and bb is bias  # x flattened, w.t(), the bias
    assert y.shape == (2, 5, 96) and y.dtype == torch.bfloat16 and y.data_ptr() == c.data_ptr()  # no extra pass
    want = ACTS[act](x.double() @ w.double().t() + bias.double()).to(torch.bfloat16)
    torch.testing.assert_close(y, want, atol=0, rtol=0)


def test_linear_with_another_phase_is_unfused(compiled):
    x, w, bias = _linear_args()
    y = cute_gemm.linear(x, w, bias, phase="5", activation="gelu")  # phase 5 has no epilogue: torch's gelu after
    y0 = cute_gemm.linear(x, w, bias, phase="5")
    assert [ph for ph, _ in compiled] == ["5"] and not getattr(compiled[0][1], "bias", False)
    z = (x.double() @ w.double().t()).to(torch.bfloat16) + bias  # rounded, then the bias added
    torch.testing.assert_close(y, F.gelu(z, approximate="tanh"), atol=0, rtol=0)
    torch.testing.assert_close(y0, z, atol=0, rtol=0)


def test_linear_fuses_a_bias_alone_where_the_model_says_it_pays(compiled, monkeypatch):
    """No activation, "best": the bias in the kernel (one rounding, like F.linear on cuBLASLt) where
    ``choose.fusing_pays`` says so -- at 10 tokens phase 10's tile as phase 11 -- else the plain pick and one
    in-place add; the answer is asked once per shape."""
    from cute_gemm.runtime import choose

    x, w, bias = _linear_args()
    asked = []
    real = choose.fusing_pays

    def pays(*args, **kw):
        asked.append(args[1:4])
        return real(*args, **kw)

    monkeypatch.setattr(choose, "fusing_pays", pays)
    y = cute_gemm.linear(x, w, bias)
    cute_gemm.linear(x, w, bias)
    assert asked == [(10, 96, 64)] and len(compiled) == 1
    phase, cfg = compiled[0]
    assert phase == "11" and cfg.bias and cfg.activation == "none" and not cfg.residual
    torch.testing.assert_close(y, _want(x.reshape(-1, 64), w.t(), bias, dtype=torch.bfloat16).view(2, 5, 96),
                               atol=0, rtol=0)  # the stand-in kernel rounds once, after the bias

    monkeypatch.setattr(choose, "fusing_pays", lambda *a, **k: False)
    monkeypatch.setattr(plan, "_BIAS_FUSES", {})
    y0 = cute_gemm.linear(x, w, bias)
    assert compiled[1][0] == "10" and not getattr(compiled[1][1], "bias", False)
    z = (x.double() @ w.double().t()).to(torch.bfloat16) + bias
    torch.testing.assert_close(y0, z, atol=0, rtol=0)


@pytest.mark.parametrize("shape", [(1, 4096, 4096), (74, 4096, 1024), (1024, 11008, 4096), (8192, 5632, 2048),
                                   (2048, 3584, 18944), (1024, 2048, 5632)])
@pytest.mark.parametrize("arch", ["sm90", "sm100"])
def test_fusing_pays_compares_the_fused_pick_with_the_plain_pick_and_one_pass(arch, shape):
    """``fusing_pays`` is the modelled fused pick against the plain pick plus a launch and C read and written once;
    where the two picks are one kernel (phase 10's tile as phase 11, a persistent phase with its fields) it pays."""
    from cute_gemm.runtime import choose

    ops = Operands.of("nt", "bf16", "bf16")
    m, n, k = shape
    plain = choose.explain(arch, m, n, k, ops)[0]
    fused = choose._epilogue_pick_row(arch, m, n, k, ops, True, "none", False, False)
    mc = choose.machine(arch)
    one_pass = mc.launch_us + 2 * m * n * 2 / mc.hbm_bytes_per_us
    assert choose.fusing_pays(arch, m, n, k, ops, bias=True) == (fused[2] <= plain["cost"] + one_pass)
    assert fused[:2] == choose.pick_epilogue(arch, m, n, k, ops, bias=True)
    if plain["phase"] in ("6", "8", "10"):  # the same tile takes the epilogue
        assert choose.fusing_pays(arch, m, n, k, ops, bias=True)


def test_linear_under_autograd_keeps_z_and_uses_torchs_derivative(monkeypatch):
    """Recorded: the unfused forward z = x @ w.T + b (``plan.run`` stubbed by a float64 matmul), y = act(z) by torch
    (its backward node), gradients as F.linear then the activation in float64; run_epilogue never runs."""
    calls = []

    def run(a, b, phase="5", out=None, config=None, arch=None, out_dtype=None):
        calls.append(phase)
        return (a.double() @ b.double()).to(out_dtype or torch.float32)

    monkeypatch.setattr(plan, "run", run)
    monkeypatch.setattr(plan, "run_epilogue", lambda *x, **k: pytest.fail("fused under autograd"))
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 16, generator=g).bfloat16().requires_grad_()
    w = (torch.randn(24, 16, generator=g) / 4).bfloat16().requires_grad_()
    b = torch.randn(24, generator=g).bfloat16().requires_grad_()
    for act, node in (("gelu", "GeluBackward"), ("silu", "SiluBackward"), ("relu", "ReluBackward")):
        for t in (x, w, b):
            t.grad = None
        y = cute_gemm.linear(x, w, b, activation=act)
        assert type(y.grad_fn).__name__.startswith(node)
        weights = torch.linspace(-1, 1, 24)
        (y.float() * weights).sum().backward()
        leaves = [t.detach().double().requires_grad_() for t in (x, w, b)]
        (ACTS[act](F.linear(*leaves)) * weights.double()).sum().backward()
        for got, ref in zip((x.grad, w.grad, b.grad), leaves):
            assert ((got.double() - ref.grad).norm() / ref.grad.norm()).item() < 2e-2, act
    assert calls and all(ph == "best" for ph in calls)


def _leaves(tokens: int):
    """x [tokens, 16], w [24, 16], b [24] in bf16, requiring grad (seed 1)."""
    g = torch.Generator().manual_seed(1)
    x = torch.randn(tokens, 16, generator=g).bfloat16().requires_grad_()
    w = (torch.randn(24, 16, generator=g) / 4).bfloat16().requires_grad_()
    return x, w, torch.randn(24, generator=g).bfloat16().requires_grad_()


def test_linear_under_autograd_fuses_the_bias_of_z_where_it_pays(monkeypatch):
    """Recorded with a bias where ``plan.bias_fuses`` says so: z = x @ w.T + b from one epilogue call (bias only,
    rounded once), the activation by torch after it, the gradients F.linear's then the activation's."""
    epi = []

    def run_epilogue(a, b, phase, out, config, arch, out_dtype, bias, activation, residual, gated=False):
        epi.append((phase, activation, bias is not None, residual, gated))
        return (a.double() @ b.double() + bias.double()).to(out_dtype)

    monkeypatch.setattr(plan, "bias_fuses", lambda a, b, out_dtype=None: True)
    plain = []

    def run(a, b, phase="5", out=None, config=None, arch=None, out_dtype=None):  # the backward's dX and dW
        plain.append(phase)
        return (a.double() @ b.double()).to(out_dtype or torch.float32)

    monkeypatch.setattr(plan, "run", run)
    monkeypatch.setattr(plan, "run_epilogue", run_epilogue)
    x, w, b = _leaves(7)
    y = cute_gemm.linear(x, w, b, activation="relu")
    assert type(y.grad_fn).__name__.startswith("ReluBackward") and epi == [("best", "none", True, None, False)]
    z = (x.double() @ w.double().t() + b.double()).bfloat16()
    torch.testing.assert_close(y, F.relu(z), atol=0, rtol=0)
    assert plain == []  # the forward made no plain GEMM
    y.float().sum().backward()
    assert plain == ["best", "best"]  # dX and dW
    leaves = [t.detach().double().requires_grad_() for t in (x, w, b)]
    F.relu(F.linear(*leaves)).sum().backward()
    for got, ref in zip((x.grad, w.grad, b.grad), leaves):
        assert ((got.double() - ref.grad).norm() / ref.grad.norm()).item() < 2e-2


def test_the_linear_op_with_a_fused_activation_recomputes_z_in_its_backward(monkeypatch):
    """torch.ops.cute_gemm.linear(..., "gelu") called directly under autograd: the forward is the fused path
    (run_epilogue), the backward recomputes z with the op without the activation (one more GEMM: plan.run) and
    gives F.linear-then-activation's gradients."""
    runs = []

    def run(a, b, phase="5", out=None, config=None, arch=None, out_dtype=None):
        runs.append("plain")
        return (a.double() @ b.double()).to(out_dtype or torch.float32)

    def run_epilogue(a, b, phase, out, config, arch, out_dtype, bias, activation, residual, gated=False):
        runs.append(activation)
        return ACTS[activation](a.double() @ b.double() + bias.double()).to(out_dtype)

    monkeypatch.setattr(plan, "run", run)
    monkeypatch.setattr(plan, "run_epilogue", run_epilogue)
    x, w, b = _leaves(5)
    for act in ("relu", "gelu", "silu"):
        runs.clear()
        for t in (x, w, b):
            t.grad = None
        y = torch.ops.cute_gemm.linear(x, w, b, "best", None, act)
        weights = torch.linspace(-1, 1, 24)
        (y.float() * weights).sum().backward()
        assert runs[0] == act and runs.count("plain") == 3  # z again, then dX and dW
        leaves = [t.detach().double().requires_grad_() for t in (x, w, b)]
        (ACTS[act](F.linear(*leaves)) * weights.double()).sum().backward()
        for got, ref in zip((x.grad, w.grad, b.grad), leaves):
            assert ((got.double() - ref.grad).norm() / ref.grad.norm()).item() < 2e-2, act


# ---- the ops: fake implementations and torch.compile ----

def test_fake_implementations_give_shape_and_dtype():
    a = torch.empty(37, 64, device="meta", dtype=torch.bfloat16)
    w = torch.empty(96, 64, device="meta", dtype=torch.bfloat16)
    bias = torch.empty(96, device="meta", dtype=torch.bfloat16)
    res = torch.empty(37, 96, device="meta", dtype=torch.bfloat16)
    c = torch.ops.cute_gemm.gemm_epilogue(a, w.t(), bias, res, "gelu", "best", torch.bfloat16)
    assert tuple(c.shape) == (37, 96) and c.dtype == torch.bfloat16
    c = torch.ops.cute_gemm.gemm_epilogue(a, w.t(), None, None, "relu", "11", None)
    assert tuple(c.shape) == (37, 96) and c.dtype == torch.float32
    with pytest.raises(InputError, match="activation='erf'"):
        torch.ops.cute_gemm.gemm_epilogue(a, w.t(), bias, None, "erf", "best", None)
    with pytest.raises(InputError, match=r"residual must be \[M, N\] = \(37, 96\) of C's dtype torch.float32"):
        torch.ops.cute_gemm.gemm_epilogue(a, w.t(), None, res, "none", "best", None)
    with pytest.raises(InputError, match=r"bias must be \[N\] = \(96,\) of A's dtype"):
        torch.ops.cute_gemm.gemm_epilogue(a, w.t(), bias[:64], None, "none", "best", None)
    x = torch.empty(2, 37, 64, device="meta", dtype=torch.bfloat16)
    y = torch.ops.cute_gemm.linear(x, w, bias, "best", None, "silu")
    assert tuple(y.shape) == (2, 37, 96) and y.dtype == torch.bfloat16
    with pytest.raises(InputError, match="activation='tanh'"):
        torch.ops.cute_gemm.linear(x, w, bias, "best", None, "tanh")


def test_torch_compile_fullgraph_traces_the_epilogue_ops():
    """Dynamo traces gemm(bias=, activation=, residual=) into the op gemm_epilogue and an inference linear with an
    activation into the linear op with it, no graph break (the backend records the graph, no GPU)."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return lambda *args: [torch.zeros(37, 96, dtype=torch.bfloat16)]

    def block(x, w, bias, res):
        y = cute_gemm.gemm(x, w.t(), phase="best", out_dtype=torch.bfloat16, bias=bias, activation="gelu",
                           residual=res)
        return y + cute_gemm.linear(x, w, bias, activation="silu")

    x, w = torch.randn(37, 64).bfloat16(), torch.randn(96, 64).bfloat16()
    bias, res = torch.randn(96).bfloat16(), torch.randn(37, 96).bfloat16()
    with torch.no_grad():
        torch.compile(block, fullgraph=True, backend=backend)(x, w, bias, res)
    (gm,) = graphs
    code = gm.code
    assert "torch.ops.cute_gemm.gemm_epilogue(" in code and "'gelu'" in code
    assert "torch.ops.cute_gemm.linear(" in code and "'silu'" in code


def test_under_torch_compile_out_and_config_with_an_epilogue_are_eager_only(monkeypatch):
    from cute_gemm.runtime import gemm as gemm_mod

    monkeypatch.setattr(gemm_mod, "_compiling", lambda: True)
    a, b = torch.empty(8, 8).half(), torch.empty(8, 8).half()
    with pytest.raises(UnsupportedError, match="out=, config= and arch= run eagerly only"):
        cute_gemm.gemm(a, b, phase="best", out=torch.empty(8, 8), activation="relu")


def test_opcheck_of_the_epilogue_ops(monkeypatch):
    """torch.library.opcheck: schema, fake implementation, autograd registration and AOT dispatch agree with the ops'
    real implementations (here on stubbed GEMMs)."""

    def run(a, b, phase="5", out=None, config=None, arch=None, out_dtype=None):
        return (a.double() @ b.double()).to(out_dtype or torch.float32)

    def run_epilogue(a, b, phase, out, config, arch, out_dtype, bias, activation, residual, gated=False):
        return _want(a, b, bias, activation, residual, out_dtype or torch.float32)

    monkeypatch.setattr(plan, "run", run)
    monkeypatch.setattr(plan, "run_epilogue", run_epilogue)
    g = torch.Generator().manual_seed(2)
    x = torch.randn(3, 5, 16, generator=g).bfloat16().requires_grad_()
    w = torch.randn(24, 16, generator=g).bfloat16().requires_grad_()
    b = torch.randn(24, generator=g).bfloat16().requires_grad_()
    torch.library.opcheck(torch.ops.cute_gemm.linear.default, (x, w, b, "best", None, "gelu"))
    a = torch.randn(7, 16, generator=g).bfloat16()
    res = torch.randn(7, 24, generator=g)
    torch.library.opcheck(torch.ops.cute_gemm.gemm_epilogue.default,
                          (a, w.detach().t(), b.detach(), res, "silu", "best", None))


def test_torch_compile_fullgraph_training_with_an_activation(monkeypatch):
    """Under torch.compile with autograd recording: the forward graph holds the linear op without the activation
    (z) and aten's gelu (y = act(z), torch's derivative in the backward graph), and the gradients are eager's."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    def run(a, b, phase="5", out=None, config=None, arch=None, out_dtype=None):
        return (a.double() @ b.double()).to(out_dtype or torch.float32)

    monkeypatch.setattr(plan, "run", run)
    monkeypatch.setattr(plan, "run_epilogue", lambda *x, **k: pytest.fail("fused under autograd"))
    graphs = {}

    def keep(name):
        def compiler(gm, example_inputs):
            graphs[name] = gm
            return make_boxed_func(gm.forward)
        return compiler

    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 5, 16, generator=g).bfloat16().requires_grad_()
    w = (torch.randn(24, 16, generator=g) / 4).bfloat16().requires_grad_()
    b = torch.randn(24, generator=g).bfloat16().requires_grad_()

    def step(x, w, b):
        return (cute_gemm.linear(x, w, b, activation="gelu").float() * torch.linspace(-1, 1, 24)).sum()

    step(x, w, b).backward()
    eager = [t.grad.clone() for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    torch.compile(step, fullgraph=True, backend=aot_autograd(fw_compiler=keep("fw"), bw_compiler=keep("bw")))(
        x, w, b).backward()
    fw = [str(n.target) for n in graphs["fw"].graph.nodes if n.op == "call_function"]
    bw = [str(n.target) for n in graphs["bw"].graph.nodes if n.op == "call_function"]
    assert "cute_gemm.linear.default" in fw and "aten.gelu.default" in fw
    assert "aten.gelu_backward.default" in bw and "cute_gemm.linear_dx.default" in bw
    for got, ref in zip((x.grad, w.grad, b.grad), eager):
        torch.testing.assert_close(got, ref, atol=0, rtol=0)


def test_the_fused_rounds_charge_moves_a_short_k_pick_from_phase_7_to_8(monkeypatch):
    """``Machine.fused_round_us``: with an activation, sm90's phases 6-7 pay it each tile round (their epilogue's
    arithmetic runs while the tensor pipe waits; phase 8's under the other warpgroup's MMAs). Off (0) the fused pick is
    the plain model's first row that takes the epilogue: phase 7 at 2048x8192x1024; charged 1.5 us a round (4 rounds),
    phase 8 -- the H100's order there, fused (54.1 against 63.0 us). A bias alone is not charged, and phase 8's rows
    never are."""
    ops = Operands.of("nt", "bf16", "bf16")

    def pick(charge, activation):
        monkeypatch.setattr(choose, "MACHINE", dataclasses.replace(choose.MACHINE, fused_round_us=charge))
        choose.machine.cache_clear()
        choose.pick_epilogue.cache_clear()
        return choose.pick_epilogue("sm90", 2048, 8192, 1024, ops, True, activation)[0]

    try:
        assert choose.MACHINE.fused_round_us == 0.0
        assert pick(0.0, "gelu") == "7" == choose.explain("sm90", 2048, 8192, 1024, ops)[0]["phase"]
        assert pick(1.5, "gelu") == "8" and pick(1.5, "none") == "7"
    finally:
        monkeypatch.undo()
        choose.machine.cache_clear()
        choose.pick_epilogue.cache_clear()


def test_best_spreads_phase_8s_fused_arithmetic_over_half_width_slabs():
    """sm90 phase 8's fused epilogue runs while the other warpgroup's wgmmas run, and its arithmetic slows them less
    spread thin: best's pick takes ``choose.spread_slabs`` -- each slab's arithmetic after the previous slab's
    barrier, 16-column slabs through twice the buffers (the same staging bytes), the tile's bias through smem -- for
    any epilogue (a bias alone, an activation, a residual); the gated pairs keep their 32-column slabs (16 columns of
    C) and buffers; a config already in 16-column slabs (the 176-wide fitted tile) keeps its slabs. The plain pick at
    the same shape is untouched, and so are phase 7's fused picks."""
    ops = Operands.of("nt", "bf16", "bf16")
    plain = choose.pick("sm90", 8192, 18944, 3584, ops)
    assert plain[0] == "8" and (plain[1].epi_n, plain[1].epi_stages, plain[1].epi_spread) == (32, 2, False)
    for epi in ({"bias": True}, {"bias": True, "activation": "gelu"}, {"activation": "silu", "gated": True},
                {"residual": True}):
        phase, cfg = choose.pick_epilogue("sm90", 8192, 18944, 3584, ops, **epi)
        assert phase == "8" and cfg.bn == 192, epi
        slabs = (32, 2) if epi.get("gated") else (16, 4)
        assert (cfg.epi_n, cfg.epi_stages, cfg.epi_spread, cfg.bias_smem) == (*slabs, True, True), epi
        assert cfg == choose.spread_slabs(dataclasses.replace(plain[1], **{"activation": "none", **epi})), epi
        entry = registry.get("sm90", "8")
        assert not entry.config_problems(cfg) and not entry.make(cfg, ops).can_implement(8192, 18944, 3584)
    sixty_four = dataclasses.replace(plain[1], epi_n=64, epi_stages=3, bias=True, activation="gelu")
    assert choose.spread_slabs(sixty_four) == sixty_four  # a tuned 64-column config: as it was, untested spread
    wide = choose.pick_epilogue("sm90", 1024, 11008, 4096, ops, bias=True, activation="gelu")[1]
    assert (wide.bn, wide.epi_n, wide.epi_stages, wide.epi_spread, wide.bias_smem) == (176, 16, 11, True, True)
    # phase 7 runs its own epilogue as configured (its split tile stores its slabs without the spread)
    e7 = registry.get("sm90", "7")
    seven = choose._epilogue_row("sm90", "7", e7.default_config(), 4096, 4096, 4096, ops, True, "gelu", False)
    assert seven[0] == "7" and not seven[1].epi_spread and seven[1].epi_n == e7.default_config().epi_n
