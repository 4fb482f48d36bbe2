"""Training steps on the kernels: a Llama-style block's linear layers with ``cute_gemm.nn`` against the same
model on ``torch.nn.Linear`` (cuBLAS) and, where ``import quack`` works, quack's ``linear_func``.

What is timed: whole steps -- forward, backward and an AdamW step (``fused=True``) -- of a stack of
blocks whose every GEMM is a linear layer: q, k, v, o (hidden -> hidden) and a gated MLP (gate and up:
hidden -> mlp, down: mlp -> hidden), bf16 weights, no bias. Around them plain torch: RMSNorm, SiLU, the
residuals. Attention itself is left out -- its place is an elementwise stand-in, ``q * sigmoid(k) + v``
-- so the step's time is the linears' (and the optimizer's, the same for every model). Three sizes:

    S  hidden 2048, mlp 5632,  4 layers, 8192 tokens per step
    M  hidden 4096, mlp 11008, 2 layers, 4096 tokens
    L  hidden 8192, mlp 28672, 1 layer,  2048 tokens

The three models start from one set of weights. Every cute-gemm plan is compiled (or loaded from the
disk cache) before quack is imported -- importing it patches the DSL's tensor classes process-wide --
then each size is timed in ``--rounds`` interleaved rounds (the models' order rotates), ``--steps``
steps each, CUDA events around a round: per model the median ms per step, min and max, and the median
of the per-round ratios nn.Linear / cute-gemm (> 1: cute-gemm faster). Also per model ``host_ms``: the time
the Python takes to issue a step (the clock read before the end event is recorded). The GPU runs behind the host,
so while host_ms stays well below ms, ms is the GPU's time. Where host_ms comes near ms, either the host sets the
pace (small micro-batches, many layers: the per-call overhead of the layers is what is timed) or the launch queue
filled and the host waited for the GPU. ``--kernel-time`` tells the two apart: it profiles ``--steps`` more steps
of each model (``torch.profiler``) for ``gpu_kernel_ms``, the GPU's kernel time per step; well below ms, the step
waits for the host. Beside it ``kernels``: the model's longest kernels, ms and calls per step -- which of them make
two models' kernel times differ.

Then the loss curve: a small language model (vocab 512, hidden 256, mlp 704, 2 blocks, an embedding and
an lm head, fp32 master weights under a bf16 ``torch.autocast``) trained ``--loss-steps`` steps (200)
with AdamW on fixed synthetic data (seed 0: each target is a fixed function of its token 3 times in 4,
a random token otherwise, so the loss settles above zero), once with nn.Linear and once with
``swap_linear(model, autocast=True)``, from the same weights: both curves, and the relative difference
of the last 10 steps' mean loss.

    python bench/train.py --out DIR            # sized to end within ~4 minutes on an H200, compiles included
    python bench/train.py --out DIR --quick    # a smoke run: small sizes, 3 rounds of 3 steps, 40 loss steps
    python bench/train.py --out DIR --micro-batches 4   # gradient accumulation: 4 micro-batches per optimizer step

With ``--micro-batches N`` a step is N forward/backward passes over tokens / N tokens each, then one optimizer step,
and a fourth model joins: cute-gemm with ``accumulate_grad`` (from the second micro-batch on, the backward adds dW
into the existing ``weight.grad`` with the TMA's reduce-add, where the others compute dW and autograd adds it).

Writes DIR/train.json (after each part: ``"complete": false`` until the end), DIR/train_loss.png (with
matplotlib), and prints a line per model and size. Needs a CUDA GPU that a ladder runs on (Hopper or
Blackwell) and the checkout on PYTHONPATH. ``--sizes L`` times one size alone.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import os
import platform
import statistics
import sys
import time

from cute_gemm.measure.sets import TRAIN_SIZES


@dataclasses.dataclass(frozen=True)
class Size:
    name: str
    hidden: int
    mlp: int
    layers: int
    tokens: int

    def linear_params(self) -> int:
        return self.layers * (4 * self.hidden * self.hidden + 3 * self.hidden * self.mlp)

    def gemm_flops(self) -> int:
        """FLOPs of a step's GEMMs: 2 x tokens x params each for the forward, dX and dW."""
        return 6 * self.tokens * self.linear_params()


