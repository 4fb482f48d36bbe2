"""The sm90 kernels' PTX against the protocol rules of ``tests/sm90_rules.py`` (CPU only, no run).

Every sm90 phase, compiled for sm_90a with the worklog's operands and with ``nt bf16 -> bf16`` (a
``torch.nn.Linear`` weight, bf16 C) where the phase takes it:

- (a) generic-proxy smem writes (the C staging's st.shared, cp.async's landing) reach a TMA store or
  a wgmma only through ``fence.proxy.async`` and then a barrier;
- (b) a consumer arrives on a stage's empty barrier only after a ``wgmma.wait_group`` retired the
  group that reads the stage (the depth derived from the groups committed since, on every path);
- (g) no wgmma accumulator is read or written by another instruction before its group is retired;
- (h) ``wgmma.fence`` before the first wgmma and after another instruction writes an accumulator;
- (e) the split-K reduce's ``ld.shared::cluster`` lie between releasing cluster arrive/wait pairs and
  read every rank;
- (f) with programmatic dependent launch, ``griddepcontrol.wait`` before every global access;
- (i) the warpgroups' ``setmaxnreg`` counts fit the registers the CTA started with.

Phase 11 also with its fused epilogue on (bias, activations, residual, gated pairs, split 1 and 4): every rule, its
``ld.global`` of the bias and the residual under (f) like the other global accesses.

Arrival counts, expect_tx bytes and multicast masks are checked on the PTX machine
(``tests/test_sm90_sim.py``): they depend on which warps read which stage and on the CTA's rank.
Each rule also runs on small hand-written PTX that breaks it (a check that cannot fail fails here).
``-k phaseN`` selects one phase (``-k "phase1 and not phase10"`` phase 1 alone).
"""

from functools import lru_cache

import pytest

import sm90_rules as rules
from cute_gemm.runtime import registry
from phases.operands import Operands
from ptxkit.parse import parse
from sm90_compiled import compiled

KEYS = [e.key for e in registry.all_entries("sm90")]
OPERANDS = {"nn_fp16_fp32": None, "nt_bf16_bf16": Operands.of("nt", "bf16", "bf16")}


def _cases():
    for key in KEYS:
        for label, ops in OPERANDS.items():
            kernel = registry.resolve(key, "sm90").make()
            if ops is not None and (not kernel.ragged or kernel.operand_problems(ops)):
                continue  # the cp.async phases (0-1) take the worklog's operands only
            yield pytest.param(key, ops, id=f"{key.replace('sm90:', 'phase')}-{label}")


CASES = list(_cases())


@lru_cache(maxsize=None)
def _kernel(key, ops):
    kernel, ptx, res = compiled(key, ops)
    return kernel, parse(ptx), res


@lru_cache(maxsize=None)
def _wgmma(key, ops):
    kernel, k, _ = _kernel(key, ops)
    return rules.wgmma_problems(k, kernel.attributes()["threads"])


@pytest.mark.parametrize("key,ops", CASES)
def test_proxy_fence_then_barrier_before_async_reads(key, ops):
    k = _kernel(key, ops)[1]
    assert [i for i in k.instrs if rules.is_wgmma(i)], f"{key}: no wgmma"
    problems = rules.unfenced_async_reads(k)
    assert problems == [], "\n".join(problems[:5])


@pytest.mark.parametrize("key,ops", CASES)
def test_wgmma_retired_before_its_stage_is_released(key, ops):
    problems = _wgmma(key, ops)["b"]
    assert problems == [], "\n".join(problems[:5])


@pytest.mark.parametrize("key,ops", CASES)
def test_wgmma_accumulators_untouched_while_in_flight(key, ops):
    problems = _wgmma(key, ops)["g"]
    assert problems == [], "\n".join(problems[:5])


@pytest.mark.parametrize("key,ops", CASES)
def test_wgmma_fence_before_accumulating(key, ops):
    problems = _wgmma(key, ops)["h"]
    assert problems == [], "\n".join(problems[:5])


@pytest.mark.parametrize("key,ops", CASES)
def test_dsmem_reduce_between_cluster_barriers(key, ops):
    kernel, k, _ = _kernel(key, ops)
    split = getattr(kernel.cfg, "split_k", 1)
    problems = rules.dsmem_outside_cluster_barriers(k, split)
    assert problems == [], "\n".join(problems[:5])
    if split > 1:
        assert k.find("ld.shared::cluster"), f"{key}: split_k={split} without a DSMEM reduce"


@pytest.mark.parametrize("key,ops", CASES)
def test_griddepcontrol_wait_before_global_accesses(key, ops):
    kernel, k, _ = _kernel(key, ops)
    pdl = bool(getattr(kernel.cfg, "use_pdl", False))
    problems = rules.global_access_before_griddepcontrol_wait(k, pdl)
    assert problems == [], "\n".join(problems[:5])
    assert bool(k.find("griddepcontrol.wait")) == pdl


