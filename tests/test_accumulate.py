"""``accumulate`` (C += A @ B) on sm90 phases 5-8: the compiled code, the PTX machine, the API, the GPU.

With ``accumulate=True`` in its config a TMA-store phase stores each C slab with the TMA's reduce-add
(``cp.reduce.async.bulk.tensor...add``) instead of the plain bulk tensor store; nothing else of the kernel
changes, and the default config's code is the one it always was. The machine runs the accumulate config on a
ragged problem and checks that every element of C is added to exactly once, with exactly its sum over K.
``cute_gemm.gemm(a, b, out=c, accumulate=True)`` is checked on the host with the plans mocked (its errors, its
plan and fast-path key, ``best``'s candidates); the GPU test (marker gpu) compares C0 + A @ B with float64.

    pytest -m gpu tests/test_accumulate.py     # the GPU part alone (H200)
"""

import dataclasses
import re

import pytest

from cute_gemm.runtime import registry
from phases.operands import Operands

PHASES = ["5", "6", "7", "8"]
REDUCE_ADD = re.compile(r"cp\.reduce\.async\.bulk\.tensor\.2d\.global\.shared::cta\.add\.")
PLAIN_STORE = re.compile(r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.")


def accumulating(phase: str, **over):
    return dataclasses.replace(registry.get("sm90", phase).default_config(), accumulate=True, **over)


@pytest.mark.parametrize("ops", [None, Operands.of("tn", "bf16", "bf16")], ids=["fp32-C", "bf16-C"])
@pytest.mark.parametrize("phase", PHASES)
def test_accumulate_swaps_the_store_for_the_reduce_add(phase, ops):
    from sm90_compiled import compiled

    _, ptx, res = compiled(f"sm90:{phase}", ops, accumulating(phase))
    assert REDUCE_ADD.search(ptx), f"phase {phase}: no cp.reduce.async.bulk.tensor ... .add in the PTX"
    assert not PLAIN_STORE.search(ptx), f"phase {phase}: a plain TMA store of C is left"
    assert res["spill_stores"] == 0
    _, default_ptx, _ = compiled(f"sm90:{phase}", ops)
    assert PLAIN_STORE.search(default_ptx) and not REDUCE_ADD.search(default_ptx), \
        f"phase {phase}: the default config stores C (no reduce-add)"


def test_only_phases_5_to_8_have_the_field():
    have = {e.phase for e in registry.all_entries("sm90") if hasattr(e.default_config(), "accumulate")}
    assert have == set(PHASES)
    assert all(not e.default_config().accumulate for e in registry.all_entries("sm90") if e.phase in have)


def test_accumulate_is_a_switch_of_the_config():
    """Field overrides as gemm(config=) and compile_only take them; a new compile key (the config)."""
    e = registry.get("sm90", "6")
    assert e.configured("accumulate=true").accumulate is True
    assert e.configured({"accumulate": 1}) == accumulating("6")
    assert accumulating("6") != e.default_config()


def test_reduced_adds_refuses_a_plain_store():
    from sm90kit.harness90 import reduced_adds
    from sm90kit.machine90 import ReduceAdd

    vals, errors = reduced_adds({(0, 0): [ReduceAdd("x")], (0, 1): ["y"]}, [])
    assert vals == {(0, 0): ["x"], (0, 1): ["y"]}
    assert len(errors) == 1 and "(0, 1)" in errors[0]


# the machine runs: tests/test_sm90_sim.py's cases of these phases (ragged; 7 splits a tile along K)
SIM = {
    "5": (200, 120, 136, {"bn": 128}),
    "6": (300, 120, 72, {"bn": 128, "stages": 2, "sm_count": 2}),
    "7": (200, 264, 200, {"bn": 128, "sm_count": 4}),
    "8": (520, 120, 72, {"bn": 128, "sm_count": 2}),
}


@pytest.mark.parametrize("phase", PHASES, ids=lambda p: f"phase{p}")
def test_machine_adds_each_element_once(phase):
    """Every element of C gets one TMA reduce-add of exactly its row of A times its column of B (the
    harness's ``check_c`` on the added values); a plain store would be reported as an overwrite."""
    from sm90kit.harness90 import simulate90

    m, n, k, over = SIM[phase]
    res = simulate90(f"sm90:{phase}", m, n, k, accumulating(phase, **over))
    assert res.ok, res.report()


# ---- the API: cute_gemm.gemm(a, b, out=c, accumulate=True), on the host (plans mocked: no compile, no GPU) ----

from test_operands_runtime import _operands_for, clean_plans, cuda_like, fake_compile  # noqa: E402,F401  (fixtures)


def _c(m=64, n=128, dtype=None):
    import torch

    return cuda_like(torch.full((m, n), 3.0, dtype=dtype or torch.float32))


def test_accumulate_needs_out(fake_compile):
    import cute_gemm
    from cute_gemm import InputError

    a, b = _operands_for("nn")
    with pytest.raises(InputError, match="accumulate=True adds A @ B into out="):
        cute_gemm.gemm(a, b, phase="6", accumulate=True)
    with pytest.raises(InputError, match="adds into out="):  # the field given as a config override
        cute_gemm.gemm(a, b, phase="6", config={"accumulate": True})
    assert fake_compile == []


@pytest.mark.parametrize("phase", ["2a", "3", "4", "9", "10"])
def test_a_phase_without_the_reduce_add_is_refused(phase, fake_compile):
    import cute_gemm
    from cute_gemm import UnsupportedError

    a, b = _operands_for("nn")
    with pytest.raises(UnsupportedError, match=rf"sm90:{phase} cannot accumulate .*sm90 phases 5, 6, 7, 8"):
        cute_gemm.gemm(a, b, phase=phase, out=_c(), accumulate=True)
    assert fake_compile == []


def test_sm100_cannot_accumulate(fake_compile, monkeypatch):
    import cute_gemm
    from cute_gemm import UnsupportedError
    from cute_gemm.runtime import plan

    monkeypatch.setattr(plan, "device_target", lambda device: "sm_100a")
    a, b = _operands_for("nn")
    with pytest.raises(UnsupportedError, match="sm100:6 cannot accumulate .*sm90 phases 5, 6, 7, 8"):
        cute_gemm.gemm(a, b, phase="6", out=_c(), accumulate=True)
    with pytest.raises(UnsupportedError, match=r"phase 'best'.*accumulate.*sm90 phases 5, 6, 7, 8"):
        cute_gemm.gemm(a, b, phase="best", out=_c(), accumulate=True)
    assert fake_compile == []


@pytest.mark.parametrize("phase", PHASES)
def test_accumulate_runs_a_plan_of_its_own_then_the_fast_path(phase, fake_compile, monkeypatch):
    import cute_gemm
    from cute_gemm.runtime import plan

    a, b = _operands_for("nt", m=64, n=128, k=72)
    c = _c()
    assert cute_gemm.gemm(a, b, phase=phase, out=c, accumulate=True) is c
    ((p,),) = [[p for p in plan._PLANS.values()]]
    assert p.kernel.cfg == accumulating(phase) and p.fn.calls[-1][2] is c
    validate_call = plan.validate_call
    monkeypatch.setattr(plan, "validate_call", lambda *a, **k: pytest.fail("the fast path validated"))
    assert cute_gemm.gemm(a, b, phase=phase, out=c, accumulate=True) is c  # the fast path: the same plan
    assert len(p.fn.calls) == 2 and len(fake_compile) == 1
    monkeypatch.setattr(plan, "validate_call", validate_call)
    cute_gemm.gemm(a, b, phase=phase, out=c)  # the same call without accumulate: the plain store's plan
    plain = [q for q in plan._PLANS.values() if q is not p]
    assert len(plain) == 1 and not plain[0].kernel.cfg.accumulate and plain[0].fn.calls[-1][2] is c
    assert len(p.fn.calls) == 2  # the accumulate plan did not run it
    assert {key[10] for key in plan._FAST} == {True, False}


def test_best_accumulates_with_a_persistent_phase(fake_compile):
    """At 16x4096x4096 the plain pick is phase 10 (split-K, st.global); with accumulate best picks among the
    TMA-store phases, the field on; the plain pick is unchanged."""
    import torch

    import cute_gemm
    from cute_gemm.runtime import choose, plan

    ops = Operands.of("nt", "bf16", "bf16")
    assert choose.pick("sm90", 16, 4096, 4096, ops)[0] == "10"
    a, b = _operands_for("nt", torch.bfloat16, m=16, n=4096, k=4096)
    c = _c(16, 4096, torch.bfloat16)
    assert cute_gemm.gemm(a, b, phase="best", out=c, accumulate=True) is c
    ((p,),) = [list(plan._PLANS.values())]
    assert p.entry.phase in PHASES and p.kernel.cfg.accumulate and p.fn.calls[-1][2] is c
    assert cute_gemm.gemm(a, b, phase="best", out=c, accumulate=True) is c and len(p.fn.calls) == 2
    cute_gemm.gemm(a, b, phase="best", out=c)
    assert {q.entry.phase for q in plan._PLANS.values()} == {p.entry.phase, "10"}


def test_best_with_accumulate_takes_only_candidates_that_can_add():
    from cute_gemm.runtime import choose

    for shape in [(1, 8, 8), (16, 4096, 4096), (1000, 3000, 520), (4096, 4096, 4096)]:
        rows = choose.explain("sm90", *shape, None, accumulate=True)
        assert rows and all(r["phase"] in PHASES and r["config"].accumulate for r in rows), shape
        plain = choose.explain("sm90", *shape)
        assert all(not getattr(r["config"], "accumulate", False) for r in plain)
        # the same candidates and costs as the plain path's persistent ones, labelled with the switch
        assert all(r["label"].endswith(" accumulate=True") for r in rows)
        assert [(r["label"].removesuffix(" accumulate=True"), r["cost"]) for r in rows] == \
            [(r["label"], r["cost"]) for r in plain if r["phase"] in PHASES]


def test_a_tuned_pick_that_cannot_accumulate_falls_back_to_the_model(monkeypatch, tmp_path):
    from cute_gemm.runtime import cache, choose, tuned

    monkeypatch.setenv("CUTE_GEMM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "fingerprint", lambda: "f" * 16)
    monkeypatch.setattr(tuned, "_TABLES", {})
    ops = Operands.of("nt", "bf16", "bf16")
    tuned.store("NVIDIA H200", "sm90", 16, 4096, 4096, ops, "9", {"bm": 64, "bn": 64, "split_k": 2})
    tuned.store("NVIDIA H200", "sm90", 64, 4096, 4096, ops, "8", {"bn": 128})
    assert choose.resolve("sm90", 16, 4096, 4096, ops, "NVIDIA H200")[0] == "9"
    phase, cfg, how = choose.resolve("sm90", 16, 4096, 4096, ops, "NVIDIA H200", accumulate=True)
    assert how == "model" and phase in PHASES and cfg.accumulate
    phase, cfg, how = choose.resolve("sm90", 64, 4096, 4096, ops, "NVIDIA H200", accumulate=True)
    assert (phase, how, cfg) == ("8", "tuned", accumulating("8", bn=128))


def test_k_zero_adds_nothing(fake_compile):
    """K == 0: C = 0 without accumulate, C as it was with it; nothing launches."""
    import torch

    import cute_gemm

    a, b = cuda_like(torch.empty(64, 0).half()), cuda_like(torch.empty(0, 128).half())
    c = _c()
    assert cute_gemm.gemm(a, b, phase="6", out=c, accumulate=True) is c and bool((c == 3).all())
    assert cute_gemm.gemm(a, b, phase="best", out=c, accumulate=True) is c and bool((c == 3).all())
    assert cute_gemm.gemm(a, b, phase="6", out=c) is c and bool((c == 0).all())
    from cute_gemm.runtime import plan

    assert all(not p.fn.calls for p in plan._PLANS.values())


def test_accumulate_is_eager_only(monkeypatch):
    import torch

    import cute_gemm
    from cute_gemm import UnsupportedError
    from cute_gemm.runtime import gemm as gemm_mod

    monkeypatch.setattr(gemm_mod, "_compiling", lambda: True)
    with pytest.raises(UnsupportedError, match="accumulate= run eagerly only"):
        cute_gemm.gemm(torch.empty(8, 8).half(), torch.empty(8, 8).half(), out=torch.empty(8, 8), accumulate=True)


# ---- on the GPU (marker gpu): C0 + A @ B against float64 at ragged shapes ----

GPU_OPERANDS = [Operands.of("nn", "fp16", "fp32"), Operands.of("tn", "bf16", "fp32"), Operands.of("nt", "bf16", "bf16")]


def _gpu_shapes(layout: str):
    """Ragged (M, N, K): M = 1 where A is row-major (8 where M is its contiguous extent), N and K no tile
    multiples (N a multiple of 8: C's rows; K too: A's or B's rows)."""
    m1, m3 = (1, 129) if layout[0] == "n" else (8, 136)
    return [(m1, 264, 520), (1000, 3000, 72), (m3, 1000, 4104)]


@pytest.mark.gpu
@pytest.mark.parametrize("ops", GPU_OPERANDS, ids=lambda o: o.label().replace(" ", "-").replace(">", ""))
@pytest.mark.parametrize("phase", [*PHASES, "best"])
def test_gpu_accumulate_adds_into_c(phase, ops):
    """C = randn, then gemm(a, b, out=C, accumulate=True) equals C0 + A @ B against float64 (relative Frobenius:
    the check's limit, plus two roundings of a 16-bit C: the tile's before the add, the sum's); run twice from
    the same C0 the result is bit-identical (one reduce-add per element)."""
    import torch

    import cute_gemm
    from cute_gemm.measure.check import REL_ERR_LIMIT, UNIT_ROUNDOFF
    from cute_gemm.runtime.problem import torch_dtype

    ab, c_dtype = torch_dtype(ops.ab), torch_dtype(ops.c)
    gen = torch.Generator(device="cuda").manual_seed(46)

    def rand(rows, cols, row_major, dtype):  # row-major, or the .t() of a contiguous [cols, rows]
        if row_major:
            return torch.randn(rows, cols, generator=gen, device="cuda").to(dtype)
        return torch.randn(cols, rows, generator=gen, device="cuda").to(dtype).t()

    for m, n, k in _gpu_shapes(ops.layout):
        a = rand(m, k, ops.layout[0] == "n", ab)
        b = rand(k, n, ops.layout[1] == "n", ab)
        c0 = rand(m, n, True, c_dtype).contiguous()
        want = c0.double() + a.double() @ b.double()
        c = c0.clone()
        assert cute_gemm.gemm(a, b, phase=phase, out=c, accumulate=True) is c
        torch.cuda.synchronize()
        err = ((c.double() - want).norm() / want.norm()).item()
        limit = REL_ERR_LIMIT + 4 * UNIT_ROUNDOFF[ops.c]
        assert err <= limit, f"phase {phase} {ops.label()} at {m}x{n}x{k}: rel err {err:.3g} > {limit:.3g}"
        again = c0.clone()
        cute_gemm.gemm(a, b, phase=phase, out=again, accumulate=True)
        assert torch.equal(again, c), f"phase {phase} at {m}x{n}x{k}: not deterministic"
        plain = cute_gemm.gemm(a, b, phase=phase, out=c0.clone())  # the same phase without it overwrites C
        assert ((plain.double() - a.double() @ b.double()).norm() / (a.double() @ b.double()).norm()).item() <= limit
