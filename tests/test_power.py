"""NVML telemetry on the host side: throttle-reason decoding, the summary of a kernel's windows, the
sampling thread driven by a fake reader, and a clear reason when NVML is not usable (as on this CPU box)."""

import threading
import time

import pytest

from cute_gemm.measure import power


@pytest.mark.parametrize("mask,names", [
    (0, []),
    (0x4, ["sw_power_cap"]),
    (0x1 | 0x4, ["gpu_idle", "sw_power_cap"]),
    (0x8 | 0x20 | 0x40 | 0x80, ["hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake"]),
    (0x4 | 0x1000, ["sw_power_cap", "0x1000"]),  # a bit this table does not know stays visible
    (None, None),
])
def test_decode_reasons(mask, names):
    assert power.decode_reasons(mask) == names


def test_reason_bits_match_nvml():
    pynvml = pytest.importorskip("pynvml")
    for bit, name in ((pynvml.nvmlClocksThrottleReasonSwPowerCap, "sw_power_cap"),
                      (pynvml.nvmlClocksThrottleReasonHwSlowdown, "hw_slowdown"),
                      (pynvml.nvmlClocksThrottleReasonSwThermalSlowdown, "sw_thermal"),
                      (pynvml.nvmlClocksThrottleReasonHwThermalSlowdown, "hw_thermal"),
                      (pynvml.nvmlClocksThrottleReasonHwPowerBrakeSlowdown, "hw_power_brake"),
                      (pynvml.nvmlClocksThrottleReasonGpuIdle, "gpu_idle")):
        assert power.THROTTLE_REASONS[bit] == name


def test_summarize_prefers_energy_over_a_second_or_more():
    w1 = power.Window(0.6, 420_000, [power.Sample(1410, 690_000, 0x4), power.Sample(1380, 700_000, 0x4)])
    w2 = power.Window(0.6, 432_000, [power.Sample(1500, 710_000, 0x0)])
    s = power.summarize([w1, w2], tflops=700.0)
    assert s["sm_clock_mhz"] == {"median": 1410, "min": 1380, "max": 1500}
    assert s["power_source"] == "energy" and s["power_w"] == pytest.approx(852.0 / 1.2)
    assert s["power_w_sampled"] == pytest.approx(700.0)
    assert s["energy_j"] == pytest.approx(852.0) and s["window_s"] == pytest.approx(1.2)
    assert s["throttle_reasons"] == ["sw_power_cap"] and s["throttle_mask"] == 0x4 and s["samples"] == 3
    assert s["tflops_per_kw"] == pytest.approx(700.0 / (710.0 / 1000))


def test_short_windows_use_the_samples_not_the_coarse_energy_counter():
    """Over 40 ms the H200's energy counter (~100 ms steps) reads a whole step or nothing: 0 J -> 0 W,
    144 J -> 3,600 W. The sampled power readings are what such a window can use."""
    for energy_mj in (0, 144_000):
        w = power.Window(0.04, energy_mj, [power.Sample(1650, 630_000, 0x4), power.Sample(1650, 640_000, 0x4)])
        s = power.summarize([w], tflops=700.0)
        assert s["power_source"] == "samples" and s["power_w"] == pytest.approx(635.0)


def test_summarize_falls_back_to_sampled_power():
    w = power.Window(0.02, None, [power.Sample(1700, 500_000, 0), power.Sample(None, 600_000, None)])
    s = power.summarize([w], tflops=800.0)
    assert s["power_source"] == "samples" and s["power_w"] == pytest.approx(550.0)
    assert s["throttle_reasons"] == [] and s["sm_clock_mhz"]["median"] == 1700


def test_summarize_without_telemetry_is_all_null():
    s = power.summarize([power.Window(0.02), power.Window(0.02)], tflops=700.0)
    assert s["sm_clock_mhz"] is None and s["power_w"] is None and s["tflops_per_kw"] is None
    assert s["throttle_reasons"] is None and s["samples"] == 0


class FakeReader:
    """Counts like NVML: energy grows 700 mJ per call; every sample reports the power cap."""

    def __init__(self):
        self.energy = 0
        self.calls = 0
        self.lock = threading.Lock()

    def sample(self):
        with self.lock:
            self.calls += 1
        return power.Sample(1450, 700_000, 0x4)

    def energy_mj(self):
        self.energy += 700
        return self.energy

    def describe(self):
        return {"nvml_device": "fake", "power_limit_w": 700.0}


def test_window_samples_in_background():
    tel = power.Telemetry(FakeReader(), interval_s=0.002)
    try:
        with tel.window() as w:
            time.sleep(0.05)
        n = len(w.samples)
        time.sleep(0.02)
        assert len(w.samples) == n  # nothing is added once the window closed
    finally:
        tel.close()
    assert n >= 5 and w.energy_mj == 700 and 0.05 <= w.seconds < 1
    assert power.summarize([w], 700.0)["throttle_reasons"] == ["sw_power_cap"]
    assert tel.describe()["available"] and tel.describe()["nvml_device"] == "fake"


def test_short_window_gets_one_sample():
    tel = power.Telemetry(FakeReader(), interval_s=10)
    try:
        with tel.window() as w:
            pass
    finally:
        tel.close()
    assert len(w.samples) == 1


def test_unavailable_telemetry_says_why():
    tel = power.Telemetry.open()  # no NVML driver library on a CPU-only machine (or no pynvml at all)
    if tel.available:
        pytest.skip("NVML works here")
    try:
        assert tel.reason and ("NVML" in tel.reason or "pynvml" in tel.reason)
        with tel.window() as w:
            pass
        assert w.samples == [] and w.energy_mj is None
        assert tel.describe() == {"available": False, "reason": tel.reason, "sample_interval_ms": 5.0}
    finally:
        tel.close()
