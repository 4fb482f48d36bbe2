"""Every phase of the GPU's ladder, checked against cuBLASLt (the worklog's tolerance) and float64, with
fresh random inputs, NaN-poisoned output and a repeat that must be bit-identical -- on tile-multiple
shapes and on ragged ones (partial tiles in M, N and K). And the Python face: empty problems, bad
input refused before launch, the torch custom op under torch.compile(fullgraph=True), CUDA-graph
capture. Marker `gpu`: skipped without a GPU; each test runs under the conftest timeout (a hung
mbarrier ends the process)."""

import dataclasses

import pytest

from conftest import gpu_family
from cute_gemm.runtime import registry
from cute_gemm.runtime.problem import Problem

# the two headline shapes and smaller ones, non-square included, all tile multiples (phases 0-1 need them)
ALIGNED = [
    Problem(4096, 4096, 4096),
    Problem(1024, 4096, 4096),
    Problem(256, 512, 1024),
    Problem(512, 256, 768),
    Problem(2048, 1024, 512),
    Problem(3072, 3072, 3072),  # phase 7 splits its partial last round
]
# partial tiles: M in {1, 7, 129, 1000, 3000}, N in {8, 264, 3000}, K in {8, 72, 520, 4104} (a spread)
RAGGED = [
    Problem(1, 8, 8),
    Problem(7, 264, 72),
    Problem(129, 3000, 520),
    Problem(1000, 264, 4104),
    Problem(3000, 3000, 520),
    Problem(1000, 3000, 72),
    Problem(129, 8, 4104),
    Problem(3000, 264, 8),
]

FAMILY = gpu_family()
ENTRIES = registry.all_entries(FAMILY) if FAMILY else registry.all_entries("sm90")


def _check(entry, shape):
    from cute_gemm.measure.check import check_phase

    res = check_phase(entry, shape)
    assert res.error is None, res.error
    assert res.unwritten == 0, res.summary()
    assert res.mismatches == 0, res.summary()
    assert res.rel_fro_err <= 1e-4, res.summary()
    assert res.repeat_identical, res.summary()
    assert res.passed


@pytest.mark.gpu
@pytest.mark.parametrize("shape", ALIGNED, ids=str)
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.key)
def test_phase_matches_cublaslt(entry, shape):
    assert entry.make().can_implement(shape.m, shape.n, shape.k) == []
    _check(entry, shape)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", RAGGED, ids=str)
@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.make().ragged], ids=lambda e: e.key)
def test_ragged_shapes(entry, shape):
    _check(entry, shape)


@pytest.mark.gpu
def test_gemm_api_on_torch_tensors():
    import torch

    import cute_gemm

    a = torch.randn(512, 1024, device="cuda").half()
    b = torch.randn(1024, 768, device="cuda").half()
    ref = torch.mm(a, b, out_dtype=torch.float32)
    for phase in ("0", "2", "5", "7"):
        c = cute_gemm.gemm(a, b, phase=phase)
        assert c.dtype == torch.float32 and c.shape == (512, 768)
        torch.testing.assert_close(c, ref, atol=0.01, rtol=0.001)
    out = torch.full((512, 768), float("nan"), device="cuda")
    assert cute_gemm.gemm(a, b, phase="6", out=out) is out
    torch.testing.assert_close(out, ref, atol=0.01, rtol=0.001)


@pytest.mark.gpu
def test_one_compile_serves_every_shape():
    """A new shape costs no compile: the plan of a phase is made once per device and reused."""
    import torch

    import cute_gemm
    from cute_gemm.runtime import plan

    cute_gemm.gemm(torch.randn(256, 64, device="cuda").half(), torch.randn(64, 256, device="cuda").half(), phase="5")
    plans = dict(plan._PLANS)
    for m, n, k in [(1000, 3000, 520), (7, 8, 8), (4096, 264, 72)]:
        a, b = torch.randn(m, k, device="cuda").half(), torch.randn(k, n, device="cuda").half()
        torch.testing.assert_close(cute_gemm.gemm(a, b, phase="5"), torch.mm(a, b, out_dtype=torch.float32),
                                   atol=0.01, rtol=0.001)
    assert plan._PLANS == plans


