"""Layouts and dtypes on the GPU (marker `gpu`; skipped without one; every test under the conftest timeout).

1. Every TMA phase of the GPU's ladder x 4 layouts (nn, nt, tn, tt) x 2 input dtypes (fp16, bf16) x 3
   output dtypes (fp32, fp16, bf16), each at an aligned shape and two ragged ones -- M = 1 where the
   layout allows it (a column-major A needs M % 8 == 0: M = 8 there), a K that is no multiple of 8 where
   no operand has K contiguous (tn) -- checked by the harness (fresh random inputs in that layout,
   NaN-poisoned C, cuBLASLt on the same tensors and float64, per-out-dtype tolerances, a repeat
   bit-identical). The ~240 kernels are compiled first, in parallel worker processes, into the disk cache
   (``precompile``), so that the checks only load them.
2. ``cute_gemm.linear`` inside a transformer-style MLP block (x [2, 37, 1024] bf16, up 1024 -> 4096 with
   bias, GELU, down 4096 -> 1024 with bias, nn.Linear weights) equals the same block with F.linear within
   the check's tolerance: eager, under torch.compile(fullgraph=True), and replayed in a CUDA graph.
3. Bad combinations are refused before launch (the C they would write stays NaN); the vendor peers and a
   bench run in another layout and dtypes.

    pytest -m gpu tests/test_gpu_operands.py          # ~4 min on an H200 host with 16 cores
"""

import faulthandler
import os

import pytest

from conftest import gpu_family
from cute_gemm.runtime import registry
from cute_gemm.runtime.problem import Problem
from phases.operands import AB_DTYPES, C_DTYPES, LAYOUTS, Operands

FAMILY = gpu_family()
TMA = [e for e in registry.all_entries(FAMILY or "sm90") if e.make().ragged]
COMBOS = [(e, lay, ab, c) for e in TMA for lay in LAYOUTS for ab in AB_DTYPES for c in C_DTYPES]
WORKERS = int(os.environ.get("CUTE_GEMM_PRECOMPILE_WORKERS", str(max(1, min(14, (os.cpu_count() or 2) - 2)))))
PRECOMPILE_TIMEOUT_S = int(os.environ.get("CUTE_GEMM_PRECOMPILE_TIMEOUT", "600"))


def shapes_for(layout: str) -> list[Problem]:
    """An aligned shape (tile multiples of every phase) and two ragged ones for a layout: M = 1 where A is
    row-major (8 where it is column-major: M is then its contiguous extent), N ragged against every tile,
    K = 519 and 73 where no operand has K contiguous (tn), else 520 and 72."""
    m1, m2 = (1, 129) if layout[0] == "n" else (8, 136)
    k1, k2 = (519, 73) if layout == "tn" else (520, 72)
    return [Problem(512, 768, 512), Problem(m1, 264, k1), Problem(m2, 3000, k2)]


@pytest.fixture(scope="session")
def precompiled(request, tmp_path_factory):
    """Compile the kernels of the selected combos in ``WORKERS`` processes into the disk cache (a session
    directory of its own when the disk cache is turned off), under a timeout of its own: this runs before
    the per-test one starts. Returns {(phase, layout, ab, c): error or None}."""
    import torch

    from cute_gemm.runtime import cache
    from cute_gemm.runtime.arch import target_of_capability
    from cute_gemm.runtime.gemm import precompile

    target = target_of_capability(*torch.cuda.get_device_capability(0))  # the exact one: sm_103a is not sm_100a

    if not cache.enabled():
        os.environ.pop("CUTE_GEMM_NO_DISK_CACHE", None)
        os.environ["CUTE_GEMM_CACHE_DIR"] = str(tmp_path_factory.mktemp("cute-gemm-cache"))
    wanted = []
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.originalname == "test_every_layout_and_dtype" and "combo" in params:
            e, lay, ab, c = params["combo"]
            wanted.append((e.phase, None, target, lay, ab, c))
    wanted = list(dict.fromkeys(wanted))
    faulthandler.dump_traceback_later(PRECOMPILE_TIMEOUT_S + 120, exit=True)
    try:
        done = precompile(wanted, workers=WORKERS, timeout=PRECOMPILE_TIMEOUT_S)
    finally:
        faulthandler.cancel_dump_traceback_later()
    print(f"\nprecompiled {len(done)} kernels with {WORKERS} workers: "
          f"{sum(r['source'] == 'compiled' for r in done)} compiled, {sum(r['source'] == 'disk' for r in done)} "
          f"already on disk, {sum(bool(r['error']) for r in done)} errors")
    return {(r["job"][0], *r["job"][3:]): r["error"] for r in done}


