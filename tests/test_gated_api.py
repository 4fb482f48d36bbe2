"""The gated pairs' API without a GPU: ``cute_gemm.gemm(..., gated=True)``, ``cute_gemm.gated_linear``,
``cute_gemm.interleave_gate_up``, ``phase="best"`` with the pairs, and the torch ops.

As tests/test_epilogue_api.py: the plans are mocked (no compile, no GPU; CPU tensors that say they are on CUDA
device 0), and the mock compiled function computes what phase 11's kernel computes with ``gated`` -- C [M, N/2] =
act(acc[:, 2j] + b[2j]) * (acc[:, 2j + 1] + b[2j + 1]) + residual in float64, rounded once -- and asserts C's shape.
So what is tested is the host side: each refusal comes as one clear error before anything compiles, the kernel
gets a half-width C and the tensors in the face's order, "best" runs phase 11 with phase 10's tile for the GEMM's
(M, N, K) (never a persistent phase), the fast path keys on the switch, K == 0 is computed on the host,
``gated_linear`` is one fused call in inference and torch's pair under autograd (gradients against float64), and
``torch.compile(fullgraph=True)`` traces both into the ops. The kernel's own numbers are test_gpu_epilogue.py's.
"""

import dataclasses

import pytest
import torch
import torch.nn.functional as F

import cute_gemm
from cute_gemm import InputError, UnsupportedError
from cute_gemm.runtime import choose, plan, registry, torch_ops  # noqa: F401  (torch_ops registers the ops)
from phases.operands import Operands
from test_epilogue_api import ACTS, compiled  # noqa: F401  (fixture)
from test_operands_runtime import _operands_for, clean_plans, cuda_like  # noqa: F401  (fixtures)


def _t(*shape, dtype=torch.float32, seed=0):
    return cuda_like(torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype))


def _want(a, b, bias=None, act="none", residual=None, dtype=torch.float32):
    """float64 act(gate + b) * (up + b) + r of the column pairs, rounded once."""
    z = a.double() @ b.double() + (bias.double() if bias is not None else 0)
    y = ACTS[act](z[:, 0::2]) * z[:, 1::2]
    return (y + (residual.double() if residual is not None else 0)).to(dtype)


def _plans():
    return list(plan._PLANS.values())


# ---- refusals: one clear error each, before anything compiles ----

@pytest.mark.parametrize("phase", ["5", "9", "10"])
def test_another_phase_with_gated_names_the_phases_that_have_them(phase, compiled):
    a, b = _operands_for("nt")
    for kw in ({}, {"activation": "silu"}, {"bias": _t(128, dtype=torch.float16)}):
        with pytest.raises(UnsupportedError, match=r"sm90:" + phase + r" has no gated pairs .*sm90 phases 6, 7, 8, 11 "
                                                   r"have them"):
            cute_gemm.gemm(a, b, phase=phase, gated=True, **kw)
    assert compiled == []


