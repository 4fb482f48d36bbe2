"""What ``phase="best"``'s model knows of a GPU it was not fitted on: the published datasheet, and the device.

``choose.Machine``'s constants were fitted to candidates measured on an H200 (sm90). No Blackwell GPU has run
here, so the sm100 model (``choose.machine("sm100")``) keeps the H200's fitted shape of the time formula and
replaces the physical rates by the vendor's published numbers, marked *unfitted* wherever a pick is shown:

- the SM count: the device's (``multi_processor_count``) when an sm100 GPU is present, else the datasheet's;
- the co-resident clusters per size: the driver's (``cudaOccupancyMaxActiveClusters``, as the persistent
  phases size their grids: ``max_active_clusters``) on a GPU, else the H200's measured counts scaled by
  the SM ratio (clusters do not straddle GPCs: an H200 holds 30 of 4, not 33; a B200's GPCs are not known here);
- HBM bandwidth and the dense fp16/bf16 tensor rate: the datasheet's (``DATASHEETS``), the rate per SM being
  the GPU's over its datasheet SM count.

The numbers below are the vendors' published datasheet values, not measurements; where a source disagrees
the entry says so (``uncertain``). ``cute-gemm tune --set decode`` / ``--set prefill`` measure the model's
cheapest candidates on the user's GPU and keep the fastest: the picks that matter stop depending on them.
"""

from __future__ import annotations

import dataclasses
import warnings
from functools import lru_cache


@dataclasses.dataclass(frozen=True)
class Datasheet:
    """A GPU's published numbers (dense: without 2:4 sparsity)."""

    name: str
    sms: int  # SMs enabled on the product
    hbm_tb_per_s: float  # HBM bandwidth, TB/s
    dense_fp16_tflop_per_s: float  # fp16 / bf16 tensor rate with fp32 accumulation, dense, TFLOP/s
    uncertain: str = ""  # what the published sources leave open


DATASHEETS = {
    # NVIDIA's HGX B200 datasheet: 8 TB/s HBM3e; 4.5 PFLOP/s fp16/bf16 with sparsity, 2.25 dense; 148 SMs
    "B200": Datasheet("B200", 148, 8.0, 2250.0),
    # NVIDIA's Blackwell Ultra (B300 / GB300) descriptions: 8 TB/s HBM3e; the full chip has 160 SMs
    "B300": Datasheet("B300", 148, 8.0, 2250.0,
                      uncertain="SMs: 160 in the full Blackwell Ultra chip, the product's enabled count (148?) is not "
                                "confirmed here; dense fp16/bf16 published as about 2.25-2.5 PFLOP/s (2.25 used)"),
}
DEFAULT = "B200"  # no GPU, or an sm100 GPU whose name matches no entry
H200_HBM_TB_PER_S = 4.8  # the H200's datasheet bandwidth, what ``Machine.inflight_for_full_bw`` is scaled from


def datasheet(gpu_name: str | None) -> Datasheet:
    """The entry whose name the GPU's name holds ('NVIDIA B300 SXM6 AC' -> B300), else the B200's."""
    name = (gpu_name or "").upper()
    return next((d for key, d in DATASHEETS.items() if key in name), DATASHEETS[DEFAULT])


@lru_cache(maxsize=None)
def sm100_device() -> tuple[str | None, int | None, tuple]:
    """(name, SM count, ((cluster size, clusters that fit), ...)) of GPU 0 when it is an sm100 GPU, else
    (None, None, ()): read once per process, never launching anything (a failed query is an absent GPU)."""
    try:
        import torch

        if not torch.cuda.is_available():
            return None, None, ()
        major, minor = torch.cuda.get_device_capability(0)
        from cute_gemm.runtime.arch import family_of_capability

        if family_of_capability(major, minor) != "sm100":
            return None, None, ()
        prop = torch.cuda.get_device_properties(0)
    except Exception:  # noqa: BLE001 -- no usable GPU: the datasheet's numbers
        return None, None, ()
    fits = []
    for size in (1, 2, 3, 4, 6, 8):
        count = max_active_clusters(size, 0)
        if count:
            fits.append((size, count))
    return prop.name, prop.multi_processor_count, tuple(fits)


def scaled_clusters(h200_fits: tuple, sms: int, h200_sms: int = 132) -> tuple:
    """The H200's measured co-resident clusters per size, scaled to ``sms`` SMs (floor): an estimate for a GPU
    whose GPC layout is not known (size 1 and 2 take every SM: a pair never straddles a GPC of even size)."""
    return tuple((size, sms // size if size <= 2 else max(1, count * sms // h200_sms)) for size, count in h200_fits)


@lru_cache(maxsize=None)
def max_active_clusters(cluster_ctas: int, device: int) -> int | None:
    """Clusters of ``cluster_ctas`` CTAs that GPU ``device`` holds at once, one CTA per SM with all of its
    shared memory (``cudaOccupancyMaxActiveClusters`` through the DSL's ``HardwareInfo``, as NVIDIA's
    persistent kernels size their grids); None when the query fails (a warning says why)."""
    try:
        import torch
        from cutlass.utils import HardwareInfo

        with torch.cuda.device(device):
            return int(HardwareInfo(device).get_max_active_clusters(cluster_ctas))
    except Exception as exc:  # noqa: BLE001 -- any failure keeps the compiled-in default
        warnings.warn(f"max-active-clusters query for clusters of {cluster_ctas} on device {device} failed "
                      f"({exc}); the persistent grid keeps its default sm_count", RuntimeWarning, stacklevel=2)
        return None
