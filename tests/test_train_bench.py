"""bench/train.py without a GPU: its arguments are refused in one line before any work (the output folder
first), it stops in one line where no GPU is visible, the model it times is the Llama-style block (every
GEMM a linear layer that ``swap_linear`` takes, at every size), the FLOP count is the GEMMs', and the loss
curve's data are fixed by the seed with the noise the docstring names."""

import pytest
import torch

from bench_scripts import load_script

train = load_script("train")


def test_bad_arguments_are_one_line_errors_before_any_work(tmp_path, capsys):
    for argv, message in (
        (["--out", str(tmp_path), "--sizes", "S,XL"], "--sizes: unknown XL"),
        (["--out", str(tmp_path), "--rounds", "-1"], "take a positive number"),
        (["--out", "/proc/no/such/dir"], "--out /proc/no/such/dir"),
    ):
        with pytest.raises(SystemExit) as exc:
            train.main(argv)
        assert exc.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert message in err[-1], err


@pytest.mark.skipif(torch.cuda.is_available(), reason="the no-GPU answer")
def test_without_a_gpu_it_says_so(tmp_path, capsys):
    assert train.main(["--out", str(tmp_path / "o"), "--quick"]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err
    assert not (tmp_path / "o" / "train.json").exists()


def test_the_sizes_and_their_gemm_flops():
    assert [(s.name, s.hidden, s.mlp) for s in train.SIZES] == [("S", 2048, 5632), ("M", 4096, 11008),
                                                                ("L", 8192, 28672)]
    assert all(2048 <= s.tokens <= 8192 for s in train.SIZES)
    s = train.Size("t", 16, 40, 2, 10)
    assert s.linear_params() == 2 * (4 * 16 * 16 + 3 * 16 * 40)
    assert s.gemm_flops() == 6 * 10 * s.linear_params()


def test_the_block_is_all_linears_that_swap_linear_takes():
    import cute_gemm.nn

    for size in (*train.SIZES, *train.QUICK):  # every timed width is one the kernels take
        assert size.hidden % 8 == 0 and size.mlp % 8 == 0
    model = train.build((32, 88, 2), torch, torch.bfloat16, device="cpu")
    linears = [n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    assert len(linears) == 2 * 7 and {n.split(".")[-1] for n in linears} == {"q", "k", "v", "o", "gate", "up", "down"}
    assert cute_gemm.nn.swap_linear(model) == []
    y = model(torch.randn(5, 32).bfloat16())  # CPU input: F.linear, same shapes
    assert y.shape == (5, 32) and y.dtype == torch.bfloat16
    lm = train.build((32, 88, 1), torch, vocab=64, device="cpu")
    assert lm(torch.randint(0, 64, (7,))).shape == (7, 64)
    assert cute_gemm.nn.swap_linear(lm, autocast=True) == []  # fp32 master weights, autocast=True


def test_loss_data_are_fixed_by_the_seed():
    a, b = train.loss_data(torch, 3), train.loss_data(torch, 3)
    assert all(torch.equal(x[0], y[0]) and torch.equal(x[1], y[1]) for x, y in zip(a, b))
    assert not torch.equal(train.loss_data(torch, 1, seed=1)[0][0], a[0][0])
    tok, tgt = a[0]
    follows = ((7 * tok + 3) % train.LOSS_VOCAB == tgt).float().mean().item()
    assert 0.7 < follows < 0.8  # 3 in 4 by the rule (and 1 in 512 of the rest by chance)


def test_summary():
    assert train.summary([3.0, 1.0, 2.0]) == {"median_ms": 2.0, "min_ms": 1.0, "max_ms": 3.0,
                                              "rounds_ms": [3.0, 1.0, 2.0]}


def test_micro_batches_split_the_tokens_evenly_and_add_the_accumulating_model(tmp_path, capsys):
    """--micro-batches N: refused in one line where a size's tokens do not split into N; the fourth model is a copy on
    the kernels with accumulate_grad on every linear layer (the backward adds into weight.grad), the base untouched."""
    import cute_gemm.nn

    for argv, message in ((["--micro-batches", "3"], "--micro-batches 3: the tokens of S (8192), M (4096), L (2048)"),
                          (["--micro-batches", "0"], "take a positive number")):
        with pytest.raises(SystemExit) as exc:
            train.main(["--out", str(tmp_path), *argv])
        assert exc.value.code == 2 and message in capsys.readouterr().err.strip().splitlines()[-1]
    base = train.build((32, 88, 2), torch, torch.bfloat16, device="cpu")
    acc = train.accumulating(base, torch)
    linears = [m for m in acc.modules() if isinstance(m, torch.nn.Linear)]
    assert len(linears) == 14 and all(type(m) is cute_gemm.nn.Linear and m.accumulate_grad for m in linears)
    assert all(type(m) is torch.nn.Linear for m in base.modules() if isinstance(m, torch.nn.Linear))
    assert all(torch.equal(a, b) for a, b in zip(acc.parameters(), base.parameters()))


def test_kernel_time_sums_each_kernels_own_device_time_per_step():
    """--kernel-time's number: the profiled events' own device time (us) summed once each, per step, in ms; events
    without device time (the host's launches) add nothing."""
    from types import SimpleNamespace as Ev

    events = [Ev(self_device_time_total=3000.0), Ev(self_device_time_total=1500.0), Ev(self_device_time_total=0),
              Ev(key="cudaLaunchKernel")]
    assert train.kernel_ms(events, steps=3) == pytest.approx(1.5)
    assert train.kernel_ms([], steps=2) == 0


def test_kernel_table_ranks_kernels_by_their_own_time_per_step():
    """--kernel-time's table: per kernel name its own device time and calls per step, longest first, kernels without
    device time (host events) left out, cut at ``top``."""
    from types import SimpleNamespace as Ev

    events = [Ev(key="vectorized_elementwise", self_device_time_total=600.0, count=30),
              Ev(key="nvjet_sm90_tst_192x192", self_device_time_total=9000.0, count=9),
              Ev(key="cudaLaunchKernel", self_device_time_total=0, count=90),
              Ev(key="kernel_cutlass_phase8", self_device_time_total=3000.0, count=6)]
    table = train.kernel_table(events, steps=3)
    assert [r["name"] for r in table] == ["nvjet_sm90_tst_192x192", "kernel_cutlass_phase8", "vectorized_elementwise"]
    assert table[0] == {"name": "nvjet_sm90_tst_192x192", "ms": 3.0, "calls": 3.0}
    assert table[2]["ms"] == pytest.approx(0.2) and table[2]["calls"] == 10
    assert [r["name"] for r in train.kernel_table(events, steps=3, top=1)] == ["nvjet_sm90_tst_192x192"]


def test_zero_rounds_steps_or_loss_steps_are_refused_not_taken_for_the_default(tmp_path, capsys):
    for flag in ("--rounds", "--steps", "--loss-steps"):
        with pytest.raises(SystemExit) as exc:
            train.main(["--out", str(tmp_path), "--kernel-time", flag, "0"])
        assert exc.value.code == 2 and "take a positive number" in capsys.readouterr().err.strip().splitlines()[-1]