@pytest.mark.parametrize("key,ops", CASES)
def test_setmaxnreg_fits_the_registers_of_the_cta(key, ops):
    kernel, k, res = _kernel(key, ops)
    problems = rules.setmaxnreg_over_budget(k, res["registers"], kernel.attributes()["threads"])
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("phase", ["6", "7", "8"], ids=lambda p: f"phase{p}-nn_fp16_fp32-pdl")
def test_persistent_phases_with_programmatic_dependent_launch(phase):
    """use_pdl=True (what phase="best" runs): griddepcontrol.wait before every global access -- the TMA
    loads of the producer and the stores of the epilogue -- and launch_dependents once the tiles are done."""
    import dataclasses

    e = registry.get("sm90", phase)
    _, ptx, _ = compiled(f"sm90:{phase}", None, dataclasses.replace(e.default_config(), use_pdl=True))
    k = parse(ptx)
    assert rules.global_access_before_griddepcontrol_wait(k, True) == []
    assert k.find("griddepcontrol.wait") and k.find("griddepcontrol.launch_dependents")
    assert rules.unfenced_async_reads(k) == []


def test_phase8_early_turn_hands_the_tensor_pipe_on_before_waiting_for_its_wgmmas():
    """Phase 8's turn (a 256-thread ``bar.arrive``): with ``early_turn`` (the default) after the tile's last wgmma batch
    is committed and before ``wgmma.wait_group 0``; with ``early_turn=False`` after that wait. Every rule still holds
    (accumulators untouched in flight, stages released after their group retired), and the count of turn arrivals is
    the same."""
    import dataclasses
    import re

    e = registry.get("sm90", "8")
    bf16 = Operands.of("nt", "bf16", "bf16")
    order = {}
    for early in (False, True):
        cfg = dataclasses.replace(e.default_config(), use_pdl=True, stages=5, group_m=16, early_turn=early)
        kernel, ptx, _ = compiled("sm90:8", bf16, cfg)
        lines = [ln.strip() for ln in ptx.splitlines()
                 if re.match(r"\s*(bar\.arrive \S+, 256|wgmma\.wait_group\.sync\.aligned\s+0)", ln)]
        wait0 = next(i for i, ln in enumerate(lines) if ln.startswith("wgmma.wait_group"))
        order[early] = (sum(ln.startswith("bar.arrive") for ln in lines[:wait0]), len(lines))
        k = parse(ptx)
        wg = rules.wgmma_problems(k, kernel.attributes()["threads"])
        assert wg["b"] == wg["g"] == wg["h"] == [] and rules.unfenced_async_reads(k) == []
    # the consumer's two first turns (warpgroup 1 hands both to warpgroup 0) come before any wait in both; the
    # early one adds the mainloop's turn before the wait, the late one has it after: the same arrivals in all
    assert order[True][0] == order[False][0] + 1 and order[True][1] == order[False][1]


def test_phase9_with_four_way_split():
    """split_k=4: the reduce reads ranks 0..3 between the cluster barriers; the ranks are constants."""
    import dataclasses

    e = registry.get("sm90", "9")
    kernel, ptx, _ = compiled("sm90:9", None, dataclasses.replace(e.default_config(), split_k=4))
    assert rules.dsmem_outside_cluster_barriers(parse(ptx), 4) == []
    assert rules.dsmem_outside_cluster_barriers(parse(ptx), 2), "the rank check must see all four ranks"


# --- the checks on PTX that breaks each rule ---------------------------------------------------------
_HEAD = (".visible .entry k(.param .u32 p)\n.reqntid 128, 1, 1\n{\n.reg .pred %p<9>;\n.reg .b32 %r<99>;\n"
         ".reg .b64 %rd<9>;\n")


def _kernel_of(body: str):
    return parse(_HEAD + body + "\nret;\n}\n")


_STORE = "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd1, {%r1, %r2}], [%r3];\n"
_WRITE = "st.shared.v2.f32 [%r4], {%r5, %r6};\n"
_FENCE = "fence.proxy.async.shared::cta;\n"
_BAR = "bar.sync 1, 256;\n"


def test_rule_a_catches_a_fence_after_the_barrier():
    assert not rules.unfenced_async_reads(_kernel_of(_WRITE + _FENCE + _BAR + _STORE))
    assert rules.unfenced_async_reads(_kernel_of(_WRITE + _BAR + _FENCE + _STORE)), "fence after the barrier"
    assert rules.unfenced_async_reads(_kernel_of(_WRITE + _BAR + _STORE)), "no fence"
    assert rules.unfenced_async_reads(_kernel_of(_WRITE + _FENCE + _STORE)), "no barrier"
    # a path around the fence
    skip = _WRITE + "@%p1 bra L1;\n" + _FENCE + "L1:\n" + _BAR + _STORE
    assert rules.unfenced_async_reads(_kernel_of(skip))
    # cp.async landing, read by a wgmma
    wg = ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r10, %r11, %r12, %r13}, %rd2, %rd3, 1, 1, 1, 0, 1;\n")
    assert rules.unfenced_async_reads(_kernel_of("cp.async.wait_group 0;\n" + _BAR + wg))
    assert not rules.unfenced_async_reads(_kernel_of("cp.async.wait_group 0;\n" + _FENCE + _BAR + wg))


