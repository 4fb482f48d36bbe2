"""The device-copy bandwidth of this run: what the bench's TB/s column is held against.

A GEMM at few tokens (M << N, K) moves its weights once and does little arithmetic per byte: its speed
is bandwidth, and its natural yardstick is what the same GPU reaches copying memory in the same run
(clock and power state included), not the datasheet's HBM figure. Measured once per run: ``copy_`` of
a 1 GiB buffer into another between CUDA events, a few copies after a warm-up, read + write counted
(2 GiB per copy), the median copy kept.
"""

from __future__ import annotations

import statistics

COPY_BYTES = 2**30  # one buffer: far beyond the L2, so every copy streams from and to HBM
COPIES = 10
WARMUP = 2


def copy_bandwidth(nbytes: int = COPY_BYTES, copies: int = COPIES) -> dict:
    """{"tb_s": median copy bandwidth (read + write), "tb_s_best", "bytes", "copies", "method"} on GPU 0."""
    import torch

    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    src.fill_(1)
    for _ in range(WARMUP):
        dst.copy_(src)
    per_copy = []
    for _ in range(copies):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        dst.copy_(src)
        end.record()
        end.synchronize()
        per_copy.append(start.elapsed_time(end))
    del src, dst
    torch.cuda.empty_cache()
    return summarize(per_copy, nbytes)


def summarize(ms_per_copy: list[float], nbytes: int) -> dict:
    """The record of ``copy_bandwidth`` from the milliseconds each copy of ``nbytes`` took."""
    moved = 2 * nbytes  # read once, written once

    def tb_s(ms):
        return moved / (ms * 1e-3) / 1e12

    return {"tb_s": tb_s(statistics.median(ms_per_copy)), "tb_s_best": tb_s(min(ms_per_copy)),
            "bytes": nbytes, "copies": len(ms_per_copy), "ms": list(ms_per_copy),
            "method": f"torch copy_ of a {nbytes / 2**30:g} GiB buffer between CUDA events, read + write counted, "
                      f"median of {len(ms_per_copy)} copies after {WARMUP} warm-ups"}
