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
