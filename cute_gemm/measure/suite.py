"""The main job: every phase of the GPU's arch checked, then timed beside its peers, shape by shape.

``run_bench`` measures the device-copy bandwidth once (``bandwidth``), checks every phase at every shape
first (``shape.check_phases``), then shape by shape checks the peers and times everything that passed
together (``shape.measure_shape``), with NVML telemetry open for the whole run, and returns the result
document (``results``). One run is one layout and dtypes (``operands``), phases and peers alike.
"""

from __future__ import annotations

from cute_gemm.measure import environment, timing
from cute_gemm.measure.results import document, peak_for
from cute_gemm.measure.shape import check_phases, measure_shape
from cute_gemm.runtime import registry
from cute_gemm.runtime.problem import Problem
from phases.operands import WORKLOG

HEADLINE = (Problem(4096, 4096, 4096), Problem(1024, 4096, 4096))  # the worklog's two shapes
SWEEP = tuple(Problem(s, s, s) for s in (512, 1024, 2048, 3072, 4096, 6144, 8192))
# named shape sets (``cute-gemm bench --set NAME``)
DECODE_TOKENS = (1, 16, 64, 128, 256, 512)
DECODE_WEIGHTS = ((4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192), (28672, 8192))  # (N, K)
SETS = {
    "decode": tuple(Problem(m, n, k) for n, k in DECODE_WEIGHTS for m in DECODE_TOKENS),
    "small": tuple(Problem(s, s, s) for s in (256, 512, 1024, 2048)),
    # decode-like shapes outside the decode set: other models' layer widths at other token counts, to see
    # that phase="best" is right for the regime and not only for the listed shapes
    "unlisted": tuple(Problem(*s) for s in ((8, 11008, 4096), (32, 4096, 11008), (96, 6144, 4096), (128, 11008, 4096),
                                            (200, 5120, 5120), (128, 13824, 5120), (48, 16384, 2048),
                                            (256, 3072, 12288), (24, 2560, 10240), (160, 7168, 7168),
                                            (200, 11000, 3000), (40, 3000, 5000))),
    # and 12 more, chosen after the model's last fit (the token-tile multicast) and never measured before its run
    "heldout": tuple(Problem(*s) for s in ((144, 6144, 6144), (240, 5120, 13824), (96, 12288, 4096), (192, 3584, 18944),
                                           (112, 9216, 3072), (232, 4608, 9216), (56, 18944, 3584), (184, 12288, 2048),
                                           (80, 5120, 20480), (136, 10240, 5120), (248, 2048, 8192), (12, 6912, 9216))),
    # and 12 more, chosen after the held-out run and the two fixes it led to (2026-12-02), before they were measured
    "heldout2": tuple(Problem(*s) for s in ((8, 15360, 5120), (48, 22016, 4096), (72, 9216, 9216), (104, 7680, 7680),
                                            (24, 18432, 6144), (160, 9728, 4096), (208, 6144, 8192), (120, 20480, 2560),
                                            (32, 12800, 12800), (64, 3584, 14336), (176, 13312, 4608), (224, 4096, 11008))),
    # and 12 more, chosen after the three-warpgroup tiles and 3-way splits (2026-12-02), before they were measured:
    # layer widths of 1.5B-32B models, most at M = 96..256 where heldout2 found the gap
    "heldout3": tuple(Problem(*s) for s in ((136, 8192, 3072), (192, 5120, 27648), (248, 3072, 8192), (216, 14336, 4096),
                                            (168, 3584, 18944), (152, 13824, 5120), (96, 8960, 1536), (112, 6912, 2560),
                                            (184, 8192, 8192), (40, 27648, 5120), (232, 2048, 5632), (128, 1536, 8960))),
    # and 12 more, chosen with ``cute-gemm tune`` (2026-12-02), before they were measured: tuned, then benched
    "heldout4": tuple(Problem(*s) for s in ((16, 7168, 18432), (56, 14336, 3584), (88, 3584, 14336), (120, 6144, 16384),
                                            (144, 9216, 3584), (168, 4096, 6144), (200, 2560, 6912), (216, 10240, 8192),
                                            (240, 3072, 3072), (8, 5120, 17408), (184, 1536, 4096), (256, 5632, 2048))),
    # and 12 more, chosen after the model's refit to every family's cheapest at 40 shapes of 72-248 tokens
    # (2026-12-03), before they were measured
    "heldout5": tuple(Problem(*s) for s in ((8, 13824, 5120), (40, 6144, 4096), (56, 10240, 8192), (72, 14336, 4096),
                                            (96, 3584, 18944), (120, 9216, 9216), (144, 4096, 11008), (168, 5120, 13824),
                                            (192, 9216, 3072), (216, 6144, 6144), (232, 11008, 4096), (248, 7168, 5120))),
    # and 12 more at 80-248 tokens (the regime of heldout5's lowest), layer widths of 3B-32B models, chosen after the
    # model's multicast and split-K reduce refit (2026-12-03), before they were measured
    "heldout6": tuple(Problem(*s) for s in ((88, 18176, 4544), (216, 10240, 2560), (176, 18944, 3584), (136, 14336, 3584),
                                            (232, 3584, 14336), (104, 13824, 5120), (200, 14336, 5120), (152, 5120, 14336),
                                            (120, 27648, 5120), (184, 10944, 2048), (248, 8192, 3072), (80, 24576, 6144))),
    # and 12 more at 152-256 tokens, layer widths of 7B-70B models, chosen after the token-tile re-read and wide-tile
    # terms (2026-12-03), before they were measured
    "heldout7": tuple(Problem(*s) for s in ((160, 14336, 4096), (192, 18944, 3584), (208, 3584, 18944), (224, 6144, 4096),
                                            (240, 14336, 5120), (256, 5120, 17920), (168, 17920, 5120), (184, 4608, 3584),
                                            (216, 8192, 28672), (232, 5120, 5120), (152, 12288, 4096), (248, 4096, 12288))),
    # and 12 more at 12-252 tokens, chosen after the split reduce's charge was capped (2026-12-03), before they were
    # measured
    "heldout8": tuple(Problem(*s) for s in ((12, 10240, 8192), (48, 6144, 4096), (96, 28672, 8192), (136, 4608, 3584),
                                            (176, 9216, 3072), (200, 8192, 28672), (216, 18944, 3584), (232, 3584, 18944),
                                            (248, 14336, 4096), (144, 3072, 8192), (184, 10240, 8192), (252, 6144, 4096))),
    # and 12 more at 40-252 tokens, chosen after token tiles went to steps of 8 (2026-12-03), before they were measured
    "heldout9": tuple(Problem(*s) for s in ((252, 4864, 3072), (244, 4096, 2048), (40, 8192, 7168), (88, 14336, 5120),
                                            (104, 5120, 12288), (136, 11008, 4096), (152, 6656, 6656), (168, 4096, 11008),
                                            (184, 7168, 7168), (200, 5632, 4096), (216, 3584, 9216), (232, 10240, 3072))),
    "heldout10": tuple(Problem(*s) for s in ((1, 14336, 10240), (44, 13824, 7168), (65, 2048, 4096), (67, 2560, 27648),
                                             (78, 9216, 6144), (86, 6144, 6144), (90, 13824, 5632), (129, 5632, 6912),
                                             (159, 5632, 6144), (202, 2048, 8192), (226, 12288, 3584),
                                             (237, 2048, 10240))),
    "heldout11": tuple(Problem(*s) for s in ((257, 14336, 8192), (259, 2560, 7168), (306, 10240, 2048), (309, 4096, 8192),
                                             (316, 8192, 8192), (347, 10240, 7168), (360, 11008, 4096),
                                             (368, 4096, 14336), (404, 5120, 10240), (434, 5120, 6144),
                                             (454, 8192, 10240), (475, 9216, 10240))),
    "heldout12": tuple(Problem(*s) for s in ((68, 4096, 9216), (439, 11008, 10240), (445, 7168, 28672), (424, 8192, 3584),
                                             (498, 28672, 3072), (379, 8192, 7168), (282, 8192, 5120),
                                             (462, 18944, 14336), (403, 2048, 5120), (312, 8192, 2048),
                                             (360, 8192, 3072), (223, 3584, 18944))),
}
SET_HELP = {
    "decode": f"a few tokens x a model's weights: M in {{{', '.join(map(str, DECODE_TOKENS))}}} x (N, K) in "
              + ", ".join(f"({n}, {k})" for n, k in DECODE_WEIGHTS),
    "small": "256^3, 512^3, 1024^3, 2048^3",
    "unlisted": "12 decode-like shapes outside the decode set (M 8..256, other models' layer widths): does best "
                "hold for the regime, not just the list",
    "heldout": "12 more decode-like shapes (M 12..248), chosen after the multicast fit, before they were measured",
    "heldout2": "12 more (M 8..224), chosen after the heldout run and the fixes it led to, before they were measured",
    "heldout3": "12 more (M 40..248), chosen after the three-warpgroup tiles and 3-way splits, before they were measured",
    "heldout4": "12 more (M 8..256), chosen with `cute-gemm tune`, before they were measured (tuned, then benched)",
    "heldout5": "12 more (M 8..248), chosen after the refit to every family's cheapest at 72-248 tokens, before they "
                "were measured",
    "heldout6": "12 more (M 80..248), chosen after the multicast and split-K reduce refit, before they were measured",
    "heldout7": "12 more (M 152..256), chosen after the token-tile re-read and wide-tile terms, before they were measured",
    "heldout8": "12 more (M 12..252), chosen after the split reduce's charge was capped, before they were measured",
    "heldout9": "12 more (M 40..252), chosen after token tiles went to steps of 8, before they were measured",
    "heldout10": "12 more (M 1..237), drawn at random (seed 20261203) from a model's layer widths after the 88-token "
                 "tiles landed, before they were measured",
    "heldout11": "12 shapes of 257-512 tokens, drawn at random (seed 202612041) from a model's layer widths after the "
                 "256-row weight tiles landed, before they were measured",
    "heldout12": "12 shapes of 1-512 tokens, drawn at random (seed 202612042; N and K from 16 layer widths of 2048-28672) "
                 "after the three token tiles and the deep pair landed, before they were measured",
}


