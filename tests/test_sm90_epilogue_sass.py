"""Where ptxas puts phase 8's fused-epilogue arithmetic (the SASS, compiled for sm_90a on the CPU; needs nvdisasm:
``pip install 'cute-gemm[sass]'``, which CI installs).

By default ptxas hoists all of a tile's bias + gelu arithmetic (192 ``MUFU.TANH`` a thread at 128x192) above the
first slab's barrier, into one burst right after the wgmma wait; with ``epi_spread`` each slab's 32 stay below the
previous slab's barrier (``phases.sm90.common.barrier_zero``), between the slabs' stores. best's fused phase 8
(``choose.spread_slabs``) spreads them over twelve 16-column slabs.
"""

import re

import pytest

from cute_gemm.profiling.codegen import nvdisasm, sass
from sm90_compiled import compiled_cubin

pytestmark = pytest.mark.skipif(nvdisasm() is None, reason="nvdisasm is not installed (pip install 'cute-gemm[sass]')")

FUSED = {"stages": 5, "use_pdl": True, "bias": True, "activation": "gelu"}


def tanh_between_slab_barriers(code: str, threads: int = 128) -> list[int]:
    """MUFU.TANH counted before each slab barrier (named barrier 1 of ``threads``, the warpgroups that store a tile:
    ``BAR.SYNC`` or ``BAR.RED``) since the previous one, then after the last."""
    counts, n = [], 0
    for line in code.splitlines():
        if re.search(rf"\bBAR\.(SYNC|RED\.POPC)\S* 0x1, {threads:#x}\b", line):
            counts.append(n)
            n = 0
        n += "MUFU.TANH" in line
    return counts + [n]


def test_the_arithmetic_is_one_burst_before_the_first_slab_by_default():
    code = sass(compiled_cubin("sm90:8", "nt bf16 bf16", tuple(FUSED.items())))
    assert tanh_between_slab_barriers(code) == [192, 0, 0, 0, 0, 0, 0]
    assert "BAR.RED" not in code


def test_epi_spread_keeps_each_slabs_arithmetic_below_the_previous_barrier():
    code = sass(compiled_cubin("sm90:8", "nt bf16 bf16", tuple({**FUSED, "epi_spread": True}.items())))
    assert tanh_between_slab_barriers(code) == [32, 32, 32, 32, 32, 32, 0]
    assert len(re.findall(r"\bBAR\.RED\.POPC\S* 0x1, 0x80, !PT", code)) == 5  # the last slab's value has no use


def test_phase7_full_tiles_spread_too():
    """Phase 7 (two warpgroups on one 128x256 tile, 128 values a thread; its split tiles' slabs load their own bias
    and keep their arithmetic per slab either way): a full tile's 128 are one burst by default, 16 a slab spread."""
    cfg = {"use_pdl": True, "bias": True, "activation": "gelu"}
    plain = tanh_between_slab_barriers(sass(compiled_cubin("sm90:7", "nt bf16 bf16", tuple(cfg.items()))), 256)
    spread = tanh_between_slab_barriers(
        sass(compiled_cubin("sm90:7", "nt bf16 bf16", tuple({**cfg, "epi_spread": True}.items()))), 256)
    assert plain[0] == 128 and sum(plain) == sum(spread) == 192
    assert max(spread) == 16


def test_best_fused_phase_8_runs_its_arithmetic_in_twelve_short_bursts():
    """What ``phase="best"`` runs for a fused call on phase 8 (``choose.spread_slabs`` of RING5): 16-column slabs,
    each slab's 16 ``MUFU.TANH`` below the previous slab's barrier, the bias read from smem (``LDS``) slab by slab."""
    from cute_gemm.runtime import choose, registry

    cfg = choose.spread_slabs(registry.get("sm90", "8").configured({**FUSED, "group_m": 16}))
    fields = ("stages", "use_pdl", "bias", "activation", "group_m", "epi_spread", "epi_n", "epi_stages", "bias_smem")
    code = sass(compiled_cubin("sm90:8", "nt bf16 bf16", tuple((f, getattr(cfg, f)) for f in fields)))
    assert tanh_between_slab_barriers(code) == [16] * 12 + [0]
    assert len(re.findall(r"\bBAR\.RED\.POPC\S* 0x1, 0x80, !PT", code)) == 11
    assert code.count("LDS") >= 12 and code.count("LDG") < 24  # per slab from smem, not 24 global loads a tile
