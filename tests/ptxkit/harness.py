"""Run a registered sm100 phase on the PTX machine for one small problem and check what it computed.

``simulate(key, m, n, k, config, operands)`` compiles the phase (for sm_100a, symbolic M, N, K as
always) for ``operands`` (``phases.operands.Operands``: dtypes and majors; None = the worklog's),
recording what the host would put into each TMA descriptor (box, coordinate order, swizzle, element
type: taken from the TMA atoms the phase builds, the only host-side facts the PTX does not carry), lays
out A, B and C as the operands say (and as the compile face hands them to a swap-AB kernel: B^T, A,
C^T), fills the kernel's parameters for the problem, runs every cluster of the launch grid on
``ptxkit.machine`` and checks:

- every element of C inside [0, M) x [0, N) is stored exactly once, and what is stored there is the
  accumulator of that very element summed over all of K (each K range once), rounded to C's type
  when C is 16-bit, with any fp32 additions outside the MMAs done in K order ((p0 + p1) + p2 ...: the
  deterministic reduce's documented order): a wrong coordinate, stage, descriptor, lane mapping, a
  missed k-tile or a reduce in another order shows up here;
- no store lands outside C (the predicated and clipped epilogues of partial tiles);
- the machine's own reports: races (a missing or misplaced wait, fence, barrier), deadlocks (wrong
  arrival counts, expect_tx bytes, multicast masks), TMEM misuse, barriers left mid-phase.

Phase 11's fused epilogue: the bias (a vector over N of A's dtype) and the residual "D" (C's shape and dtype,
row-major; transposed with C for a swap-AB kernel) are global tensors too, passed after C as the compile
face passes them; each stored element is then evaluated at random leaf values and compared with
act(acc + bias[n]) + residual[m, n] (``ptxkit.numerics``).
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
from ptxkit.numerics import EpilogueSpec
from ptxkit.parse import parse
from ptxkit.values import Acc, Rounded

A_BASE, B_BASE, C_BASE = 0x1000_0000_0000, 0x2000_0000_0000, 0x3000_0000_0000
BIAS_BASE, D_BASE = 0x4000_0000_0000, 0x5000_0000_0000


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
    """Record, in creation order, each TMA atom a phase builds: (operand, atom type, smem layout, multicast CTAs).
    An A or B atom of a multicast operation is split over the cluster's CTAs along N (A) or M (B): mode 2 or 1 of
    the (V, M, N, K) cluster shape its builder takes after the tiled MMA."""
    originals = {}

    def wrap(owner, name, operand):
        fn = getattr(owner, name)
        originals[(owner, name)] = fn

        def spy(*args, **kwargs):
            out = fn(*args, **kwargs)
            smem_layout = args[2]  # (op, gmem tensor, smem layout of one box or stage, ...)
            swizzle = str(smem_layout.inner) if hasattr(smem_layout, "inner") else ""
            atom_type = str(out[0]._trait.value.type)
            cluster = kwargs.get("cluster_shape_vmnk", args[5] if len(args) > 5 else None)
            multicast = 1
            if "multicast" in atom_type and cluster is not None:
                multicast = int(cluster[2 if operand == "A" else 1])
            record.append((operand, atom_type, swizzle, multicast))
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


DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4}


def _tensormap(operand: str, atom_type: str, swizzle_text: str, multicast: int = 1) -> TensorMap:
    """The tensor map the host encodes for a TMA atom. A multicast atom's basis is the box of all the CTAs it
    multicasts to; each CTA's instruction moves 1/``multicast`` of it, split along the box's outer mode."""
    m = re.search(r'tma_gbasis = <"\(([\d,]+)\):\(([^)]*)\)">', atom_type)
    if not m:
        raise SimError(f"cannot read the box of the TMA atom {atom_type}")
    box = tuple(int(x) for x in m.group(1).split(","))
    dims = tuple(int(b.split("@")[1]) for b in m.group(2).split(","))
    sw = re.match(r"S<(\d),(\d),(\d)>", swizzle_text)
    swizzle = {0: None, 1: 32, 2: 64, 3: 128}[int(sw.group(1))] if sw else None
    t = re.search(r"<(?:sm_\w+, )?(bf16|f16|f32)\b", atom_type)
    if not t:
        raise SimError(f"cannot read the element type of the TMA atom {atom_type}")
    dtype = t.group(1)
    elem = DTYPE_BYTES[dtype]
    if len(box) != 2:
        raise SimError(f"only 2-D TMA boxes are modelled: {atom_type}")
    if box[1] % multicast:
        raise SimError(f"{operand}: a box of {box} does not split over {multicast} CTAs")
    box = (box[0], box[1] // multicast)
    if swizzle is not None and box[0] * elem != swizzle:
        raise SimError(f"{operand}: a box row of {box[0] * elem} B under a {swizzle} B swizzle is not modelled")
    return TensorMap(operand, box, dims, swizzle, elem, dtype)


_COMPILED: dict = {}


def compile_for_sim(key: str, config=None, operands=None):
    """(kernel with attributes, parsed PTX, {operand: TensorMap}) of a phase, compiled once per config and
    operands."""
    cache_key = (key, config) if operands is None else (key, config, operands)
    if cache_key not in _COMPILED:
        entry = registry.resolve(key, "sm100")
        kernel = entry.make(config, operands)
        record: list = []
        with _recording_tma_atoms(record):
            comp = compile_kernel(kernel, "sm_100a", keep=True)
        maps = {}
        for operand, atom_type, swizzle_text, multicast in record:
            maps[operand] = _tensormap(operand, atom_type, swizzle_text, multicast)
        _COMPILED[cache_key] = (kernel, parse(comp.ptx), maps)
        _PTX[cache_key] = (comp.ptx, comp.ptxas)
    return _COMPILED[cache_key]


_PTX: dict = {}


def compiled_ptx(key: str, config=None, operands=None) -> tuple:
    """(kernel with attributes, PTX text, ptxas remarks) of the sm_100a compile ``compile_for_sim`` made
    (one compile per pytest run serves the PTX rules, the signatures and the machine)."""
    kernel = compile_for_sim(key, config, operands)[0]
    return (kernel, *_PTX[(key, config) if operands is None else (key, config, operands)])


_DTYPE = {"fp16": "f16", "bf16": "bf16", "fp32": "f32"}


def kernel_views(kernel, m: int, n: int, k: int) -> list[Global]:
    """The kernel's three tensors for an (m, n, k) problem, as ``Global``s named by the contract's views
    (mA (M, K), mB (N, K), mC (M, N) of the kernel): element types and majors from the kernel's operands,
    and for a swap-AB kernel (``swap_ab``) what the compile face passes it instead: B^T (n, k) as its A,
    A (m, k) as its B and C^T (n, m), column-major, as its C (all coordinates are then the kernel's). A config
    with phase 11's gated pairs stores C [m, n / 2] (C^T (n / 2, m))."""
    ops = kernel.operands
    ab, c = _DTYPE[ops.ab], _DTYPE[ops.c]
    a = ((m, k), (k, 1) if ops.a_major == "k" else (1, m))
    b = ((n, k), (1, n) if ops.b_major == "n" else (k, 1))
    nc = n // 2 if getattr(kernel.cfg, "gated", False) else n
    cc = ((m, nc), (nc, 1))
    if getattr(kernel, "swap_ab", False):
        a, b, cc = b, a, ((nc, m), (1, nc))
    return [Global("A", A_BASE, *a, 2, ab), Global("B", B_BASE, *b, 2, ab), Global("C", C_BASE, *cc, DTYPE_BYTES[c], c)]


def epilogue_views(kernel, m: int, n: int) -> list[Global]:
    """The fused epilogue's tensors of a kernel whose config reads them (``compile.epilogue_inputs``): "bias",
    the vector of N values of A's dtype (a 1 x N row: element (0, n) is bias[n]), and "D", the residual, laid
    out as C is (row-major [M, N], [M, N / 2] with gated pairs; C^T's column-major view for a swap-AB kernel:
    the kernel's coordinates)."""
    from cute_gemm.runtime.compile import epilogue_inputs

    ops = kernel.operands
    ab, c = _DTYPE[ops.ab], _DTYPE[ops.c]
    nc = n // 2 if getattr(kernel.cfg, "gated", False) else n
    out = []
    for name in epilogue_inputs(kernel):
        if name == "bias":
            out.append(Global("bias", BIAS_BASE, (1, n), (n, 1), 2, ab))
        else:
            cc = ((nc, m), (1, nc)) if getattr(kernel, "swap_ab", False) else ((m, nc), (nc, 1))
            out.append(Global("D", D_BASE, *cc, DTYPE_BYTES[c], c))
    return out


def bias_shape(kernel, shapes: dict) -> tuple:
    """The shape of a kernel's bias view (``epilogue.bias_view``): C's, or for a swap-AB kernel (C^T) the weights'
    rows by C^T's columns (the GEMM's, which gated pairs make twice as tall as C^T)."""
    return (shapes["A"][0], shapes["C"][1]) if getattr(kernel, "swap_ab", False) else shapes["C"]


def shifted_params(views: list, shift: dict | None) -> dict:
    """{tensor: the address its kernel parameter carries}: each view's base, or ``shift[name]`` elements on (the
    checks' own tests hand a kernel a misplaced tensor this way)."""
    shift = shift or {}
    return {g.name: g.base + shift.get(g.name, 0) * g.elem_bytes for g in views}

def _params(kernel, ptx_kernel, maps: dict, views: list, bases: dict | None = None) -> tuple[dict, dict]:
    """The bytes of every kernel parameter (by PTX name) and the tensor map of each TMA parameter. The fused
    epilogue's ``mBias`` is the bias seen with the GEMM's shape (``bias_shape``, no stride), ``mD`` the
    residual; a config without them has no such parameter. ``bases``: the tensors' addresses (the views')."""
    sig = inspect.signature(type(kernel).kernel.__wrapped__)
    names = [p for p in sig.parameters if p != "self"]
    shapes = {g.name: g.shape for g in views}
    shapes["bias"] = bias_shape(kernel, shapes)
    # the one stride that is not 1 (the row pitch; symbolic in the compiled code)
    strides = {g.name: g.strides[0] if g.strides[1] == 1 else g.strides[1] for g in views}
    bases = bases or {g.name: g.base for g in views}
    out, tmaps = {}, {}
    ptx_params = list(ptx_kernel.params)
    for name in names:
        if name == "tiled_mma":
            data = bytes(32)  # accumulate/negate flags false, no disabled output lanes
        elif name.startswith("tma_atom_"):
            operand = name[-1].upper()
            data = bytes(128)
        elif re.match(r"^m(A|B|C|Bias|D)(_tma)?$", name):
            operand = {"mBias": "bias"}.get(name, name[1:].replace("_tma", ""))
            if operand not in bases:
                continue  # no bias / residual in this config: no parameter
            fields = [] if name.endswith("_tma") else [(bases[operand], 8)]
            fields += [(v, 4) for v in shapes[operand]]
            if not name.endswith("_tma") and operand != "bias":
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


def simulate(key: str, m: int, n: int, k: int, config=None, operands=None, *,
             max_clusters: int | None = None, expect: EpilogueSpec | None = None,
             shift: dict | None = None) -> SimResult:
    """Run ``key`` with ``config`` and ``operands`` (None: the defaults) on an (m, n, k) problem and check it.

    For the checks' own tests: ``expect`` replaces the fused epilogue the check expects (the config's);
    ``shift`` ({tensor: elements}) hands the kernel that tensor's pointer so many elements on."""
    kernel, pk, maps = compile_for_sim(key, config, operands)
    why = kernel.can_implement(m, n, k)
    if why:
        raise ValueError(f"{key} cannot do {m}x{n}x{k}: {why}")
    attrs = kernel.attributes()
    globals_ = kernel_views(kernel, m, n, k) + epilogue_views(kernel, m, n)
    params, tmaps = _params(kernel, pk, maps, globals_, shifted_params(globals_, shift))
    gx, gy, gz = kernel.grid(m, n, k)
    cx = attrs["cluster"][0]
    if gx % cx or min(gx, gy, gz) < 1:
        raise SimError(f"{key} at {m}x{n}x{k}: a grid of {gx} x {gy} x {gz} CTAs is not whole clusters of {cx} "
                       f"(the launch fails)")
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
        c_view = globals_[2]
        spec = expect or EpilogueSpec.of(kernel, globals_[0].dtype, c_view.dtype)
        errors += check_c(c_out, *c_view.shape, k, k_step=kernel.cfg.bk, dtype=c_view.dtype, epilogue=spec)
    return SimResult(key, (m, n, k), errors, clusters, steps, mma_kinds)


def check_c(c_out: dict, m: int, n: int, k: int, k_step: int = 32, dtype: str = "f32",
            epilogue: EpilogueSpec | None = None) -> list[str]:
    """Every element of C (the kernel's (m, n) view) stored once, with the accumulator of exactly that
    element over all of K, summed in K order, and rounded to C's type ``dtype`` when C is 16-bit.
    ``epilogue``: the fused epilogue's spec; each element is then that function of its accumulator, bias
    and residual, evaluated at random values (``EpilogueSpec.check``)."""
    problems = []
    missing = 0
    values = epilogue.assignment((m, n)) if epilogue is not None else None
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
            if dtype != "f32":
                if not isinstance(v, Rounded) or v.dtype != dtype:
                    problems.append(f"C[{r}, {c}] receives {v!r}, not an accumulator rounded to {dtype}")
                    continue
            if epilogue is not None:
                why = epilogue.check(values, v, r, c, k, k_step)
                if why:
                    problems.append(why)
                if len(problems) > 20:
                    return problems
                continue
            if dtype != "f32":
                v = v.acc
            if isinstance(v, Acc) and (v.m, v.n) == (r, c) and not v.in_k_order():
                problems.append(f"C[{r}, {c}] adds its partial sums in another order than K's: {v.terms}")
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