def run_bench(entries, shapes, peer_list, *, data: str = "randn", rounds: int = timing.ROUNDS,
              sustained_s: float = 0.0, cold_l2: bool = False, progress: bool = True,
              best_arch: str | None = None, variants=(), operands=WORKLOG) -> dict:
    """Measure the copy bandwidth, check every entry at every shape with ``operands``, then shape by shape
    check the peers and time everything that passed, interleaved -> a bench-v2 document."""
    from cute_gemm.measure.bandwidth import copy_bandwidth
    from cute_gemm.measure.power import Telemetry
    from cute_gemm.measure.progress import Progress

    env = environment.record()
    peak = peak_for(env["gpu"]["name"]) if env["gpu"] else None
    telemetry = Telemetry.open()
    results = []
    total = 1 + len(shapes) * (len(entries) + len(variants) + (best_arch is not None) + len(peer_list) + rounds)
    try:
        with Progress(total, enabled=progress) as bar:
            copy_bw = copy_bandwidth()
            bar.step(f"device copy: {copy_bw['tb_s']:.2f} TB/s")
            checked = [check_phases(entries, p, step=bar.step, best_arch=best_arch, variants=variants,
                                    operands=operands) for p in shapes]
            for p, phases in zip(shapes, checked):
                results += measure_shape(p, phases, peer_list, data=data, rounds=rounds, sustained_s=sustained_s,
                                         cold_l2=cold_l2, telemetry=telemetry, peak=peak, step=bar.step,
                                         operands=operands, copy_tb_s=copy_bw["tb_s"])
    finally:
        telemetry.close()
    return document(results, data=data, protocol=timing.protocol(rounds, sustained_s, cold_l2),
                    telemetry=telemetry.describe(), env=env, operands=operands, copy_bandwidth=copy_bw)


def estimate_seconds(n_kernels: int, n_shapes: int, rounds: int, sustained_s: float) -> float:
    """Lower bound of the GPU time the timing takes (the checks and compiles come on top)."""
    per_window = timing.TIMED_MS_PER_ROUND / 1000 + sustained_s
    return n_kernels * n_shapes * rounds * per_window


def entries_for(arch: str, phases: list[str] | None):
    """The registered entries of ``arch``, restricted to ``phases`` (LookupError naming a missing one)."""
    ents = registry.all_entries(arch)
    if phases:
        missing = [p for p in phases if p not in {e.phase for e in ents}]
        if missing:
            have = ", ".join(e.phase for e in ents) or "none"
            raise LookupError(f"no {arch} kernel for phase(s) {', '.join(missing)} (registered: {have})")
        ents = [e for e in ents if e.phase in phases]
    return ents
