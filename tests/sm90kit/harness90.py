"""Run a registered sm90 phase on the PTX machine for one small problem and check what it computed.

``simulate90(key, m, n, k, config)`` compiles the phase for sm_90a (symbolic M, N, K, as always),
recording the box, coordinate order and swizzle of each TMA atom the phase builds (the host-side facts
the PTX does not carry), fills the kernel's parameters for the problem, runs every cluster of the launch
grid on ``machine90.Sm90Machine`` and checks, as the sm100 harness does (``ptxkit.harness.check_c``):
every element of C stored exactly once with the sum over all of K of exactly its row of A and column of
B, nothing outside C, and the machine's own reports (races, deadlocks, barriers left mid-phase, wgmma
accumulators read before their group retired, global accesses before ``griddepcontrol.wait``). With an
``accumulate`` config (C += A @ B) every element must instead arrive by one TMA reduce-add of that sum.

Operands: the worklog's (A row-major, B row-major = N-major, C fp32 row-major), or ``operands``
(``phases.operands.Operands``: majors and dtypes, laid out as ``ptxkit.harness.kernel_views`` does). Phase 10
computes C^T = B^T A^T: its kernel's A is B^T (N, K), its B is A (M, K) and its C is C^T (N, M); the run is
checked in the kernel's coordinates.

Phase 11's fused epilogue: the harness adds the bias (a vector over N, A's dtype) and the residual "D" (C's
shape and dtype, transposed with C for a swap-AB kernel) as global tensors, passes them after C as the
compile face does, and the check evaluates every stored element (``ptxkit.numerics``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import re

from cutlass.cute.nvgpu import cpasync

from cute_gemm.runtime import registry
from cute_gemm.runtime.compile import compile_kernel
from ptxkit.harness import DTYPE_BYTES, bias_shape, check_c, epilogue_views, kernel_views, shifted_params
from ptxkit.machine import Deadlock, Global, SimError, TensorMap
from ptxkit.numerics import EpilogueSpec
from ptxkit.parse import parse
from sm90kit.machine90 import ReduceAdd, Sm90Machine

A_BASE, B_BASE, C_BASE = 0x1000_0000_0000, 0x2000_0000_0000, 0x3000_0000_0000


@dataclasses.dataclass
class SimResult:
    key: str
    problem: tuple
    errors: list
    clusters: int
    steps: int
    mma_kinds: set = dataclasses.field(default_factory=set)

    @property
    def ok(self) -> bool:
        return not self.errors

    def report(self, limit: int = 12) -> str:
        head = f"{self.key} at {'x'.join(map(str, self.problem))}: {len(self.errors)} problem(s)"
        return "\n".join([head] + [f"  - {e}" for e in self.errors[:limit]])


@contextlib.contextmanager
def _recording_tma_atoms(record: list):
    """Record, in creation order, each TMA atom a phase builds: (is a store, atom type, smem layout)."""
    fn = cpasync.make_tiled_tma_atom

    def spy(op, gmem, smem_layout, *args, **kwargs):
        out = fn(op, gmem, smem_layout, *args, **kwargs)
        swizzle = str(smem_layout.inner) if hasattr(smem_layout, "inner") else ""
        multicast = int(kwargs.get("num_multicast", args[1] if len(args) > 1 else 1))
        store = isinstance(op, (cpasync.CopyBulkTensorTileS2GOp, cpasync.CopyReduceBulkTensorTileS2GOp))
        record.append((store, str(out[0]._trait.value.type), swizzle,
                       multicast))
        return out

    cpasync.make_tiled_tma_atom = spy
    try:
        yield
    finally:
        cpasync.make_tiled_tma_atom = fn


def _tensormap(operand: str, atom_type: str, swizzle_text: str, elem: int, multicast: int = 1) -> TensorMap:
    """The tensor map the host encodes for a TMA atom: its box, the tensor mode each box coordinate
    indexes, its swizzle. A multicast atom's basis is the whole box of the cluster; each CTA's
    instruction moves 1/``multicast`` of it, split along the box's outer mode (its TMA box)."""
    m = re.search(r'tma_gbasis = <"\(([\d,]+)\):\(([^)]*)\)">', atom_type)
    if not m:
        raise SimError(f"cannot read the box of the TMA atom {atom_type}")
    box = tuple(int(x) for x in m.group(1).split(","))
    dims = tuple(int(b.split("@")[1]) for b in m.group(2).split(","))
    sw = re.match(r"S<(\d),(\d),(\d)>", swizzle_text)
    swizzle = {0: None, 1: 32, 2: 64, 3: 128}[int(sw.group(1))] if sw else None
    if len(box) != 2:
        raise SimError(f"only 2-D TMA boxes are modelled: {atom_type}")
    if box[1] % multicast:
        raise SimError(f"{operand}: a box of {box} does not split over {multicast} CTAs")
    box = (box[0], box[1] // multicast)
    if swizzle is not None and box[0] * elem != swizzle:
        raise SimError(f"{operand}: a box row of {box[0] * elem} B under a {swizzle} B swizzle is not modelled")
    return TensorMap(operand, box, dims, swizzle, elem)


_COMPILED: dict = {}


def compile_for_sim(key: str, config=None, operands=None):
    """(kernel with attributes, parsed PTX, {operand: TensorMap}, static smem layout) of an sm90 phase,
    compiled once per config and operands (None: the worklog's)."""
    cache_key = (key, config) if operands is None else (key, config, operands)
    if cache_key not in _COMPILED:
        entry = registry.resolve(key, "sm90")
        kernel = entry.make(config, operands)
        record: list = []
        with _recording_tma_atoms(record):
            comp = compile_kernel(kernel, "sm_90a", keep=True)
        loads = [r for r in record if not r[0]]
        stores = [r for r in record if r[0]]
        maps = {}
        for operand, (_, atom_type, swizzle_text, mc) in zip("AB", loads):
            maps[operand] = _tensormap(operand, atom_type, swizzle_text, 2, mc)
        c_bytes = DTYPE_BYTES[{"fp16": "f16", "bf16": "bf16", "fp32": "f32"}[kernel.operands.c]]
        for _, atom_type, swizzle_text, _ in stores[:1]:
            maps["C"] = _tensormap("C", atom_type, swizzle_text, c_bytes)
        _COMPILED[cache_key] = (kernel, parse(comp.ptx), maps, static_shared(comp.ptx))
    return _COMPILED[cache_key]


def static_shared(ptx: str) -> dict:
    """{name: offset} of the module's static ``.shared`` arrays, laid out in declaration order with their
    alignment from offset 0 (the dynamic smem of these kernels, if any, follows them); "" -> total bytes."""
    out, off = {}, 0
    for align, name, size in re.findall(r"^\s*\.shared\s+\.align\s+(\d+)\s+\.b8\s+(\w+)\[(\d+)\];", ptx, re.M):
        off += -off % int(align)
        out[name] = off
        off += int(size)
    out[""] = off
    return out


def _params(kernel, ptx_kernel, maps: dict, shapes: dict, strides: dict, bases: dict) -> tuple[dict, dict]:
    """The bytes of every kernel parameter (by PTX name) and the tensor map of each TMA parameter.

    A TMA atom parameter is its 128-B descriptor; the tensor after it is the TMA's coordinate tensor
    (its shape only); a plain tensor is (pointer, shape, the strides that are not 0 or 1). The fused
    epilogue's ``mBias`` is the bias seen with C's shape (stride 0 along the other mode: C's shape in the
    parameter; the persistent phases' gated pairs: the GEMM's, twice C's columns), ``mD`` the residual; a config
    without them has no such parameter."""
    sig = inspect.signature(type(kernel).kernel.__wrapped__)
    names = [p for p in sig.parameters if p != "self"]
    bias = bias_shape(kernel, shapes)
    if not getattr(kernel, "swap_ab", False) and hasattr(kernel, "c_per_acc") and kernel.c_per_acc() == 2:
        bias = (bias[0], bias[1] * 2)  # the persistent phases see it with the GEMM's (M, N): gated, twice C's columns
    shapes = dict(shapes, bias=bias)
    out, tmaps = {}, {}
    ptx_params = list(ptx_kernel.params)
    tma_operands = {nm[-1].upper() for nm in names if nm.startswith("tma_atom_")}
    for name in names:
        if name == "tiled_mma":
            data = b""
        elif name.startswith("tma_atom_"):
            operand = name[-1].upper()
            data = bytes(128)
        elif re.match(r"^m(A|B|C|Bias|D)$", name):
            operand = {"mBias": "bias"}.get(name, name[1:])
            if operand not in bases:
                continue  # no bias / residual in this config: no parameter
            fields = [] if operand in tma_operands else [(bases[operand], 8)]
            fields += [(v, 4) for v in shapes[operand]]
            if operand not in tma_operands and operand != "bias":
                fields += [(s, 4) for s in strides[operand] if s not in (0, 1)]
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


def reduced_adds(c_out: dict, errors: list) -> tuple[dict, list]:
    """An ``accumulate`` run (C += A @ B): every value that reached C must be a TMA reduce-add (C's old
    value plus the value); (the added values, for ``check_c``, errors + one line per plain store)."""
    plain = [rc for rc, vals in c_out.items() if any(not isinstance(v, ReduceAdd) for v in vals)]
    if plain:
        errors = [*errors, f"{len(plain)} elements of C are overwritten, not added to, e.g. {sorted(plain)[:3]}"]
    return {rc: [v.value if isinstance(v, ReduceAdd) else v for v in vals] for rc, vals in c_out.items()}, errors


@dataclasses.dataclass
class _View:
    """What ``problem_mnk`` reads of a tensor: its shape."""

    shape: tuple


def simulate90(key: str, m: int, n: int, k: int, config=None, operands=None, *, max_clusters: int | None = None,
               expect: EpilogueSpec | None = None, shift: dict | None = None) -> SimResult:
    """Run ``key`` with ``config`` and ``operands`` (None: the defaults) on an (m, n, k) problem and check it.

    For the checks' own tests: ``expect`` replaces the fused epilogue the check expects (the config's);
    ``shift`` ({tensor: elements}) hands the kernel that tensor's pointer so many elements on."""
    kernel, pk, maps, static = compile_for_sim(key, config, operands)
    why = kernel.can_implement(m, n, k)
    if why:
        raise ValueError(f"{key} cannot do {m}x{n}x{k}: {why}")
    attrs = kernel.attributes()
    globals_ = kernel_views(kernel, m, n, k) + epilogue_views(kernel, m, n)
    shapes, strides = {g.name: g.shape for g in globals_}, {g.name: g.strides for g in globals_}
    bases = shifted_params(globals_, shift)
    params, tmaps = _params(kernel, pk, maps, shapes, strides, bases)
    # the launch grid as the kernel's own host code computes it from the tensors it is given:
    # ``self.grid(*self.problem_mnk(mA, mC))`` on the kernel's views (phase 10: B^T and C^T)
    gx, gy, gz = kernel.grid(*kernel.problem_mnk(_View(shapes["A"]), _View(shapes["C"])))
    cx = attrs["cluster"][0]
    pdl = bool(getattr(kernel.cfg, "use_pdl", False))
    c_out: dict = {}
    errors: list = []
    steps = clusters = 0
    mma_kinds: set = set()
    for y in range(gy):
        for x0 in range(0, gx, cx):
            if max_clusters is not None and clusters >= max_clusters:
                break
            mach = Sm90Machine(pk, pdl=pdl, static_smem=static, params=params, tensormaps=tmaps,
                               globals_=globals_, threads=attrs["threads"], cluster=cx, first_ctaid=(x0, y, 0),
                               c_out=c_out, errors=errors, smem_bytes=attrs["smem_bytes"] + static[""])
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
        cm, cn = shapes["C"]
        if getattr(kernel.cfg, "accumulate", False):
            c_out, errors = reduced_adds(c_out, errors)
        c_view = globals_[2]
        spec = expect or EpilogueSpec.of(kernel, globals_[0].dtype, c_view.dtype)
        errors += check_c(c_out, cm, cn, k, k_step=16, dtype=c_view.dtype, epilogue=spec)
    return SimResult(key, (m, n, k), errors, clusters, steps, mma_kinds)