ACCUMULATING = "cute-gemm accumulate_grad"  # the model of --micro-batches N > 1
SIZES = tuple(Size(*s) for s in TRAIN_SIZES)  # `cute-gemm bench --set train-step` times their GEMMs one by one
QUICK = (Size("quick-S", 1024, 2816, 1, 1024), Size("quick-M", 2048, 5632, 1, 1024))
LOSS_VOCAB, LOSS_HIDDEN, LOSS_MLP, LOSS_LAYERS, LOSS_TOKENS = 512, 256, 704, 2, 2048


def build(size_or_dims, torch, dtype=None, vocab=None, device="cuda"):
    """The block stack of a ``Size`` or (hidden, mlp, layers), created on ``device`` in ``dtype`` (None:
    fp32); ``vocab``: with an embedding and an lm head, returning logits."""
    nn, F = torch.nn, torch.nn.functional

    class RMSNorm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d))

        def forward(self, x):
            r = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)
            return (x.float() * r).to(x.dtype) * self.weight.to(x.dtype)

    class Block(nn.Module):
        def __init__(self, d, m):
            super().__init__()
            self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
            self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
            self.gate, self.up = nn.Linear(d, m, bias=False), nn.Linear(d, m, bias=False)
            self.down = nn.Linear(m, d, bias=False)

        def forward(self, x):
            h = self.norm1(x)
            x = x + self.o(self.q(h) * torch.sigmoid(self.k(h)) + self.v(h))  # attention's stand-in
            h = self.norm2(x)
            return x + self.down(F.silu(self.gate(h)) * self.up(h))

    class Stack(nn.Module):
        def __init__(self, d, m, layers):
            super().__init__()
            self.blocks = nn.ModuleList(Block(d, m) for _ in range(layers))
            if vocab:
                self.embed = nn.Embedding(vocab, d)
                self.norm = RMSNorm(d)
                self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, x):
            if vocab:
                x = self.embed(x)
            for b in self.blocks:
                x = b(x)
            return self.head(self.norm(x)) if vocab else x

    d, m, layers = size_or_dims if isinstance(size_or_dims, tuple) else (size_or_dims.hidden, size_or_dims.mlp,
                                                                           size_or_dims.layers)
    with torch.device(device):  # initialized where it runs (an L model is a billion parameters)
        model = Stack(d, m, layers)
    return model.to(dtype) if dtype else model


def summary(ms: list[float]) -> dict:
    return {"median_ms": statistics.median(ms), "min_ms": min(ms), "max_ms": max(ms), "rounds_ms": ms}


def loss_data(torch, steps: int, seed: int = 0):
    """(tokens, targets) per step, on the CPU: fixed by ``seed``. Each target is (7 x token + 3) mod vocab
    three times in four, a uniform random token otherwise."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(steps):
        tok = torch.randint(0, LOSS_VOCAB, (LOSS_TOKENS,), generator=g)
        rnd = torch.randint(0, LOSS_VOCAB, (LOSS_TOKENS,), generator=g)
        keep = torch.rand(LOSS_TOKENS, generator=g) < 0.75
        out.append((tok, torch.where(keep, (7 * tok + 3) % LOSS_VOCAB, rnd)))
    return out


def _quack_linear(torch):
    """A ``torch.nn.Linear`` class whose forward is quack's ``linear_func`` (its heuristic config,
    tuned=False: quack's autotuner would time dozens of configs per shape), or (None, why not)."""
    try:
        from quack.linear import linear_func
    except Exception as exc:  # noqa: BLE001 -- not installed, or it does not import here
        return None, f"import quack.linear failed: {type(exc).__name__}: {exc}"

    class QuackLinear(torch.nn.Linear):
        def forward(self, x):
            return linear_func(x, self.weight, self.bias, tuned=False)

    return QuackLinear, None


def _swap_class(model, cls, torch):
    for m in model.modules():
        if type(m) is torch.nn.Linear:
            m.__class__ = cls


def accumulating(model, torch):
    """A copy of ``model`` on the kernels whose every linear layer has ``accumulate_grad`` on: from a step's second
    micro-batch on, its backward adds dW into the existing ``weight.grad`` in place."""
    import cute_gemm.nn

    acc = copy.deepcopy(model)
    left = cute_gemm.nn.swap_linear(acc)
    assert not left, left
    for m in acc.modules():
        if isinstance(m, cute_gemm.nn.Linear):
            m.accumulate_grad = True
    return acc