# a consumer loop over stages: wait full, wgmma, commit, wait_group N, release the previous stage (not in
# the first iteration), then after the loop wait_group 0 and release the last stage
_WG = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r10, %r11, %r12, %r13}, %rd2, %rd3, 1, 1, 1, 0, 1;\n"


def _consumer(depth: int, final_wait: bool = True, fence: bool = True, release_first: bool = False) -> str:
    release = "mbarrier.arrive.shared.b64 %rd5, [%r21], %r22;\n"
    body = ("mov.b32 %r10, 0;\nmov.b32 %r11, 0;\nmov.b32 %r12, 0;\nmov.b32 %r13, 0;\nmov.b32 %r30, 0;\n"
            "LOOP:\nmbarrier.try_wait.parity.shared.b64 %p2, [%r20], %r23;\n"
            + ("wgmma.fence.sync.aligned;\n" if fence else "") + _WG + "wgmma.commit_group.sync.aligned;\n")
    wait = f"wgmma.wait_group.sync.aligned {depth};\n"
    guard = "setp.eq.s32 %p3, %r30, 0;\n@%p3 bra SKIP;\n"
    if release_first:
        body += guard + release + "SKIP:\n" + wait
    else:
        body += wait + guard + release + "SKIP:\n"
    body += ("add.s32 %r30, %r30, 1;\nsetp.lt.s32 %p4, %r30, %r31;\n@%p4 bra LOOP;\n"
             + ("wgmma.wait_group.sync.aligned 0;\n" if final_wait else "") + release
             + "st.global.f32 [%rd4], %r10;\n")
    return body


def test_rule_b_catches_a_release_before_its_wgmma_retired():
    ok = rules.wgmma_problems(_kernel_of(_consumer(1)), threads=32, lanes=[0])
    assert ok == {"b": [], "g": [], "h": []}, ok
    assert rules.wgmma_problems(_kernel_of(_consumer(2)), threads=32, lanes=[0])["b"], "wait_group 2"
    assert rules.wgmma_problems(_kernel_of(_consumer(1, release_first=True)), threads=32, lanes=[0])["b"]
    no_final = rules.wgmma_problems(_kernel_of(_consumer(1, final_wait=False)), threads=32, lanes=[0])
    assert no_final["b"] and no_final["g"], no_final


def test_rule_h_catches_a_missing_wgmma_fence():
    assert rules.wgmma_problems(_kernel_of(_consumer(1, fence=False)), threads=32, lanes=[0])["h"]


_CLUSTER = "barrier.cluster.arrive;\nbarrier.cluster.wait;\n"
_REDUCE = ("mapa.shared::cluster.u32 %r40, %r41, 0;\nmapa.shared::cluster.u32 %r42, %r41, 1;\n"
           "ld.shared::cluster.v4.f32 {%r43, %r44, %r45, %r46}, [%r40];\n"
           "ld.shared::cluster.v4.f32 {%r47, %r48, %r49, %r50}, [%r42];\n")


def test_rule_e_catches_a_dsmem_read_outside_the_cluster_barriers():
    assert not rules.dsmem_outside_cluster_barriers(_kernel_of(_WRITE + _CLUSTER + _REDUCE + _CLUSTER), 2)
    assert rules.dsmem_outside_cluster_barriers(_kernel_of(_WRITE + _REDUCE + _CLUSTER), 2), "no first barrier"
    assert rules.dsmem_outside_cluster_barriers(_kernel_of(_WRITE + _CLUSTER + _REDUCE), 2), "no second barrier"
    relaxed = "barrier.cluster.arrive.relaxed;\nbarrier.cluster.wait;\n"
    assert rules.dsmem_outside_cluster_barriers(_kernel_of(_WRITE + relaxed + _REDUCE + _CLUSTER), 2)
    one_rank = _REDUCE.replace("%r41, 1;", "%r41, 0;")
    assert rules.dsmem_outside_cluster_barriers(_kernel_of(_WRITE + _CLUSTER + one_rank + _CLUSTER), 2)
    assert rules.dsmem_outside_cluster_barriers(_kernel_of(_WRITE), 2), "a split without a reduce"