def test_the_persistent_phases_take_the_gated_pairs(compiled):
    """sm90 phases 6, 7 and 8 run a gated call in their own config (C [M, N/2]); sm100's phase 6 refuses the field
    (a config problem, before anything compiles)."""
    a, b = _operands_for("nt")
    for phase in ("6", "7", "8"):
        c = cute_gemm.gemm(a, b, phase=phase, gated=True, activation="silu")
        assert tuple(c.shape) == (a.shape[0], b.shape[1] // 2)
    assert [(ph, cfg.gated, cfg.activation) for ph, cfg in compiled] == [(p, True, "silu") for p in ("6", "7", "8")]
    e = registry.get("sm100", "6")
    assert any("gated=True" in w for w in e.config_problems(dataclasses.replace(e.default_config(), gated=True)))


def test_bad_gated_tensors_are_refused(compiled):
    a, b = _operands_for("nn", m=64, n=128, k=72)  # N = 128: C [64, 64]
    cases = [
        ({"out": cuda_like(torch.empty(64, 128))}, r"out \(C\) must be 64x64 \(gated=True: C \[M, N/2\]"),
        ({"residual": _t(64, 128)}, r"residual must be \[M, N/2\] = \(64, 64\) as C is, got shape \(64, 128\)"),
        ({"bias": _t(64, dtype=torch.float16)}, r"bias must be 1-D \[N\] = \(128,\), got shape \(64,\)"),
        ({"residual": _t(64, 64, dtype=torch.bfloat16)}, r"residual is torch.bfloat16 but C is torch.float32"),
        ({"activation": "swish"}, r"activation='swish'"),
    ]
    for phase in ("11", "best"):
        for kw, message in cases:
            with pytest.raises(InputError, match=message):
                cute_gemm.gemm(a, b, phase=phase, gated=True, **kw)
    a24, b24 = _operands_for("nn", m=16, n=24, k=64)  # N/2 = 12 columns: not 16-byte rows
    with pytest.raises(InputError, match=r"gated=True: N=24 must be a multiple of 16"):
        cute_gemm.gemm(a24, b24, phase="best", gated=True)
    with pytest.raises(UnsupportedError, match="accumulate=True .* and a fused epilogue .* do not go together"):
        cute_gemm.gemm(a, b, phase="11", out=cuda_like(torch.empty(64, 64)), accumulate=True, gated=True)
    assert compiled == []


# ---- the call: phase 11's gated config, a half-width C, the fast path ----

@pytest.mark.parametrize("arch", ["sm90", "sm100"])
def test_phase_11s_own_rule_for_gated_n_is_the_apis(arch):
    """The kernel's can_implement refuses a gated N that is not a multiple of 16, as gemm(gated=True) does: C's N / 2
    columns are compiled as a multiple of 8 (a selftest shape with N = 3000 once reached the compiled entry)."""
    from cute_gemm.runtime import registry
    from phases.operands import Operands

    e = registry.get(arch, "11")
    for ops in (Operands.of("nt", "bf16", "bf16"), Operands.of("nn", "fp16", "fp32")):
        gated = e.make(e.configured("activation=silu,gated=True"), ops)
        assert gated.can_implement(1000, 3024, 520) == []
        why = gated.can_implement(1000, 3000, 520)
        assert len(why) == 1 and "gated=True: N=3000 must be a multiple of 16" in why[0]
        assert e.make(e.configured("activation=silu"), ops).can_implement(1000, 3000, 520) == []


@pytest.mark.parametrize("bias_on,act,res_on", [(False, "silu", False), (True, "gelu", False), (True, "none", True),
                                                 (False, "relu", True)])
def test_the_kernel_gets_a_half_width_c_and_the_tensors_in_order(bias_on, act, res_on, compiled, monkeypatch):
    a, b = _operands_for("nt", torch.bfloat16, m=40, n=128, k=72)
    bias = _t(128, dtype=torch.bfloat16, seed=1) if bias_on else None
    res = _t(40, 64, dtype=torch.bfloat16, seed=2) if res_on else None
    c = cute_gemm.gemm(a, b, phase="11", out_dtype=torch.bfloat16, bias=bias, activation=act, residual=res,
                       gated=True)
    ((phase, cfg),) = compiled
    assert phase == "11" and cfg.gated and (cfg.bias, cfg.activation, cfg.residual) == (bias_on, act, res_on)
    assert tuple(c.shape) == (40, 64) and c.dtype == torch.bfloat16
    (p,) = _plans()
    assert p.fn.calls[0] == (a, b, c, *[t for t in (bias, res) if t is not None])
    torch.testing.assert_close(c, _want(a, b, bias, act, res, torch.bfloat16), atol=0, rtol=0)
    # again: the fast path (no validation), the same plan, a half-width C again
    monkeypatch.setattr(plan, "validate_call", lambda *x, **k: pytest.fail("the fast path validated"))
    c2 = cute_gemm.gemm(a, b, phase="11", out_dtype=torch.bfloat16, bias=bias, activation=act, residual=res,
                        gated=True)
    assert len(p.fn.calls) == 2 and p.fn.calls[1][2] is c2 and tuple(c2.shape) == (40, 64) and len(compiled) == 1


def test_gated_and_plain_epilogue_calls_do_not_share_plans_or_keys(compiled):
    a, b = _operands_for("nn")
    cute_gemm.gemm(a, b, phase="11", activation="silu")
    cute_gemm.gemm(a, b, phase="11", activation="silu", gated=True)
    cute_gemm.gemm(a, b, phase="11", gated=True)  # no activation: the plain product gate * up, still gated
    assert [(c.gated, c.activation) for _, c in compiled] == [(False, "silu"), (True, "silu"), (True, "none")]
    assert {key[0] for key in plan._FAST} == {("11", (False, "silu", False, False)),
                                              ("11", (False, "silu", False, True)),
                                              ("11", (False, "none", False, True))}
    shapes = [tuple(p.fn.calls[0][2].shape) for p in _plans()]
    assert shapes == [(64, 128), (64, 64), (64, 64)]


def test_the_fast_path_hands_a_wrong_out_to_the_checked_path(compiled):
    """The compiled entry holds C's columns as a symbol of its own: the fast path itself checks N = 2 x C's."""
    a, b = _operands_for("nn")
    out = cuda_like(torch.empty(64, 64))
    assert cute_gemm.gemm(a, b, phase="11", out=out, gated=True) is out
    (p,) = _plans()
    wide = cuda_like(torch.empty(64, 72))
    with pytest.raises(InputError, match=r"out \(C\) must be 64x64"):
        cute_gemm.gemm(a, b, phase="11", out=wide, gated=True)
    assert len(p.fn.calls) == 1


def test_residual_may_be_out_itself(compiled):
    a, b = _operands_for("nn")
    out = _t(64, 64, seed=3)
    before = out.clone()
    assert cute_gemm.gemm(a, b, phase="11", out=out, residual=out, activation="silu", gated=True) is out
    torch.testing.assert_close(out, _want(a, b, None, "silu", before), atol=0, rtol=0)


def test_k_zero_is_the_pair_of_the_bias_on_the_host(compiled):
    a, b = cuda_like(torch.empty(40, 0).bfloat16()), cuda_like(torch.empty(0, 128).bfloat16())
    bias, res = _t(128, dtype=torch.bfloat16, seed=4), _t(40, 64, seed=5)
    for phase in ("11", "best"):
        for act in ("none", "relu", "gelu", "silu"):
            c = cute_gemm.gemm(a, b, phase=phase, bias=bias, activation=act, residual=res, gated=True)
            want = ACTS[act](bias.float()[0::2]) * bias.float()[1::2] + res
            assert tuple(c.shape) == (40, 64) and torch.allclose(c, want, atol=1e-6, rtol=1e-6)
    m0 = cute_gemm.gemm(cuda_like(torch.empty(0, 64).half()), cuda_like(torch.empty(64, 128).half()),
                        phase="best", activation="silu", gated=True)
    assert tuple(m0.shape) == (0, 64)
    assert compiled == []


# ---- best: phase 11 with phase 10's tile for the GEMM's shape ----

@pytest.mark.parametrize("shape", [(16, 4096 * 2, 4096), (100, 14336 * 2, 4096), (256, 8192, 4096)])
def test_best_runs_phase_11_with_phase_10s_tile_at_decode(shape, compiled):
    """The GEMM's (M, N, K) -- N counts gate and up -- priced by the model: phase 11 with its cheapest phase 10
    row's tile (where the plain pick is another phase, e.g. phase 9 at 100 x 28672, the cheapest phase 10 row)."""
    m, n, k = shape
    ops = Operands.of("nt", "bf16", "bf16")
    cfg10 = next(r["config"] for r in choose.explain("sm90", m, n, k, ops) if r["phase"] == "10")
    a, b = _operands_for("nt", torch.bfloat16, m=m, n=n, k=k)
    c = cute_gemm.gemm(a, b, phase="best", out_dtype=torch.bfloat16, activation="silu", gated=True)
    ((phase, cfg),) = compiled
    assert phase == "11" and cfg.gated and cfg.activation == "silu" and tuple(c.shape) == (m, n // 2)
    assert {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg10)} == dataclasses.asdict(cfg10)


def test_best_with_gated_takes_the_persistent_phases_at_prefill_on_sm90():
    """Past decode sizes the plain epilogue's pick is a persistent phase; on sm90 those take the gated pairs too, so
    "best" runs the same phase and tile with the gated field on (on phase 8 in the pairs' own 32-column slabs, where
    an activation alone gets 16-column ones: ``choose.spread_slabs``)."""
    ops = Operands.of("nt", "bf16", "bf16")
    phases = set()
    for m, n, k in [(2048, 8192, 4096), (4096, 28672, 4096)]:
        plain = choose.pick_epilogue("sm90", m, n, k, ops, False, "silu", False)
        phase, cfg = choose.pick_epilogue("sm90", m, n, k, ops, False, "silu", False, True)
        assert phase == plain[0] in choose.EPILOGUE_PERSISTENT["sm90"] and cfg.gated
        same = dataclasses.replace(cfg, gated=False)
        if phase == "8":
            assert (cfg.epi_n, cfg.epi_stages, plain[1].epi_n, plain[1].epi_stages) == (32, 2, 16, 4)
            same = dataclasses.replace(same, epi_n=16, epi_stages=4)
        assert same == plain[1]
        phases.add(phase)
        assert not registry.get("sm90", phase).config_problems(cfg)
    assert "8" in phases  # the slabs' rule is exercised


def test_best_with_gated_skips_sm100s_persistent_phase_at_prefill():
    """sm100's persistent phase refuses the gated pairs, so there "best" takes phase 10's large-M tiles
    (``phase10_rows``) as phase 11, with the gated field on."""
    arch, ops = "sm100", Operands.of("nt", "bf16", "bf16")
    for m, n, k in [(2048, 8192, 4096), (4096, 28672, 4096)]:
        assert choose.pick_epilogue(arch, m, n, k, ops, False, "silu", False)[0] in choose.EPILOGUE_PERSISTENT[arch]
        phase, cfg = choose.pick_epilogue(arch, m, n, k, ops, False, "silu", False, True)
        assert phase == "11" and cfg.gated and cfg.activation == "silu"
        row = choose.phase10_rows(arch, m, n, k, ops)[0]
        ten = {f.name for f in dataclasses.fields(registry.get(arch, "10").config_cls)}
        assert {f: getattr(cfg, f) for f in ten} == dataclasses.asdict(row["config"])
        assert not registry.get(arch, "11").config_problems(cfg)


def test_a_tuned_pick_takes_the_gated_pairs_where_its_phase_does(monkeypatch, tmp_path):
    from cute_gemm.runtime import cache, tuned

    monkeypatch.setenv("CUTE_GEMM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "fingerprint", lambda: "f" * 16)
    monkeypatch.setattr(tuned, "_TABLES", {})
    ops = Operands.of("nt", "bf16", "bf16")
    tuned.store("NVIDIA H200", "sm90", 2048, 8192, 4096, ops, "8", {})
    tuned.store("NVIDIA H200", "sm90", 32, 8192, 4096, ops, "10", {"bn": 32, "split_k": 3})
    phase, _, how = choose.resolve_epilogue("sm90", 2048, 8192, 4096, ops, "NVIDIA H200", False, "silu", False, False)
    assert (phase, how) == ("8", "tuned")  # the plain epilogue keeps the tuned persistent pick
    phase, cfg, how = choose.resolve_epilogue("sm90", 2048, 8192, 4096, ops, "NVIDIA H200", False, "silu", False, True)
    assert (phase, how) == ("8", "tuned") and cfg.gated  # sm90's phase 8 takes the gated pairs too
    tuned.store("NVIDIA H200", "sm90", 2048, 8192, 4096, ops, "9", {"split_k": 1})
    phase, cfg, how = choose.resolve_epilogue("sm90", 2048, 8192, 4096, ops, "NVIDIA H200", False, "silu", False, True)
    assert how == "model" and cfg.gated  # phase 9 has no epilogue: the model's pick
    phase, cfg, how = choose.resolve_epilogue("sm90", 32, 8192, 4096, ops, "NVIDIA H200", True, "gelu", False, True)
    assert (phase, how) == ("11", "tuned") and (cfg.bn, cfg.split_k, cfg.gated, cfg.bias) == (32, 3, True, True)


# ---- interleave_gate_up ----

def test_interleave_gate_up_of_two_weights_of_halves_and_of_biases():
    g = torch.Generator().manual_seed(7)
    wg, wu = torch.randn(24, 16, generator=g), torch.randn(24, 16, generator=g)
    w = cute_gemm.interleave_gate_up(wg, wu)
    assert w.shape == (48, 16) and w.is_contiguous()
    assert torch.equal(w[0::2], wg) and torch.equal(w[1::2], wu)
    assert torch.equal(cute_gemm.interleave_gate_up(torch.cat([wg, wu])), w)  # [gate; up] halves
    bg, bu = torch.randn(24, generator=g), torch.randn(24, generator=g)
    b = cute_gemm.interleave_gate_up(bg, bu)
    assert b.shape == (48,) and torch.equal(b[0::2], bg) and torch.equal(b[1::2], bu)
    assert torch.equal(cute_gemm.interleave_gate_up(torch.cat([bg, bu])), b)
    x = torch.randn(5, 16, generator=g)
    z = x @ w.t() + b  # the interleaved layer's pre-activation: gate j at 2j, up j at 2j + 1
    torch.testing.assert_close(z[:, 0::2], x @ wg.t() + bg)
    torch.testing.assert_close(z[:, 1::2], x @ wu.t() + bu)


def test_interleave_gate_up_refuses_what_does_not_pair():
    w = torch.randn(24, 16)
    for args, says in [((w, torch.randn(24, 8)), "two weights"), ((w, w.half()), "two weights"),
                       ((torch.randn(23, 16),), "first half is gate"), ((torch.randn(2, 3, 4),), "first half is gate"),
                       (([1.0, 2.0],), "first half is gate")]:
        with pytest.raises(InputError, match=says):
            cute_gemm.interleave_gate_up(*args)


# ---- gated_linear ----

def _gated_args(dtype=torch.bfloat16, bias=True, n_out=48, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = cuda_like(torch.randn(2, 5, 64, generator=g).to(dtype))
    w = cuda_like((torch.randn(2 * n_out, 64, generator=g) / 8).to(dtype))
    return x, w, (cuda_like(torch.randn(2 * n_out, generator=g).to(dtype)) if bias else None)


@pytest.mark.parametrize("act", ["silu", "gelu", "relu", None])
def test_gated_linear_inference_is_one_fused_call(act, compiled):
    x, w, bias = _gated_args()
    y = cute_gemm.gated_linear(x, w, bias, activation=act)
    ((phase, cfg),) = compiled
    assert phase == "11" and cfg.gated and cfg.bias and cfg.activation == (act or "none")
    (p,) = _plans()
    ((a, b, c, bb),) = p.fn.calls
    assert a.data_ptr() == x.data_ptr() and b.stride() == (1, 64) and bb is bias  # x flattened, w.t(), the bias
    assert y.shape == (2, 5, 48) and y.dtype == torch.bfloat16 and y.data_ptr() == c.data_ptr()
    z = x.double() @ w.double().t() + bias.double()
    want = (ACTS[act or "none"](z[..., 0::2]) * z[..., 1::2]).to(torch.bfloat16)
    torch.testing.assert_close(y, want, atol=0, rtol=0)


def test_gated_linear_is_swiglu_of_the_two_layers_it_came_from(compiled):
    """A model's gate and up layers, interleaved once: the fused call equals silu(x Wg^T + bg) * (x Wu^T + bu)
    against float64 within a bf16 rounding."""
    g = torch.Generator().manual_seed(11)
    wg, wu = (torch.randn(40, 32, generator=g) / 6).bfloat16(), (torch.randn(40, 32, generator=g) / 6).bfloat16()
    bg, bu = torch.randn(40, generator=g).bfloat16(), torch.randn(40, generator=g).bfloat16()
    x = torch.randn(7, 32, generator=g).bfloat16()
    w13 = cuda_like(cute_gemm.interleave_gate_up(wg, wu))
    b13 = cuda_like(cute_gemm.interleave_gate_up(bg, bu))
    y = cute_gemm.gated_linear(cuda_like(x), w13, b13, out_dtype=torch.float32)
    ref = F.silu(F.linear(x.double(), wg.double(), bg.double())) * F.linear(x.double(), wu.double(), bu.double())
    assert y.shape == (7, 40) and y.dtype == torch.float32
    torch.testing.assert_close(y.as_subclass(torch.Tensor).double(), ref, atol=1e-6, rtol=1e-6)


def test_gated_linear_refuses_before_compiling(compiled):
    x, w, bias = _gated_args()
    with pytest.raises(InputError, match=r"w_gate_up has 24 rows = 2 x 12 .*multiple of 16"):
        cute_gemm.gated_linear(x, w[:24], None)
    with pytest.raises(InputError, match=r"bias must be a tensor of shape \(96,\)"):
        cute_gemm.gated_linear(x, w, bias[:48])
    with pytest.raises(InputError, match="activation='tanh'"):
        cute_gemm.gated_linear(x, w, bias, activation="tanh")
    with pytest.raises(InputError, match="x is torch.bfloat16 and w is torch.float16"):
        cute_gemm.gated_linear(x, w.half(), None)
    assert compiled == []


def test_gated_linear_with_another_phase_is_the_gemm_then_torchs_pair(compiled):
    x, w, bias = _gated_args()
    y = cute_gemm.gated_linear(x, w, bias, phase="5", activation="gelu")
    assert [ph for ph, _ in compiled] == ["5"] and not getattr(compiled[0][1], "gated", False)
    z = (x.double() @ w.double().t()).to(torch.bfloat16) + bias  # phase 5's z in bf16, the bias added after
    torch.testing.assert_close(y, F.gelu(z[..., 0::2], approximate="tanh") * z[..., 1::2], atol=0, rtol=0)


def _stub_gemms(monkeypatch, fused=False):
    calls = []

    def run(a, b, phase="5", out=None, config=None, arch=None, out_dtype=None):
        calls.append("plain")
        return (a.double() @ b.double()).to(out_dtype or torch.float32)

    def run_epilogue(a, b, phase, out, config, arch, out_dtype, bias, activation, residual, gated=False):
        calls.append(("gated" if gated else "epilogue", activation))
        return _want(a, b, bias, activation, residual, out_dtype or torch.float32)

    monkeypatch.setattr(plan, "run", run)
    monkeypatch.setattr(plan, "run_epilogue", run_epilogue if fused else
                        (lambda *x, **k: pytest.fail("fused under autograd")))
    return calls


def _leaves(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(2, 3, 16, generator=g).bfloat16().requires_grad_()
    w = (torch.randn(32, 16, generator=g) / 4).bfloat16().requires_grad_()
    b = torch.randn(32, generator=g).bfloat16().requires_grad_()
    return x, w, b


def _reference_grads(x, w, b, act, weights):
    leaves = [t.detach().double().requires_grad_() for t in (x, w, b)]
    z = F.linear(*leaves)
    ((ACTS[act](z[..., 0::2]) * z[..., 1::2]) * weights.double()).sum().backward()
    return [t.grad for t in leaves]


@pytest.mark.parametrize("act", ["silu", "gelu", "relu", "none"])
def test_gated_linear_under_autograd_keeps_z_and_matches_torchs_gradients(act, monkeypatch):
    calls = _stub_gemms(monkeypatch)
    x, w, b = _leaves(0)
    y = cute_gemm.gated_linear(x, w, b, activation=act)
    assert y.shape == (2, 3, 16) and type(y.grad_fn).__name__.startswith("MulBackward")
    weights = torch.linspace(-1, 1, 16)
    (y.float() * weights).sum().backward()
    for got, ref in zip((x.grad, w.grad, b.grad), _reference_grads(x, w, b, act, weights)):
        assert ((got.double() - ref).norm() / ref.norm()).item() < 2e-2, act
    assert calls == ["plain"] * 3  # z forward, then dX and dW


@pytest.mark.parametrize("act", ["silu", "gelu", "relu", "none"])
def test_the_gated_linear_op_recomputes_z_in_its_backward(act, monkeypatch):
    """torch.ops.cute_gemm.gated_linear called directly under autograd: the fused forward, then its registered
    backward recomputes z (one more GEMM) and gives the pair's gradients."""
    calls = _stub_gemms(monkeypatch, fused=True)
    x, w, b = _leaves(1)
    y = torch.ops.cute_gemm.gated_linear(x, w, b, "best", None, act)
    weights = torch.linspace(-1, 1, 16)
    (y.float() * weights).sum().backward()
    assert calls[0] == ("gated", act) and calls[1:] == ["plain"] * 3
    for got, ref in zip((x.grad, w.grad, b.grad), _reference_grads(x, w, b, act, weights)):
        assert ((got.double() - ref).norm() / ref.norm()).item() < 2e-2, act


# ---- the ops: fakes, opcheck, torch.compile ----

def test_fake_implementations_give_half_width_shapes():
    a = torch.empty(37, 64, device="meta", dtype=torch.bfloat16)
    w = torch.empty(96, 64, device="meta", dtype=torch.bfloat16)
    bias = torch.empty(96, device="meta", dtype=torch.bfloat16)
    res = torch.empty(37, 48, device="meta", dtype=torch.bfloat16)
    c = torch.ops.cute_gemm.gemm_epilogue(a, w.t(), bias, res, "silu", "best", torch.bfloat16, True)
    assert tuple(c.shape) == (37, 48) and c.dtype == torch.bfloat16
    with pytest.raises(InputError, match=r"residual must be \[M, N/2\] = \(37, 48\)"):
        torch.ops.cute_gemm.gemm_epilogue(a, w.t(), None, res.new_empty(37, 96), "silu", "best", torch.bfloat16, True)
    with pytest.raises(InputError, match="N=88 must be a multiple of 16"):
        torch.ops.cute_gemm.gemm_epilogue(a, w[:88].t(), None, None, "silu", "best", None, True)
    x = torch.empty(2, 37, 64, device="meta", dtype=torch.bfloat16)
    y = torch.ops.cute_gemm.gated_linear(x, w, bias, "best", torch.float32, "gelu")
    assert tuple(y.shape) == (2, 37, 48) and y.dtype == torch.float32
    with pytest.raises(InputError, match="w_gate_up has 88 rows"):
        torch.ops.cute_gemm.gated_linear(x, w[:88], None, "best", None, "silu")


def test_opcheck_of_the_gated_ops(monkeypatch):
    _stub_gemms(monkeypatch, fused=True)
    x, w, b = _leaves(2)
    torch.library.opcheck(torch.ops.cute_gemm.gated_linear.default, (x, w, b, "best", None, "silu"))
    a = torch.randn(7, 16).bfloat16()
    res = torch.randn(7, 16)
    torch.library.opcheck(torch.ops.cute_gemm.gemm_epilogue.default,
                          (a, w.detach().t(), b.detach(), res, "gelu", "best", None, True))


def test_torch_compile_fullgraph_traces_the_gated_ops():
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return lambda *args: [torch.zeros(37, 48, dtype=torch.bfloat16)]

    def block(x, w, bias):
        y = cute_gemm.gemm(x, w.t(), phase="best", out_dtype=torch.bfloat16, bias=bias, activation="silu",
                           gated=True)
        return y + cute_gemm.gated_linear(x, w, bias, activation="gelu")

    x, w, bias = torch.randn(37, 64).bfloat16(), torch.randn(96, 64).bfloat16(), torch.randn(96).bfloat16()
    with torch.no_grad():
        torch.compile(block, fullgraph=True, backend=backend)(x, w, bias)
    (gm,) = graphs
    code = gm.code
    assert "torch.ops.cute_gemm.gemm_epilogue(" in code and "'silu'" in code and "True" in code
    assert "torch.ops.cute_gemm.gated_linear(" in code and "'gelu'" in code


def test_torch_compile_fullgraph_training_through_gated_linear(monkeypatch):
    """Recorded under torch.compile: the linear op gives z, aten's silu and mul the pair (torch's derivative in the
    backward graph), the gradients are eager's."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    _stub_gemms(monkeypatch)
    graphs = {}

    def keep(name):
        def compiler(gm, example_inputs):
            graphs[name] = gm
            return make_boxed_func(gm.forward)
        return compiler

    x, w, b = _leaves(3)

    def step(x, w, b):
        return (cute_gemm.gated_linear(x, w, b).float() * torch.linspace(-1, 1, 16)).sum()

    step(x, w, b).backward()
    eager = [t.grad.clone() for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    torch.compile(step, fullgraph=True, backend=aot_autograd(fw_compiler=keep("fw"), bw_compiler=keep("bw")))(
        x, w, b).backward()
    fw = [str(n.target) for n in graphs["fw"].graph.nodes if n.op == "call_function"]
    bw = [str(n.target) for n in graphs["bw"].graph.nodes if n.op == "call_function"]
    assert "cute_gemm.linear.default" in fw and "aten.silu.default" in fw and "cute_gemm.gated_linear.default" not in fw
    assert "aten.silu_backward.default" in bw and "cute_gemm.linear_dx.default" in bw
    for got, ref in zip((x.grad, w.grad, b.grad), eager):
        torch.testing.assert_close(got, ref, atol=0, rtol=0)
