"""The contract every phase kernel follows (sm90 and sm100 alike), and the one list of phase ids.

A phase is a class with static configuration (a frozen dataclass, the worklog's defaults) and a
``@cute.jit __call__(mA, mB, mC, stream)`` that builds its atoms and launches. The tensors it receives
are always the same three views of the problem, with **symbolic** extents: one compile serves every
M, N, K the phase accepts (``divisibility`` says what the compiled code may assume about them).

- ``mA``: (M, K); the worklog's: fp16, K contiguous (A row-major, "K-major"), stride (K, 1)
- ``mB``: (N, K); the worklog's: fp16, N contiguous (B row-major [K, N] seen as (N, K), "N-major" /
  MN-major), stride (1, N); a transposed [N, K] weight is K contiguous, stride (K, 1)
- ``mC``: (M, N); the worklog's: fp32, N contiguous (C row-major), stride (N, 1)

What the tensors hold is the kernel's ``operands`` (``phases.operands.Operands``: fp16/bf16 A and B,
fp32/fp16/bf16 C, either major of A and B): the compile face builds its tensors from it, and the kernel
reads element types and majors back from the tensors (``phases.operands.read``) in ``__call__``.

What the harness reads from a kernel is declared here (``threads``, ``smem_bytes``, ``cluster``,
``tmem_cols``) and filled in one step, ``_setup_attributes``, which ``__call__`` runs first (as
CUTLASS's kernels do: smem sizes come from DSL layouts, so the step runs while tracing). The launch grid
of a problem is ``grid(m, n, k)``: the same arithmetic serves the launch (DSL integers) and the
host-side checks (Python integers).

Nothing here imports ``cute_gemm``: the harness knows a phase only through these attributes.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from phases.operands import WORKLOG, Operands

# Every phase id, in ladder order. The one list: the registry, the CLI and the docs read it from here.
# 2a = TMA loads, 2b = TMA + warp specialization; a bare "2" means 2b.
PHASE_IDS = ("0", "1", "2a", "2b", "3", "4", "5", "6", "7", "8", "9", "10", "11")
PHASE_ALIASES = {"2": "2b"}

# the fused epilogue's activations (phases.epilogue, phase 11's ``activation`` field), here where no DSL is imported:
# the runtime's argument checks and the bench's spec read them too
ACTIVATIONS = ("none", "relu", "gelu", "silu")
ROW_ALIGN = 8  # contiguous extents are multiples of 8: 16-byte rows of 16-bit A and B (TMA, 16-B cp.async)
MAX_ELEMENTS = 2**31  # extents and element offsets are 32-bit in the compiled code


@dataclasses.dataclass(frozen=True)
class TileConfig:
    """Fields every phase has. Phases extend this with their own frozen dataclass."""

    bm: int = 128  # rows of C per CTA
    bn: int = 128  # columns of C per CTA
    bk: int = 32  # K per pipeline stage
    stages: int = 2  # smem stages (the worklog's NSTAGES)
    cluster_m: int = 1  # CTAs per cluster along M

    def tile_m(self) -> int:
        """Rows of C one cluster covers."""
        return self.bm * self.cluster_m


class GemmPhase:
    """Base class of every phase kernel.

    Subclasses set the class attributes, implement ``_setup_attributes`` and ``grid``, and implement
    ``__call__`` as a ``@cute.jit`` method that calls ``self._setup_attributes()`` first.
    ``can_implement`` returns the list of reasons a problem cannot run (empty = it can).
    """

    arch: ClassVar[str]  # "sm90" or "sm100"
    phase: ClassVar[str]  # one of PHASE_IDS
    Config: ClassVar[type] = TileConfig
    summary: ClassVar[str] = ""  # one line: what this kernel is
    adds: ClassVar[str] = ""  # one line: what it adds over the previous phase
    worklog: ClassVar[str] = ""  # the worklog's number for this phase (B300), or "" if none
    # the phase this one is written against (``compare``, the report's step), when not the previous id
    parent: ClassVar[str | None] = None
    # True: any M, N, K (N, K multiples of 8) -- partial tiles through TMA bounds (zero-filled loads,
    # clipped stores) and predicated register stores. False: tile multiples only (the cp.async phases).
    ragged: ClassVar[bool] = True
    # False: the worklog's operands only (fp16, A row-major, B N-major, C fp32 row-major: the cp.async
    # phases, whose copies are written for that layout). True: any ``Operands`` with C row-major.
    general_operands: ClassVar[bool] = True
    c_majors: ClassVar[tuple[str, ...]] = ("n",)  # C majors the epilogue writes ("m": swap-AB's C^T)

    # --- what the harness reads: declared here, filled by _setup_attributes (config only, no shapes) ---
    ATTRIBUTES: ClassVar[tuple[str, ...]] = ("threads", "smem_bytes", "cluster", "tmem_cols")
    threads: int | None = None  # threads per CTA (the PTX's .reqntid)
    smem_bytes: int | None = None  # dynamic shared memory per CTA that the launch asks for
    cluster: tuple[int, int, int] | None = None  # CTAs per cluster (the PTX's .reqnctapercluster if > 1)
    tmem_cols: int | None = None  # TMEM columns per CTA (sm100; None on sm90)

    def __init__(self, config: TileConfig | None = None, operands: Operands | None = None):
        self.cfg = config if config is not None else self.Config()
        self.operands = operands if operands is not None else WORKLOG  # what the compile face gives
        self.types = None  # the CuTe view of the operands, read from the tensors in __call__

    # ---- filled while tracing ----
    def _setup_attributes(self) -> None:
        """Derive ``threads``, ``smem_bytes``, ``cluster`` (and ``tmem_cols``) from the config."""
        raise NotImplementedError

    def attributes(self) -> dict:
        """What ``_setup_attributes`` filled in (after a compile); a phase that forgot one fails here."""
        out = {name: getattr(self, name) for name in self.ATTRIBUTES}
        missing = [k for k, v in out.items() if v is None and not (k == "tmem_cols" and self.arch == "sm90")]
        if missing:
            raise RuntimeError(f"{self.arch}:{self.phase} did not set {', '.join(missing)} in _setup_attributes")
        return out

    # ---- the problem side ----
    @staticmethod
    def problem_mnk(mA, mC):
        """(M, N, K) of the contract's tensors: symbolic (DSL integers) in a compile for every shape."""
        return mA.shape[0], mC.shape[1], mA.shape[1]

    def grid(self, m, n, k) -> tuple:
        """CTAs launched for an (m, n, k) problem as (x, y, z); Python or DSL integers alike."""
        raise NotImplementedError

    def divisibility(self) -> tuple[int, int, int]:
        """What the compiled code may assume about (M, N, K): each is a multiple of this."""
        c = self.cfg
        if self.ragged:
            return row_alignment(self.operands)
        return c.tile_m(), _lcm(c.bn, ROW_ALIGN), _lcm(c.bk, ROW_ALIGN)

    def operand_problems(self, ops: Operands) -> list[str]:
        """Reasons this kernel cannot take operands ``ops`` (dtypes, majors); [] if it can."""
        if not self.general_operands and ops != WORKLOG:
            return [f"{self.arch}:{self.phase} takes the worklog's operands only (fp16 A row-major, fp16 B "
                    f"[K,N] row-major, fp32 C), got {ops.label()}: phases 2a and later take any layout and dtype"]
        if ops.c_major not in self.c_majors:
            return [f"{self.arch}:{self.phase} writes C row-major only"]
        return []

    def can_implement(self, m: int, n: int, k: int) -> list[str]:
        """Reasons this kernel cannot compute an (m, n, k) problem with its operands; [] if it can."""
        c = self.cfg
        why = self.operand_problems(self.operands)
        if min(m, n, k) < 1:
            why.append(f"M, N, K must be >= 1, got {m}x{n}x{k} (cute_gemm.gemm handles empty problems itself)")
            return why
        for name, v, d in zip("MNK", (m, n, k), row_alignment(self.operands)):
            if v % d:
                why.append(f"{name}={v} is not a multiple of {d}: with {self.operands.label()} it is the contiguous "
                           f"extent of an operand, whose rows must be 16-byte multiples for TMA and 16-byte copies")
        for name, v in (("M*K", m * k), ("K*N", k * n), ("M*N", m * n)):
            if v >= MAX_ELEMENTS:
                why.append(f"{name}={v} elements: operands must hold fewer than 2^31 elements (32-bit offsets)")
        if not self.ragged:
            where = "use phase 2a or later for shapes that are not tile multiples"
            if m % c.tile_m():
                why.append(f"M={m} is not a multiple of {c.tile_m()} (BM={c.bm} x cluster {c.cluster_m}); {where}")
            if n % c.bn:
                why.append(f"N={n} is not a multiple of BN={c.bn}; {where}")
            if k % c.bk:
                why.append(f"K={k} is not a multiple of BK={c.bk}; {where}")
        return why

    def config_problems(self) -> list[str]:
        """Reasons this kernel cannot be built with its config -- or would build one that computes a wrong C --
        read from the config alone, before anything compiles; [] if none. Each says what was given and what is
        allowed. The base holds the rule every phase shares (``field_problems``); a phase adds what its
        ``_setup_attributes`` asserts while tracing (the asserts stay: they guard the compiler). The registry
        refuses a config with problems in one line (``PhaseEntry.configured``)."""
        return field_problems(self.cfg)

    def shape_rule(self) -> str:
        """What shapes this phase takes, in words (``cute-gemm list``)."""
        dm, dn, dk = self.divisibility()
        if self.ragged:
            free = [name for name, d in zip("MNK", (dm, dn, dk)) if d == 1]
            tied = [name for name, d in zip("MNK", (dm, dn, dk)) if d > 1]
            return f"any {', '.join(free)}; {', '.join(tied)} multiples of {ROW_ALIGN}"
        return f"M % {dm}, N % {dn}, K % {dk} == 0"


def field_problems(cfg) -> list[str]:
    """Every integer field of a config (tiles, stages, clusters, SM counts, warps) is a positive integer."""
    why = []
    for f in dataclasses.fields(cfg):
        v = getattr(cfg, f.name)
        if isinstance(v, int) and not isinstance(v, bool) and v < 1:
            why.append(f"{f.name}={v}: a positive integer")
    return why


def row_alignment(ops: Operands) -> tuple[int, int, int]:
    """(M, N, K) multiples the operands need: each tensor's contiguous extent is a row length, and TMA
    (and 16-byte copies) need 16-byte rows, 8 elements of a 16-bit type (fp32 C is held to the same 8).
    The worklog's operands: (1, 8, 8), any M."""
    dm = ROW_ALIGN if "m" in (ops.a_major, ops.c_major) else 1
    dn = ROW_ALIGN if ops.b_major == "n" or ops.c_major == "n" else 1
    dk = ROW_ALIGN if "k" in (ops.a_major, ops.b_major) else 1
    return dm, dn, dk


def _lcm(a: int, b: int) -> int:
    from math import gcd

    return a * b // gcd(a, b)
