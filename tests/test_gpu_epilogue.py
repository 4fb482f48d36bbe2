"""The fused epilogue on the GPU (marker `gpu`; skipped without one; every test under the conftest timeout).

1. ``cute_gemm.gemm(a, b, bias=, activation=, residual=)`` for every epilogue (each of the 15 combinations of a
   bias, an activation -- none, relu, gelu, silu -- and a residual, less the empty one) x C dtype (fp32, fp16,
   bf16) x layout (nn, nt, tn, tt; A and B fp16 for nn and tn, bf16 for nt and tt), with phase 11 at split_k 1,
   2 and 3 and with phase="best", at ragged shapes (M = 1, 7, 1000 where A is row-major, 8, 16, 1000 where M is
   its contiguous extent; N = 264, no tile multiple; K = 520 and 72): fresh random inputs per shape, C poisoned
   with NaN before each launch, against float64 act(A @ B + bias) + residual rounded once to C's type, within
   ``cute_gemm.measure.check``'s tolerance plus the SFU's ``tanh.approx.f32`` (gelu, silu); a repeat is
   bit-identical, and ``residual=out`` (the same tensor) gives the same bits as a residual apart.
2. ``cute_gemm.linear(x, w, b, activation=)``: inference fused (phase 11) equals F.linear then the activation
   in float64 within the same tolerance; under autograd its gradients are F.linear-then-activation's.

The kernels are compiled first, in worker processes, into the disk cache (as tests/test_gpu_operands.py does):
the full product is 180 tests and several hundred kernels (CUTE_GEMM_EPILOGUE_QUICK=1: a covering subset,
every epilogue, C dtype and layout at least once each, 15 tests). Not yet run on a GPU (no device when it was
written): the compile count and the run time are unmeasured.

    pytest -m gpu tests/test_gpu_epilogue.py
"""

import dataclasses
import faulthandler
import itertools
import os

import pytest

from conftest import gpu_family
from phases.operands import C_DTYPES, LAYOUTS, Operands

FAMILY = gpu_family()
ACTIVATIONS = ("none", "relu", "gelu", "silu")
EPILOGUES = [(bias, act, res) for bias, act, res in itertools.product((False, True), ACTIVATIONS, (False, True))
             if bias or res or act != "none"]