@pytest.mark.gpu
@pytest.mark.parametrize("combo", COMBOS, ids=lambda c: f"{c[0].key}-{c[1]}-{c[2]}-{c[3]}")
def test_every_layout_and_dtype(combo, precompiled):
    from cute_gemm.measure.check import check_phase, tolerance

    entry, layout, ab, c = combo
    ops = Operands.of(layout, ab, c)
    error = precompiled.get((entry.phase, layout, ab, c))
    assert error is None, f"{entry.key} {ops.label()} did not compile: {error}"
    tol = tolerance(ops)
    for p in shapes_for(layout):
        assert entry.make(None, ops).can_implement(p.m, p.n, p.k) == [], (p, ops.label())
        res = check_phase(entry, p, operands=ops, seed=1234)
        assert res.error is None, res.summary()
        assert res.operands == ops.label(), res.summary()  # the kernel of this layout ran, not another
        assert res.unwritten == 0 and res.mismatches == 0, res.summary()
        assert res.rel_fro_err <= tol.rel_err_limit, res.summary()
        assert res.repeat_identical, res.summary()
        assert res.passed


# ------------------------------------------------------------------------------------ linear in a model
def _mlp(use_cute: bool, phase: str = "best"):
    import torch
    import torch.nn.functional as F

    import cute_gemm

    class MLP(torch.nn.Module):
        """A transformer block's feed-forward: up (with bias), GELU, down (with bias)."""

        def __init__(self, d=1024, hidden=4096):
            super().__init__()
            self.up = torch.nn.Linear(d, hidden)
            self.down = torch.nn.Linear(hidden, d)

        def lin(self, x, layer):
            if use_cute:
                return cute_gemm.linear(x, layer.weight, layer.bias, phase=phase)
            return F.linear(x, layer.weight, layer.bias)

        def forward(self, x):
            return self.lin(F.gelu(self.lin(x, self.up)), self.down)

    torch.manual_seed(0)
    return MLP().cuda().to(torch.bfloat16)


def _assert_block_close(got, ref):
    import torch

    from cute_gemm.measure.check import tolerance

    tol = tolerance(Operands.of("nt", "bf16", "bf16"))
    assert got.shape == ref.shape and got.dtype == ref.dtype == torch.bfloat16
    assert not torch.isnan(got).any()
    torch.testing.assert_close(got.float(), ref.float(), atol=tol.atol, rtol=tol.rtol)


