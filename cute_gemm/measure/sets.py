"""The named shape sets of ``cute-gemm bench --set NAME`` and ``cute-gemm tune --set NAME``, as data.

A set is a name, a one-line description, for a held-out set when and why it was drawn (``drawn``), and its
entries: a shape (``Problem``) and, optionally, the operands that shape is computed with (``Operands``:
layout and dtypes) and a name for it. An entry without operands takes the run's (--layout, --dtype,
--out-dtype; default the worklog's nn fp16->fp32); an entry with them is computed with its own unless the
run gives --layout, --dtype or --out-dtype, which then apply to every shape.

The sets:
- ``decode``, ``small``: the regimes the project reports (a few tokens x a model's weights; 256^3..2048^3).
- ``unlisted`` and ``heldout`` ... ``heldout12``: shapes chosen (or drawn at random) after a change of
  ``phase="best"``'s model and before they were measured, to see that the model holds off the shapes it was
  fitted on. Their runs are in docs/results.md.
- ``prefill`` (and its thirds ``prefill-fwd``, ``prefill-dx``, ``prefill-dw``): the three GEMMs of a linear
  layer y = x W^T (x [T, K_in], W [N_out, K_in]) at 512-16384 tokens, for ten layers of five model families:
  forward T x N_out x K_in (nt, bf16 -> bf16), dX = dY W: T x K_in x N_out (nn, bf16 -> bf16), and
  dW = dY^T X: N_out x K_in x T (tn, bf16 -> fp32; K = the tokens).
- ``train-step``: the distinct GEMMs of ``bench/train.py``'s training step at its three sizes (``TRAIN_SIZES``),
  as the step runs them (its weights bf16, so dW bf16 too), each named with its calls per step: where the
  step's kernel time differs from cuBLAS's, shape by shape.

``SETS`` maps a name to its ``ShapeSet``; ``cute_gemm.measure.suite.SETS`` keeps the plain shapes of each.
"""

from __future__ import annotations

import dataclasses

from cute_gemm.runtime.problem import Problem
from phases.operands import Operands


@dataclasses.dataclass(frozen=True)
class Entry:
    """One shape of a set; ``operands`` None: the run's; ``name`` e.g. "fwd Llama-3-8B qkv"."""

    problem: Problem
    operands: Operands | None = None
    name: str = ""


@dataclasses.dataclass(frozen=True)
class ShapeSet:
    name: str
    description: str
    entries: tuple
    drawn: str = ""  # held-out sets: when and why they were drawn

    @property
    def problems(self) -> tuple:
        """The shapes, each once, in order (a shape in two entries of other operands counts once)."""
        return tuple(dict.fromkeys(e.problem for e in self.entries))

    @property
    def has_operands(self) -> bool:
        return any(e.operands is not None for e in self.entries)

    def line(self) -> str:
        """'name  N shapes  description' (``--list-sets``)."""
        ops = sorted({e.operands.label() for e in self.entries if e.operands is not None})
        return (f"{self.name:<11} {len(self.entries):>3} shapes  {self.description}"
                + (f" [{', '.join(ops)}]" if ops else "") + (f"; {self.drawn}" if self.drawn else ""))


def _plain(name: str, description: str, shapes, drawn: str = "") -> ShapeSet:
    return ShapeSet(name, description, tuple(Entry(Problem(*s)) for s in shapes), drawn)


DECODE_TOKENS = (1, 16, 64, 128, 256, 512)
DECODE_WEIGHTS = ((4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192), (28672, 8192))  # (N, K)

