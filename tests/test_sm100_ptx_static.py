"""Rules the sm100 kernels' PTX must follow, checked on the control flow of the compiled code (CPU only).

- A ``tcgen05.alloc.cta_group::2`` runs only after a ``barrier.cluster.wait``: the PTX ISA requires the
  allocating warp to know that the peer CTA has launched and is still running (phases 4 and later).
- A TMA store (``cp.async.bulk.tensor...global.shared::cta``) is issued by a fixed lane (lane 0), never
  by whichever lane ``elect.sync`` picks: its bulk async-group belongs to the issuing thread, and only
  that thread's ``cp.async.bulk.wait_group`` waits for it (phases 5 and later).
- No destination register of a ``tcgen05.ld`` is read before a ``tcgen05.wait::ld`` (tcgen05.ld is
  asynchronous).
- Shared memory admits no more CTAs per SM than TMEM can hold: an extra CTA would start only to block
  inside ``tcgen05.alloc`` (228 KiB per SM, 1 KiB reserved per CTA; 512 TMEM columns).
- The tcgen05 thread-sync fences (PTX ISA, tcgen05 memory consistency model): no thread synchronization
  (an mbarrier arrive, a CTA or cluster barrier) follows a tcgen05.ld without ``tcgen05.wait::ld`` and
  then ``tcgen05.fence::before_thread_sync`` between them; no tcgen05.ld or tcgen05.dealloc follows a
  thread synchronization it waited on (an mbarrier wait, a barrier) without
  ``tcgen05.fence::after_thread_sync`` between them. (Conservative: a fence after every such wait, not
  only after the one that hands the TMEM over; the PTX machine checks the exact hand-offs, the MMA side
  of the accumulator's included.)
- Cluster scope: in a kernel whose CTAs signal each other's mbarriers (remote arrives, multicast commits,
  ``.cta_group::2`` TMA loads, ``st.async``), every mbarrier wait acquires at cluster scope
  (``.acquire.cluster``) and every remote arrive releases at cluster scope (``.release.cluster``); with
  the default CTA scope they do not synchronize with the other CTA (the machine checks each wait
  against the CTAs that actually signalled the phase it observes).

Phase 11 also runs the rules with its fused epilogue on (the bias's and the residual's ``ld.global`` after
``griddepcontrol.wait``, as sm90's rule (f) asks of every global access under PDL).

Each check is also run on small hand-written PTX that breaks the rule, so a check that cannot fail
fails here.
"""

import pytest

from cute_gemm.runtime import registry
from phases.sm100 import common
from ptxkit import cfg
from ptxkit.parse import parse
from sm100_compiled import compiled

TARGETS = ("sm_100a", "sm_103a")
KEYS = [e.key for e in registry.all_entries("sm100")]
PAIR_KEYS = [k for k in KEYS if registry.resolve(k, "sm100").default_config().cluster_m == 2]
STORE_KEYS = [k for k in KEYS if k.split(":")[1] in ("5", "6", "7")]  # the TMA-store epilogues (9-10: st.global)


def phase_id(key: str) -> str:
    """Test ids name the phase as ``phaseN`` (``pytest -k phase6`` selects one phase's checks)."""
    return key.replace("sm100:", "phase")


def _bulk_stores(k):
    return [i.index for i in k.instrs if i.op.startswith("cp.async.bulk.tensor") and ".global.shared::cta" in i.op]


def alloc_before_cluster_sync(k) -> list[str]:
    gate = lambda ins: ins.op.startswith("barrier.cluster.wait")  # noqa: E731
    return [i.text.strip() for i in k.find("tcgen05.alloc.cta_group::2") if not cfg.passes_before(k, i.index, gate)]


def stores_by_elected_lane(k) -> list[int]:
    elect = cfg.elect_predicates(k)
    return [i for i in _bulk_stores(k) if cfg.only_reached_when(k, i, elect)]