def kernel_ms(events, steps: int) -> float:
    """The GPU's kernel time per step, in ms, from a ``torch.profiler`` run of ``steps`` steps: the sum of the
    events' own device time (``self_device_time_total``, in microseconds), so a kernel counts once."""
    return sum(getattr(e, "self_device_time_total", 0) or 0 for e in events) / steps / 1e3


def kernel_table(events, steps: int, top: int = 12) -> list[dict]:
    """The ``top`` kernels of a profiled run by their own device time: per kernel name its ms and calls per step,
    longest first -- where two models' kernel times differ, which kernels differ (the GEMMs' names say whose they
    are: cuBLAS's nvjet / sm90_xmma, cute-gemm's ``kernel_cutlass_...``, torch's elementwise ones)."""
    rows = [{"name": str(e.key), "ms": (getattr(e, "self_device_time_total", 0) or 0) / steps / 1e3,
             "calls": getattr(e, "count", 0) / steps} for e in events]
    rows = sorted((r for r in rows if r["ms"] > 0), key=lambda r: -r["ms"])[:top]
    return [{**r, "ms": round(r["ms"], 4), "calls": round(r["calls"], 2)} for r in rows]


def profiled_kernel_ms(step, steps: int, torch) -> tuple[float, list[dict]]:
    """(``kernel_ms``, ``kernel_table``) of ``steps`` calls of ``step()`` under ``torch.profiler`` (CUDA activity
    only)."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    events = prof.key_averages()
    return kernel_ms(events, steps), kernel_table(events, steps)


def time_size(size: Size, rounds: int, steps: int, torch, quack_cls, log, warm_only=False,
              micro: int = 1, kernel_time: bool = False) -> dict | None:
    """Time one size's models, a step of ``micro`` micro-batches each (``warm_only``: build the cute-gemm models,
    run two steps -- their plans compile or load -- and return None). ``kernel_time``: then profile ``steps`` more
    steps of each model for the GPU's kernel time per step (``kernel_ms``)."""
    import cute_gemm.nn

    torch.manual_seed(0)
    base = build(size, torch, torch.bfloat16)
    models = {"cute-gemm": base} if warm_only else {"nn.Linear": base, "cute-gemm": copy.deepcopy(base)}
    left = cute_gemm.nn.swap_linear(models["cute-gemm"])
    assert not left, left
    if micro > 1:
        models[ACCUMULATING] = accumulating(base, torch)
    if quack_cls is not None and not warm_only:
        models["quack"] = copy.deepcopy(base)
        _swap_class(models["quack"], quack_cls, torch)
    opts = {k: torch.optim.AdamW(m.parameters(), lr=1e-5, fused=True) for k, m in models.items()}
    xs = torch.randn(size.tokens, size.hidden, device="cuda", dtype=torch.bfloat16).chunk(micro)

    def step(name):
        opts[name].zero_grad(set_to_none=True)
        for x in xs:  # the gradients of the micro-batches add up in .grad
            models[name](x).float().pow(2).mean().backward()
        opts[name].step()

    for name in models:  # warm: plans, autotuners, the optimizer's state
        for _ in range(2):
            step(name)
    torch.cuda.synchronize()
    if warm_only:
        del models, opts
        torch.cuda.empty_cache()
        return None
    names = list(models)
    ms = {k: [] for k in names}
    host = {k: [] for k in names}  # the Python's time to issue a step (host_ms: the module's docstring)
    ratios = {k: [] for k in names if k != "nn.Linear"}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        this = {}
        for name in order:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            t0 = time.perf_counter()
            for _ in range(steps):
                step(name)
            host[name].append((time.perf_counter() - t0) * 1e3 / steps)
            end.record()
            end.synchronize()
            this[name] = start.elapsed_time(end) / steps
            ms[name].append(this[name])
        for k in ratios:
            ratios[k].append(this["nn.Linear"] / this[k])
    profiled = {k: profiled_kernel_ms(lambda k=k: step(k), steps, torch) for k in names} if kernel_time else {}
    gpu = {k: v[0] for k, v in profiled.items()}
    out = {**dataclasses.asdict(size), "micro_batches": micro, "linear_params": size.linear_params(),
           "gemm_tflop_per_step": size.gemm_flops() / 1e12,
           "models": {k: {**summary(v), "host_ms": statistics.median(host[k]),
                          **({"gpu_kernel_ms": gpu[k], "kernels": profiled[k][1]} if k in gpu else {})}
                      for k, v in ms.items()},
           "vs_nn_linear": {k: {"median": statistics.median(v), "min": min(v), "max": max(v)}
                            for k, v in ratios.items()}}
    for k in names:
        med = out["models"][k]["median_ms"]
        log(f"  {size.name} {k:{len(ACCUMULATING)}s} {med:8.2f} ms/step  ({out['models'][k]['min_ms']:.2f}-"
            f"{out['models'][k]['max_ms']:.2f}, host {out['models'][k]['host_ms']:.2f}"
            + (f", kernels {gpu[k]:.2f}" if k in gpu else "") + ")  GEMMs at "
            f"{size.gemm_flops() / med / 1e9:6.0f} TFLOP/s"
            + (f"  nn.Linear / this {out['vs_nn_linear'][k]['median']:.3f}" if k in ratios else ""))
    for k in profiled:  # the kernels behind each model's gpu_kernel_ms, longest first
        log(f"    {size.name} {k} kernels (ms/step, calls/step): " + "; ".join(
            f"{r['name'][:48]} {r['ms']:.3f} x{r['calls']:g}" for r in profiled[k][1][:8]))
    del models, opts
    torch.cuda.empty_cache()
    return out


