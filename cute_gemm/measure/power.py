"""SM clock, power, energy and throttle reasons of the GPU while a kernel is timed (NVML, optional).

The H200 moves 10-20% with its power state: under sustained fp16 GEMM load on random data it sits at the
700 W cap at 1.4-1.5 GHz, on small-integer data it runs faster. So every measurement records what the
GPU was doing while it was timed. ``Telemetry.window()`` brackets one timed window: a background thread
samples the SM clock, the power draw and the throttle reasons every ``SAMPLE_INTERVAL_S`` while the
window is open, and the total-energy counter is read at both ends (energy / time is a better power
figure than the driver's averaged power reading). ``summarize`` turns a kernel's windows into the
numbers a result carries.

``pynvml`` comes from the ``nvidia-ml-py`` package (extra ``cute-gemm[power]``); without it, or without a
driver, every telemetry field is null and ``Telemetry.reason`` says why.
"""

from __future__ import annotations

import contextlib
import dataclasses
import statistics
import threading
import time

SAMPLE_INTERVAL_S = 0.005

# NVML's clocks-event ("throttle") reason bits (nvmlClocksEventReason* / nvmlClocksThrottleReason*)
THROTTLE_REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal",
    0x40: "hw_thermal",
    0x80: "hw_power_brake",
    0x100: "display_clock",
    0x200: "board_limit",
    0x400: "reliability",
}


def decode_reasons(mask: int | None) -> list[str] | None:
    """Names of the bits set in an NVML throttle-reason mask, lowest bit first; unknown bits as hex."""
    if mask is None:
        return None
    names = [name for bit, name in THROTTLE_REASONS.items() if mask & bit]
    rest = mask & ~sum(THROTTLE_REASONS)
    if rest:
        names.append(hex(rest))
    return names


@dataclasses.dataclass
class Sample:
    sm_mhz: int | None
    power_mw: int | None
    reasons: int | None


@dataclasses.dataclass
class Window:
    """What the GPU did during one timed window."""

    seconds: float = 0.0
    energy_mj: int | None = None  # total-energy counter delta; None when the counter is not readable
    samples: list[Sample] = dataclasses.field(default_factory=list)


def _median_min_max(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)} if values else None


ENERGY_MIN_S = 1.0  # below this, the energy counter's ~100 ms steps make energy / time meaningless


def summarize(windows: list[Window], tflops: float | None) -> dict:
    """One measurement's telemetry: SM clock spread, power, energy efficiency and throttle reasons.

    Power is energy / time over all the windows when they add up to at least ``ENERGY_MIN_S`` and the
    energy counter advanced, else the mean of the sampled power readings (``power_source`` says which;
    the sampled mean is kept as ``power_w_sampled`` either way): on the H200 the energy counter moves in
    steps of ~100 ms, so over a few tens of milliseconds it reads 0 J or a whole step (measured: 0 to
    2,400 W for 60 ms windows of one run). ``tflops_per_kw`` is TFLOP/s per kW drawn.
    """
    samples = [s for w in windows for s in w.samples]
    clocks = [s.sm_mhz for s in samples if s.sm_mhz is not None]
    powers = [s.power_mw for s in samples if s.power_mw is not None]
    masks = [s.reasons for s in samples if s.reasons is not None]
    seconds = sum(w.seconds for w in windows)
    energies = [w.energy_mj for w in windows]
    energy_j = sum(energies) / 1000 if energies and None not in energies else None
    sampled = statistics.fmean(powers) / 1000 if powers else None
    if energy_j and seconds >= ENERGY_MIN_S:
        power_w, source = energy_j / seconds, "energy"
    else:
        power_w, source = sampled, "samples" if powers else None
    mask = 0
    for m in masks:
        mask |= m
    return {
        "sm_clock_mhz": _median_min_max(clocks),
        "power_w": power_w,
        "power_source": source,
        "power_w_sampled": sampled,
        "energy_j": energy_j,
        "window_s": seconds,
        "samples": len(samples),
        "throttle_mask": mask if masks else None,
        "throttle_reasons": decode_reasons(mask) if masks else None,
        "tflops_per_kw": tflops / (power_w / 1000) if tflops and power_w else None,
    }