def stores_by_lane0(k) -> list[int]:
    lane0 = cfg.lane0_predicates(k)
    return [i for i in _bulk_stores(k) if cfg.only_reached_when(k, i, lane0)]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("key", PAIR_KEYS, ids=phase_id)
def test_tmem_alloc_after_the_cluster_sync(key, target):
    k = parse(compiled(key, target)[1])
    assert k.find("tcgen05.alloc.cta_group::2"), f"{key}: no cta_group::2 allocation"
    assert alloc_before_cluster_sync(k) == []


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("key", STORE_KEYS, ids=phase_id)
def test_tma_store_issued_by_lane_0(key, target):
    k = parse(compiled(key, target)[1])
    stores = _bulk_stores(k)
    assert stores, f"{key}: no TMA store"
    assert stores_by_elected_lane(k) == [], "a TMA store is issued by an elect.sync lane"
    assert stores_by_lane0(k) == stores, "every TMA store must be issued by lane 0 only"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("key", KEYS, ids=phase_id)
def test_tcgen05_ld_waited_before_use(key, target):
    k = parse(compiled(key, target)[1])
    assert k.find("tcgen05.ld"), f"{key}: no tcgen05.ld"
    problems = cfg.unwaited_tcgen05_ld_uses(k)
    assert problems == [], "\n".join(problems[:5])


@pytest.mark.parametrize("key", KEYS, ids=phase_id)
def test_smem_admits_no_more_ctas_than_tmem(key):
    attrs = compiled(key, "sm_100a")[0].attributes()
    by_smem, by_tmem = common.residency(attrs["smem_bytes"], attrs["tmem_cols"])
    assert 1 <= by_smem <= by_tmem, f"{key}: {by_smem} CTAs per SM by smem, {by_tmem} by TMEM"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("key", KEYS, ids=phase_id)
def test_tcgen05_ld_fenced_before_the_next_thread_sync(key, target):
    k = parse(compiled(key, target)[1])
    assert k.find("tcgen05.fence::before_thread_sync"), f"{key}: no tcgen05.fence::before_thread_sync"
    problems = cfg.tcgen05_unfenced_releases(k)
    assert problems == [], "\n".join(problems[:5])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("key", KEYS, ids=phase_id)
def test_tmem_access_fenced_after_the_thread_sync(key, target):
    k = parse(compiled(key, target)[1])
    assert k.find("tcgen05.fence::after_thread_sync"), f"{key}: no tcgen05.fence::after_thread_sync"
    problems = cfg.tcgen05_unfenced_acquires(k)
    assert problems == [], "\n".join(problems[:5])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("key", KEYS, ids=phase_id)
def test_signals_between_ctas_at_cluster_scope(key, target):
    k = parse(compiled(key, target)[1])
    pair = registry.resolve(key, "sm100").default_config().cluster_m == 2
    assert bool(cfg.remote_signals(k)) == pair, f"{key}: the pair phases (and only they) signal another CTA"
    problems = cfg.cta_scope_signals(k)
    assert problems == [], "\n".join(problems[:5])


def test_smem_request_is_the_least_that_caps_residency():
    for used, cols in ((32 * 1024, 128), (50176, 128), (73 * 1024, 256), (49 * 1024, 256), (160 * 1024, 512)):
        req = common.smem_request(used, cols)
        by_smem, by_tmem = common.residency(req, cols)
        assert req >= used and by_smem <= by_tmem
        if req > used:  # raised: one byte less would admit one CTA too many
            assert common.residency(req - 1, cols)[0] == by_tmem + 1


# --- the checks on PTX that breaks each rule ---------------------------------------------------------
_HEAD = ".visible .entry k(.param .u32 p)\n{\n.reg .pred %p<9>;\n.reg .b32 %r<99>;\n"


def _kernel(body: str):
    return parse(_HEAD + body + "\nret;\n}\n")


