"""Run a registered sm100 phase on the PTX machine for one small problem and check what it computed.

``simulate(key, m, n, k, config)`` compiles the phase (for sm_100a, symbolic M, N, K as always),
recording what the host would put into each TMA descriptor (box, coordinate order, swizzle: taken from
the TMA atoms the phase builds, the only host-side facts the PTX does not carry), fills the kernel's
parameters for the problem, runs every cluster of the launch grid on ``ptxkit.machine`` and checks:

- every element of C inside [0, M) x [0, N) is stored exactly once, and what is stored there is the
  accumulator of that very element summed over all of K (each K range once): a wrong coordinate,
  stage, descriptor, lane mapping or a missed k-tile shows up here;
- no store lands outside C (the predicated and clipped epilogues of partial tiles);
- the machine's own reports: races (a missing or misplaced wait, fence, barrier), deadlocks (wrong
  arrival counts, expect_tx bytes, multicast masks), TMEM misuse, barriers left mid-phase.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import re

import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync

from cute_gemm.runtime import registry
from cute_gemm.runtime.compile import compile_kernel
from ptxkit.machine import Deadlock, Global, Machine, SimError, TensorMap
from ptxkit.parse import parse
from ptxkit.values import Acc

A_BASE, B_BASE, C_BASE = 0x1000_0000_0000, 0x2000_0000_0000, 0x3000_0000_0000


@dataclasses.dataclass
class SimResult:
    key: str
    problem: tuple
    errors: list
    clusters: int
    steps: int
    mma_kinds: set = dataclasses.field(default_factory=set)  # decoded descriptors the MMAs used

    @property
    def ok(self) -> bool:
        return not self.errors

    def report(self, limit: int = 12) -> str:
        head = f"{self.key} at {'x'.join(map(str, self.problem))}: {len(self.errors)} problem(s)"
        return "\n".join([head] + [f"  - {e}" for e in self.errors[:limit]])


@contextlib.contextmanager
def _recording_tma_atoms(record: list):
    """Record, in creation order, each TMA atom a phase builds: (operand, atom type, smem layout)."""
    originals = {}

    def wrap(owner, name, operand):
        fn = getattr(owner, name)
        originals[(owner, name)] = fn

        def spy(*args, **kwargs):
            out = fn(*args, **kwargs)
            smem_layout = args[2]  # (op, gmem tensor, smem layout of one box or stage, ...)
            swizzle = str(smem_layout.inner) if hasattr(smem_layout, "inner") else ""
            record.append((operand, str(out[0]._trait.value.type), swizzle))
            return out
        setattr(owner, name, spy)

    wrap(cute.nvgpu, "make_tiled_tma_atom_A", "A")
    wrap(cute.nvgpu, "make_tiled_tma_atom_B", "B")
    wrap(cpasync, "make_tiled_tma_atom", "C")
    try:
        yield
    finally:
        for (owner, name), fn in originals.items():
            setattr(owner, name, fn)


def _tensormap(operand: str, atom_type: str, swizzle_text: str) -> TensorMap:
    m = re.search(r'tma_gbasis = <"\(([\d,]+)\):\(([^)]*)\)">', atom_type)
    if not m:
        raise SimError(f"cannot read the box of the TMA atom {atom_type}")
    box = tuple(int(x) for x in m.group(1).split(","))
    dims = tuple(int(b.split("@")[1]) for b in m.group(2).split(","))
    sw = re.match(r"S<(\d),(\d),(\d)>", swizzle_text)
    swizzle = {0: None, 1: 32, 2: 64, 3: 128}[int(sw.group(1))] if sw else None
    elem = 4 if operand == "C" else 2
    if len(box) != 2:
        raise SimError(f"only 2-D TMA boxes are modelled: {atom_type}")
    if swizzle is not None and box[0] * elem != swizzle:
        raise SimError(f"{operand}: a box row of {box[0] * elem} B under a {swizzle} B swizzle is not modelled")
    return TensorMap(operand, box, dims, swizzle, elem)


_COMPILED: dict = {}


def compile_for_sim(key: str, config=None):
    """(kernel with attributes, parsed PTX, {operand: TensorMap}) of a phase, compiled once per config."""
    cache_key = (key, config)
    if cache_key not in _COMPILED:
        entry = registry.resolve(key, "sm100")
        kernel = entry.make(config)
        record: list = []
        with _recording_tma_atoms(record):
            comp = compile_kernel(kernel, "sm_100a", keep=True)
        maps = {}
        for operand, atom_type, swizzle_text in record:
            maps[operand] = _tensormap(operand, atom_type, swizzle_text)
        _COMPILED[cache_key] = (kernel, parse(comp.ptx), maps)
    return _COMPILED[cache_key]


def _params(kernel, ptx_kernel, maps: dict, m: int, n: int, k: int) -> tuple[dict, dict]:
    """The bytes of every kernel parameter (by PTX name) and the tensor map of each TMA parameter."""
    sig = inspect.signature(type(kernel).kernel.__wrapped__)
    names = [p for p in sig.parameters if p != "self"]
    shapes = {"A": (m, k), "B": (n, k), "C": (m, n)}
    strides = {"A": k, "B": n, "C": n}
    bases = {"A": A_BASE, "B": B_BASE, "C": C_BASE}
    out, tmaps = {}, {}
    ptx_params = list(ptx_kernel.params)
    for name in names:
        if name == "tiled_mma":
            data = bytes(32)  # accumulate/negate flags false, no disabled output lanes
        elif name.startswith("tma_atom_"):
            operand = name[-1].upper()
            data = bytes(128)
        elif re.match(r"^m[ABC](_tma)?$", name):
            operand = name[1]
            fields = [] if name.endswith("_tma") else [(bases[operand], 8)]
            fields += [(v, 4) for v in shapes[operand]]
            if not name.endswith("_tma"):
                fields.append((strides[operand], 4))
            data = b""
            for v, size in fields:
                data += b"\0" * (-len(data) % size) + v.to_bytes(size, "little")
        else:
            continue  # layouts, tiled copies, compile-time constants: no parameter
        p = ptx_params.pop(0)
        data += b"\0" * (p.size - len(data))
        if len(data) != p.size:
            raise SimError(f"parameter {name}: {len(data)} bytes for the PTX's {p.size}")
        out[p.name] = data
        if name.startswith("tma_atom_"):
            tmaps[p.name] = maps[operand]
    if ptx_params:
        raise SimError(f"PTX parameters left unfilled: {[p.name for p in ptx_params]}")
    return out, tmaps


def simulate(key: str, m: int, n: int, k: int, config=None, *, max_clusters: int | None = None) -> SimResult:
    kernel, pk, maps = compile_for_sim(key, config)
    why = kernel.can_implement(m, n, k)
    if why:
        raise ValueError(f"{key} cannot do {m}x{n}x{k}: {why}")
    attrs = kernel.attributes()
    params, tmaps = _params(kernel, pk, maps, m, n, k)
    globals_ = [Global("A", A_BASE, (m, k), (k, 1), 2), Global("B", B_BASE, (n, k), (1, n), 2),
                Global("C", C_BASE, (m, n), (n, 1), 4)]
    gx, gy, gz = kernel.grid(m, n, k)
    cx = attrs["cluster"][0]
    c_out: dict = {}
    errors: list = []
    steps = clusters = 0
    mma_kinds: set = set()
    for y in range(gy):
        for x0 in range(0, gx, cx):
            if max_clusters is not None and clusters >= max_clusters:
                break
            mach = Machine(pk, params=params, tensormaps=tmaps, globals_=globals_, threads=attrs["threads"],
                           cluster=cx, first_ctaid=(x0, y, 0), c_out=c_out, errors=errors,
                           smem_bytes=attrs["smem_bytes"])
            try:
                mach.run()
                mach.check_barriers_at_rest()
            except Deadlock as e:
                errors.append(f"cluster at ctaid ({x0}, {y}): deadlock: {e}")
            except SimError as e:
                errors.append(f"cluster at ctaid ({x0}, {y}): {e}")
            steps += mach.steps
            mma_kinds |= mach.mma_kinds
            clusters += 1
            if len(errors) > 40:
                break
    if max_clusters is None:
        errors += check_c(c_out, m, n, k)
    return SimResult(key, (m, n, k), errors, clusters, steps, mma_kinds)


def check_c(c_out: dict, m: int, n: int, k: int, k_step: int = 32) -> list[str]:
    """Every element of C stored once, with the accumulator of exactly that element over all of K."""
    problems = []
    missing = 0
    for r in range(m):
        for c in range(n):
            vals = c_out.get((r, c))
            if not vals:
                missing += 1
                if missing <= 3:
                    problems.append(f"C[{r}, {c}] is never stored")
                continue
            if len(vals) > 1:
                problems.append(f"C[{r}, {c}] is stored {len(vals)} times")
            v = vals[-1]
            if not isinstance(v, Acc) or (v.m, v.n) != (r, c):
                problems.append(f"C[{r}, {c}] receives {v!r}")
            elif len(v.ks) != 1 or v.ks[0][0] != 0 or not k <= v.ks[0][1] < k + k_step:
                problems.append(f"C[{r}, {c}] sums K ranges {v.ks}, not [0, {k})")
            if len(problems) > 20:
                return problems
    if missing > 3:
        problems.append(f"{missing} elements of C are never stored")
    outside = [rc for rc in c_out if not (0 <= rc[0] < m and 0 <= rc[1] < n)]
    if outside:
        problems.append(f"{len(outside)} stores land outside C, e.g. {outside[:3]}")
    return problems
