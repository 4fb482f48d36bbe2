"""The worklog's B300 numbers as the side-by-side figure uses them, the peers' names and availability,
and (GPU) every available peer against the reference and through a CUDA graph."""

import pytest

from conftest import gpu_family
from cute_gemm.measure import peers
from cute_gemm.report import worklog


def test_worklog_numbers():
    assert worklog.TFLOPS["4096x4096x4096"] == {"0": 713, "1": 824, "2a": 959, "2b": 978, "3": 1153, "4": 1285,
                                                "5": 1451}
    assert worklog.CUBLASLT_TFLOPS == {"4096x4096x4096": 1762, "1024x4096x4096": 1400}
    pct = worklog.pct_of_vendor("4096x4096x4096")
    assert pct["5"][0] == pytest.approx(82.35, abs=0.01) and pct["5"][1] == pct["5"][2] == pct["5"][0]
    skinny = worklog.pct_of_vendor("1024x4096x4096")
    assert set(skinny) == {"0", "1"}
    mid, lo, hi = skinny["1"]
    assert lo == pytest.approx(100 * 478 / 1400) and hi == pytest.approx(100 * 485 / 1400) and lo < mid < hi


def test_peer_lists():
    assert peers.parse_peer_list("cublas, Triton,cublas") == ["cublas", "triton"]
    assert peers.parse_peer_list("none") == []
    with pytest.raises(ValueError, match="unknown peer 'mkl'"):
        peers.parse_peer_list("cublas,mkl")
    assert set(peers.DEFAULT) <= set(peers.PEERS) and set(peers.VENDOR) <= set(peers.DEFAULT)


def test_kernel_names_keep_gpu_kernels_in_launch_order():
    class Ev:
        def __init__(self, name, device):
            self.name, self.device_type = name, f"DeviceType.{device}"

    events = [Ev("aten::mm", "CPU"), Ev("nvjet_sm90_hss_256x128_64x4_1x2_h_bz_coopA_NNT", "CUDA"),
              Ev("splitKreduce_kernel", "CUDA"), Ev("nvjet_sm90_hss_256x128_64x4_1x2_h_bz_coopA_NNT", "CUDA")]
    assert peers.kernel_names(events) == ["nvjet_sm90_hss_256x128_64x4_1x2_h_bz_coopA_NNT", "splitKreduce_kernel"]
    assert peers.kernel_names([Ev("aten::mm", "CPU")]) is None


def test_launched_kernels_never_raises():
    # without a GPU (or without CUPTI) the profiler traces no kernel: the names are None, the bench goes on
    def boom():
        raise RuntimeError("no GPU")

    assert peers.launched_kernels(boom) is None


def test_missing_peers_say_which_package():
    for name, package in (("triton", "triton"), ("quack", "quack-kernels")):
        reason = peers.PEERS[name].missing()
        assert reason is None or reason == f"{package} is not installed"
    assert peers.PEERS["cublas"].missing() is None


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(peers.DEFAULT))
def test_peer_matches_reference_and_captures(name):
    """Each installed peer computes the problem right and can be timed through the CUDA-graph timer."""
    if gpu_family() != "sm90":
        pytest.skip("peers are measured on the sm90 ladder's GPU")
    peer = peers.PEERS[name]
    if peer.missing():
        pytest.skip(peer.missing())
    from cute_gemm.measure import timing
    from cute_gemm.measure.inputs import timing_inputs
    from cute_gemm.runtime.problem import Problem

    p = Problem(1024, 1024, 512)
    chk = peers.check_peer(peer, p)
    assert chk["error"] is None and chk["passed"], chk
    if name in peers.VENDOR:  # torch's profiler (CUPTI ships with torch's CUDA wheels) names cuBLAS's kernel
        assert chk["kernels"] and all(isinstance(k, str) and k for k in chk["kernels"]), chk["kernels"]
    sets = timing_inputs(p, "ints", 1)
    cap = timing.capture(lambda: [peer.factory(a, b, c) for a, b, c in sets])
    (t, _), = timing.interleave({name: cap}, rounds=2).values()
    assert cap.launches >= 1 and 0 < min(t.ms_rounds) < 10