# the prefill layers: (tokens T, N_out, K_in, the layer)
PREFILL_LAYERS = (
    (512, 6144, 4096, "Llama-3-8B qkv"), (1024, 11008, 4096, "Llama-2-7B up"), (2048, 4096, 4096, "Llama-3-8B o"),
    (4096, 4096, 14336, "Llama-3-8B down"), (8192, 18944, 3584, "Qwen2.5-7B up"),
    (2048, 3584, 18944, "Qwen2.5-7B down"), (16384, 1280, 8192, "Llama-3-70B TP8 qkv slice"),
    (4096, 8192, 1024, "Llama-3-70B TP8 o slice"), (8192, 5632, 2048, "TinyLlama-1.1B up"),
    (1024, 2048, 5632, "TinyLlama-1.1B down"),
)
FWD = Operands.of("nt", "bf16", "bf16")  # y = x @ W.T, W as nn.Linear holds it
DX = Operands.of("nn", "bf16", "bf16")  # dX = dY @ W
DW = Operands.of("tn", "bf16", "fp32")  # dW = dY^T @ X, accumulated in fp32


def _prefill(gemm: str) -> tuple:
    out = []
    for t, n_out, k_in, layer in PREFILL_LAYERS:
        out += {"fwd": [Entry(Problem(t, n_out, k_in), FWD, f"fwd {layer}")],
                "dx": [Entry(Problem(t, k_in, n_out), DX, f"dx {layer}")],
                "dw": [Entry(Problem(n_out, k_in, t), DW, f"dw {layer}")]}[gemm]
    return tuple(out)


# bench/train.py's training step: a Llama-style block's linear layers (q, k, v, o: hidden x hidden; gate, up:
# mlp x hidden; down: hidden x mlp) at three sizes (name, hidden, mlp, layers, tokens per step)
TRAIN_SIZES = (("S", 2048, 5632, 4, 8192), ("M", 4096, 11008, 2, 4096), ("L", 8192, 28672, 1, 2048))
STEP_DW = Operands.of("tn", "bf16", "bf16")  # the step's weights are bf16, and so is its dW


def _train_step() -> tuple:
    """Each size's distinct GEMMs of one step, named with their calls per step: the forward, dX and dW of the
    square q/k/v/o, of the widening gate/up and of the narrowing down projection."""
    out = []
    for name, h, f, layers, t in TRAIN_SIZES:
        for n_out, k_in, what, count in ((h, h, "q/k/v/o", 4), (f, h, "gate/up", 2), (h, f, "down", 1)):
            calls = f"x{count * layers}"
            out += [Entry(Problem(t, n_out, k_in), FWD, f"{name} fwd {what} {calls}"),
                    Entry(Problem(t, k_in, n_out), DX, f"{name} dx {what} {calls}"),
                    Entry(Problem(n_out, k_in, t), STEP_DW, f"{name} dw {what} {calls}")]
    return tuple(out)


_LAYERS = "512-16384 tokens x 10 layers (Llama-2/3, Qwen2.5, TinyLlama; 70B as TP8 slices)"