def test_checks_catch_an_alloc_before_the_cluster_sync():
    alloc = "tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r1], 256;"
    sync = "barrier.cluster.arrive;\nbarrier.cluster.wait;"
    early, late = f"{alloc}\n{sync}", f"{sync}\n{alloc}"
    assert alloc_before_cluster_sync(_kernel(early))
    assert not alloc_before_cluster_sync(_kernel(late))
    # a path around the sync counts too
    skip = "@%p1 bra L1;\nbarrier.cluster.arrive;\nbarrier.cluster.wait;\nL1:\n" + late.split("\n")[-1]
    assert alloc_before_cluster_sync(_kernel(skip))


_STORE = "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd1, {%r1, %r2}], [%r3];"


def test_checks_catch_a_store_by_an_elected_lane():
    elected = f"elect.sync %r9|%p1, -1;\nnot.pred %p2, %p1;\n@%p2 bra L1;\n{_STORE}\nL1:"
    lane0 = f"mov.u32 %r8, %laneid;\nsetp.ne.b32 %p3, %r8, 0;\n@%p3 bra L1;\n{_STORE}\nL1:"
    k = _kernel(elected)
    assert stores_by_elected_lane(k) and not stores_by_lane0(k)
    k = _kernel(lane0)
    assert not stores_by_elected_lane(k) and stores_by_lane0(k)


def test_checks_catch_an_unwaited_tcgen05_ld():
    ld = "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r3];\n"
    packed = "mov.b64 %rd1, {%r1, %r2};\n"
    store = "st.shared.v2.b32 [%r4], {%r1, %r2};\n"
    wait = "tcgen05.wait::ld.sync.aligned;\n"
    assert cfg.unwaited_tcgen05_ld_uses(_kernel(ld + store + wait))
    assert not cfg.unwaited_tcgen05_ld_uses(_kernel(ld + wait + store))
    assert not cfg.unwaited_tcgen05_ld_uses(_kernel(ld + packed + wait + "st.shared.b64 [%r4], %rd1;\n"))
    assert cfg.unwaited_tcgen05_ld_uses(_kernel(ld + packed + "st.shared.b64 [%r4], %rd1;\n" + wait))
    # a path that skips the wait
    assert cfg.unwaited_tcgen05_ld_uses(_kernel(ld + "@%p1 bra L1;\n" + wait + "L1:\n" + store))


def test_checks_catch_a_tcgen05_ld_released_unfenced():
    ld = "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r3];\n"
    wait = "tcgen05.wait::ld.sync.aligned;\n"
    before = "tcgen05.fence::before_thread_sync;\n"
    arrive = "mbarrier.arrive.shared::cta.b64 _, [%r4];\n"
    bar = "bar.sync 2, 256;\n"
    for release in (arrive, bar, "barrier.cluster.arrive;\n"):
        assert cfg.tcgen05_unfenced_releases(_kernel(ld + wait + release))  # no fence
        assert cfg.tcgen05_unfenced_releases(_kernel(ld + before + wait + release))  # fence before the wait
        assert not cfg.tcgen05_unfenced_releases(_kernel(ld + wait + before + release))
    # a path around the fence; a warp barrier is no release
    assert cfg.tcgen05_unfenced_releases(_kernel(ld + wait + "@%p1 bra L1;\n" + before + "L1:\n" + arrive))
    assert not cfg.tcgen05_unfenced_releases(_kernel(ld + wait + "bar.warp.sync -1;\n"))


def test_checks_catch_a_tmem_access_acquired_unfenced():
    wait = "mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r4], %r5;\n"
    after = "tcgen05.fence::after_thread_sync;\n"
    ld = "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r3];\n"
    dealloc = "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 128;\n"
    for access in (ld, dealloc):
        for acquire in (wait, "bar.sync 2, 256;\n", "barrier.cluster.wait;\n"):
            assert cfg.tcgen05_unfenced_acquires(_kernel(acquire + access))
            assert cfg.tcgen05_unfenced_acquires(_kernel(after + acquire + access))  # fence before the wait
            assert not cfg.tcgen05_unfenced_acquires(_kernel(acquire + after + access))
        # the fence on one path only
        assert cfg.tcgen05_unfenced_acquires(_kernel(wait + "@%p1 bra L1;\n" + after + "L1:\n" + access))


