"""``cute-gemm bench --epilogue SPEC`` without a GPU: the spec's validation (one line, exit 2), the CPU-only plan,
the check against float64 on real CPU tensors (the unfused sequence passes, a wrong epilogue does not -- the gated
pairs too: swapped or concatenated halves fail), quack's calls on a stand-in module, the timed run with checks, graphs and timers replaced (interleaved order, a wrong
variant never timed, the speedups and the document), and the H200 run file's cases."""

import json
import math
import os
import re
import shlex
import subprocess
import types

import pytest
import torch
import torch.nn.functional as F

from bench_scripts import ROOT
from cute_gemm import cli
from cute_gemm.cli import steps
from cute_gemm.measure import epilogue_bench as eb
from cute_gemm.measure import power, results, timing
from cute_gemm.runtime import plan
from cute_gemm.runtime.problem import Problem
from phases.operands import Operands
from synthetic_doc import ENV

RUN_FILE = os.path.join(ROOT, "bench", "runs", "epilogue.sh")


# ----------------------------------------------------------------------------------------------- the spec
@pytest.mark.parametrize("text,spec", [
    ("bias", eb.Spec(bias=True)),
    ("bias,gelu", eb.Spec(bias=True, activation="gelu")),
    ("silu, BIAS", eb.Spec(bias=True, activation="silu")),
    ("gelu", eb.Spec(activation="gelu")),
    ("residual", eb.Spec(residual=True)),
    ("residual,relu,bias", eb.Spec(bias=True, activation="relu", residual=True)),
    ("gated,silu", eb.Spec(activation="silu", gated=True)),
    ("silu,residual,GATED,bias", eb.Spec(bias=True, activation="silu", residual=True, gated=True)),
    ("gated", eb.Spec(gated=True)),
])
def test_a_spec_parses_in_any_order(text, spec):
    assert eb.parse_spec(text) == spec
    assert eb.parse_spec(spec.text()) == spec  # the canonical text reads back


@pytest.mark.parametrize("text,says", [
    ("tanh", "unknown term 'tanh'"), ("bias,gelu,silu", "two activations (gelu and silu)"),
    ("bias,bias", "'bias' is given twice"), ("", "expected a comma list"), ("bias,,gelu", "expected a comma list"),
    ("gated,gated,silu", "'gated' is given twice"), ("swiglu", "unknown term 'swiglu'; terms are bias, gated"),
])
def test_a_bad_spec_says_why(text, says):
    with pytest.raises(ValueError, match=re.escape(says)):
        eb.parse_spec(text)


def test_the_activations_are_the_kernels():
    from phases import epilogue

    assert ("none", *eb.ACTIVATIONS) == epilogue.ACTIVATIONS


@pytest.fixture
def no_gpu(monkeypatch):
    """No GPU, and nothing may compile or look for one further."""
    from cute_gemm.runtime import compile as compile_mod

    def refuse(*args, **kwargs):
        raise AssertionError("compiled")

    monkeypatch.setattr(compile_mod, "compile_kernel", refuse)
    monkeypatch.setattr(plan, "compile_plan", refuse)
    monkeypatch.setattr(steps, "gpu_target", lambda: None)
    monkeypatch.setattr(steps, "no_gpu_reason", lambda: "no CUDA GPU is visible to torch")