_ALL = (
    _plain("decode", "a few tokens x a model's weights: M in {" + ", ".join(map(str, DECODE_TOKENS)) + "} x (N, K) in "
           + " ".join(f"{n}x{k}" for n, k in DECODE_WEIGHTS),
           [(m, n, k) for n, k in DECODE_WEIGHTS for m in DECODE_TOKENS]),
    _plain("small", "256^3, 512^3, 1024^3, 2048^3", [(s, s, s) for s in (256, 512, 1024, 2048)]),
    ShapeSet("prefill", f"forward (nt), dX (nn) and dW (tn) of a linear layer, {_LAYERS}",
             tuple(e for t in zip(_prefill("fwd"), _prefill("dx"), _prefill("dw")) for e in t)),
    ShapeSet("prefill-fwd", f"the forward y = x W^T of a linear layer, {_LAYERS}", _prefill("fwd")),
    ShapeSet("prefill-dx", f"dX = dY W of a linear layer, {_LAYERS}", _prefill("dx")),
    ShapeSet("prefill-dw", f"dW = dY^T X of a linear layer (K = the tokens), {_LAYERS}", _prefill("dw")),
    ShapeSet("train-step", "the GEMMs of bench/train.py's training step (S, M, L: hidden 2048-8192, 2048-8192 "
             "tokens), each size's forward, dX and dW of q/k/v/o, gate/up and down, named with their calls per step",
             _train_step()),
    _plain("unlisted", "decode-like shapes outside the decode set (M 8..256, other models' layer widths)",
           [(8, 11008, 4096), (32, 4096, 11008), (96, 6144, 4096), (128, 11008, 4096), (200, 5120, 5120),
            (128, 13824, 5120), (48, 16384, 2048), (256, 3072, 12288), (24, 2560, 10240), (160, 7168, 7168),
            (200, 11000, 3000), (40, 3000, 5000)],
           "chosen to see that best holds for the regime, not just the listed shapes"),
    _plain("heldout", "held out, M 12..248",
           [(144, 6144, 6144), (240, 5120, 13824), (96, 12288, 4096), (192, 3584, 18944), (112, 9216, 3072),
            (232, 4608, 9216), (56, 18944, 3584), (184, 12288, 2048), (80, 5120, 20480), (136, 10240, 5120),
            (248, 2048, 8192), (12, 6912, 9216)],
           "chosen after the token-tile multicast fit, before they were measured"),
    _plain("heldout2", "held out, M 8..224",
           [(8, 15360, 5120), (48, 22016, 4096), (72, 9216, 9216), (104, 7680, 7680), (24, 18432, 6144),
            (160, 9728, 4096), (208, 6144, 8192), (120, 20480, 2560), (32, 12800, 12800), (64, 3584, 14336),
            (176, 13312, 4608), (224, 4096, 11008)],
           "2026-12-02, after the heldout run and the two fixes it led to"),
    _plain("heldout3", "held out, M 40..248, layer widths of 1.5B-32B models",
           [(136, 8192, 3072), (192, 5120, 27648), (248, 3072, 8192), (216, 14336, 4096), (168, 3584, 18944),
            (152, 13824, 5120), (96, 8960, 1536), (112, 6912, 2560), (184, 8192, 8192), (40, 27648, 5120),
            (232, 2048, 5632), (128, 1536, 8960)],
           "2026-12-02, after the three-warpgroup tiles and 3-way splits"),
    _plain("heldout4", "held out, M 8..256",
           [(16, 7168, 18432), (56, 14336, 3584), (88, 3584, 14336), (120, 6144, 16384), (144, 9216, 3584),
            (168, 4096, 6144), (200, 2560, 6912), (216, 10240, 8192), (240, 3072, 3072), (8, 5120, 17408),
            (184, 1536, 4096), (256, 5632, 2048)],
           "2026-12-02, chosen with `cute-gemm tune`: tuned, then benched"),
    _plain("heldout5", "held out, M 8..248",
           [(8, 13824, 5120), (40, 6144, 4096), (56, 10240, 8192), (72, 14336, 4096), (96, 3584, 18944),
            (120, 9216, 9216), (144, 4096, 11008), (168, 5120, 13824), (192, 9216, 3072), (216, 6144, 6144),
            (232, 11008, 4096), (248, 7168, 5120)],
           "2026-12-03, after the refit to every family's cheapest at 72-248 tokens"),
    _plain("heldout6", "held out, M 80..248, layer widths of 3B-32B models",
           [(88, 18176, 4544), (216, 10240, 2560), (176, 18944, 3584), (136, 14336, 3584), (232, 3584, 14336),
            (104, 13824, 5120), (200, 14336, 5120), (152, 5120, 14336), (120, 27648, 5120), (184, 10944, 2048),
            (248, 8192, 3072), (80, 24576, 6144)],
           "2026-12-03, after the multicast and split-K reduce refit"),
    _plain("heldout7", "held out, M 152..256, layer widths of 7B-70B models",
           [(160, 14336, 4096), (192, 18944, 3584), (208, 3584, 18944), (224, 6144, 4096), (240, 14336, 5120),
            (256, 5120, 17920), (168, 17920, 5120), (184, 4608, 3584), (216, 8192, 28672), (232, 5120, 5120),
            (152, 12288, 4096), (248, 4096, 12288)],
           "2026-12-03, after the token-tile re-read and wide-tile terms"),
    _plain("heldout8", "held out, M 12..252",
           [(12, 10240, 8192), (48, 6144, 4096), (96, 28672, 8192), (136, 4608, 3584), (176, 9216, 3072),
            (200, 8192, 28672), (216, 18944, 3584), (232, 3584, 18944), (248, 14336, 4096), (144, 3072, 8192),
            (184, 10240, 8192), (252, 6144, 4096)],
           "2026-12-03, after the split reduce's charge was capped"),
    _plain("heldout9", "held out, M 40..252",
           [(252, 4864, 3072), (244, 4096, 2048), (40, 8192, 7168), (88, 14336, 5120), (104, 5120, 12288),
            (136, 11008, 4096), (152, 6656, 6656), (168, 4096, 11008), (184, 7168, 7168), (200, 5632, 4096),
            (216, 3584, 9216), (232, 10240, 3072)],
           "2026-12-03, after token tiles went to steps of 8"),
    _plain("heldout10", "held out, M 1..237",
           [(1, 14336, 10240), (44, 13824, 7168), (65, 2048, 4096), (67, 2560, 27648), (78, 9216, 6144),
            (86, 6144, 6144), (90, 13824, 5632), (129, 5632, 6912), (159, 5632, 6144), (202, 2048, 8192),
            (226, 12288, 3584), (237, 2048, 10240)],
           "2026-12-03, drawn at random (seed 20261203) from layer widths after the 88-token tiles"),
    _plain("heldout11", "held out, M 257..512",
           [(257, 14336, 8192), (259, 2560, 7168), (306, 10240, 2048), (309, 4096, 8192), (316, 8192, 8192),
            (347, 10240, 7168), (360, 11008, 4096), (368, 4096, 14336), (404, 5120, 10240), (434, 5120, 6144),
            (454, 8192, 10240), (475, 9216, 10240)],
           "2026-12-04, drawn at random (seed 202612041) after the 256-row weight tiles"),
    _plain("heldout12", "held out, M 1..512",
           [(68, 4096, 9216), (439, 11008, 10240), (445, 7168, 28672), (424, 8192, 3584), (498, 28672, 3072),
            (379, 8192, 7168), (282, 8192, 5120), (462, 18944, 14336), (403, 2048, 5120), (312, 8192, 2048),
            (360, 8192, 3072), (223, 3584, 18944)],
           "2026-12-04, drawn at random (seed 202612042; N, K from 16 layer widths) after the final model"),
    ShapeSet("prefill-heldout", "held out, prefill/training GEMMs of 512-16384 tokens (fwd nt, dX nn, dW tn)",
             tuple(Entry(Problem(*s), {"fwd": FWD, "dx": DX, "dw": DW}[g], g) for g, s in (
                 ("dx", (512, 4096, 14336)), ("dw", (5120, 8192, 8192)), ("dw", (3584, 4096, 2048)),
                 ("dx", (8192, 3584, 4096)), ("dw", (8192, 8192, 512)), ("fwd", (16384, 2048, 3072)),
                 ("fwd", (8192, 1024, 2048)), ("dx", (8192, 8192, 8192)), ("dx", (2048, 8192, 3584)),
                 ("dw", (13824, 3072, 2048)), ("dw", (8192, 5120, 512)), ("dw", (14336, 5120, 2048)))),
             "2026-12-04, drawn at random (seed 202612043; tokens 512-16384, 16 layer widths, at most 1.2 TFLOP) "
             "after the prefill model change"),
)
SETS = {s.name: s for s in _ALL}


def get(name: str) -> ShapeSet:
    """The set called ``name``; LookupError with one line naming ``--list-sets`` otherwise."""
    if name not in SETS:
        raise LookupError(f"no shape set {name!r} (--list-sets lists them)")
    return SETS[name]


def check_name(name: str) -> str:
    """``name`` if a set has it (the --set option's type); LookupError otherwise."""
    return get(name).name


def listing() -> list[str]:
    """One line per set (``--list-sets``)."""
    return [s.line() for s in _ALL]
