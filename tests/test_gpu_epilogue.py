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
3. The gated pairs, ``gemm(..., gated=True)``: five epilogues (SwiGLU, GeGLU with a bias, SwiGLU with bias and
   residual, the plain product with a residual, ReGLU with a bias) x C dtype x layout, phase 11 at split_k 1, 2, 3
   and "best", at the ragged shapes above with N = 528 (C [M, 264]: no tile multiple) -- against float64
   act(z[:, 0::2]) * z[:, 1::2] + residual, the tolerance carried through the product (an error in the gate moves
   it by |up| times, one in up by |act(gate)|), a repeat bit-identical, ``residual=out`` the same bits; and
   ``gated_linear`` of two layers interleaved once (inference fused, gradients under autograd).

The kernels are compiled first, in worker processes, into the disk cache (as tests/test_gpu_operands.py does):
the full product is 180 tests and several hundred kernels (CUTE_GEMM_EPILOGUE_QUICK=1: a covering subset,
every epilogue, C dtype and layout at least once each, 15 tests; the gated pairs 60, quick 12). Not yet run on a GPU (no device when it was
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
# the gated pairs: (bias?, activation, residual?) -- SwiGLU, GeGLU + bias, SwiGLU + bias + residual, the plain
# product + residual, ReGLU + bias
GATED = [(False, "silu", False), (True, "gelu", False), (True, "silu", True), (False, "none", True),
         (True, "relu", False)]
GATED_COMBOS = [(epi, c, lay) for epi in GATED for c in C_DTYPES for lay in LAYOUTS]
if os.environ.get("CUTE_GEMM_EPILOGUE_QUICK"):  # each epilogue once, turning through the C dtypes and layouts
    COMBOS = [(epi, C_DTYPES[i % 3], LAYOUTS[(i + i // 3) % 4]) for i, epi in enumerate(EPILOGUES)]
    GATED_COMBOS = [(GATED[i % len(GATED)], c, lay) for i, (c, lay) in enumerate(itertools.product(C_DTYPES,
                                                                                                  LAYOUTS))]
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


def gated_shapes_for(layout: str) -> list[tuple[int, int, int]]:
    """``shapes_for``'s with the GEMM's N = 528: C [M, 264], the pairs' 264 columns no tile multiple."""
    return [(m, 528, k) for m, _, k in shapes_for(layout)]


def split_config(arch: str, split: int, epi, ops: Operands, gated: bool = False):
    """Phase 11's default config with ``split_k`` = split and the epilogue's fields (``gated`` too), the token tile
    widened where the phase's rules want the tile's lines to divide by the split (sm100: bn 48 for a split of 3)."""
    from cute_gemm.runtime import choose, registry

    entry = registry.get(arch, "11")
    bias, act, res = epi
    for bn in (entry.default_config().bn, 48, 96):
        cfg = dataclasses.replace(entry.default_config(), split_k=split, bn=bn, bias=bias, activation=act,
                                  residual=res, gated=gated)
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
        names = {"test_every_epilogue_dtype_and_layout": False, "test_gated_pairs_dtype_and_layout": True}
        if item.originalname not in names or "combo" not in params:
            continue
        gated = names[item.originalname]
        epi, c, layout = params["combo"]
        ops = _ops(c, layout)
        picks = [("11", split_config(FAMILY, s, epi, ops, gated)) for s in SPLITS]
        # best's pick: phase 11, or at M = 1000 without the pairs a persistent phase (its own phase id)
        picks += [choose.resolve_epilogue(FAMILY, m, n, k, ops, gpu, *epi, gated)[:2]
                  for m, n, k in (gated_shapes_for(layout) if gated else shapes_for(layout))]
        wanted += [(phase, cfg, target, layout, ops.ab, c) for phase, cfg in picks]
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


def _assert_close(c, want, z, ops: Operands, k: int, act: str, what: str, aweight=1.0):
    """C written everywhere, within the check's tolerance (``tolerance(ops, k)``: elementwise atol + rtol |want|,
    relative Frobenius) of float64, plus tanh.approx's error (of |z|) for gelu and silu. ``aweight``: what an
    absolute error of the GEMM is multiplied by on its way to C (the gated pairs: 1 + |up| + |act(gate)|), ``z``
    then |gate| |up|."""
    import torch

    from cute_gemm.measure.check import tolerance

    tol = tolerance(ops, k)
    approx = TANH_APPROX if act in ("gelu", "silu") else 0.0
    assert not torch.isnan(c).any(), f"{what}: unwritten (NaN) elements"
    ref = want.to(c.dtype).double()  # rounded once, as the kernel rounds
    err = (c.double() - ref).abs()
    bound = tol.atol * aweight + (tol.rtol + approx) * ref.abs() + approx * z.abs()
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
           and not getattr(job[1], "gated", False)
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


def _gated_reference(a, b, bias, act, residual):
    """float64 act(g) * u + residual of the pairs (g, u) = (z[:, 0::2], z[:, 1::2]) of z = A @ B + bias; the
    tolerance's terms: |g| |u| (tanh.approx's error moves act(g) by at most about that times 2^-11) and the
    absolute error's weight 1 + |u| + |act(g)|."""
    import torch.nn.functional as F

    z = a.double() @ b.double()
    if bias is not None:
        z = z + bias.double()
    g, u = z[:, 0::2], z[:, 1::2]
    act_g = {"none": lambda t: t, "relu": F.relu, "gelu": lambda t: F.gelu(t, approximate="tanh"),
             "silu": F.silu}[act](g)
    y = act_g * u
    if residual is not None:
        y = y + residual.double()
    return y, g.abs() * u.abs(), 1 + u.abs() + act_g.abs()


@pytest.mark.gpu
@pytest.mark.parametrize("combo", GATED_COMBOS, ids=lambda x: f"gated+{_label(x[0]) or 'product'}-{x[1]}-{x[2]}")
def test_gated_pairs_dtype_and_layout(combo, precompiled):
    import torch

    import cute_gemm
    from cute_gemm.runtime.problem import torch_dtype

    (bias_on, act, res_on), c, layout = combo
    ops = _ops(c, layout)
    ab, c_dtype = torch_dtype(ops.ab), torch_dtype(c)
    bad = {job: err for job, err in precompiled.items() if err and job[3:] == (layout, ops.ab, c)
           and getattr(job[1], "gated", False) and (job[1].bias, job[1].activation, job[1].residual) == combo[0]}
    assert not bad, f"did not compile: {bad}"
    gen = torch.Generator(device="cuda").manual_seed(49)

    def rand(rows, cols, row_major, dtype):
        if row_major:
            return torch.randn(rows, cols, generator=gen, device="cuda").to(dtype)
        return torch.randn(cols, rows, generator=gen, device="cuda").to(dtype).t()

    runs = [("11", split_config(FAMILY, s, combo[0], ops, True)) for s in SPLITS] + [("best", None)]
    for m, n, k in gated_shapes_for(layout):
        for phase, cfg in runs:
            a, b = rand(m, k, layout[0] == "n", ab), rand(k, n, layout[1] == "n", ab)
            bias = torch.randn(n, generator=gen, device="cuda").to(ab) if bias_on else None
            res = rand(m, n // 2, True, c_dtype).contiguous() if res_on else None
            want, gu, aweight = _gated_reference(a, b, bias, act, res)
            what = (f"gated {_label(combo[0])} {ops.label()} phase {phase} {cfg and f'split_k={cfg.split_k}'} "
                    f"{m}x{n}x{k}")
            outs = []
            for _ in range(2):  # a repeat is bit-identical
                out = torch.full((m, n // 2), float("nan"), device="cuda", dtype=c_dtype)
                got = cute_gemm.gemm(a, b, phase=phase, out=out, config=cfg, bias=bias, activation=act,
                                     residual=res, gated=True)
                assert got is out
                outs.append(out)
            torch.cuda.synchronize()
            _assert_close(outs[0], want, gu, ops, k, act, what, aweight)
            assert torch.equal(outs[0], outs[1]), f"{what}: not deterministic"
            if res is not None:
                same = res.clone()
                cute_gemm.gemm(a, b, phase=phase, out=same, config=cfg, bias=bias, activation=act, residual=same,
                               gated=True)
                torch.cuda.synchronize()
                assert torch.equal(same, outs[0]), f"{what}: residual=out differs from a residual apart"


@pytest.mark.gpu
@pytest.mark.parametrize("act", ["silu", "gelu"])
def test_gated_linear_of_two_layers_inference_and_training(act):
    """A model's gate and up layers interleaved once: the fused call (inference) against float64 act(x Wg^T + bg) *
    (x Wu^T + bu); under autograd the gradients of x and of the interleaved weight and bias are float64's."""
    import torch
    import torch.nn.functional as F

    import cute_gemm

    gen = torch.Generator(device="cuda").manual_seed(50)
    x = torch.randn(2, 37, 1024, generator=gen, device="cuda").bfloat16()
    wg, wu = ((torch.randn(1320, 1024, generator=gen, device="cuda") / 32).bfloat16() for _ in range(2))
    bg, bu = (torch.randn(1320, generator=gen, device="cuda").bfloat16() for _ in range(2))
    w, b = cute_gemm.interleave_gate_up(wg, wu), cute_gemm.interleave_gate_up(bg, bu)
    with torch.no_grad():
        y = cute_gemm.gated_linear(x, w, b, activation=act)
    assert y.shape == (2, 37, 1320) and y.dtype == torch.bfloat16
    want, gu, aweight = _gated_reference(x.reshape(-1, 1024), w.t(), b, act, None)
    torch.cuda.synchronize()
    _assert_close(y.reshape(-1, 1320), want, gu, Operands.of("nt", "bf16", "bf16"), 1024, act, f"gated {act}",
                  aweight)
    leaves = [t.clone().requires_grad_() for t in (x, w, b)]
    y = cute_gemm.gated_linear(*leaves, activation=act)
    weights = torch.linspace(-1, 1, 1320, device="cuda")
    (y.float() * weights).sum().backward()
    ref = [t.detach().double().requires_grad_() for t in (x, w, b)]
    z = F.linear(*ref)
    acts = {"gelu": lambda t: F.gelu(t, approximate="tanh"), "silu": F.silu}
    ((acts[act](z[..., 0::2]) * z[..., 1::2]) * weights.double()).sum().backward()
    for got, r in zip(leaves, ref):
        assert ((got.grad.double() - r.grad).norm() / r.grad.norm()).item() < 2e-2, act


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


@pytest.mark.gpu
@pytest.mark.parametrize("residual", [True, False], ids=["residual", "no-residual"])
@pytest.mark.parametrize("gated", [False, True], ids=["bias+gelu", "gated+bias+silu"])
@pytest.mark.parametrize("phase", ["6", "7", "7+epi_spread", "8", "8+epi_spread", "8+spread_slabs", "8+bias_smem",
                                   "8+w176", "8+store_overlap"])
def test_persistent_phases_take_the_fused_epilogue(phase, gated, residual):
    """sm90's persistent phases with bias + gelu, or SwiGLU's pairs + bias (C [M, N/2] staged in (BM, 16) slabs),
    with and without a residual (without one a tile loads its bias once, before its slabs), in their own configs at
    ragged shapes: 3000xNx1000 and 100xNx1000 (N = 3064, gated 3056) split
    phase 7's last round along K in each pair (12 split tiles; at M = 100 every tile), so the epilogue is checked on
    the summed halves; 1000x264x520 (gated 1000x528x520) is a partial tile in every mode. float64 reference, the
    check's tolerance (the gated pairs': carried through the product), a repeat bit-identical. "7+epi_spread",
    "8+epi_spread": phase 7 or 8 with each slab's arithmetic held below the previous slab's barrier (``epi_spread``;
    phase 7's split tiles store theirs without it); "8+spread_slabs": that in 16-column slabs through 4 buffers (the
    gated pairs: their 32-column slabs) with the bias through smem, what best runs phase 8's fused epilogue in
    (``choose.spread_slabs``); "8+bias_smem": the tile's bias copied to smem as its mainloop starts (with a residual
    the field is inert: the slabs load the bias beside it);
    "8+w176": phase 8 176 wide in 16-column slabs (``choose.fitted_width``'s, which best picks at 1024x11008x4096; a
    16-bit C only: with an fp32 C its 11 staging buffers are over the smem); "8+store_overlap": each slab's arithmetic
    while the previous slab's store still reads smem."""
    if FAMILY != "sm90":
        pytest.skip("the sm90 ladder's persistent phases")
    import torch

    import cute_gemm
    from cute_gemm.runtime import registry
    from cute_gemm.runtime.problem import torch_dtype

    act, wide = ("silu", 3056) if gated else ("gelu", 3064)
    phase, _, switch = phase.partition("+")
    extra = {"": "", "w176": ",bn=176,epi_n=16,epi_stages=11"}.get(switch, f",{switch}=true")
    entry = registry.get("sm90", phase)
    if switch == "spread_slabs":  # best's rule gives these fields to phase 8's default config
        from cute_gemm.runtime import choose
        s = choose.spread_slabs(dataclasses.replace(entry.default_config(), gated=gated))
        assert (s.epi_spread, s.epi_n, s.epi_stages, s.bias_smem) == (True, *((32, 2) if gated else (16, 4)), True)
        extra = f",epi_spread=true,epi_n={s.epi_n},epi_stages={s.epi_stages},bias_smem=true"
    cfg = entry.configured(f"bias=true,activation={act},residual={str(residual).lower()},gated={str(gated).lower()}"
                           + extra)
    if phase == "7":
        kern = entry.make(cfg, Operands.of("nt", "bf16", "bf16"))
        assert kern.schedule(3000, wide, 1000)[1] == 12 and kern.schedule(100, wide, 1000)[0] == 0
    gen = torch.Generator(device="cuda").manual_seed(11 if gated else 7)
    for c, layout in (("bf16", "nt"), ("fp32", "nn")):
        ops = _ops(c, layout)
        if entry.make(cfg, ops).operand_problems(ops):
            assert switch == "w176" and c == "fp32", f"{phase}+{switch} refuses {ops.label()}"
            continue
        ab, c_dtype = torch_dtype(ops.ab), torch_dtype(c)
        for m, n, k in ((3000, wide, 1000), (100, wide, 1000), (1000, 528 if gated else 264, 520)):
            nc = n // 2 if gated else n
            a = torch.randn(m, k, generator=gen, device="cuda").to(ab)
            b = (torch.randn(k, n, generator=gen, device="cuda").to(ab) if layout[1] == "n"
                 else torch.randn(n, k, generator=gen, device="cuda").to(ab).t())
            bias = torch.randn(n, generator=gen, device="cuda").to(ab)
            res = torch.randn(m, nc, generator=gen, device="cuda").to(c_dtype) if residual else None
            if gated:
                want, z, aweight = _gated_reference(a, b, bias, act, res)
            else:
                (want, z), aweight = _reference(a, b, bias, act, res, c_dtype), 1.0
            outs = []
            for _ in range(2):
                out = torch.full((m, nc), float("nan"), device="cuda", dtype=c_dtype)
                cute_gemm.gemm(a, b, phase=phase, out=out, config=cfg, bias=bias, activation=act, residual=res,
                               gated=gated)
                outs.append(out)
            torch.cuda.synchronize()
            what = f"{'gated ' if gated else ''}phase {phase} {ops.label()} {m}x{n}x{k}"
            _assert_close(outs[0], want, z, ops, k, act, what, aweight)
            assert torch.equal(outs[0], outs[1]), f"{what}: not deterministic"