class NvmlReader:
    """The four NVML readings for one device handle; each returns None where the driver refuses it."""

    def __init__(self, pynvml, handle):
        self.nv, self.handle = pynvml, handle
        self._reasons = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            pynvml.nvmlDeviceGetCurrentClocksThrottleReasons

    def _try(self, fn, *args):
        try:
            return fn(self.handle, *args)
        except self.nv.NVMLError:
            return None

    def sample(self) -> Sample:
        return Sample(self._try(self.nv.nvmlDeviceGetClockInfo, self.nv.NVML_CLOCK_SM),
                      self._try(self.nv.nvmlDeviceGetPowerUsage), self._try(self._reasons))

    def energy_mj(self) -> int | None:
        return self._try(self.nv.nvmlDeviceGetTotalEnergyConsumption)

    def describe(self) -> dict:
        name = self._try(self.nv.nvmlDeviceGetName)
        limit = self._try(self.nv.nvmlDeviceGetEnforcedPowerLimit)
        return {"nvml_device": name.decode() if isinstance(name, bytes) else name,
                "power_limit_w": limit / 1000 if limit else None}


def _nvml_handle(pynvml, device_index: int):
    """The NVML handle of torch's CUDA device ``device_index`` (matched by PCI bus id when torch has it;
    CUDA and NVML enumerate GPUs in different orders when CUDA_VISIBLE_DEVICES reorders them)."""
    try:
        import torch

        prop = torch.cuda.get_device_properties(device_index)
        bus = f"{prop.pci_domain_id:08X}:{prop.pci_bus_id:02X}:{prop.pci_device_id:02X}.0"
        return pynvml.nvmlDeviceGetHandleByPciBusId(bus)
    except Exception:
        return pynvml.nvmlDeviceGetHandleByIndex(device_index)


class Telemetry:
    """Samples one GPU during timed windows. ``reader`` None means unavailable; ``reason`` says why."""

    def __init__(self, reader=None, reason: str | None = None, interval_s: float = SAMPLE_INTERVAL_S):
        self.reader, self.reason, self.interval_s = reader, reason, interval_s
        self._active: list | None = None
        self._stop = threading.Event()
        self._thread = None
        if reader is not None:
            self._thread = threading.Thread(target=self._run, name="cute-gemm-nvml", daemon=True)
            self._thread.start()

    @classmethod
    def open(cls, device_index: int = 0) -> "Telemetry":
        """NVML telemetry for torch's device ``device_index``, or an unavailable one saying why."""
        try:
            import pynvml
        except ImportError:
            return cls(reason="pynvml is not installed (pip install 'cute-gemm[power]', package nvidia-ml-py)")
        try:
            pynvml.nvmlInit()
            handle = _nvml_handle(pynvml, device_index)
        except pynvml.NVMLError as exc:
            return cls(reason=f"NVML is not usable here: {exc}")
        return cls(NvmlReader(pynvml, handle))

    @property
    def available(self) -> bool:
        return self.reader is not None

    def describe(self) -> dict:
        """What the result document records about the telemetry itself."""
        info = {"available": self.available, "reason": self.reason, "sample_interval_ms": self.interval_s * 1000}
        if self.reader is not None:
            info.update(self.reader.describe())
        return info

    def _run(self):
        while not self._stop.wait(self.interval_s):
            active = self._active
            if active is not None:
                active.append(self.reader.sample())

    @contextlib.contextmanager
    def window(self):
        """Bracket one timed window; the yielded ``Window`` is complete when the block exits.

        The caller synchronizes the GPU before entering and before leaving, so the samples fall in the
        window's GPU work. A window shorter than the sampling interval gets one sample at its end.
        """
        w = Window()
        if self.reader is None:
            yield w
            return
        e0, t0 = self.reader.energy_mj(), time.perf_counter()
        self._active = w.samples
        try:
            yield w
        finally:
            self._active = None
            w.seconds = time.perf_counter() - t0
            e1 = self.reader.energy_mj()
            w.energy_mj = e1 - e0 if e0 is not None and e1 is not None else None
            if not w.samples:
                w.samples.append(self.reader.sample())

    def close(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)