def test_checks_catch_a_cta_scope_signal_between_ctas():
    remote = "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r6];\n"
    cta_wait = "mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r4], %r5;\n"
    cluster_wait = "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p2, [%r4], %r5;\n"
    assert cfg.cta_scope_signals(_kernel(remote + cta_wait))
    assert not cfg.cta_scope_signals(_kernel(remote + cluster_wait))
    assert not cfg.cta_scope_signals(_kernel(cta_wait)), "no CTA signals another: CTA scope is enough"
    assert cfg.cta_scope_signals(_kernel("mbarrier.arrive.shared::cluster.b64 _, [%r6];\n" + cluster_wait))
    for signal in ("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 "
                   "[%r6], %rs1;\n",
                   "cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes "
                   "[%r1], [%rd1, {%r2, %r3}], [%r6];\n",
                   "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%r1], {%r2, %r3, %r4, %r5}, "
                   "[%r6];\n"):
        assert cfg.remote_signals(_kernel(signal)) and cfg.cta_scope_signals(_kernel(signal + cta_wait))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("phase", ["6", "7"], ids=lambda p: f"phase{p}-pdl")
def test_persistent_phases_with_programmatic_dependent_launch(phase, target):
    """use_pdl=True (what phase="best" runs): griddepcontrol.wait before every global access on every path (the
    TMA loads, the TMA stores of the epilogue; sm90's rule (f), which reads PTX only), launch_dependents once a
    CTA's tiles are stored; the phases as taught (use_pdl=False) have no griddepcontrol at all."""
    import dataclasses

    import sm90_rules

    e = registry.get("sm100", phase)
    _, ptx = compiled(f"sm100:{phase}", target, dataclasses.replace(e.default_config(), use_pdl=True))
    k = parse(ptx)
    assert sm90_rules.global_access_before_griddepcontrol_wait(k, True) == []
    assert k.find("griddepcontrol.wait") and k.find("griddepcontrol.launch_dependents")
    assert "griddepcontrol" not in compiled(f"sm100:{phase}", target)[1]


# ------------------------------------------------------------------------------- phase 11: the fused epilogue
EPILOGUE_CASES = [  # (config overrides, operands): the rules hold with the epilogue on, as they do for phase 10
    ("bias=True,activation=gelu,residual=True", None),
    ("bias=True,activation=silu,gated=True", None),
    ("activation=relu,residual=True,split_k=4", "nt-bf16-bf16"),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("over,ops", EPILOGUE_CASES, ids=lambda x: x.replace(",", "-") if x else "nn-fp16-fp32")
def test_phase11_epilogue_follows_every_rule(over, ops, target):
    """Phase 11 with its epilogue on: tcgen05.ld waited before use, the thread-sync fences both ways, the signals at
    the scope they need (no CTA signals another: swap-AB's cluster is the split's), smem within TMEM's residency, and
    with PDL (phase 10's default) the bias's and the residual's ``ld.global`` after ``griddepcontrol.wait`` like
    every other global access (sm90's rule (f))."""
    import sm90_rules
    from phases.operands import Operands

    cfg_ = registry.get("sm100", "11").configured(over)
    operands = Operands.of(*ops.split("-")) if ops else None
    kernel, ptx = compiled("sm100:11", target, cfg_, operands)
    k = parse(ptx)
    assert k.find("ld.global") and k.find("tcgen05.ld") and cfg_.use_pdl
    assert cfg.unwaited_tcgen05_ld_uses(k) == []
    assert cfg.tcgen05_unfenced_releases(k) == [] and cfg.tcgen05_unfenced_acquires(k) == []
    assert cfg.remote_signals(k) == [] and cfg.cta_scope_signals(k) == []
    assert sm90_rules.global_access_before_griddepcontrol_wait(k, True) == []
    by_smem, by_tmem = common.residency(kernel.attributes()["smem_bytes"], kernel.attributes()["tmem_cols"])
    assert 1 <= by_smem <= by_tmem