@pytest.mark.gpu
def test_empty_problems_launch_nothing():
    import torch

    import cute_gemm

    a, b = torch.randn(0, 64, device="cuda").half(), torch.randn(64, 128, device="cuda").half()
    assert cute_gemm.gemm(a, b, phase="5").shape == (0, 128)
    a, b = torch.randn(32, 64, device="cuda").half(), torch.randn(64, 0, device="cuda").half()
    assert cute_gemm.gemm(a, b, phase="5").shape == (32, 0)
    a, b = torch.randn(32, 0, device="cuda").half(), torch.randn(0, 16, device="cuda").half()
    c = cute_gemm.gemm(a, b, phase="5")
    assert c.shape == (32, 16) and bool((c == 0).all())


@pytest.mark.gpu
def test_bad_input_is_refused_before_launch():
    import torch

    import cute_gemm
    from cute_gemm import UnsupportedError
    from cute_gemm import InputError

    a, b = torch.randn(256, 64, device="cuda").half(), torch.randn(64, 256, device="cuda").half()
    cute_gemm.gemm(a, b, phase="3")  # the plan exists: the fast path's refusals come next
    c = torch.full((256, 256), float("nan"), device="cuda")
    with pytest.raises(InputError, match="A must be torch.float16 or torch.bfloat16, got torch.float32"):
        cute_gemm.gemm(a.float(), b, phase="3", out=c)
    with pytest.raises(InputError, match=r"B \[K,N\] must be row-major .* or column-major"):
        cute_gemm.gemm(a, torch.randn(64, 512, device="cuda").half()[:, ::2], phase="3", out=c)
    with pytest.raises(InputError, match=r"out \(C\) must be 256x256"):
        cute_gemm.gemm(a, b, phase="3", out=torch.empty(256, 128, device="cuda"))
    with pytest.raises(InputError, match="inner dimensions differ"):
        cute_gemm.gemm(a, torch.randn(72, 256, device="cuda").half(), phase="3")
    with pytest.raises(InputError, match="multiple of 8"):
        cute_gemm.gemm(torch.randn(256, 60, device="cuda").half(), torch.randn(60, 256, device="cuda").half())
    with pytest.raises(UnsupportedError, match="M=100 is not a multiple of 128"):
        cute_gemm.gemm(torch.randn(100, 64, device="cuda").half(), b, phase="0")
    assert bool(torch.isnan(c).all()), "a refused call must not have launched"


@pytest.mark.gpu
def test_other_arch_is_refused_before_launch():
    import torch

    import cute_gemm
    from cute_gemm import UnsupportedError

    other = "sm100" if FAMILY == "sm90" else "sm90"
    a = torch.randn(256, 256, device="cuda").half()
    with pytest.raises(UnsupportedError):
        cute_gemm.gemm(a, a, arch=other)


@pytest.mark.gpu
def test_torch_op_under_torch_compile_fullgraph():
    import torch

    import cute_gemm  # noqa: F401  (registers torch.ops.cute_gemm.*)

    def f(a, b):
        return torch.relu(cute_gemm.gemm(a, b, phase="5")) + torch.ops.cute_gemm.gemm(a, b, "6")

    a = torch.randn(1000, 264, device="cuda").half()
    b = torch.randn(264, 3000, device="cuda").half()
    ref = torch.mm(a, b, out_dtype=torch.float32)
    got = torch.compile(f, fullgraph=True)(a, b)
    torch.testing.assert_close(got, torch.relu(ref) + ref, atol=0.02, rtol=0.002)


@pytest.mark.gpu
def test_cuda_graph_capture():
    """Compiled plans launch on the current (capturing) stream: a graph of gemm() calls replays correctly."""
    import torch

    import cute_gemm

    for (m, n, k), phase in [((1000, 264, 520), e.phase) for e in ENTRIES if e.make().ragged] + [
        ((4096, 4096, 4096), "6"), ((3072, 3072, 3072), "7")
    ]:
        a = torch.randn(m, k, device="cuda").half()
        b = torch.randn(k, n, device="cuda").half()
        c = torch.empty(m, n, device="cuda")
        cute_gemm.gemm(a, b, phase=phase, out=c)  # compile before capture
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(3):  # back to back, as the benchmark's graphs run them
                cute_gemm.gemm(a, b, phase=phase, out=c)
        c.fill_(float("nan"))
        a.copy_(torch.randn_like(a))  # new inputs in the same buffers: the replay must see them
        g.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(c, torch.mm(a, b, out_dtype=torch.float32), atol=0.01, rtol=0.001)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [Problem(3072, 3072, 3072), Problem(1000, 3000, 520), Problem(512, 512, 512)],
                         ids=str)
