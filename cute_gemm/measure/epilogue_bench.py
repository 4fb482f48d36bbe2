"""``cute-gemm bench --epilogue SPEC``: a fused epilogue timed beside the torch ops a user would run instead,
and beside quack's fused kernel.

What: at each shape, y = act(x @ W.T + b) + r (``Spec``: a comma list of ``bias``, one of ``relu`` / ``gelu`` /
``silu``, ``residual``, and ``gated``: a gated MLP's pair, y = act(z[:, 0::2]) * z[:, 1::2] + r for z = x @ W.T + b
with W's rows interleaved (gate, up) -- ``gated,silu`` is SwiGLU -- y half z's width) three ways:
- ``fused``: ``cute_gemm.gemm(x, W.T, phase="best", out=y, bias=, activation=, residual=)``: one launch, the
  epilogue on the accumulators in fp32, rounded once (phase 11 on both ladders);
- ``unfused``: cuBLAS and the torch ops a model runs without a fused kernel: ``F.linear(x, W, b)``
  (``torch.addmm``, cuBLASLt's own bias epilogue) or ``x @ W.T``, then ``F.gelu(y, approximate="tanh")`` /
  ``F.silu`` / ``F.relu``, then ``y + r``: each op one launch that reads and writes y;
- ``quack``: quack's fused GEMM where installed and where it has the epilogue (``quack_plan``: ``gemm``'s bias,
  ``gemm_act``, ``gemm_add``, ``gemm_gated`` -- which pairs columns (2j, 2j + 1) as phase 11 does); otherwise a
  row saying why, not a time;
- ``config PHASE:FIELDS`` (``configs``, the command line's ``--config``): the same fused call with that phase and
  config instead of best's pick, to compare a config's epilogue with best's in the same rounds.

Why: the fused kernel's case is fewer launches and fewer trips of y through memory; at decode shapes those
are a large share of a layer's time, at prefill shapes the GEMM dominates. Only a measurement says which.

How: the fused kernel of every shape is checked first (compiling it: importing quack patches the DSL's
classes, so the phases are built before it is imported, as the bench does), then shape by shape the others.
A check runs fresh inputs -- x randn, W randn / sqrt(K) as an ``nn.Linear`` holds it, so x @ W.T is of order 1
and the activation bends there -- against a float64 reference (``CHECK``); a variant that fails is reported
and never timed. The variants that passed are timed as every bench kernel is (``timing``): CUDA graphs of
back-to-back calls, interleaved round robin on one set of inputs rotated so that every call reads from HBM
(cold L2: a layer's weights are not in L2 when it runs), NVML telemetry per window. The result is a
bench-v2 document (``results.document``: GPU, driver, clocks, versions, date, command) whose ``epilogue``
section holds the per-shape speedups (the other's time over the fused one: > 1, the fused call is faster)
and their geomeans. Without a GPU ``describe`` says what would be timed. The command line's side (options, the
no-GPU plan file) is ``cute_gemm.cli.commands.bench``'s: this layer does not import the CLI.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import statistics

from phases import base
from phases.operands import Operands

ACTIVATIONS = tuple(a for a in base.ACTIVATIONS if a != "none")  # a spec names an activation or none
TERMS = ("bias", "gated", *ACTIVATIONS, "residual")
DEFAULT_OPERANDS = Operands.of("nt", "bf16", "bf16")  # y = x @ W.T with an nn.Linear weight, bf16 in and out
DEFAULT_OUT = "bench/results/epilogue.json"
VARIANTS = ("fused", "unfused", "quack")
QUACK_ACT = {"relu": "relu", "gelu": "gelu_tanh_approx", "silu": "silu"}  # quack's activation names
QUACK_GATED = {"silu": "swiglu", "gelu": "geglu", "relu": "reglu"}  # quack's gemm_gated names (its glu: sigmoid)
TANH_APPROX = 2.0**-11  # relative error of tanh.approx.f32 (gelu, silu): below a bf16 ulp, above fp32 rounding


@dataclasses.dataclass(frozen=True)
class Spec:
    """The epilogue: ``bias`` (a vector over N, A's dtype), ``activation`` (None or one of ACTIVATIONS),
    ``residual`` (C's shape and dtype, added after the activation), ``gated`` (the pairs: C [M, N/2] =
    act(gate) * up of W's interleaved rows; the activation None is the plain product)."""

    bias: bool = False
    activation: str | None = None
    residual: bool = False
    gated: bool = False

    def text(self) -> str:
        """'bias,gated,silu,residual': the spec as given on the command line, in canonical order."""
        return ",".join((["bias"] if self.bias else []) + (["gated"] if self.gated else [])
                        + ([self.activation] if self.activation else []) + (["residual"] if self.residual else []))

    def kwargs(self, bias, residual) -> dict:
        """The epilogue's keyword arguments of ``cute_gemm.gemm`` (``gated`` only where the spec has it)."""
        return {"bias": bias if self.bias else None, "activation": self.activation,
                "residual": residual if self.residual else None, **({"gated": True} if self.gated else {})}

    def config_fields(self) -> dict:
        """The epilogue as the fields of an epilogue phase's config (``EpilogueFields``)."""
        return {"bias": self.bias, "activation": self.activation or "none", "residual": self.residual,
                "gated": self.gated}

    def c_cols(self, n: int) -> int:
        """C's columns for a GEMM N: N, or N / 2 with the gated pairs."""
        return n // 2 if self.gated else n


def parse_spec(text: str) -> Spec:
    """'bias,gelu' -> Spec(bias=True, activation='gelu'), 'gated,silu' -> SwiGLU's; ValueError (one sentence) for an
    unknown or repeated term, two activations, or nothing."""
    words = [w.strip().lower() for w in text.split(",")]
    if not any(words) or "" in words:
        raise ValueError(f"{text!r}: expected a comma list of {', '.join(TERMS)} (e.g. bias,gelu)")
    unknown = [w for w in words if w not in TERMS]
    if unknown:
        raise ValueError(f"{text!r}: unknown term {unknown[0]!r}; terms are bias, gated, one activation of "
                         f"{'/'.join(ACTIVATIONS)}, residual (e.g. bias,gelu or gated,silu)")
    twice = [w for w in dict.fromkeys(words) if words.count(w) > 1]
    if twice:
        raise ValueError(f"{text!r}: {twice[0]!r} is given twice")
    acts = [w for w in words if w in ACTIVATIONS]
    if len(acts) > 1:
        raise ValueError(f"{text!r}: two activations ({' and '.join(acts)}); give at most one")
    return Spec(bias="bias" in words, activation=acts[0] if acts else None, residual="residual" in words,
                gated="gated" in words)


# ------------------------------------------------------------------------------------------- inputs
@dataclasses.dataclass
class Inputs:
    """One call's tensors: A [M,K], B [K,N] (the run's layout), bias [N] of A's dtype, residual [M,N] of C's
    dtype (None where the spec has no such term), and a NaN-poisoned C for the calls that write into one (C and the
    residual [M, N/2] with the gated pairs)."""

    a: object
    b: object
    bias: object
    residual: object
    c: object


def check_inputs(p, ops: Operands, spec: Spec, generator, device="cuda"):
    """Fresh inputs for a check: x randn, W randn / sqrt(K) (as an nn.Linear weight: x @ W.T of order 1, where
    gelu and silu bend), bias and residual randn (of order 1: a wrong or missing one shows)."""
    import torch

    from cute_gemm.measure.inputs import _operand, poisoned_output
    from cute_gemm.runtime.problem import Problem, torch_dtype

    def randn(r, c, scale=1.0):
        return torch.randn(r, c, device=device, generator=generator) * scale

    ab, c = torch_dtype(ops.ab), torch_dtype(ops.c)
    cols = spec.c_cols(p.n)
    a = _operand(p.m, p.k, ops.a_major == "k", ab, randn)
    b = _operand(p.k, p.n, ops.b_major == "n", ab, lambda r, cc: randn(r, cc, 1 / math.sqrt(p.k)))
    bias = randn(1, p.n)[0].to(ab) if spec.bias else None
    res = randn(p.m, cols).to(c) if spec.residual else None
    return Inputs(a, b, bias, res, poisoned_output(Problem(p.m, cols, p.k), device, operands=ops))


def timing_sets(p, ops: Operands, spec: Spec, data: str, n_sets: int) -> list[Inputs]:
    """``n_sets`` input sets for timing: A, B and C as the bench's (``inputs.timing_inputs``: ``data`` in A and
    B), a randn bias and residual each."""
    import torch

    from cute_gemm.measure.inputs import timing_inputs
    from cute_gemm.runtime.problem import torch_dtype

    out = []
    cols = spec.c_cols(p.n)
    for a, b, c in timing_inputs(p, data, n_sets, ops):
        bias = torch.randn(p.n, device="cuda").to(torch_dtype(ops.ab)) if spec.bias else None
        if cols != p.n:  # the gated pairs' C [M, N/2]
            c = torch.full((p.m, cols), float("nan"), device="cuda", dtype=c.dtype)
        res = torch.randn(p.m, cols, device="cuda").to(c.dtype) if spec.residual else None
        out.append(Inputs(a, b, bias, res, c))
    return out


def epilogue_bytes(p, ops: Operands, spec: Spec) -> int:
    """A, B and C once each, and the bias and residual: what the fused call must at least move (C and the residual
    half as wide with the gated pairs)."""
    from cute_gemm.runtime.problem import _BYTES

    ab, c, cols = _BYTES[ops.ab], _BYTES[ops.c], spec.c_cols(p.n)
    return ab * (p.m * p.k + p.k * p.n + p.n * spec.bias) + c * p.m * cols * (1 + spec.residual)


# ---------------------------------------------------------------------------------------- the check
CHECK = ("against float64 act(x @ W.T + b) + r: every element within atol + rtol (|x @ W.T + b| + |act| + |r|) "
         "(the check's atol and rtol for C's type, widened by 2^-11 with gelu or silu for tanh.approx; each "
         "rounding of the unfused sequence is within it) -- gated: act(g) * u + r of the pairs (g, u) = (z[:, 2j], "
         "z[:, 2j + 1]) within atol (1 + |u| + |act(g)|) + rtol ((|g| + |act(g)|) |u| + |act(g) u| + |r|), what a "
         "rounding of g, of u and of each product moves it by; relative Frobenius error within the check's limit "
         "(+ 2^-11 likewise), no NaN left in C; the fused call also bit-identical on a repeat")


def activate64(x, activation: str | None):
    """The activation in float64, as the fused kernel means it (gelu: the tanh form)."""
    import torch
    import torch.nn.functional as F

    if activation == "relu":
        return torch.relu(x)
    if activation == "gelu":
        return F.gelu(x, approximate="tanh")
    if activation == "silu":
        return F.silu(x)
    return x


def tolerance(ops: Operands, k: int, spec: Spec):
    """The bench's check tolerance for C's type at reduction length ``k``, widened by tanh.approx's error for
    gelu and silu."""
    from cute_gemm.measure.check import Tolerance, tolerance as gemm_tolerance

    tol = gemm_tolerance(ops, k)
    extra = TANH_APPROX if spec.activation in ("gelu", "silu") else 0.0
    return Tolerance(tol.atol, tol.rtol + extra, tol.rel_err_limit + extra)


def compare(y, inp: Inputs, spec: Spec, tol, rows=None) -> dict:
    """The numbers that decide a check: NaN left in ``y`` (all of it), and against float64 (of ``rows`` only,
    if given) the elements outside the tolerance, the largest error, the relative Frobenius error."""
    import torch

    y = y.float()
    nan = int(torch.isnan(y).sum().item())
    pick = (lambda t: t) if rows is None else (lambda t: t[rows])
    pre = pick(inp.a).double() @ inp.b.double()
    if spec.bias:
        pre = pre + inp.bias.double()
    if spec.gated:  # the pairs: an error in g moves act(g) u by up to |act'(g)| |u| times it, one in u by |act(g)|
        g, u = pre[:, 0::2], pre[:, 1::2]
        act_g = activate64(g, spec.activation)
        act = act_g * u
        scale, aweight = (g.abs() + act_g.abs()) * u.abs() + act.abs(), 1 + u.abs() + act_g.abs()
    else:
        act = activate64(pre, spec.activation)
        scale, aweight = pre.abs() + act.abs(), 1.0
    ref = act
    if spec.residual:
        res = pick(inp.residual).double()
        ref, scale = act + res, scale + res.abs()
    diff = (pick(y).double() - ref).abs()
    bad = ~(diff <= tol.atol * aweight + tol.rtol * scale)  # NaN compares False: counted
    ref_norm = torch.linalg.vector_norm(ref).item() or 1.0
    return {
        "unwritten": nan,
        "mismatches": int(bad.sum().item()),
        "max_abs_err": float(torch.nan_to_num(diff, nan=float("inf")).max().item()) if diff.numel() else 0.0,
        "rel_fro_err": torch.linalg.vector_norm(torch.nan_to_num(diff, nan=float("inf"))).item() / ref_norm,
        "float64_rows": None if rows is None else int(rows.numel()),
    }


def passes(nums: dict, tol) -> bool:
    return nums["unwritten"] == 0 and nums["mismatches"] == 0 and nums["rel_fro_err"] <= tol.rel_err_limit


def check(make, p, ops: Operands, spec: Spec, repeat: bool = False, seed: int | None = None,
          device: str = "cuda") -> dict:
    """``make(inputs)`` -> a launch returning y, run once on fresh ``check_inputs`` and compared with float64
    (``compare``; a random sample of rows past ``check.FLOAT64_FULL_FLOPS``, as the bench's check). ``repeat``:
    a second launch into a re-poisoned C must be bit-identical. {"passed", "error", the numbers}."""
    import torch

    from cute_gemm.errors import one_line
    from cute_gemm.measure.check import FLOAT64_FULL_FLOPS, FLOAT64_SAMPLE_ROWS

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else torch.seed())
    inp = check_inputs(p, ops, spec, gen, device)
    try:
        launch = make(inp)
        y = launch()
        sync()
    except Exception as exc:  # reported as data: the variant is listed with its error and not timed
        from cute_gemm.errors import UnsupportedError

        return {"passed": False, "error": one_line(exc), **({"unsupported": True} if isinstance(
            exc, UnsupportedError) else {})}
    rows = None
    if p.flops > FLOAT64_FULL_FLOPS:  # a random sample of rows, the first and the last included
        rows = torch.randperm(p.m, device=device, generator=gen)[:FLOAT64_SAMPLE_ROWS]
        rows = torch.cat([rows, torch.tensor([0, p.m - 1], device=device)]).unique()
    tol = tolerance(ops, p.k, spec)
    nums = compare(y, inp, spec, tol, rows)
    identical = None
    if repeat:
        first = y.clone()
        inp.c.fill_(float("nan"))
        y = launch()
        sync()
        identical = bool(torch.equal(first, y))
    return {"passed": passes(nums, tol) and identical is not False, "error": None, "repeat_identical": identical,
            **nums}


# --------------------------------------------------------------------------------------- the variants
def fused(spec: Spec, arch: str | None = None, config: str | None = None):
    """make(inputs) -> the launch of ``cute_gemm.gemm(..., phase="best", out=C, bias=, activation=, residual=)``, or
    with ``config`` ('8:epi_spread=true') that phase with those config fields."""
    from cute_gemm.runtime import registry

    phase, over = registry.split_spec(config) if config else ("best", None)

    def make(inp: Inputs):
        import cute_gemm

        kw = spec.kwargs(inp.bias, inp.residual)
        return lambda: cute_gemm.gemm(inp.a, inp.b, phase=phase, config=over, out=inp.c, arch=arch, **kw)

    return make


def best_pick(spec: Spec, p, ops: Operands, arch: str | None = None) -> str | None:
    """What ``phase="best"`` runs for the fused call at GEMM shape ``p`` on this GPU, as a row label names it ('8
    epi_n=16 epi_spread=True ...', ``choose.pick_label``), or None where no phase takes it."""
    from cute_gemm.runtime import arch as arch_mod
    from cute_gemm.runtime import choose, plan

    fam = arch_mod.family(arch) if arch else arch_mod.family(plan.device_target(0))
    try:
        phase, cfg, how = choose.resolve_epilogue(fam, p.m, p.n, p.k, ops, plan.device_name(0), spec.bias,
                                                  spec.activation, spec.residual, spec.gated)
    except LookupError:
        return None
    return choose.pick_label(fam, phase, cfg, how, drop=EPILOGUE_FIELDS)


# a fused config's epilogue fields: the call's, said by the row's spec rather than in its pick's label
EPILOGUE_FIELDS = ("bias", "activation", "residual", "gated")


def config_key(config: str) -> str:
    """The variant key (and row key) of a ``--config`` spec: 'config 8:epi_spread=true'."""
    return f"config {config}"


def unfused_ops(spec: Spec) -> str:
    """The unfused sequence in words (recorded on its rows)."""
    mm = "F.linear(x, W, b) (torch.addmm: cuBLAS(Lt) with its bias epilogue)" if spec.bias else "x @ W.T (torch.matmul)"
    arg = "y[:, 0::2]" if spec.gated else "y"
    act = {"gelu": f'F.gelu({arg}, approximate="tanh")', "silu": f"F.silu({arg})", "relu": f"F.relu({arg})"}.get(
        spec.activation, arg if spec.gated else None)
    act = f"{act} * y[:, 1::2]" if spec.gated else act
    return "; ".join([f"y = {mm}"] + ([f"y = {act}"] if act else []) + (["y = y + r"] if spec.residual else []))


def unfused(spec: Spec):
    """make(inputs) -> a launch of the torch ops a user runs without a fused kernel (``unfused_ops``): the
    GEMM in C's dtype (with a C of another type than A's: fp32 out, then ``+ b``), the activation (gated: a user's
    SwiGLU on the interleaved weight, act(y[:, 0::2]) * y[:, 1::2]), ``+ r``."""

    def make(inp: Inputs):
        import torch
        import torch.nn.functional as F

        acts = {"relu": F.relu, "gelu": lambda y: F.gelu(y, approximate="tanh"), "silu": F.silu, None: lambda y: y}
        same = inp.c.dtype == inp.a.dtype

        def launch():
            if same:
                y = torch.addmm(inp.bias, inp.a, inp.b) if spec.bias else torch.matmul(inp.a, inp.b)
            else:
                from cute_gemm.measure.reference import mm_out

                y = mm_out(inp.a, inp.b, inp.c.dtype)
                y = y + inp.bias if spec.bias else y
            if spec.gated:
                y = acts[spec.activation](y[:, 0::2]) * y[:, 1::2]
            elif spec.activation:
                y = acts[spec.activation](y)
            return y + inp.residual if spec.residual else y

        return launch

    return make


def quack_missing() -> str | None:
    return None if importlib.util.find_spec("quack") else "quack-kernels is not installed"


def quack_plan(spec: Spec, gi=None):
    """(make(inputs) -> launch, how it is called) for quack's fused kernel of ``spec``, or (None, why not):
    ``gemm(A, B, out=C, bias=b)`` for a bias alone, ``gemm_act(A, B, bias=, activation=, postact_out=C)`` with an
    activation, ``gemm_add(A, B, r, out=C, bias=)`` for a residual without one, ``gemm_gated(A, B, bias=,
    activation="swiglu" / "geglu" / "reglu", postact_out=C)`` for the gated pairs (quack pairs columns (2j, 2j + 1)
    too). quack's ``gemm_act`` and ``gemm_gated`` add their C before the activation, so a residual after it has no
    quack call. ``gi``: quack.gemm_interface (imported here by default: import it only after the phases are
    compiled)."""
    import inspect

    if gi is None:
        import quack.gemm_interface as gi

    def takes(fn_name, *params):
        fn = getattr(gi, fn_name, None)
        if fn is None:
            return None, f"quack.gemm_interface has no {fn_name}"
        have = inspect.signature(fn).parameters
        lack = [x for x in params if x not in have]
        return (fn, have) if not lack else (None, f"quack's {fn_name} takes no {', '.join(lack)}")

    if spec.gated:
        return _quack_gated(spec, takes)
    if spec.activation and spec.residual:
        return None, ("quack's gemm_act adds its C before the activation (act(A @ B + C + bias)): a residual "
                      "added after the activation has no quack call")
    if spec.activation:
        name = QUACK_ACT[spec.activation]
        known = getattr(gi, "act_to_pytorch_fn_map", None)
        if known is not None and name not in known:
            return None, f"quack's gemm_act has no activation {name!r} (it has {', '.join(map(str, known))})"
        return _quack_postact(spec, takes, "gemm_act", name)
    fn_name = "gemm_add" if spec.residual else "gemm"
    fn, have = takes(fn_name, "out", *(["bias"] if spec.bias else []))
    if fn is None:
        return None, have
    kw = {"tuned": False} if "tuned" in have else {}

    def make(inp):
        pre = (inp.residual,) if spec.residual else ()
        bias = {"bias": inp.bias} if spec.bias else {}
        return lambda: fn(inp.a, inp.b, *pre, out=inp.c, **bias, **kw)

    args = "A, B, r" if spec.residual else "A, B"
    return make, (f"quack.gemm_interface.{fn_name}({args}, out=C{', bias=b' if spec.bias else ''}, tuned=False): "
                  f"its heuristic config")


def _quack_gated(spec: Spec, takes):
    """``quack_plan`` for the gated pairs: quack's ``gemm_gated`` with its name of the activation, or (None, why)."""
    if spec.residual:
        return None, ("quack's gemm_gated adds its C before the pair (act(A @ B + C + bias)): a residual added "
                      "after the gated product has no quack call")
    name = QUACK_GATED.get(spec.activation)
    if name is None:
        return None, "quack's gemm_gated has no plain product gate * up (its 'glu' is sigmoid(gate) * up)"
    return _quack_postact(spec, takes, "gemm_gated", name)


def _quack_postact(spec: Spec, takes, fn_name: str, name: str):
    """(make, how) of quack's ``gemm_act`` / ``gemm_gated`` with activation ``name``: the post-activation written
    into C (``postact_out``, or returned in C's dtype by an older quack), no pre-activation stored, its heuristic
    config; (None, why) where quack lacks the call or its arguments."""
    fn, have = takes(fn_name, "bias", "activation")
    if fn is None:
        return None, have
    kw = {"store_preact": False} if "store_preact" in have else {}
    kw.update({"tuned": False} if "tuned" in have else {})
    into = "postact_out" in have

    def make(inp):
        extra = {"postact_out": inp.c} if into else {"postact_dtype": inp.c.dtype}
        bias = inp.bias if spec.bias else None
        return lambda: fn(inp.a, inp.b, bias=bias, activation=name, **kw, **extra)[1]

    how = f"quack.gemm_interface.{fn_name}(A, B, bias={'b' if spec.bias else 'None'}, activation={name!r}"
    return make, how + ", postact_out=C, store_preact=False, tuned=False): its heuristic config"


def describe_variants(spec: Spec, arch: str | None = None, configs=()) -> dict:
    """key -> how it is called, in words (without importing quack); ``configs``: the ``--config`` specs."""
    arch_kw = f", arch={arch!r}" if arch else ""
    kws = ", ".join(f"{k}={'b' if k == 'bias' else 'r' if k == 'residual' else repr(v)}"
                    for k, v in spec.kwargs("b", "r").items() if v is not None)
    quack = ("quack's gated GEMM (gemm_gated: swiglu, geglu, reglu)" if spec.gated else
             "quack's fused GEMM with the epilogue (gemm's bias, gemm_act, gemm_add)")
    from cute_gemm.runtime import registry

    out = {
        "fused": f'cute_gemm.gemm(A, B, phase="best", out=C{arch_kw}, {kws}): one launch, the epilogue fused in '
                 f'best\'s pick (phase 11 at few tokens, a persistent phase past them; the row\'s label names it)',
        "unfused": unfused_ops(spec),
        "quack": f"{quack}, its heuristic config",
    }
    for c in configs:
        phase, over = registry.split_spec(c)
        out[config_key(c)] = f'cute_gemm.gemm(A, B, phase="{phase}", config="{over}", out=C{arch_kw}, {kws})'
    return out


# ------------------------------------------------------------------------------------------- the run
def _row(key: str, p, ops, detail: str, **extra) -> dict:
    from cute_gemm.measure.shape import _row as bench_row

    labels = {"fused": "fused (best)", "unfused": "unfused (torch)", "quack": "quack fused"}
    label = labels.get(key) or "fused " + key.removeprefix("config ")  # a --config variant
    kind = "peer" if key in ("unfused", "quack") else "phase"
    phase = "best" if key == "fused" else key.removeprefix("config ").partition(":")[0]
    row = bench_row(kind, key, key, label, p, detail=detail, **({"phase": phase} if kind == "phase" else {}))
    row.update(extra)  # a status and its reason replace the "ok" a new row starts with
    return row


def _checked(row: dict, chk: dict) -> bool:
    """Fill ``row`` from a check; True if it passed."""
    row["check"] = chk
    if chk.get("unsupported"):  # the call refused the shape or the operands up front: skipped, not an error
        row.update(status="skipped", reason=chk["error"])
    elif chk.get("error"):
        row.update(status="error", reason=chk["error"])
    elif not chk["passed"]:
        rep = "; not bit-identical on a repeat" if chk.get("repeat_identical") is False else ""
        row.update(status="failed", reason=f"wrong result: {chk['mismatches']} elements outside the tolerance, "
                                           f"rel err {chk['rel_fro_err']:.2e} vs float64, {chk['unwritten']} NaN"
                                           f"{rep}")
    return row["status"] == "ok"


def speedup(other: dict, fused_row: dict) -> tuple[float | None, dict | None]:
    """(the other's median time over the fused one, the same round by round: ``shape.paired_ratio``); None
    where either was not timed. > 1: the fused call is faster."""
    from cute_gemm.measure.shape import paired_ratio

    f, o = fused_row.get("timing"), other.get("timing")
    if not f or not o:
        return None, None
    return o["ms_median"] / f["ms_median"], paired_ratio(f["ms_rounds"], [o["ms_rounds"]])


def geomean(values) -> float | None:
    vals = [v for v in values if v]
    return math.exp(statistics.fmean(math.log(v) for v in vals)) if vals else None


def time_variants(p, ops, spec, makes: dict, by_key: dict, *, data, rounds, sustained_s, cold_l2, telemetry, step):
    """Capture every variant that passed on one rotation of timing inputs (cold L2: sets that together hold
    ``timing.COLD_L2_FACTOR`` L2s), time them interleaved in the order of ``makes``, fill their rows."""
    from cute_gemm.errors import one_line
    from cute_gemm.measure import power, timing

    sets = timing_sets(p, ops, spec, data, timing.input_sets_needed(epilogue_bytes(p, ops, spec), cold_l2))
    captured = {}
    for key, make in makes.items():
        try:
            captured[key] = timing.capture(lambda m=make: [m(s) for s in sets])
        except Exception as exc:  # reported on the row; the others are still timed
            by_key[key].update(status="error", reason=f"could not capture a CUDA graph: {one_line(exc)}")
    timed = timing.interleave(captured, rounds, sustained_s, telemetry,
                              on_round=lambda r: step(f"{p} timing round {r + 1}/{rounds}"))
    if not captured:
        step(f"{p}: nothing to time", advance=rounds)
    nbytes = epilogue_bytes(p, ops, spec)
    for key, (t, windows) in timed.items():
        row = by_key[key]
        row["timing"] = t.as_dict(p.flops)
        row["power"] = power.summarize(windows, row["timing"]["tflops"])
        row["bytes"] = nbytes
        row["tb_s"] = nbytes / (row["timing"]["ms_median"] * 1e-3) / 1e12


def run(spec: Spec, shapes, ops: Operands = DEFAULT_OPERANDS, *, data: str = "randn", rounds: int | None = None,
        sustained_s: float = 0.0, cold_l2: bool = True, arch: str | None = None, progress: bool = True,
        configs=()) -> dict:
    """Check the fused call (and each of ``configs``' fused calls) at every shape, then shape by shape check the
    unfused sequence and quack and time every variant that passed, interleaved -> a bench-v2 document with an
    ``epilogue`` section."""
    import torch

    from cute_gemm.measure import environment, results, timing
    from cute_gemm.measure.power import Telemetry
    from cute_gemm.measure.progress import Progress
    from cute_gemm.measure.results import operands_record

    rounds = rounds or timing.ROUNDS
    env = environment.record()
    how = describe_variants(spec, arch, configs)
    ours = {"fused": fused(spec, arch), **{config_key(c): fused(spec, arch, c) for c in configs}}
    telemetry = Telemetry.open()
    rows, summary = [], []
    try:
        with Progress(len(shapes) * (len(VARIANTS) + len(configs) + rounds), enabled=progress) as bar:
            fused_rows = {}
            for p in shapes:  # every fused kernel compiled and checked before quack is imported
                for key, make in ours.items():
                    row = _row(key, p, ops, how[key])
                    if key == "fused" and (pick := best_pick(spec, p, ops, arch)):
                        row.update(label=f"fused (best: {pick})", pick=pick)
                    if _checked(row, check(make, p, ops, spec, repeat=True)):
                        row["library_kernels"] = _kernels(make, p, ops, spec)
                    fused_rows[p, key] = row
                    bar.step(f"{p} check {key}: {row['status']}")
            for p in shapes:
                by_key = {key: fused_rows[p, key] for key in ours}
                by_key["unfused"] = _row("unfused", p, ops, how["unfused"])
                makes = {key: ours[key] for key in ours if by_key[key]["status"] == "ok"}
                if _checked(by_key["unfused"], check(unfused(spec), p, ops, spec)):
                    makes["unfused"] = unfused(spec)
                bar.step(f"{p} check unfused: {by_key['unfused']['status']}")
                by_key["quack"] = _quack_row(p, ops, spec, makes)
                bar.step(f"{p} check quack: {by_key['quack']['status']}")
                time_variants(p, ops, spec, makes, by_key, data=data, rounds=rounds, sustained_s=sustained_s,
                              cold_l2=cold_l2, telemetry=telemetry, step=bar.step)
                summary.append(shape_summary(p, by_key, configs))
                rows += [dict(r, operands=operands_record(ops)) for r in by_key.values()]
                torch.cuda.empty_cache()
    finally:
        telemetry.close()
    doc = results.document(rows, data=data, protocol=timing.protocol(rounds, sustained_s, cold_l2),
                           telemetry=telemetry.describe(), env=env, operands=ops)
    doc["protocol"]["check"] = CHECK
    doc["epilogue"] = section(spec, summary, how, configs)
    return doc


def _kernels(make, p, ops, spec):
    """The GPU kernels one call runs (torch's profiler), on fresh inputs; None where it cannot tell."""
    import torch

    from cute_gemm.measure.peers import launched_kernels

    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    return launched_kernels(make(check_inputs(p, ops, spec, gen)))


def _quack_row(p, ops, spec, makes: dict) -> dict:
    """quack's row at ``p``: absent, skipped (no such epilogue), checked; its launch into ``makes`` if it passed."""
    missing = quack_missing()
    if missing:
        return _row("quack", p, ops, "quack.gemm_interface", status="absent", reason=missing)
    make, how = quack_plan(spec)
    if make is None:
        return _row("quack", p, ops, "quack.gemm_interface", status="skipped", reason=how)
    row = _row("quack", p, ops, how)
    if _checked(row, check(make, p, ops, spec)):
        makes["quack"] = make
    return row


def shape_summary(p, by_key: dict, configs=()) -> dict:
    """One shape's line of the ``epilogue`` section: each variant's median microseconds (None: not timed, with
    its status and reason), and the fused call's speedups over the others; ``configs``: one entry each, its time
    and best's fused time over it (> 1: the config is faster than best's pick)."""
    out = {"shape": str(p), "m": p.m, "n": p.n, "k": p.k, "fused_pick": by_key["fused"].get("pick")}
    for key in VARIANTS:
        r = by_key[key]
        out[f"{key}_us"] = r["timing"]["ms_median"] * 1e3 if r.get("timing") else None
        out[f"{key}_status"] = r["status"]
        out[f"{key}_reason"] = r["reason"]
    for other in ("unfused", "quack"):
        ratio, paired = speedup(by_key[other], by_key["fused"])
        out[f"speedup_vs_{other}"] = ratio
        out[f"speedup_vs_{other}_paired"] = paired
    if configs:
        out["configs"] = []
    for c in configs:
        r = by_key[config_key(c)]
        ratio, paired = speedup(by_key["fused"], r)
        out["configs"].append({"config": c, "us": r["timing"]["ms_median"] * 1e3 if r.get("timing") else None,
                               "status": r["status"], "reason": r["reason"], "vs_best": ratio,
                               "vs_best_paired": paired})
    return out


def section(spec: Spec, shapes: list[dict], how: dict, configs=()) -> dict:
    """The document's ``epilogue`` section: the spec, how each variant is called, the per-shape lines, and the
    geomean speedups (over the shapes where both were timed); with ``configs``, each one's geomean of best's
    fused time over its own."""
    out = {"spec": spec.text(), "bias": spec.bias, "activation": spec.activation, "residual": spec.residual,
           "gated": spec.gated, "variants": how,
           "speedup": "the other's median time / the fused call's (> 1: fused is faster)",
           "shapes": shapes}
    for other in ("unfused", "quack"):
        vals = [s[f"speedup_vs_{other}"] for s in shapes if s[f"speedup_vs_{other}"]]
        out[f"geomean_speedup_vs_{other}"] = geomean(vals)
        out[f"shapes_vs_{other}"] = len(vals)
    if configs:
        out["geomean_vs_best"] = {c: geomean(e["vs_best"] for s in shapes for e in s["configs"] if e["config"] == c)
                                  for c in configs}
    return out


# ------------------------------------------------------------------------------------------- output
def _us(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def _x(v) -> str:
    return "-" if v is None else f"{v:.2f}x"


def table(doc: dict) -> list[str]:
    """The result as text lines: a row per shape, the geomeans, why a variant was not timed."""
    epi, ops = doc["epilogue"], doc["operands"]["label"]
    lines = [f"epilogue {epi['spec']} ({ops}, {'cold' if doc['protocol']['cold_l2'] else 'warm'} L2): median "
             f"microseconds per call over {doc['protocol']['rounds']} interleaved rounds; speedup = the other's "
             f"time / fused (> 1: fused is faster)",
             f"{'shape':<18} {'fused':>9} {'unfused':>9} {'quack':>9} {'vs unfused':>11} {'vs quack':>9}  best's pick"]
    for s in epi["shapes"]:
        lines.append(f"{s['shape']:<18} {_us(s['fused_us']):>9} {_us(s['unfused_us']):>9} {_us(s['quack_us']):>9} "
                     f"{_x(s['speedup_vs_unfused']):>11} {_x(s['speedup_vs_quack']):>9}  {s.get('fused_pick') or '-'}")
    lines.append(f"{'geomean':<48} {_x(epi['geomean_speedup_vs_unfused']):>11} "
                 f"{_x(epi['geomean_speedup_vs_quack']):>9}   ({epi['shapes_vs_unfused']} / {epi['shapes_vs_quack']}"
                 f" shapes)")
    if epi.get("geomean_vs_best"):
        lines.append("--config: the same fused call with that phase and config; best / it = best's fused time over "
                     "its time (> 1: the config is faster)")
        lines.append(f"{'shape':<18} {'config':<40} {'us':>9} {'best / it':>10}")
        for s in epi["shapes"]:
            for e in s["configs"]:
                lines.append(f"{s['shape']:<18} {e['config']:<40} {_us(e['us']):>9} {_x(e['vs_best']):>10}")
        for c, g in epi["geomean_vs_best"].items():
            lines.append(f"{'geomean':<18} {c:<40} {'':>9} {_x(g):>10}")
    notes = {}
    for s in epi["shapes"]:
        for key in VARIANTS:
            if s[f"{key}_status"] != "ok" or s[f"{key}_us"] is None:
                notes.setdefault((key, s[f"{key}_status"], s[f"{key}_reason"]), []).append(s["shape"])
        for e in s.get("configs", ()):
            if e["status"] != "ok" or e["us"] is None:
                notes.setdefault((config_key(e["config"]), e["status"], e["reason"]), []).append(s["shape"])
    for (key, status, reason), where in notes.items():
        at = "every shape" if len(where) == len(epi["shapes"]) else ", ".join(where)
        lines.append(f"{key} not timed ({status}) at {at}: {reason}")
    return lines


def describe(spec: Spec, shapes, ops: Operands, reason: str, arch: str | None = None, configs=()) -> list[str]:
    """Without a GPU: what ``--epilogue`` would time, and why it cannot here."""
    from cute_gemm.measure import timing

    how = describe_variants(spec, arch, configs)
    quack = quack_missing() or "installed (which epilogues it has is known once imported, on the GPU)"
    return [f"No GPU to benchmark on ({reason}): showing what `bench --epilogue {spec.text()}` would time instead.",
            f"At each of {len(shapes)} shape(s), {ops.label()}, y = {_formula(spec)}:",
            f"  fused:   {how['fused']}",
            f"  unfused: {how['unfused']}",
            f"  quack:   {how['quack']}; here: {quack}",
            *(f"  {config_key(c)}: {how[config_key(c)]}" for c in configs),
            "each checked against float64 first (every element, and the relative Frobenius error, within the "
            "bench's tolerance for C's type); those that pass timed interleaved in CUDA graphs, cold L2 (input "
            f"sets >= {timing.COLD_L2_FACTOR} x the L2), the median over the rounds.",
            "shapes: " + " ".join(str(p) for p in shapes)]


def _formula(spec: Spec) -> str:
    if spec.gated:  # W's rows interleaved: gate j at 2j, up j at 2j + 1
        b = " + b" if spec.bias else ""
        gate = f"x @ Wg.T{b.replace('b', 'bg')}"
        y = f"{spec.activation}({gate})" if spec.activation else f"({gate})"
        y += f" * (x @ Wu.T{b.replace('b', 'bu')}) [W = (Wg, Wu) rows interleaved]"
        return y + (" + r" if spec.residual else "")
    y = "x @ W.T" + (" + b" if spec.bias else "")
    y = f"{spec.activation}({y})" if spec.activation else y
    return y + (" + r" if spec.residual else "")