def loss_curves(steps: int, torch, log) -> dict:
    import cute_gemm.nn

    F = torch.nn.functional
    torch.manual_seed(0)
    ref = build((LOSS_HIDDEN, LOSS_MLP, LOSS_LAYERS), torch, vocab=LOSS_VOCAB)  # fp32 master weights
    ours = copy.deepcopy(ref)
    left = cute_gemm.nn.swap_linear(ours, autocast=True)
    assert not left, left
    data = [(t.cuda(), y.cuda()) for t, y in loss_data(torch, steps)]
    curves = {}
    for name, model in (("nn.Linear", ref), ("cute-gemm", ours)):
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
        losses = []
        for tok, tgt in data:
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(tok)
            loss = F.cross_entropy(logits.float(), tgt)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        curves[name] = losses
    tail = {k: statistics.fmean(v[-10:]) for k, v in curves.items()}
    rel = abs(tail["cute-gemm"] - tail["nn.Linear"]) / tail["nn.Linear"]
    log(f"  loss after {steps} steps (mean of the last 10): nn.Linear {tail['nn.Linear']:.4f}, cute-gemm "
        f"{tail['cute-gemm']:.4f} (relative difference {rel:.3%}); first step {curves['nn.Linear'][0]:.4f}")
    return {"steps": steps, "vocab": LOSS_VOCAB, "hidden": LOSS_HIDDEN, "mlp": LOSS_MLP, "layers": LOSS_LAYERS,
            "tokens": LOSS_TOKENS, "lr": 3e-3, "autocast": "bf16, fp32 master weights", "seed": 0,
            "losses": curves, "last10_mean": tail, "last10_rel_diff": rel}