def test_best_candidates_are_correct(shape):
    """Every config phase="best" may pick passes the check, and gemm(phase="best") runs the one it picks."""
    import torch

    import cute_gemm
    from cute_gemm.runtime import choose
    from cute_gemm.measure.check import check_phase

    for row in choose.explain(FAMILY, shape.m, shape.n, shape.k):
        res = check_phase(registry.get(FAMILY, row["phase"]), shape, row["config"])
        assert res.passed, f"{row['label']}: {res.summary()}"
    a = torch.randn(shape.m, shape.k, device="cuda").half()
    b = torch.randn(shape.k, shape.n, device="cuda").half()
    torch.testing.assert_close(cute_gemm.gemm(a, b, phase="best"), torch.mm(a, b, out_dtype=torch.float32),
                               atol=0.01, rtol=0.001)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [Problem(100, 11000, 1000), Problem(1, 20000, 4104), Problem(128, 28000, 264)],
                         ids=str)
def test_wave_fitted_candidates_are_correct(shape):
    """phase="best"'s wave-fitted phase-9 tiles (128 x 96 / 160 / 224 at M <= 128), every split, on ragged
    shapes (M = 1, K not a multiple of the k-tile, N not a multiple of the width)."""
    from cute_gemm.measure.check import check_phase
    from cute_gemm.runtime import choose

    fitted = choose.wave_fitted_bn(shape.m, shape.n, 128)
    assert fitted not in (None, 64, 128, 256)
    entry = registry.get(FAMILY, "9")
    configs = [c for p, c in choose.split_candidates(shape.m, shape.n, shape.k) if p == "9" and c["bn"] == fitted]
    assert len(configs) == 3
    for over in configs:
        res = check_phase(entry, shape, dataclasses.replace(entry.default_config(), **over))
        assert res.passed, f"9 {over}: {res.summary()}"


@pytest.mark.gpu
@pytest.mark.skipif(FAMILY not in (None, "sm90"), reason="use_pdl is a config of sm90's persistent phases")
@pytest.mark.parametrize("phase", ["6", "7", "8"])
def test_persistent_phases_with_pdl_read_the_previous_launch_output(phase):
    """use_pdl=True (what phase="best" runs): a launch may start while the previous one drains, so each
    reads the C the previous wrote only after griddepcontrol.wait. A chain H = (A @ B) @ B2, each product a
    launch of the phase reading the last one's output (16-bit C), eagerly and replayed as a CUDA graph (where
    the launches get programmatic edges), matches torch's chain; a missing wait reads stale or NaN rows."""
    import torch

    import cute_gemm

    cfg = {"use_pdl": True}
    m, n, k = 1000, 3072, 520  # phase 7 splits its partial last round at the second product (1000x3072x3072)
    a = torch.randn(m, k, device="cuda").half()
    b = (torch.randn(k, n, device="cuda") / k**0.5).half()
    b2 = (torch.randn(n, n, device="cuda") / n**0.5).half()
    c = torch.empty(m, n, device="cuda", dtype=torch.half)
    h = torch.empty(m, n, device="cuda")

    def chain():
        cute_gemm.gemm(a, b, phase=phase, config=cfg, out=c)
        cute_gemm.gemm(c, b2, phase=phase, config=cfg, out=h)

    def expect():
        return torch.mm(torch.mm(a, b, out_dtype=torch.float32).half(), b2, out_dtype=torch.float32)

    for _ in range(2):  # the first call compiles
        c.fill_(float("nan"))
        h.fill_(float("nan"))
        chain()
        torch.testing.assert_close(h, expect(), atol=0.02, rtol=0.005)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(3):
            chain()
    c.fill_(float("nan"))
    h.fill_(float("nan"))
    a.copy_(torch.randn_like(a))
    g.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(h, expect(), atol=0.02, rtol=0.005)