@pytest.mark.parametrize("argv,says", [
    (["--epilogue", "bias,gelu,silu"], "argument --epilogue: 'bias,gelu,silu': two activations"),
    (["--epilogue", "swish"], "unknown term 'swish'"),
    (["--epilogue", "bias", "--best"], "drop --best"),
    (["--epilogue", "bias", "--peers", "cublas", "--phases", "7"], "drop --phases, --peers"),
    (["--epilogue", "bias,gelu", "--config", "8:activation=silu"],
     "--config 8:activation=silu: activation comes from --epilogue bias,gelu"),
    (["--epilogue", "bias", "--config", "8:bogus=1"], "--config '8:bogus=1': "),
    (["--epilogue", "bias", "--config", "8:bn=100"], "--config '8:bn=100': "),
])
def test_bad_arguments_are_one_line_and_exit_2(argv, says, no_gpu, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc = cli.main(["bench", *argv])
    out, err = capsys.readouterr()
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1, (rc, out, err)
    assert err.startswith("cute-gemm bench") and says in err, err
    assert os.listdir(tmp_path) == []


def test_without_a_gpu_it_says_what_it_would_time(no_gpu, capsys, tmp_path):
    out_json = tmp_path / "plan.json"
    rc = cli.main(["bench", "--epilogue", "bias,silu", "--set", "decode", "--shapes", "8,4096,4096",
                   "--out", str(out_json)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("No GPU to benchmark on (no CUDA GPU is visible to torch)")
    assert "31 shape(s), nt bf16->bf16, y = silu(x @ W.T + b)" in out  # the given shape, then the set's 30
    assert 'cute_gemm.gemm(A, B, phase="best", out=C, bias=b, activation=\'silu\')' in out
    assert "F.linear(x, W, b)" in out and "F.silu(y)" in out and "quack" in out
    assert lines[-1].split()[1:3] == ["8x4096x4096", "1x4096x4096"] and len(lines[-1].split()) == 32
    plan = json.loads(out_json.read_text())
    assert plan["epilogue"] == "bias,silu" and plan["operands"]["label"] == "nt bf16->bf16"
    assert plan["gpu"] is None and plan["reason"] == "no CUDA GPU is visible to torch" and len(plan["shapes"]) == 31
    assert set(plan["variants"]) == set(eb.VARIANTS) and plan["command"] and plan["date"]


def test_without_a_gpu_the_plan_names_each_config(no_gpu, capsys, tmp_path):
    out_json = tmp_path / "plan.json"
    assert cli.main(["bench", "--epilogue", "bias,gelu", "--shapes", "4096,8192,1024", "--config",
                     "8:stages=5,epi_spread=true", "--out", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert ('  config 8:stages=5,epi_spread=true: cute_gemm.gemm(A, B, phase="8", config="stages=5,epi_spread=true", '
            "out=C, bias=b, activation='gelu')") in out
    plan = json.loads(out_json.read_text())
    assert set(plan["variants"]) == {*eb.VARIANTS, "config 8:stages=5,epi_spread=true"}


def test_a_config_is_checked_with_the_epilogue_it_will_run(no_gpu, capsys):
    """``--config`` is checked with the epilogue's fields set, as the fused call builds it: 64-column slabs through 3
    buffers on phase 8's RING5 fit with the gated pairs (half the staging) and not with bias + gelu."""
    wide = "8:stages=5,group_m=16,epi_n=64,epi_stages=3,epi_spread=true"
    assert cli.main(["bench", "--epilogue", "gated,silu", "--shapes", "4096,8192,1024", "--config", wide]) == 0
    assert f"  config {wide}: cute_gemm.gemm(" in capsys.readouterr().out
    assert cli.main(["bench", "--epilogue", "bias,gelu", "--shapes", "4096,8192,1024", "--config", wide]) == 2
    assert "248 KiB of A/B ring" in capsys.readouterr().err


def test_without_a_gpu_the_gated_plan_says_swiglu(no_gpu, capsys):
    assert cli.main(["bench", "--epilogue", "gated,silu", "--shapes", "16,8192,4096"]) == 0
    out = capsys.readouterr().out
    assert "y = silu(x @ Wg.T) * (x @ Wu.T) [W = (Wg, Wu) rows interleaved]" in out
    assert "activation='silu', gated=True)" in out and "F.silu(y[:, 0::2]) * y[:, 1::2]" in out
    assert "gemm_gated" in out


def test_the_operand_options_apply(no_gpu, capsys):
    assert cli.main(["bench", "--epilogue", "residual", "--layout", "nn", "--out-dtype", "fp32",
                     "--shapes", "64,256,512"]) == 0
    out = capsys.readouterr().out
    assert "1 shape(s), nn bf16->fp32, y = x @ W.T + r:" in out and "x @ W.T (torch.matmul); y = y + r" in out


# --------------------------------------------------------------------------------- the check, on the CPU
P = Problem(96, 256, 4096)


def _inputs(spec, ops=eb.DEFAULT_OPERANDS, seed=3):
    gen = torch.Generator().manual_seed(seed)
    return eb.check_inputs(P, ops, spec, gen, device="cpu")


def _fused_like(inp, spec, activation=None, bias=None, before=False, pairs="interleaved"):
    """What the fused kernel computes (fp32, the tanh forms, one rounding); the keyword arguments break it (``pairs``
    for the gated ones: "swapped" takes up as the gate, "halves" the concatenated [gate; up] halves)."""
    y = inp.a.float() @ inp.b.float()
    if spec.bias:
        y = y + (inp.bias if bias is None else bias).float()
    if spec.residual and before:
        y = y + inp.residual.float()
    act = activation or spec.activation
    gate, up = y, None
    if spec.gated:
        n = y.shape[1]
        gate, up = {"interleaved": (y[:, 0::2], y[:, 1::2]), "swapped": (y[:, 1::2], y[:, 0::2]),
                    "halves": (y[:, : n // 2], y[:, n // 2:])}[pairs]
    y = gate
    if act == "gelu":
        y = 0.5 * y * (1 + torch.tanh(0.7978845608 * (y + 0.044715 * y**3)))
    elif act == "silu":
        y = 0.5 * y * (1 + torch.tanh(0.5 * y))
    elif act == "relu":
        y = torch.relu(y)
    if up is not None:
        y = y * up
    if spec.residual and not before:
        y = y + inp.residual.float()
    return y.to(inp.c.dtype)


@pytest.mark.parametrize("text", ["bias", "bias,gelu", "bias,silu", "relu", "residual", "bias,gelu,residual",
                                  "gated,silu", "bias,gated,gelu", "gated,relu,residual", "gated"])
@pytest.mark.parametrize("ops", [eb.DEFAULT_OPERANDS, Operands.of("tn", "fp16", "fp16")], ids=lambda o: o.label())
def test_the_unfused_sequence_and_the_fused_math_pass(text, ops):
    spec = eb.parse_spec(text)
    tol = eb.tolerance(ops, P.k, spec)
    for seed in range(2):
        chk = eb.check(eb.unfused(spec), P, ops, spec, seed=seed, device="cpu")
        assert chk["passed"] and chk["error"] is None, chk
        inp = _inputs(spec, ops, seed)
        nums = eb.compare(_fused_like(inp, spec), inp, spec, tol)
        assert eb.passes(nums, tol), nums


@pytest.mark.parametrize("text,wrong", [
    ("bias,gelu", "silu"),  # the other activation
    ("bias,silu", "no bias on one column"),
    ("gelu,residual", "residual before the activation"),
    ("bias", "one NaN"),
    ("residual", "one element off by 0.25"),
    ("gated,silu", "gate and up swapped"),
    ("bias,gated,gelu", "concatenated halves"),
    ("gated,silu,residual", "the plain product"),
])
def test_a_wrong_epilogue_fails_the_check(text, wrong):
    spec = eb.parse_spec(text)
    tol = eb.tolerance(eb.DEFAULT_OPERANDS, P.k, spec)
    inp = _inputs(spec)
    if wrong == "silu":
        y = _fused_like(inp, spec, activation="silu")
    elif wrong == "no bias on one column":
        inp.bias[7] = 1.5
        bias = inp.bias.clone()
        bias[7] = 0
        y = _fused_like(inp, spec, bias=bias)
    elif wrong == "residual before the activation":
        y = _fused_like(inp, spec, before=True)
    elif wrong == "gate and up swapped":
        y = _fused_like(inp, spec, pairs="swapped")
    elif wrong == "concatenated halves":
        y = _fused_like(inp, spec, pairs="halves")
    elif wrong == "the plain product":
        y = _fused_like(inp, spec, activation="none")
    else:
        y = _fused_like(inp, spec)
        y[5, 9] = float("nan") if wrong == "one NaN" else y[5, 9] + 0.25
    nums = eb.compare(y, inp, spec, tol)
    assert not eb.passes(nums, tol), nums
    assert nums["mismatches"] >= 1 and nums["unwritten"] == (1 if wrong == "one NaN" else 0)


def test_check_refuses_a_wrong_launch_and_passes_a_right_one():
    spec = eb.parse_spec("bias,gelu")
    right = eb.check(lambda i: lambda: _fused_like(i, spec), P, eb.DEFAULT_OPERANDS, spec, seed=1, device="cpu")
    wrong = eb.check(lambda i: lambda: _fused_like(i, spec, activation="silu"), P, eb.DEFAULT_OPERANDS, spec,
                     seed=1, device="cpu")
    assert right["passed"] and not wrong["passed"] and wrong["mismatches"] > 0, (right, wrong)


def test_a_fused_call_that_differs_on_a_repeat_fails():
    spec = eb.Spec(bias=True)
    calls = []

    def make(inp):
        def launch():
            calls.append(1)
            y = _fused_like(inp, spec)
            if len(calls) == 2:
                y.view(torch.int16)[0, 0] += 1  # the last bit of one element
            return y

        return launch

    chk = eb.check(make, P, eb.DEFAULT_OPERANDS, spec, repeat=True, seed=0, device="cpu")
    assert chk["repeat_identical"] is False and not chk["passed"] and chk["mismatches"] == 0


def test_a_launch_that_raises_is_an_error_not_a_failure():
    def make(inp):
        raise TypeError("gemm() got an unexpected keyword argument 'bias'")

    chk = eb.check(make, P, eb.DEFAULT_OPERANDS, eb.Spec(bias=True), device="cpu")
    assert chk == {"passed": False, "error": "TypeError: gemm() got an unexpected keyword argument 'bias'"}


def test_a_call_that_refuses_the_shape_is_skipped_not_an_error():
    from cute_gemm.errors import UnsupportedError

    def make(inp):
        raise UnsupportedError("phase 11 cannot do 96x256x4096 here")

    chk = eb.check(make, P, eb.DEFAULT_OPERANDS, eb.Spec(bias=True), device="cpu")
    row = eb._row("fused", P, eb.DEFAULT_OPERANDS, "how")
    assert not eb._checked(row, chk) and row["status"] == "skipped" and "cannot do" in row["reason"]


def test_gated_inputs_and_bytes_are_half_width():
    spec = eb.parse_spec("bias,gated,silu,residual")
    inp = _inputs(spec)
    assert tuple(inp.c.shape) == (96, 128) and tuple(inp.residual.shape) == (96, 128) and tuple(inp.bias.shape) == (256,)
    assert torch.isnan(inp.c).all()
    ops = eb.DEFAULT_OPERANDS  # bf16 A, B and C
    assert eb.epilogue_bytes(P, ops, spec) == 2 * (96 * 4096 + 4096 * 256 + 256) + 2 * 96 * 128 * 2
    assert eb.epilogue_bytes(P, ops, eb.parse_spec("bias,silu,residual")) == (2 * (96 * 4096 + 4096 * 256 + 256)
                                                                             + 2 * 96 * 256 * 2)


def test_the_unfused_gated_sequence_is_a_users_swiglu():
    spec = eb.parse_spec("bias,gated,silu,residual")
    inp = _inputs(spec)
    y = F.linear(inp.a, inp.b.t(), inp.bias)
    assert torch.equal(eb.unfused(spec)(inp)(), F.silu(y[:, 0::2]) * y[:, 1::2] + inp.residual)
    assert eb.unfused_ops(spec) == ('y = F.linear(x, W, b) (torch.addmm: cuBLAS(Lt) with its bias epilogue); '
                                    'y = F.silu(y[:, 0::2]) * y[:, 1::2]; y = y + r')
    assert eb.unfused_ops(eb.parse_spec("gated")) == "y = x @ W.T (torch.matmul); y = y[:, 0::2] * y[:, 1::2]"


def test_the_unfused_sequence_is_the_torch_ops():
    spec = eb.parse_spec("bias,gelu,residual")
    inp = _inputs(spec)
    want = F.gelu(F.linear(inp.a, inp.b.t(), inp.bias), approximate="tanh") + inp.residual
    assert torch.equal(eb.unfused(spec)(inp)(), want)
    assert eb.unfused_ops(spec) == ('y = F.linear(x, W, b) (torch.addmm: cuBLAS(Lt) with its bias epilogue); '
                                    'y = F.gelu(y, approximate="tanh"); y = y + r')


def test_the_fused_call(monkeypatch):
    import cute_gemm

    seen = []
    monkeypatch.setattr(cute_gemm, "gemm", lambda a, b, **kw: seen.append((a, b, kw)) or "C")
    inp = eb.Inputs("A", "B", "bias", "res", "c")
    assert eb.fused(eb.parse_spec("bias,silu"), "sm90")(inp)() == "C"
    assert seen == [("A", "B", {"phase": "best", "config": None, "out": "c", "arch": "sm90", "bias": "bias",
                                "activation": "silu", "residual": None})]
    assert eb.fused(eb.parse_spec("gated,silu"))(inp)() == "C"
    assert seen[-1] == ("A", "B", {"phase": "best", "config": None, "out": "c", "arch": None, "bias": None,
                                   "activation": "silu", "residual": None, "gated": True})
    # a --config variant: that phase, those fields, the same epilogue
    assert eb.fused(eb.parse_spec("bias,gelu"), None, "8:stages=5,epi_spread=true")(inp)() == "C"
    assert seen[-1] == ("A", "B", {"phase": "8", "config": "stages=5,epi_spread=true", "out": "c", "arch": None,
                                   "bias": "bias", "activation": "gelu", "residual": None})


# ------------------------------------------------------------------------------------------------ quack
def _fake_quack(calls, act_map=("relu", "silu", "gelu_tanh_approx"), add_bias=True):
    """A stand-in for quack.gemm_interface with 0.6.x's signatures; each call is recorded."""

    def gemm(A, B, out=None, bias=None, alpha=1.0, tuned=True):
        calls.append(("gemm", A, B, {"out": out, "bias": bias, "tuned": tuned}))
        return out

    def gemm_act(A, B, C=None, bias=None, activation=None, preact_out=None, postact_out=None,
                 store_preact=True, tuned=True):
        calls.append(("gemm_act", A, B, {"C": C, "bias": bias, "activation": activation, "postact_out": postact_out,
                                         "store_preact": store_preact, "tuned": tuned}))
        return None, postact_out

    def gemm_gated(A, B, C=None, bias=None, activation="swiglu", preact_out=None, postact_out=None,
                   out_dtype=None, postact_dtype=None, store_preact=True, tuned=True):
        calls.append(("gemm_gated", A, B, {"C": C, "bias": bias, "activation": activation,
                                           "postact_out": postact_out, "store_preact": store_preact, "tuned": tuned}))
        return None, postact_out

    if add_bias:
        def gemm_add(A, B, C, out=None, bias=None, tuned=True):
            calls.append(("gemm_add", A, B, {"C": C, "out": out, "bias": bias, "tuned": tuned}))
            return out
    else:
        def gemm_add(A, B, C, out=None, tuned=True):
            return out

    return types.SimpleNamespace(gemm=gemm, gemm_act=gemm_act, gemm_add=gemm_add, gemm_gated=gemm_gated,
                                 act_to_pytorch_fn_map={k: None for k in act_map})


def test_quack_calls_per_epilogue():
    calls = []
    gi = _fake_quack(calls)
    inp = eb.Inputs("A", "Bt", "b", "r", "C")
    make, how = eb.quack_plan(eb.parse_spec("bias,gelu"), gi)
    assert make(inp)() == "C" and "gemm_act" in how
    assert calls[-1] == ("gemm_act", "A", "Bt", {"C": None, "bias": "b", "activation": "gelu_tanh_approx",
                                                 "postact_out": "C", "store_preact": False, "tuned": False})
    make, _ = eb.quack_plan(eb.parse_spec("silu"), gi)
    make(inp)()
    assert calls[-1][3]["activation"] == "silu" and calls[-1][3]["bias"] is None
    make, how = eb.quack_plan(eb.parse_spec("bias,residual"), gi)
    make(inp)()
    assert calls[-1] == ("gemm_add", "A", "Bt", {"C": "r", "out": "C", "bias": "b", "tuned": False})
    make, how = eb.quack_plan(eb.parse_spec("bias"), gi)
    make(inp)()
    assert calls[-1] == ("gemm", "A", "Bt", {"out": "C", "bias": "b", "tuned": False})


def test_quack_gated_calls():
    calls = []
    gi = _fake_quack(calls)
    inp = eb.Inputs("A", "Bt", "b", "r", "C")
    for text, name in (("gated,silu", "swiglu"), ("bias,gated,gelu", "geglu"), ("gated,relu", "reglu")):
        make, how = eb.quack_plan(eb.parse_spec(text), gi)
        assert make(inp)() == "C" and f"gemm_gated(A, B, bias={'b' if 'bias' in text else 'None'}" in how
        assert calls[-1] == ("gemm_gated", "A", "Bt", {"C": None, "bias": "b" if "bias" in text else None,
                                                       "activation": name, "postact_out": "C", "store_preact": False,
                                                       "tuned": False})


def test_quack_gated_without_the_call_is_a_reason():
    make, why = eb.quack_plan(eb.parse_spec("gated,silu,residual"), _fake_quack([]))
    assert make is None and "gemm_gated adds its C before the pair" in why
    make, why = eb.quack_plan(eb.parse_spec("gated"), _fake_quack([]))
    assert make is None and "no plain product gate * up" in why
    old = _fake_quack([])
    del old.gemm_gated
    make, why = eb.quack_plan(eb.parse_spec("gated,silu"), old)
    assert make is None and why == "quack.gemm_interface has no gemm_gated"


def test_quack_without_the_epilogue_is_a_reason():
    make, why = eb.quack_plan(eb.parse_spec("bias,gelu,residual"), _fake_quack([]))
    assert make is None and "before the activation" in why
    make, why = eb.quack_plan(eb.parse_spec("gelu"), _fake_quack([], act_map=("relu",)))
    assert make is None and "no activation 'gelu_tanh_approx'" in why
    make, why = eb.quack_plan(eb.parse_spec("bias,residual"), _fake_quack([], add_bias=False))
    assert make is None and why == "quack's gemm_add takes no bias"


# --------------------------------------------------------------------------- the timed run, faked GPU parts
class FakeGraph:
    def __init__(self, key):
        self.key = key


MS = {"fused": 0.010, "unfused": 0.016, "quack": 0.0125}


@pytest.fixture
def fake_gpu(monkeypatch):
    """Checks, inputs, graphs and timers replaced: each variant's launch returns its name; ``state["wrong"]`` names
    the variants whose check fails, ``state["replays"]`` records the timed replays in order, ``state["checks"]``
    the checks."""
    state = {"wrong": set(), "replays": [], "checks": [], "ms": dict(MS)}

    def tagged(key):
        def make(inp):
            return lambda: key

        make.key = key
        return make

    def check(make, p, ops, spec, repeat=False, seed=None, device="cuda"):
        state["checks"].append((make.key, str(p)))
        ok = make.key not in state["wrong"]
        return {"passed": ok, "error": None, "unwritten": 0, "mismatches": 0 if ok else 12,
                "max_abs_err": 0.01 if ok else 3.0, "rel_fro_err": 1e-3 if ok else 0.4, "float64_rows": None,
                "repeat_identical": True if repeat else None}

    def capture(make_launches):
        key = make_launches()[0]()
        return timing.Captured(FakeGraph(key), launches=10, replay_ms=state["ms"][key] * 10, input_sets=1)

    def time_replays(graph, replays):
        state["replays"].append(graph.key)
        return state["ms"][graph.key] * 10 * replays

    monkeypatch.setattr(eb, "fused", lambda spec, arch=None, config=None: tagged(eb.config_key(config) if config
                                                                               else "fused"))
    monkeypatch.setattr(eb, "unfused", lambda spec: tagged("unfused"))
    monkeypatch.setattr(eb, "quack_plan", lambda spec: (tagged("quack"), "quack.gemm_interface.gemm_act(...)"))
    monkeypatch.setattr(eb, "quack_missing", lambda: None)
    monkeypatch.setattr(eb, "check", check)
    monkeypatch.setattr(eb, "_kernels", lambda make, p, ops, spec: ["nvjet", "epilogue"])
    monkeypatch.setattr(eb, "timing_sets", lambda p, ops, spec, data, n: [eb.Inputs("A", "B", "b", "r", "C")])
    monkeypatch.setattr(timing, "input_sets_needed", lambda nbytes, cold: 1)
    monkeypatch.setattr(timing, "capture", capture)
    monkeypatch.setattr(timing, "time_replays", time_replays)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(power.Telemetry, "open", classmethod(lambda cls: cls(reason="test: no NVML")))
    monkeypatch.setattr("cute_gemm.measure.environment.record", lambda: ENV)
    monkeypatch.setattr(plan, "device_target", lambda device: "sm_90a")  # best's pick: the sm90 model's
    monkeypatch.setattr(plan, "device_name", lambda device: None)
    return state


SHAPES = [Problem(16, 4096, 4096), Problem(512, 14336, 4096)]


def test_the_variants_are_timed_interleaved(fake_gpu):
    doc = eb.run(eb.parse_spec("bias,gelu"), SHAPES, rounds=3, progress=False)
    assert results.validate_doc(doc) == []
    # every fused call is checked (compiled) before any other variant, so quack is imported after the phases
    assert fake_gpu["checks"][:2] == [("fused", str(p)) for p in SHAPES]
    assert [k for k, _ in fake_gpu["checks"][2:]] == ["unfused", "quack"] * 2
    one_round = ["fused", "unfused", "quack"]
    assert fake_gpu["replays"] == one_round * 3 * 2  # round robin, 3 rounds, per shape
    by = {(r["key"], r["shape"]): r for r in doc["results"]}
    for p in SHAPES:
        for key, ms in MS.items():
            row = by[(key, str(p))]
            assert row["status"] == "ok" and row["timing"]["ms_median"] == pytest.approx(ms), row
            assert row["timing"]["rounds"] == 3 and row["operands"]["label"] == "nt bf16->bf16"
    assert by[("fused", "16x4096x4096")]["phase"] == "best" and by[("unfused", "16x4096x4096")]["kind"] == "peer"
    assert by[("fused", "16x4096x4096")]["library_kernels"] == ["nvjet", "epilogue"]
    # the fused row names what best ran: phase 11 at 16 tokens, phase 7 at 512 (the model's picks), not the call's
    # epilogue fields, which the run's spec says
    assert by[("fused", "16x4096x4096")]["label"] == "fused (best: 11)"
    assert by[("fused", "512x14336x4096")]["label"] == "fused (best: 7 bn=128 stages=6 use_pdl=True)"
    assert by[("fused", "16x4096x4096")]["bytes"] == 2 * (16 * 4096 + 4096 * 4096) + 2 * 16 * 4096 + 2 * 4096


def test_the_fused_row_names_best_s_phase_8_pick_with_its_spread_slabs(fake_gpu):
    for spec, slabs in (("bias,gelu", "epi_stages=4 epi_n=16 "), ("gated,silu", "")):  # the pairs keep 32 columns
        doc = eb.run(eb.parse_spec(spec), [Problem(8192, 18944, 3584)], rounds=1, progress=False)
        fused = next(r for r in doc["results"] if r["key"] == "fused")
        assert fused["label"] == (f"fused (best: 8 stages=5 group_m=16 {slabs}use_pdl=True epi_spread=True "
                                  "bias_smem=True)")


def test_the_speedups_and_the_document(fake_gpu, monkeypatch):
    ms_by_shape = iter([{"fused": 0.010, "unfused": 0.020, "quack": 0.0125},
                        {"fused": 0.100, "unfused": 0.110, "quack": 0.080}])

    real_run = eb.time_variants

    def per_shape(p, *args, **kw):
        fake_gpu["ms"].update(next(ms_by_shape))
        return real_run(p, *args, **kw)

    monkeypatch.setattr(eb, "time_variants", per_shape)
    doc = eb.run(eb.parse_spec("bias,silu"), SHAPES, rounds=2, progress=False)
    epi = doc["epilogue"]
    s0, s1 = epi["shapes"]
    assert s0["fused_us"] == pytest.approx(10.0) and s0["unfused_us"] == pytest.approx(20.0)
    assert s0["speedup_vs_unfused"] == pytest.approx(2.0) and s0["speedup_vs_quack"] == pytest.approx(1.25)
    assert s1["speedup_vs_unfused"] == pytest.approx(1.1) and s1["speedup_vs_quack"] == pytest.approx(0.8)
    assert s0["speedup_vs_unfused_paired"]["median"] == pytest.approx(2.0)
    assert epi["geomean_speedup_vs_unfused"] == pytest.approx(math.sqrt(2.0 * 1.1))
    assert epi["geomean_speedup_vs_quack"] == pytest.approx(math.sqrt(1.25 * 0.8))
    assert epi["spec"] == "bias,silu" and epi["activation"] == "silu" and epi["bias"] and not epi["residual"]
    assert epi["shapes_vs_unfused"] == 2 and set(epi["variants"]) == set(eb.VARIANTS)
    # the bench's metadata: GPU, driver, versions, date, command, protocol (cold L2), telemetry
    for key in ("schema", "date", "command", "host", "gpu", "versions", "protocol", "telemetry", "operands"):
        assert key in doc, key
    assert doc["gpu"]["name"] == "NVIDIA H200" and doc["gpu"]["driver"] and doc["versions"]["quack"] == "0.6.5"
    assert doc["protocol"]["cold_l2"] is True and doc["protocol"]["rounds"] == 2
    assert doc["protocol"]["check"] == eb.CHECK and doc["telemetry"]["reason"] == "test: no NVML"
    lines = eb.table(doc)
    assert lines[2].split() == ["16x4096x4096", "10.0", "20.0", "12.5", "2.00x", "1.25x", "11"]  # best ran phase 11
    assert lines[3].split()[-4:] == ["7", "bn=128", "stages=6", "use_pdl=True"] and epi["shapes"][1]["fused_pick"]
    assert lines[4].split()[:3] == ["geomean", f"{math.sqrt(2.2):.2f}x", "1.00x"]


def test_a_config_is_checked_first_and_timed_beside_best(fake_gpu, monkeypatch):
    cfg = "8:epi_spread=true"
    fake_gpu["ms"][eb.config_key(cfg)] = 0.008
    doc = eb.run(eb.parse_spec("bias,gelu"), SHAPES, rounds=2, progress=False, configs=[cfg])
    assert results.validate_doc(doc) == []
    # best's and the config's fused calls of every shape are checked before anything else (quack's import)
    assert fake_gpu["checks"][:4] == [(k, str(p)) for p in SHAPES for k in ("fused", eb.config_key(cfg))]
    assert fake_gpu["replays"] == ["fused", eb.config_key(cfg), "unfused", "quack"] * 2 * 2
    row = next(r for r in doc["results"] if r["key"] == eb.config_key(cfg))
    assert row["kind"] == "phase" and row["phase"] == "8" and row["label"] == f"fused {cfg}"
    s0 = doc["epilogue"]["shapes"][0]
    assert s0["configs"][0]["us"] == pytest.approx(8.0) and s0["configs"][0]["vs_best"] == pytest.approx(1.25)
    assert doc["epilogue"]["geomean_vs_best"] == {cfg: pytest.approx(1.25)}
    lines = eb.table(doc)
    assert ["16x4096x4096", cfg, "8.0", "1.25x"] in [line.split() for line in lines]
    assert ["geomean", cfg, "1.25x"] in [line.split() for line in lines]


def test_a_wrong_config_is_never_timed_and_exits_1(fake_gpu, monkeypatch, tmp_path, capsys):
    cfg = "8:epi_spread=true"
    fake_gpu["wrong"].add(eb.config_key(cfg))
    monkeypatch.setattr(steps, "gpu_target", lambda: "sm_90a")
    rc = cli.main(["bench", "--epilogue", "bias,gelu", "--shapes", "16,4096,4096", "--rounds", "2", "--quiet",
                   "--config", cfg, "--out", str(tmp_path / "epi.json")])
    text = capsys.readouterr().out
    assert rc == 1 and fake_gpu["replays"] == ["fused", "unfused", "quack"] * 2
    assert f"config {cfg} not timed (failed) at every shape: wrong result" in text


def test_a_wrong_variant_is_never_timed(fake_gpu):
    fake_gpu["wrong"].add("quack")
    doc = eb.run(eb.parse_spec("residual"), SHAPES[:1], rounds=2, progress=False)
    assert results.validate_doc(doc) == []
    assert fake_gpu["replays"] == ["fused", "unfused"] * 2
    quack = next(r for r in doc["results"] if r["key"] == "quack")
    assert quack["status"] == "failed" and quack["timing"] is None and "12 elements outside" in quack["reason"]
    s = doc["epilogue"]["shapes"][0]
    assert s["quack_us"] is None and s["speedup_vs_quack"] is None and s["speedup_vs_unfused"] is not None
    assert doc["epilogue"]["geomean_speedup_vs_quack"] is None
    assert any(line.startswith("quack not timed (failed) at every shape: wrong result") for line in eb.table(doc))


def test_a_wrong_fused_call_times_the_others_and_exits_1(fake_gpu, monkeypatch, tmp_path, capsys):
    fake_gpu["wrong"].add("fused")
    monkeypatch.setattr(steps, "gpu_target", lambda: "sm_90a")
    out = tmp_path / "epi.json"
    rc = cli.main(["bench", "--epilogue", "bias,gelu", "--shapes", "16,4096,4096", "--rounds", "2", "--quiet",
                   "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 1 and fake_gpu["replays"] == ["unfused", "quack"] * 2
    doc = results.load(str(out))
    assert doc["epilogue"]["shapes"][0]["fused_status"] == "failed"
    assert "fused not timed (failed) at every shape" in text


def test_absent_quack_is_a_row_with_its_reason(fake_gpu, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(eb, "quack_missing", lambda: "quack-kernels is not installed")
    monkeypatch.setattr(steps, "gpu_target", lambda: "sm_90a")
    out = tmp_path / "epi.json"
    rc = cli.main(["bench", "--epilogue", "bias,gelu", "--set", "decode", "--rounds", "1", "--quiet",
                   "--out", str(out)])
    text, err = capsys.readouterr()
    assert rc == 0 and f"wrote {out}" in err
    doc = json.loads(out.read_text())
    assert len(doc["epilogue"]["shapes"]) == 30 and doc["epilogue"]["shapes_vs_quack"] == 0
    assert all(s["quack_status"] == "absent" for s in doc["epilogue"]["shapes"])
    assert "quack not timed (absent) at every shape: quack-kernels is not installed" in text
    assert text.splitlines()[0].startswith("epilogue bias,gelu (nt bf16->bf16, cold L2)")


# ------------------------------------------------------------------------------------------ the run file
def _bench_commands() -> list[list[str]]:
    """The `cute-gemm bench` arguments of every epi call in the run file (epi NAME LIMIT ARGS...: bench ARGS)."""
    out = []
    for line in open(RUN_FILE).read().replace("\\\n", " ").splitlines():  # a call continued over lines is one
        if not line.startswith("  epi "):
            continue
        words = shlex.split(line)
        if words[:1] == ["epi"]:
            out.append(words[3:] + ["--rounds", "5", "--quiet", "--out", "out/x.json"])
    return out


def test_the_run_file_lists_its_cases():
    r = subprocess.run(["bash", os.path.join(ROOT, "bench", "run_h200.sh"), "--list"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    mine = [line.split() for line in r.stdout.splitlines() if line.split()[1:2] == ["epilogue.sh"]]
    assert r.returncode == 0 and [m[0] for m in mine] == ["epi-decode", "epi-prefill", "epi-gated", "epi-residual",
                                                          "epi-gpu-tests", "epi-gpu-full", "epi-stalls",
                                                          "epi-spread", "bias-smem", "epi-addr", "epi-counters",
                                                          "spread-slabs", "gated-slabs"]
    assert "epilogue.sh" in open(os.path.join(ROOT, "bench", "run_h200.sh")).read()  # in the dispatcher's index


def test_every_run_case_fits_one_device_command():
    """Each case's bench calls, by their timeouts, stay under one device command's 600 s (minus the unpacking)."""
    import re

    text = open(os.path.join(ROOT, "bench", "runs", "epilogue.sh")).read()
    cases = dict(re.findall(r"^((?:epi|bias|spread|gated)-[a-z]+)\)\n(.*?)\n  ;;", text, flags=re.S | re.M))
    assert list(cases) == ["epi-decode", "epi-prefill", "epi-gated", "epi-residual", "epi-stalls", "epi-spread",
                           "bias-smem", "epi-addr", "epi-counters", "spread-slabs", "gated-slabs"]
    for name, body in cases.items():
        if name == "epi-stalls":  # one ncu probe per epilogue of its loop ("" bias gelu), each under one timeout
            items = re.search(r"^\s*for e in (.*); do$", body, flags=re.M).group(1).split()
            limits = [int(x) for x in re.findall(r"timeout (\d+) ", body)] * len(items)
        else:
            limits = [int(x) for x in re.findall(r"^\s*epi \S+ (\d+) ", body, flags=re.M)]
            limits += [int(x) for x in re.findall(r"timeout (\d+) ", body)]  # its other commands (tests, ncu)
        assert limits and sum(limits) <= 560, (name, limits)


def test_the_run_file_cases_parse_and_cover_the_brief():
    cmds = _bench_commands()
    assert len(cmds) == 14
    parser = cli.build_parser(["bench"])
    seen = set()
    for argv in cmds:
        args = parser.parse_args(["bench", *argv])
        if args.config:  # epi-spread, bias-smem, epi-addr, spread-slabs: configs beside best's fused pick at their own
            # shapes; gated-slabs: over the forward set
            assert (args.set == "prefill-fwd" or not args.set and len(args.shapes) >= 5) and args.config, argv
            continue
        seen.add((args.epilogue.text(), args.set))
        assert args.set in ("decode", "prefill-fwd") and not args.layout  # the default nt bf16->bf16
    assert seen == {(s, t) for s in ("bias,gelu", "bias,silu", "gated,silu", "residual")
                    for t in ("decode", "prefill-fwd")}