def test_rule_f_catches_a_load_before_griddepcontrol_wait():
    load = "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];\n"
    wait = "griddepcontrol.wait;\n"
    assert not rules.global_access_before_griddepcontrol_wait(_kernel_of(wait + load), pdl=True)
    assert rules.global_access_before_griddepcontrol_wait(_kernel_of(load + wait), pdl=True)
    assert rules.global_access_before_griddepcontrol_wait(_kernel_of(load + "griddepcontrol.launch_dependents;\n"),
                                                          pdl=False), "PDL without a wait"
    skip = "@%p1 bra L1;\n" + wait + "L1:\n" + load
    assert rules.global_access_before_griddepcontrol_wait(_kernel_of(skip), pdl=True)
    assert not rules.global_access_before_griddepcontrol_wait(_kernel_of(load), pdl=False)


def test_rule_i_catches_registers_the_pool_does_not_hold():
    body = ("mov.u32 %r1, %tid.x;\nshr.u32 %r2, %r1, 7;\nsetp.ne.s32 %p1, %r2, 0;\n@%p1 bra CONS;\n"
            "setmaxnreg.dec.sync.aligned.u32 40;\nbra END;\nCONS:\nsetmaxnreg.inc.sync.aligned.u32 {inc};\nEND:\n")
    k = _kernel_of(body.format(inc=232))
    assert not rules.setmaxnreg_over_budget(k, 168, 384)
    assert rules.setmaxnreg_over_budget(_kernel_of(body.format(inc=240)), 168, 384)


# ------------------------------------------------------------------------------- phase 11: the fused epilogue
EPILOGUE_CASES = [  # (config overrides, operands): every rule holds with the epilogue on, as it does for phase 10
    ("bias=True,activation=gelu,residual=True", None),
    ("bias=True,activation=gelu,residual=True", Operands.of("nt", "bf16", "bf16")),
    ("bias=True,activation=silu,gated=True", None),
    ("activation=relu,residual=True,split_k=4", Operands.of("nt", "bf16", "bf16")),
]


@pytest.mark.parametrize("over,ops", EPILOGUE_CASES, ids=lambda x: x.replace(",", "-") if isinstance(x, str) else
                         ("nt_bf16_bf16" if x else "nn_fp16_fp32"))
def test_phase11_epilogue_follows_every_rule(over, ops):
    """Phase 11 with its epilogue on: rules (a), (b), (g), (h), (e) of the split-K reduce, (i), and (f) -- the bias's
    and the residual's ``ld.global`` after ``griddepcontrol.wait`` like every other global access (phase 10 launches
    early with PDL: a residual written by the kernel before must not be read before that kernel completes)."""
    cfg = registry.get("sm90", "11").configured(over)
    kernel, ptx, res = compiled("sm90:11", ops, cfg)
    k = parse(ptx)
    assert k.find("ld.global") and cfg.use_pdl and k.find("griddepcontrol.wait")
    assert rules.global_access_before_griddepcontrol_wait(k, True) == []
    assert rules.unfenced_async_reads(k) == []
    assert rules.wgmma_problems(k, kernel.attributes()["threads"]) == {"b": [], "g": [], "h": []}
    assert rules.dsmem_outside_cluster_barriers(k, cfg.split_k) == []
    assert rules.setmaxnreg_over_budget(k, res["registers"], kernel.attributes()["threads"]) == []


def test_phase11_split_k_1_reads_its_own_partial_tile_after_a_cta_barrier():
    """split_k = 1 with the epilogue on (no register epilogue: the tile goes through smem, read back as C's vectors,
    ``tests/test_compile_signatures.py``): no cluster, so rule (e)'s cluster barriers do not apply -- the reads are of
    the CTA's own smem (``mapa`` rank 0 only), and every path from the tile's ``st.shared`` to them passes a CTA
    barrier (``bar.sync``); the other rules hold as above."""
    from ptxkit import cfg as flow

    cfg = registry.get("sm90", "11").configured("bias=True,activation=gelu,residual=True,split_k=1")
    kernel, ptx, res = compiled("sm90:11", None, cfg)
    k = parse(ptx)
    loads = {i.index for i in k.instrs if i.op.startswith("ld.shared::cluster")}
    writes = [i.index for i in k.instrs if i.op.startswith("st.shared")]
    assert loads and writes and not k.find("barrier.cluster")
    assert {i.args[-1] for i in k.instrs if i.op.startswith("mapa")} == {"0"}
    cta_barrier = lambda ins: ins.op.startswith(("bar.sync", "barrier.sync"))  # noqa: E731
    assert [w for w in writes if flow.reachable(k, w, cut=cta_barrier) & loads] == []
    assert rules.global_access_before_griddepcontrol_wait(k, True) == [] and rules.unfenced_async_reads(k) == []
    assert rules.wgmma_problems(k, kernel.attributes()["threads"]) == {"b": [], "g": [], "h": []}