# the persistent phases' prefill candidates beyond their defaults: 64-column C slabs of a 16-bit C (epi_n=64), the
# 256 x 128 tile of two 128-row warpgroups, and clusters along N sharing the A tile (cuBLAS's 1 x 2; the 2 x 2 that
# shares both operands)
PREFILL_CONFIGS = [
    ("7", {"epi_n": 64, "use_pdl": True}),
    ("8", {"epi_n": 64, "epi_stages": 3, "use_pdl": True}),
    ("6", {"bm": 256, "bn": 128, "stages": 3, "epi_n": 64, "use_pdl": True}),
    ("6", {"bm": 256, "bn": 128, "cluster_m": 1, "cluster_n": 2, "use_pdl": True}),
    ("6", {"cluster_n": 2, "use_pdl": True}),
    ("8", {"cluster_n": 2, "use_pdl": True}),
    ("8", {"bn": 128, "cluster_m": 1, "cluster_n": 2, "epi_n": 64, "use_pdl": True}),
    # choose.fitted_width's: 176 and 144 wide in 16-column slabs (176 with an fp32 C is over the smem), 160 in 5 of 32
    ("8", {"bn": 176, "epi_n": 16, "epi_stages": 11, "use_pdl": True}),
    ("8", {"bn": 144, "epi_n": 16, "epi_stages": 9, "use_pdl": True}),
    ("8", {"bn": 160, "epi_stages": 5, "use_pdl": True}),
    # best's phase 8 with a 16-bit C (choose.RING5): a 5-stage ring (200 KiB: with an fp32 C's staging over the smem),
    # in bands of 16 M-tiles up to K = 4096
    ("8", {"stages": 5, "group_m": 16, "use_pdl": True}),
    ("8", {"stages": 5, "use_pdl": True}),
    # phase 8's first form of the turn: handed on once the tile's wgmmas have completed (the default hands it on
    # when they are issued, CUTLASS's ping-pong order)
    ("8", {"stages": 5, "group_m": 16, "early_turn": False, "use_pdl": True}),
    # each slab's arithmetic while the previous slab's store reads smem (``store_overlap``), in both rings
    ("8", {"store_overlap": True, "use_pdl": True}),
    ("8", {"stages": 5, "group_m": 16, "store_overlap": True, "use_pdl": True}),
    # 128 wide in a 6-stage ring (choose.EXPLORE): N = 2048 in whole tiles
    ("8", {"bn": 128, "stages": 6, "use_pdl": True}),
    # phase 7 with 4 C staging buffers (choose.EXPLORE; 16-bit C): a slab waits for the store three slabs back
    ("7", {"epi_stages": 4, "use_pdl": True}),
]


@pytest.mark.gpu
@pytest.mark.skipif(FAMILY not in (None, "sm90"), reason="epi_n and cluster_n are configs of sm90's persistent phases")
@pytest.mark.parametrize("ops", ["nt bf16 bf16", "nn fp16 fp16", "tn bf16 fp32"])
@pytest.mark.parametrize("phase,over", PREFILL_CONFIGS, ids=lambda v: "-".join(f"{k}{x}" for k, x in v.items())
                         if isinstance(v, dict) else v)
def test_persistent_prefill_configs(phase, over, ops):
    """Each config against cuBLASLt and float64 (NaN-poisoned C, a bit-identical repeat) in the three layouts of a
    training step, at a ragged shape (a cluster's CTAs past M or N) and at one of several tile rounds (phase 7's split
    last round)."""
    from cute_gemm.measure.check import check_phase
    from phases.operands import Operands

    operands = Operands.of(*ops.split())
    entry = registry.get("sm90", phase)
    cfg = dataclasses.replace(entry.default_config(), **over)
    if operands.c == "fp32" and entry.make(cfg, operands).operand_problems(operands):
        pytest.skip("epi_n=64, 256 x 128 at 4 stages, 176 wide in 11 buffers, phase 8's 5 stages and phase 7's 4 "
                    "staging buffers take a 16-bit C (refused with an fp32 C)")
    for shape in (Problem(1000, 3000, 520), Problem(2056, 4104, 1032)):
        assert entry.make(cfg, operands).can_implement(shape.m, shape.n, shape.k) == []
        res = check_phase(entry, shape, config=cfg, operands=operands)
        assert res.error is None, res.error
        assert res.passed and res.repeat_identical, res.summary()