def plot(curves: dict, path: str) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, losses in curves["losses"].items():
        ax.plot(range(1, len(losses) + 1), losses, label=name, linewidth=1.2)
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy loss")
    ax.set_title(f"{curves['steps']} steps, fixed data and seed: the last 10 steps' mean loss differs by "
                 f"{curves['last10_rel_diff']:.3%}", fontsize=10)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder for train.json and train_loss.png")
    ap.add_argument("--quick", action="store_true", help="small sizes, 3 rounds of 3 steps, 40 loss steps")
    ap.add_argument("--sizes", default=None, help="comma-separated size names to time (default: all)")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds per size (default 7)")
    ap.add_argument("--steps", type=int, default=None, help="steps per model per round (default 10)")
    ap.add_argument("--loss-steps", type=int, default=None, help="steps of the loss curve (default 200)")
    ap.add_argument("--no-quack", action="store_true", help="leave quack out even where it imports")
    ap.add_argument("--kernel-time", action="store_true",
                    help="after the rounds, profile each model's steps for the GPU's kernel time per step "
                         "(gpu_kernel_ms): below ms, the step waits for the host; and its longest kernels (kernels: "
                         "ms and calls per step), printed and in the JSON")
    ap.add_argument("--micro-batches", type=int, default=1, metavar="N",
                    help="micro-batches per optimizer step, the tokens split evenly (default 1); N > 1 also times "
                         "cute-gemm with accumulate_grad")
    args = ap.parse_args(argv)
    sizes = QUICK if args.quick else SIZES
    if args.sizes:
        want = [s.strip() for s in args.sizes.split(",") if s.strip()]
        unknown = sorted(set(want) - {s.name for s in sizes})
        if unknown:
            ap.error(f"--sizes: unknown {', '.join(unknown)} (one of {', '.join(s.name for s in sizes)})")
        sizes = tuple(s for s in sizes if s.name in want)

    def given(value, default):  # 0 is a value (refused below), not "the default"
        return default if value is None else value

    rounds = given(args.rounds, 3 if args.quick else 7)
    steps = given(args.steps, 3 if args.quick else 10)
    loss_steps = given(args.loss_steps, 40 if args.quick else 200)
    if min(rounds, steps, loss_steps, args.micro_batches) < 1:
        ap.error("--rounds, --steps, --loss-steps and --micro-batches take a positive number")
    uneven = [f"{s.name} ({s.tokens})" for s in sizes if s.tokens % args.micro_batches]
    if uneven:
        ap.error(f"--micro-batches {args.micro_batches}: the tokens of {', '.join(uneven)} do not split evenly")
    try:  # the output folder first, before minutes of work
        os.makedirs(args.out, exist_ok=True)
        probe = os.path.join(args.out, ".train-write-test")
        open(probe, "w").close()
        os.remove(probe)
    except OSError as exc:
        ap.error(f"--out {args.out}: {exc.strerror or exc}")

    import torch

    if not torch.cuda.is_available():
        print("bench/train.py: needs a CUDA GPU (Hopper or Blackwell); none is visible", file=sys.stderr)
        return 2
    from cute_gemm.runtime.arch import family_of_capability

    if family_of_capability(*torch.cuda.get_device_capability(0)) is None:
        print(f"bench/train.py: {torch.cuda.get_device_name(0)} runs neither ladder (sm90, sm100)", file=sys.stderr)
        return 2
    import cute_gemm

    t0 = time.time()

    def log(line):
        print(line, flush=True)

    log(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, cute-gemm {cute_gemm.__version__}")
    path = os.path.join(args.out, "train.json")
    doc = {
        "what": "training step (fwd + bwd + fused AdamW) of a Llama-style block's linears, attention left out",
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__, "cute_gemm": cute_gemm.__version__, "python": platform.python_version(),
        "quick": args.quick, "rounds": rounds, "steps_per_round": steps, "micro_batches": args.micro_batches,
        "complete": False, "sizes": [],
    }

    def save():  # after each part, so a run cut short keeps what it measured
        doc["seconds"] = round(time.time() - t0, 1)
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)

    # the loss curve and every size's cute-gemm plans first: quack's import patches the DSL afterwards
    log("loss curve:")
    doc["loss_curve"] = curves = loss_curves(loss_steps, torch, log)
    save()
    log(f"compiling (or loading) the plans of {len(sizes)} sizes ...")
    for size in sizes:
        time_size(size, 0, 0, torch, None, log, warm_only=True, micro=args.micro_batches)
    quack_cls, quack_why = (None, "--no-quack") if args.no_quack else _quack_linear(torch)
    doc["quack"] = "linear_func(tuned=False)" if quack_cls else quack_why
    log("quack: " + ("quack.linear.linear_func(tuned=False)" if quack_cls else quack_why))
    log(f"timing ({rounds} rounds x {steps} steps per model, interleaved):")
    for size in sizes:
        doc["sizes"].append(time_size(size, rounds, steps, torch, quack_cls, log, micro=args.micro_batches,
                                      kernel_time=args.kernel_time))
        save()
    doc["complete"] = True
    save()
    png = os.path.join(args.out, "train_loss.png")
    log(f"wrote {path}" + (f" and {png}" if plot(curves, png) else " (no matplotlib: no plot)")
        + f" in {doc['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