AB = {"nn": "fp16", "nt": "bf16", "tn": "fp16", "tt": "bf16"}
COMBOS = [(epi, c, lay) for epi in EPILOGUES for c in C_DTYPES for lay in LAYOUTS]
if os.environ.get("CUTE_GEMM_EPILOGUE_QUICK"):  # each epilogue once, turning through the C dtypes and layouts
    COMBOS = [(epi, C_DTYPES[i % 3], LAYOUTS[(i + i // 3) % 4]) for i, epi in enumerate(EPILOGUES)]
SPLITS = (1, 2, 3)
WORKERS = int(os.environ.get("CUTE_GEMM_PRECOMPILE_WORKERS", str(max(1, min(14, (os.cpu_count() or 2) - 2)))))
PRECOMPILE_TIMEOUT_S = int(os.environ.get("CUTE_GEMM_PRECOMPILE_TIMEOUT", "1200"))
TANH_APPROX = 2.0**-10  # twice tanh.approx.f32's documented relative error (2^-11), for gelu and silu


def _label(epi) -> str:
    bias, act, res = epi
    return "+".join((["bias"] if bias else []) + ([act] if act != "none" else []) + (["residual"] if res else []))


def shapes_for(layout: str) -> list[tuple[int, int, int]]:
    """Ragged (M, N, K): M = 1 and 7 where A is row-major (8 and 16 where M is its contiguous extent), 1000 (past
    phase 10's candidates: best's large-M tiles); N = 264 no tile multiple; K = 520 and 72 (partial k-tiles)."""
    small = (1, 7) if layout[0] == "n" else (8, 16)
    return [(small[0], 264, 520), (small[1], 264, 72), (1000, 264, 520)]


def split_config(arch: str, split: int, epi, ops: Operands):
    """Phase 11's default config with ``split_k`` = split and the epilogue's fields, the token tile widened where
    the phase's rules want the tile's lines to divide by the split (sm100: bn 48 for a split of 3)."""
    from cute_gemm.runtime import choose, registry

    entry = registry.get(arch, "11")
    bias, act, res = epi
    for bn in (entry.default_config().bn, 48, 96):
        cfg = dataclasses.replace(entry.default_config(), split_k=split, bn=bn, bias=bias, activation=act,
                                  residual=res)
        if not entry.config_problems(cfg) and not choose.sm100_build_problems(entry.make(cfg, ops)):
            return cfg
    raise AssertionError(f"no phase 11 config of split_k={split} for {ops.label()}")


def _ops(c: str, layout: str) -> Operands:
    return Operands.of(layout, AB[layout], c)


@pytest.fixture(scope="session")
def precompiled(request, tmp_path_factory):
    """Compile the selected tests' kernels -- the split configs and best's picks at their shapes -- in ``WORKERS``
    processes into the disk cache (a session directory of its own when the disk cache is turned off), under a
    timeout of its own. Returns {job: error or None}."""
    import torch

    from cute_gemm.runtime import cache, choose, plan
    from cute_gemm.runtime.arch import target_of_capability
    from cute_gemm.runtime.gemm import precompile

    target = target_of_capability(*torch.cuda.get_device_capability(0))
    gpu = plan.device_name(0)
    if not cache.enabled():
        os.environ.pop("CUTE_GEMM_NO_DISK_CACHE", None)
        os.environ["CUTE_GEMM_CACHE_DIR"] = str(tmp_path_factory.mktemp("cute-gemm-cache"))
    wanted = []
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.originalname != "test_every_epilogue_dtype_and_layout" or "combo" not in params:
            continue
        epi, c, layout = params["combo"]
        ops = _ops(c, layout)
        cfgs = [split_config(FAMILY, s, epi, ops) for s in SPLITS]
        cfgs += [choose.resolve_epilogue(FAMILY, m, n, k, ops, gpu, *epi)[1] for m, n, k in shapes_for(layout)]
        wanted += [("11", cfg, target, layout, ops.ab, c) for cfg in cfgs]
    wanted = list(dict.fromkeys(wanted))
    faulthandler.dump_traceback_later(PRECOMPILE_TIMEOUT_S + 120, exit=True)
    try:
        done = precompile(wanted, workers=WORKERS, timeout=PRECOMPILE_TIMEOUT_S)
    finally:
        faulthandler.cancel_dump_traceback_later()
    print(f"\nprecompiled {len(done)} phase 11 kernels with {WORKERS} workers: "
          f"{sum(r['source'] == 'compiled' for r in done)} compiled, {sum(bool(r['error']) for r in done)} errors")
    return {r["job"]: r["error"] for r in done}


def _reference(a, b, bias, act, residual, c_dtype):
    """float64 act(A @ B + bias) + residual, and the pre-activation z (for the tanh allowance)."""
    import torch.nn.functional as F

    z = a.double() @ b.double()
    if bias is not None:
        z = z + bias.double()
    y = {"none": lambda t: t, "relu": F.relu, "gelu": lambda t: F.gelu(t, approximate="tanh"), "silu": F.silu}[act](z)
    if residual is not None:
        y = y + residual.double()
    return y, z


def _assert_close(c, want, z, ops: Operands, k: int, act: str, what: str):
    """C written everywhere, within the check's tolerance (``tolerance(ops, k)``: elementwise atol + rtol |want|,
    relative Frobenius) of float64, plus tanh.approx's error (of |z|) for gelu and silu."""
    import torch

    from cute_gemm.measure.check import tolerance

    tol = tolerance(ops, k)
    approx = TANH_APPROX if act in ("gelu", "silu") else 0.0
    assert not torch.isnan(c).any(), f"{what}: unwritten (NaN) elements"
    ref = want.to(c.dtype).double()  # rounded once, as the kernel rounds
    err = (c.double() - ref).abs()
    bound = tol.atol + (tol.rtol + approx) * ref.abs() + approx * z.abs()
    assert bool((err <= bound).all()), f"{what}: {int((err > bound).sum())} elements outside the tolerance"
    rel = ((c.double() - want).norm() / want.norm()).item()
    limit = tol.rel_err_limit + approx
    assert rel <= limit, f"{what}: rel Frobenius err {rel:.3g} > {limit:.3g}"


@pytest.mark.gpu
@pytest.mark.parametrize("combo", COMBOS, ids=lambda x: f"{_label(x[0])}-{x[1]}-{x[2]}")
def test_every_epilogue_dtype_and_layout(combo, precompiled):
    import torch

    import cute_gemm
    from cute_gemm.runtime.problem import torch_dtype

    (bias_on, act, res_on), c, layout = combo
    ops = _ops(c, layout)
    ab, c_dtype = torch_dtype(ops.ab), torch_dtype(c)
    bad = {job: err for job, err in precompiled.items() if err and job[3:] == (layout, ops.ab, c)
           and (job[1].bias, job[1].activation, job[1].residual) == (bias_on, act, res_on)}
    assert not bad, f"did not compile: {bad}"
    gen = torch.Generator(device="cuda").manual_seed(47)

    def rand(rows, cols, row_major, dtype):  # row-major, or the .t() of a contiguous [cols, rows]
        if row_major:
            return torch.randn(rows, cols, generator=gen, device="cuda").to(dtype)
        return torch.randn(cols, rows, generator=gen, device="cuda").to(dtype).t()

    runs = [("11", split_config(FAMILY, s, combo[0], ops)) for s in SPLITS] + [("best", None)]
    for m, n, k in shapes_for(layout):
        for phase, cfg in runs:
            a, b = rand(m, k, layout[0] == "n", ab), rand(k, n, layout[1] == "n", ab)  # fresh inputs per run
            bias = torch.randn(n, generator=gen, device="cuda").to(ab) if bias_on else None
            res = rand(m, n, True, c_dtype).contiguous() if res_on else None
            want, z = _reference(a, b, bias, act, res, c_dtype)
            what = f"{_label(combo[0])} {ops.label()} phase {phase} {cfg and f'split_k={cfg.split_k}'} {m}x{n}x{k}"
            outs = []
            for _ in range(2):  # a repeat is bit-identical
                out = torch.full((m, n), float("nan"), device="cuda", dtype=c_dtype)
                got = cute_gemm.gemm(a, b, phase=phase, out=out, config=cfg, bias=bias, activation=act,
                                     residual=res)
                assert got is out
                outs.append(out)
            torch.cuda.synchronize()
            _assert_close(outs[0], want, z, ops, k, act, what)
            assert torch.equal(outs[0], outs[1]), f"{what}: not deterministic"
            if res is not None:  # the residual as out itself: read before written, the same bits
                same = res.clone()
                cute_gemm.gemm(a, b, phase=phase, out=same, config=cfg, bias=bias, activation=act, residual=same)
                torch.cuda.synchronize()
                assert torch.equal(same, outs[0]), f"{what}: residual=out differs from a residual apart"


@pytest.mark.gpu
@pytest.mark.parametrize("act", ["relu", "gelu", "silu"])
def test_linear_with_an_activation_inference_and_training(act):
    import torch
    import torch.nn.functional as F

    import cute_gemm

    gen = torch.Generator(device="cuda").manual_seed(48)
    x = torch.randn(2, 37, 1024, generator=gen, device="cuda").bfloat16()
    w = (torch.randn(4096, 1024, generator=gen, device="cuda") / 32).bfloat16()
    b = torch.randn(4096, generator=gen, device="cuda").bfloat16()
    ops = Operands.of("nt", "bf16", "bf16")
    with torch.no_grad():
        y = cute_gemm.linear(x, w, b, activation=act)  # fused: phase 11
    want, z = _reference(x.reshape(-1, 1024), w.t(), b, act, None, torch.bfloat16)
    torch.cuda.synchronize()
    _assert_close(y.reshape(-1, 4096), want, z, ops, 1024, act, f"linear {act}")
    leaves = [t.clone().requires_grad_() for t in (x, w, b)]
    y = cute_gemm.linear(*leaves, activation=act)
    weights = torch.linspace(-1, 1, 4096, device="cuda")
    (y.float() * weights).sum().backward()
    ref = [t.detach().double().requires_grad_() for t in (x, w, b)]
    acts = {"relu": F.relu, "gelu": lambda t: F.gelu(t, approximate="tanh"), "silu": F.silu}
    (acts[act](F.linear(*ref)) * weights.double()).sum().backward()
    for got, r in zip(leaves, ref):
        assert ((got.grad.double() - r.grad).norm() / r.grad.norm()).item() < 2e-2, act