@pytest.mark.gpu
@pytest.mark.parametrize("phase", ["best", "7"])
def test_linear_in_an_mlp_block_eager(phase):
    import torch

    import cute_gemm

    ours, ref = _mlp(True, phase), _mlp(False)
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(2, 37, 1024, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        _assert_block_close(ours(x), ref(x))
        # the layer alone: F.linear's meaning, leading dims and bias included, and an fp32 output
        y = cute_gemm.linear(x, ref.up.weight, ref.up.bias, phase=phase, out_dtype=torch.float32)
        assert y.dtype == torch.float32 and y.shape == (2, 37, 4096)
        y_ref = torch.nn.functional.linear(x.float(), ref.up.weight.float(), ref.up.bias.float())
        torch.testing.assert_close(y, y_ref, atol=0.01, rtol=0.001)  # the fp32 check's tolerance


@pytest.mark.gpu
def test_linear_in_an_mlp_block_under_torch_compile_fullgraph():
    import torch

    ours, ref = _mlp(True), _mlp(False)
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(2, 37, 1024, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        compiled = torch.compile(ours, fullgraph=True)
        _assert_block_close(compiled(x), ref(x))
        x2 = torch.randn(2, 37, 1024, device="cuda", dtype=torch.bfloat16)
        _assert_block_close(compiled(x2), ref(x2))


@pytest.mark.gpu
def test_linear_in_an_mlp_block_in_a_cuda_graph():
    import torch

    ours, ref = _mlp(True), _mlp(False)
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(2, 37, 1024, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        ours(x)  # compile (or load) the plans before capturing
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = ours(x)
        x.copy_(torch.randn_like(x))  # new inputs in the captured buffer: the replay must see them
        y.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        _assert_block_close(y, ref(x))


# ------------------------------------------------------------------------------------- the call's edges
@pytest.mark.gpu
def test_gemm_of_a_transposed_weight_and_out_dtypes():
    """x @ w.T without a copy (B = w.t(), column-major), into every C type, through gemm() and the op."""
    import torch

    import cute_gemm

    x = torch.randn(37, 1024, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(3000, 1024, device="cuda", dtype=torch.bfloat16)
    ref = x.double() @ w.double().t()
    for out_dtype in (None, torch.float32, torch.float16, torch.bfloat16):
        for phase in ("5", "best"):
            c = cute_gemm.gemm(x, w.t(), phase=phase, out_dtype=out_dtype)
            assert c.dtype == (out_dtype or torch.float32) and c.shape == (37, 3000)
            err = (c.double() - ref).norm() / ref.norm()
            assert err < (1e-4 if c.dtype == torch.float32 else 8e-3), (phase, out_dtype, err)
    c = torch.ops.cute_gemm.gemm(x, w.t(), "5", torch.bfloat16)
    assert c.dtype == torch.bfloat16
    out = torch.full((37, 3000), float("nan"), device="cuda", dtype=torch.float16)
    assert cute_gemm.gemm(x, w.t(), phase="7", out=out) is out and not torch.isnan(out).any()


@pytest.mark.gpu
def test_bad_combinations_are_refused_before_launch():
    import torch

    import cute_gemm
    from cute_gemm import InputError, UnsupportedError

    a = torch.randn(256, 64, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(256, 64, device="cuda", dtype=torch.bfloat16)
    c = torch.full((256, 256), float("nan"), device="cuda")
    cute_gemm.gemm(a, w.t(), phase="5", out=c)  # the plan and its fast-path key exist: refusals come next
    c.fill_(float("nan"))
    cases = [
        ((a.half(), w.t()), {"out": c}, InputError, "A is torch.float16 and B is torch.bfloat16"),
        ((a.float(), w.float().t()), {"out": c}, InputError, "A must be torch.float16 or torch.bfloat16"),
        ((a.to(torch.int8), w.to(torch.int8).t()), {"out": c}, InputError, "got torch.int8"),
        ((a, w.t()), {"out": c, "out_dtype": torch.bfloat16}, InputError, "out is torch.float32 but out_dtype"),
        ((a, w.t()), {"out": c.half()[:, :128]}, InputError, r"out \(C\) must be 256x256"),
        ((a, w.t()), {"out_dtype": torch.int32}, InputError, "out_dtype=torch.int32"),
        ((a, torch.randn(64, 512, device="cuda", dtype=torch.bfloat16)[:, ::2]), {"out": c}, InputError,
         r"B \[K,N\] must be row-major"),
        ((torch.randn(60, 252, device="cuda", dtype=torch.bfloat16).t(), torch.randn(60, 256, device="cuda",
          dtype=torch.bfloat16)), {}, InputError, "M=252 must be a multiple of 8"),
        ((a, w.t()), {"phase": "11"}, InputError, "unknown phase '11'"),
        ((a, w.t()), {"phase": "0"}, UnsupportedError, "takes the worklog's operands only"),
    ]
    for args, kw, error, message in cases:
        with pytest.raises(error, match=message):
            cute_gemm.gemm(*args, **{"phase": "5", **kw})
    assert bool(torch.isnan(c).all()), "a refused call must not have launched"
    with pytest.raises(InputError, match="linear takes x"):
        cute_gemm.linear(a, w[:, :32])
    with pytest.raises(InputError, match="linear\\(x, w\\): .*multiple of 8"):
        cute_gemm.linear(torch.randn(3, 60, device="cuda", dtype=torch.bfloat16),
                         torch.randn(64, 60, device="cuda", dtype=torch.bfloat16))


@pytest.mark.gpu
@pytest.mark.parametrize("ops", [Operands.of("nt", "bf16", "bf16"), Operands.of("tn", "fp16", "bf16"),
                                 Operands.of("tt", "bf16", "fp32")], ids=lambda o: o.label().replace(" ", "-"))
def test_vendor_peers_run_the_same_layout_and_dtypes(ops):
    from cute_gemm.measure import peers, timing
    from cute_gemm.measure.inputs import timing_inputs

    p = Problem(136, 1024, 512)
    for name in peers.VENDOR:
        chk = peers.check_peer(peers.PEERS[name], p, ops)
        assert chk["error"] is None and chk["passed"], (name, chk)
        sets = timing_inputs(p, "ints", 2, ops)
        assert sets[0][0].is_contiguous() == (ops.a_major == "k") and sets[0][2].dtype.itemsize == (4 if ops.c == "fp32"
                                                                                                    else 2)
        cap = timing.capture(lambda: [peers.PEERS[name].factory(a, b, c) for a, b, c in sets])
        (t, _), = timing.interleave({name: cap}, rounds=2).values()
        assert 0 < min(t.ms_rounds) < 10
    assert peers.PEERS["triton"].cannot(ops) and peers.PEERS["quack"].cannot(ops)


@pytest.mark.gpu
def test_a_bench_run_in_another_layout():
    """Two phases and the vendor peers at a decode shape, nt bf16 -> bf16, through the real checks, copy
    bandwidth, graphs and telemetry: every row ok, the bandwidth columns filled, the operands recorded."""
    from cute_gemm.measure import peers, results, suite

    ops = Operands.of("nt", "bf16", "bf16")
    entries = [e for e in registry.all_entries(FAMILY) if e.phase in ("5", "10")]
    doc = suite.run_bench(entries, [Problem(16, 4096, 4096)], [peers.PEERS[n] for n in peers.VENDOR], data="ints",
                          rounds=2, progress=False, best_arch=FAMILY, operands=ops)
    assert results.validate_doc(doc) == [], results.validate_doc(doc)
    assert results.operands_of(doc) == ops and 1.0 < doc["copy_bandwidth"]["tb_s"] < 10.0
    for r in doc["results"]:
        assert r["status"] == "ok", (r["key"], r["reason"])
        assert r["check"]["passed"] and 0 < r["tb_s"] < 40 and r["pct_copy_bw"] > 0  # L2-resident: may pass HBM
        if r["kind"] == "phase":
            assert r["check"]["operands"] == ops.label()
