"""A small Blackwell (sm_100a) machine that runs a kernel's PTX on the CPU, warp by warp.

It executes the PTX the DSL compiled, one cluster at a time, for a small problem, with the semantics
the PTX ISA gives each instruction these kernels use: integer arithmetic, predicates and branches
(SIMT: divergent lanes reconverge at the branch's immediate post-dominator), shared memory, mbarriers
(arrival counts, transaction bytes, phases, remote arrivals), named and cluster barriers, TMA loads
and stores (boxes, swizzles, zero fill, clipping, the ``.cta_group::2`` barrier mapping), cp.async,
``st.async``, TMEM allocation, ``tcgen05.mma`` (instruction and shared-memory descriptors decoded
with ``ptxkit.isa``; it multiplies only the element type A and B hold), ``tcgen05.commit``
(multicast), ``tcgen05.ld`` and the waits, and the roundings of the fp32 accumulator to a 16-bit C.
The fused epilogue (phase 11): ``ld.global`` of the bias and residual tensors (each element an ``Elem``
tag; a load outside a tensor is reported), their widening ``cvt.f32.{bf16,f16}`` (and sm_100's mixed
``add.rn.f32.bf16``), and fp32 ``add``/``sub``/``mul``/``fma``/``max``/``min``/``tanh.approx`` on them,
the accumulators and immediates, each recorded as a ``values.Fx`` tree that the final check evaluates.

Values are provenance (``ptxkit.values``), not numbers. Every shared-memory and TMEM access is
checked against a happens-before order built from the synchronization the code performs: vector
clocks per warp, one clock entry per mbarrier (its completed phases) and tokens for asynchronous
completions (an MMA's reads and writes complete at its commit, a TMA store's reads at the issuing
thread's ``wait_group.read``, a ``tcgen05.ld`` at ``tcgen05.wait::ld``). A wait that is missing, moved
or on the wrong barrier is reported as a race even when this schedule ran the operations in a safe
order. A state in which no warp can proceed is a deadlock.

TMEM hand-offs follow the PTX ISA's tcgen05 memory consistency model: a TMEM access of one thread is
ordered before a TMEM access of another only through a thread synchronization with
``tcgen05.fence::before_thread_sync`` after the first (after its ``tcgen05.wait::ld`` for a tcgen05.ld;
``tcgen05.commit`` has it built in) and ``tcgen05.fence::after_thread_sync`` after the wait, before the
second (also when the second is the same thread's tcgen05.ld after an MMA it committed). Signals that
cross CTAs synchronize only at cluster scope: a wait that observes a phase another CTA arrived on (a
remote arrive, a multicast commit, a peer's TMA or st.async completing on the barrier) must be
``.acquire.cluster``, and a remote ``mbarrier.arrive`` must be ``.release.cluster``.

The lanes of a warp run together and share one clock. Ordering between lanes of one warp comes from
``bar.warp.sync`` (an epoch per warp); each lane's generic writes must be followed by its own
``fence.proxy.async`` before an async-proxy reader (TMA, MMA) may read them.
"""

from __future__ import annotations

import dataclasses
import re
import struct

from ptxkit import isa
from ptxkit.parse import Instr, Kernel
from ptxkit.values import ZERO, Acc, Elem, Fx, Rounded, SimValueError, merge_ranges

M32, M64 = (1 << 32) - 1, (1 << 64) - 1
RANK_SHIFT = 24  # shared::cluster addresses carry the CTA's rank in the cluster from bit 24
OFFSET_MASK = (1 << RANK_SHIFT) - 1
PARAM_BASE = 0x7F00_0000_0000  # where the simulated .param space lives (addresses of params)
EXIT = "exit"


class SimError(Exception):
    """The kernel did something the machine (or the PTX ISA) does not allow."""


class Deadlock(SimError):
    pass


# ------------------------------------------------------------------------------------------------
# happens-before
# ------------------------------------------------------------------------------------------------
def join(a: dict, b: dict) -> None:
    for k, v in b.items():
        if a.get(k, 0) < v:
            a[k] = v


class Pending:
    """The completion token of an asynchronous access, set once it completes."""

    __slots__ = ("token",)

    def __init__(self):
        self.token = None


def covered(vc: dict, token) -> bool:
    if isinstance(token, Pending):
        token = token.token
    if token is None:  # an access not complete yet
        return False
    key, val = token
    return vc.get(key, 0) >= val


@dataclasses.dataclass
class Access:
    kind: str  # "generic", "cpasync", "tma", "stasync", "mma", "tmastore", "tcgen05.ld", "alloc"
    token: object  # (key, value) or Pending: what a later access must have observed
    warp: object = None
    lane: int = -1
    epoch: int = 0
    fence: object = None  # generic writes: [token, epoch] of the writing lane's fence.proxy.async
    what: str = ""
    # a tcgen05.ld: what another thread's TMEM access must have observed (after_thread_sync) -- the
    # reading warp's first tcgen05.fence::before_thread_sync after the tcgen05.wait::ld
    xtoken: object = None


# ------------------------------------------------------------------------------------------------
# state
# ------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class TensorMap:
    """What the host encodes into a CUtensorMap: the tensor, the box and the swizzle. ``dims[i]``: the
    tensor mode (0 rows, 1 columns) that TMA coordinate i (innermost first) indexes."""

    tensor: str
    box: tuple
    dims: tuple
    swizzle: int | None
    elem_bytes: int
    dtype: str = ""  # the element type the map encodes: 'f16', 'bf16', 'f32'


@dataclasses.dataclass
class Global:
    """A global tensor: name, base address, (rows, cols), element strides, element bytes, element type."""

    name: str
    base: int
    shape: tuple
    strides: tuple
    elem_bytes: int
    dtype: str = ""  # 'f16', 'bf16', 'f32'

    @property
    def rows(self) -> int:
        return self.shape[0]

    @property
    def cols(self) -> int:
        return self.shape[1]

    def size_bytes(self) -> int:
        return (sum((s - 1) * d for s, d in zip(self.shape, self.strides)) + 1) * self.elem_bytes

    def addr(self, pos) -> int:
        return self.base + (pos[0] * self.strides[0] + pos[1] * self.strides[1]) * self.elem_bytes

    def coord(self, addr: int):
        off = addr - self.base
        if off < 0 or off % self.elem_bytes:
            return None
        idx = off // self.elem_bytes
        (s0, d0), (s1, d1) = sorted(zip(self.shape, self.strides), key=lambda t: -t[1])
        hi, lo = divmod(idx, d0)
        if hi >= s0 or lo >= s1 * d1 or lo % d1:
            return None
        pos = {d0: hi, d1: lo // d1}
        return pos[self.strides[0]], pos[self.strides[1]]


class Barrier:
    __slots__ = ("count", "pending", "tx", "phase", "vc", "phase_vcs", "key", "inited_by", "remote", "phase_remote")

    def __init__(self, key, count, inited_by=None):
        self.key = key
        self.count = count
        self.pending = count
        self.tx = 0
        self.phase = 0
        self.vc: dict = {}
        self.phase_vcs: list = []
        self.inited_by = inited_by  # (warp key, clock) of the mbarrier.init
        self.remote: set = set()  # ranks of other CTAs that signalled the phase in progress
        self.phase_remote: list = []  # per completed phase: the other CTAs that signalled it


class Cta:
    def __init__(self, rank: int, ctaid: tuple):
        self.rank = rank
        self.ctaid = ctaid
        self.smem: dict = {}  # byte offset -> (size, value)
        self.meta: dict = {}  # 16-byte chunk -> [last write Access, [reads since]]
        self.barriers: dict = {}
        self.tmem_alloc: dict = {}  # column base -> columns
        self.relinquished = False
        self.tmem: dict = {}  # (col base, cols) -> region (see _mma)
        self.tmem_meta: dict = {}  # (lane quarter, col // 32) -> [last MMA write Access, [reads]]
        self.warps: list = []
        self.exited = False
        self.exit_vc: dict = {}
        self.remote: list = []  # (what, token) of accesses other CTAs made to this CTA's smem


class Warp:
    def __init__(self, cta: Cta, wid: int, nthreads: int):
        self.cta = cta
        self.wid = wid
        self.key = ("w", cta.rank, wid)
        self.nthreads = nthreads
        self.regs: dict = {}
        self.stack = [[0, (1 << nthreads) - 1, None]]  # [pc, active mask, reconvergence pc]
        self.done = False
        self.blocked = None
        self.vc = {self.key: 1}
        self.epoch = 0
        self.unfenced: list = []  # (lane, Access) of generic writes not yet followed by that lane's fence
        self.pending_mma: list = []  # Pending tokens of MMA accesses since the last commit
        self.commits = 0
        self.ld_pending: list = []  # Pending tokens of tcgen05.ld not yet waited
        self.ld_issued: list = []  # tcgen05.ld accesses not yet waited (their xtoken waits for a fence)
        self.poisoned: set = set()  # registers a tcgen05.ld writes, until tcgen05.wait::ld
        self.cp_groups: dict = {}  # lane -> committed cp.async groups (lists of Accesses), last open
        self.bulk_groups: dict = {}  # lane -> committed TMA-store groups (lists of Pending), last open
        self.cluster_arrivals = 0
        self.bar_wait = None  # (named barrier key, generation) while waiting at bar.sync
        self.red_gen = 0  # the generation of the barrier.red this warp last arrived at
        self.grid_dep_waited = False  # griddepcontrol.wait executed (programmatic dependent launch)
        self.release_vc: dict = {}  # the clock as of the warp's last release fence
        self.tc_vc: dict = {}  # the clock as of the last tcgen05.fence::after_thread_sync: what TMEM accesses follow
        self.tc_before = 0  # tcgen05.fence::before_thread_sync executed so far
        self.ld_waited: list = []  # tcgen05.ld accesses waited (wait::ld) but not yet fenced before a sync

    def tick(self) -> int:
        self.vc[self.key] += 1
        return self.vc[self.key]

    def name(self) -> str:
        return f"cta {self.cta.rank} warp {self.wid}"


def _mask_lanes(mask: int) -> list:
    return [i for i in range(32) if mask >> i & 1]


class Machine:
    """One cluster of a launch. ``run()`` executes it; problems land in ``errors``; stores in ``c_out``."""

    # report a CTA-scope wait that observes another CTA's signal, and a CTA-scope remote arrive (the
    # sm100 kernels' rule since issue 19; ``sm90kit.machine90.Sm90Machine`` does not apply it)
    CLUSTER_SCOPE_RULE = True

    def __init__(self, kernel: Kernel, *, params: dict, tensormaps: dict, globals_: list, threads: int,
                 cluster: int, first_ctaid: tuple, c_out: dict, errors: list, smem_bytes: int,
                 max_steps: int = 4_000_000):
        self.k = kernel
        self.params = params
        self.param_names = [p.name for p in kernel.params]
        self.tensormaps = tensormaps  # param name -> TensorMap
        self.globals = globals_
        self.c_out = c_out
        self.errors = errors
        self.max_steps = max_steps
        self.threads = threads
        self.smem_bytes = smem_bytes  # the dynamic smem the launch asks for: every access must lie inside
        self.ctas = [Cta(r, (first_ctaid[0] + r, first_ctaid[1], first_ctaid[2])) for r in range(cluster)]
        for cta in self.ctas:
            for w in range(-(-threads // 32)):
                cta.warps.append(Warp(cta, w, min(32, threads - 32 * w)))
        self.cluster_bar = {"arrived": 0, "phase": 0, "vc": {}, "phase_vcs": []}
        self.named: dict = {}
        self.red_popc: dict = {}  # ((cta, barrier id), generation) -> barrier.red.popc's sum
        self.steps = 0
        self.mma_kinds: set = set()  # (idesc, A descriptor, B descriptor) of the MMAs, start addresses aside
        self.ipdom = _post_dominators(kernel)
        self.pdl = any(i.op.startswith("griddepcontrol") for i in kernel.instrs)  # launched as a PDL kernel
        self.handlers = [self._compile(ins) for ins in kernel.instrs]

    def error(self, msg: str) -> None:
        if len(self.errors) < 100 and msg not in self.errors:
            self.errors.append(msg)

    # --------------------------------------------------------------------------------------------
    # scheduling
    # --------------------------------------------------------------------------------------------
    def run(self) -> None:
        warps = [w for cta in self.ctas for w in cta.warps]
        while True:
            live = [w for w in warps if not w.done]
            if not live:
                break
            progressed = False
            for w in live:
                progressed |= self._run_warp(w, 64)
            if not progressed:
                why = "; ".join(f"{w.name()} at {self.k.instrs[w.stack[-1][0]].text.strip()[:60]!r} ({w.blocked})"
                                for w in live[:10])
                raise Deadlock(f"no warp can proceed, {len(live)} waiting: {why}")
            if self.steps > self.max_steps:
                raise SimError(f"more than {self.max_steps} warp instructions: an endless loop?")
            for cta in self.ctas:
                if not cta.exited and all(w.done for w in cta.warps):
                    self._cta_exit(cta)

    def _run_warp(self, w: Warp, quantum: int) -> bool:
        progressed = False
        instrs, handlers = self.k.instrs, self.handlers
        for _ in range(quantum):
            if w.done:
                return progressed
            top = w.stack[-1]
            if top[1] == 0 or top[0] == top[2]:
                w.stack.pop()
                if not w.stack:
                    w.done = True
                    return True
                continue
            pc = top[0]
            ins = instrs[pc]
            mask = top[1]
            if ins.pred is not None and not ins.op.startswith("bra"):
                reg = w.regs.get(ins.pred.lstrip("!"))
                neg = ins.pred[0] == "!"
                lanes = [i for i in _mask_lanes(mask) if bool(reg[i]) != neg]
            else:
                lanes = _mask_lanes(mask)
            w.blocked = None
            nxt = handlers[pc](w, lanes) if lanes else None
            if w.blocked is not None:
                return progressed
            self.steps += 1
            progressed = True
            if nxt is None:
                top[0] = pc + 1
            elif nxt is EXIT:
                gone = sum(1 << i for i in lanes)
                for entry in w.stack:
                    entry[1] &= ~gone
                top[0] = pc + 1
            else:
                self._branch(w, ins, top, nxt)
        return progressed

    def _branch(self, w: Warp, ins: Instr, top: list, target: int) -> None:
        pc, mask = top[0], top[1]
        if ins.pred is None:
            top[0] = target
            return
        reg = w.regs[ins.pred.lstrip("!")]
        neg = ins.pred[0] == "!"
        taken = 0
        for i in _mask_lanes(mask):
            if bool(reg[i]) != neg:
                taken |= 1 << i
        if taken == mask:
            top[0] = target
        elif taken == 0:
            top[0] = pc + 1
        else:  # divergence: both paths run, and meet again at the immediate post-dominator
            rpc = self.ipdom.get(pc)
            top[0] = rpc if rpc is not None else len(self.k.instrs)
            w.stack.append([pc + 1, mask & ~taken, rpc])
            w.stack.append([target, taken, rpc])

    # --------------------------------------------------------------------------------------------
    # operands
    # --------------------------------------------------------------------------------------------
    def _getter(self, op: str):
        op = op.strip()
        if op.startswith("%") or re.match(r"^P\d+#\d+$", op):
            special = _SPECIAL.get(op)
            if special:
                return special
            return lambda w, l, r=op: w.regs[r][l] if r in w.regs else 0  # never written: 0
        if op == "_":
            return lambda w, l: 0
        if re.match(r"^-?\d+$", op) or op.lower().startswith(("0x", "-0x")):
            v = int(op, 0)
            return lambda w, l, v=v: v
        if op.startswith("0f"):
            v = int(op[2:], 16)
            return lambda w, l, v=v: struct.unpack("<f", struct.pack("<I", v))[0]
        if op == "__dynamic_shmem__0":
            return lambda w, l: w.cta.rank << RANK_SHIFT
        if op in self.param_names:
            v = PARAM_BASE + (self.param_names.index(op) << 12)
            return lambda w, l, v=v: v
        raise SimError(f"operand {op!r} is not supported")

    def _addr(self, op: str):
        inner = op.strip()[1:-1].strip()
        m = re.match(r"^(.*?)\s*\+\s*(-?\d+)$", inner)
        base, off = (m.group(1), int(m.group(2))) if m else (inner, 0)
        g = self._getter(base)
        mask = M32 if re.match(r"^%r\d", base) else M64  # the address wraps at its register's width
        return lambda w, l: (g(w, l) + off) & mask

    def _vec(self, op: str) -> list:
        return [x.strip() for x in op.strip()[1:-1].split(",")]

    def _set(self, w: Warp, reg: str, lane: int, value) -> None:
        if reg == "_":
            return
        regs = w.regs.get(reg)
        if regs is None:
            regs = w.regs[reg] = [0] * 32
        regs[lane] = value
        if w.poisoned and reg in w.poisoned:
            w.poisoned.discard(reg)

    def _read(self, w: Warp, ins: Instr, reg: str, lane: int):
        if reg in w.poisoned:
            self.error(f"{w.name()}: {ins.text.strip()[:80]} reads {reg} of a tcgen05.ld before tcgen05.wait::ld")
        return w.regs[reg][lane] if reg in w.regs else 0

    # --------------------------------------------------------------------------------------------
    # compile one instruction into a handler(w, lanes) -> None | branch target | EXIT
    # --------------------------------------------------------------------------------------------
    def _compile(self, ins: Instr):
        op, a = ins.op, ins.args
        base = ins.base
        if op.startswith("bra"):
            target = self.k.labels[a[0]]
            return lambda w, lanes: target
        if op in ("ret", "exit"):
            return lambda w, lanes: EXIT
        if base in _ALU_OPS:
            return self._alu(ins)
        handler = getattr(self, "_op_" + base.replace("-", "_"), None)
        if handler is None:
            raise SimError(f"no semantics for {op!r}: {ins.text.strip()}")
        return handler(ins)

    def _alu(self, ins: Instr):
        t = _type(ins.op)
        bits, signed = _BITS[t], t[0] == "s"
        dst = ins.args[0]
        srcs = [self._getter(x) for x in ins.args[1:]]
        src_regs = [x for x in ins.args[1:] if x.startswith("%")]
        op = ins.op
        float_op = t == "f32"

        def h(w, lanes):
            if w.poisoned and any(r in w.poisoned for r in src_regs):
                self._read(w, ins, next(r for r in src_regs if r in w.poisoned), 0)
            for l in lanes:
                vals = [g(w, l) for g in srcs]
                if float_op:
                    try:
                        res = _float_op(op, vals)
                    except SimValueError as e:
                        self.error(f"{w.name()}: {ins.text.strip()[:60]}: {e}")
                        res = vals[0]
                else:
                    for v in vals:
                        if not isinstance(v, int):
                            raise SimError(f"{ins.text.strip()}: integer arithmetic on {v!r}")
                    res = _arith(op, vals, bits, signed)
                self._set(w, dst, l, res)
        return h

    def _op_mov(self, ins: Instr):
        dst, src = ins.args
        if dst.startswith("{"):  # unpack a 64-bit register into two 32-bit halves
            lo_r, hi_r = self._vec(dst)
            g = self._getter(src)

            def h(w, lanes):
                for l in lanes:
                    v = g(w, l)
                    lo, hi = (v[0], v[1]) if isinstance(v, tuple) else (v & M32, v >> 32 & M32)
                    self._set(w, lo_r, l, lo)
                    self._set(w, hi_r, l, hi)
            return h
        if src.startswith("{"):  # pack
            lo_g, hi_g = (self._getter(x) for x in self._vec(src))
            regs = self._vec(src)

            def h(w, lanes):
                pois = w.poisoned and any(r in w.poisoned for r in regs)
                for l in lanes:
                    lo, hi = lo_g(w, l), hi_g(w, l)
                    self._set(w, dst, l, lo | hi << 32 if isinstance(lo, int) and isinstance(hi, int) else (lo, hi))
                if pois:
                    w.poisoned.add(dst)
            return h
        g = self._getter(src)
        src_reg = src if src.startswith("%") else None

        def h(w, lanes):
            pois = src_reg is not None and src_reg in w.poisoned
            for l in lanes:
                self._set(w, dst, l, g(w, l))
            if pois:
                w.poisoned.add(dst)
        return h

    def _op_setp(self, ins: Instr):
        parts = ins.op.split(".")
        cmp, t = parts[1], parts[-1]
        bits, signed = _BITS[t], t[0] == "s"
        dst = ins.args[0].split("|")[0]
        ga, gb = self._getter(ins.args[1]), self._getter(ins.args[2])

        def h(w, lanes):
            for l in lanes:
                x, y = _norm(ga(w, l), bits, signed), _norm(gb(w, l), bits, signed)
                self._set(w, dst, l, _CMP[cmp](x, y))
        return h

    def _op_selp(self, ins: Instr):
        dst, a, b, p = ins.args
        ga, gb, gp = self._getter(a), self._getter(b), self._getter(p)

        def h(w, lanes):
            for l in lanes:
                self._set(w, dst, l, ga(w, l) if gp(w, l) else gb(w, l))
        return h

    def _op_cvt(self, ins: Instr):
        parts = ins.op.split(".")
        dt, st = parts[-2], parts[-1]
        if dt in _HALF and st == "f32":
            return self._cvt_half(ins, _HALF[dt])
        if dt == "f32" and st in ("bf16", "f16"):
            return self._alu(ins)  # the widening: an Fx (``_float_op``)
        g = self._getter(ins.args[1])
        dst = ins.args[0]

        def h(w, lanes):
            for l in lanes:
                v = _norm(g(w, l), _BITS[st], st[0] == "s")
                self._set(w, dst, l, v & ((1 << _BITS[dt]) - 1))
        return h

    def _cvt_half(self, ins: Instr, dtype: str):
        """cvt.rn.{f16,bf16}[x2].f32: fp32 accumulator values rounded to a 16-bit C element. The x2 form
        packs two, ``d = {a -> upper half, b -> lower half}``: a tuple (lower, upper) here, which a 32-bit
        store writes as two 16-bit elements (lower half at the lower address)."""
        dst = ins.args[0]
        getters = [self._getter(x) for x in ins.args[1:]]
        regs = [x for x in ins.args[1:] if x.startswith("%")]
        pair = ins.op.split(".")[-2].endswith("x2")

        def one(w, ins, v):
            if isinstance(v, (Acc, Fx, float)) or v is ZERO or v == 0:
                return Rounded(v, dtype)
            self.error(f"{w.name()}: {ins.text.strip()[:60]} rounds {v!r}, not an fp32 value of C")
            return Rounded(v, dtype)

        def h(w, lanes):
            for r in regs:
                if r in w.poisoned:
                    self._read(w, ins, r, 0)
            for l in lanes:
                vals = [one(w, ins, g(w, l)) for g in getters]
                self._set(w, dst, l, (vals[1], vals[0]) if pair else vals[0])
        return h

    def _op_griddepcontrol(self, ins: Instr):
        """Programmatic dependent launch: ``griddepcontrol.wait`` blocks a thread until the grids it depends
        on have completed and their memory is visible. A kernel with griddepcontrol instructions is one
        launched that way (it may start while the previous grid still runs), so no thread of it may touch
        global memory before it has waited (the model runs one grid: the wait itself returns at once).
        ``launch_dependents`` only lets the next grid start early."""
        if ins.op.startswith("griddepcontrol.wait"):
            def h(w, lanes):
                w.grid_dep_waited = True
            return h
        return lambda w, lanes: None

    def _global_access(self, w: Warp, what: str) -> None:
        """A thread of ``w`` touches global memory: in a PDL kernel only after its griddepcontrol.wait."""
        if self.pdl and not w.grid_dep_waited:
            self.error(f"{w.name()}: {what} before griddepcontrol.wait (the previous grid may still write it)")

    def _op_cvta(self, ins: Instr):
        g = self._getter(ins.args[1])
        dst = ins.args[0]

        def h(w, lanes):
            for l in lanes:
                self._set(w, dst, l, g(w, l))
        return h

    def _op_mapa(self, ins: Instr):
        dst, a, r = ins.args
        ga, gr = self._getter(a), self._getter(r)

        def h(w, lanes):
            for l in lanes:
                rank = gr(w, l)
                if not 0 <= rank < len(self.ctas):
                    self.error(f"{w.name()}: mapa to CTA rank {rank}, outside the cluster of {len(self.ctas)}")
                self._set(w, dst, l, (ga(w, l) & OFFSET_MASK) | rank << RANK_SHIFT)
        return h

    def _op_shfl(self, ins: Instr):
        dst, a, src_lane = ins.args[0], ins.args[1], ins.args[2]
        ga, gs = self._getter(a), self._getter(src_lane)

        def h(w, lanes):
            vals = {l: ga(w, l) for l in lanes}
            for l in lanes:
                s = gs(w, l) & 31
                if s not in vals:
                    self.error(f"{w.name()}: shfl.sync reads lane {s}, which is not active")
                self._set(w, dst, l, vals.get(s, 0))
        return h

    def _op_elect(self, ins: Instr):
        d, p = (x.strip() for x in ins.args[0].split("|"))
        member = int(ins.args[1], 0) & 0xFFFFFFFF

        def h(w, lanes):
            # every lane the membermask names must execute the elect.sync: one lane alone under a full mask
            # (an elect inside `if tidx == 0:`) never completes on the GPU
            missing = member & ((1 << w.nthreads) - 1) & ~sum(1 << l for l in lanes)
            if missing:
                self.error(f"{w.name()}: elect.sync with membermask {member:#010x} executed by lanes {lanes} only; "
                           f"lanes {_mask_lanes(missing)} of the mask never join it (the warp hangs)")
            leader = lanes[0]
            for l in lanes:
                self._set(w, d, l, leader)
                self._set(w, p, l, 1 if l == leader else 0)
        return h

    def _op_ld(self, ins: Instr):
        space = ins.op.split(".")[1]
        dsts = self._vec(ins.args[0]) if ins.args[0].startswith("{") else [ins.args[0]]
        t = _type(ins.op)
        size = _BITS[t] // 8
        ga = self._addr(ins.args[1])
        if space == "param":
            def h(w, lanes):
                for l in lanes:
                    addr = ga(w, l)
                    idx, off = divmod(addr - PARAM_BASE, 4096)
                    raw = self.params[self.param_names[idx]]
                    for j, d in enumerate(dsts):
                        o = off + j * size
                        self._set(w, d, l, int.from_bytes(raw[o:o + size], "little"))
            return h
        if space == "shared::cluster":
            def h(w, lanes):
                acc = self._generic_access(w, "ld.shared::cluster")
                for l in lanes:
                    addr = ga(w, l)
                    r = addr >> RANK_SHIFT
                    if not 0 <= r < len(self.ctas):
                        raise SimError(f"{w.name()}: {ins.text.strip()[:70]}: address 0x{addr:x} outside the cluster")
                    cta = self.ctas[r]
                    self._remote(w, cta, "an ld.shared::cluster", acc.token)
                    for j, d in enumerate(dsts):
                        a = (addr & OFFSET_MASK) + j * size
                        self._set(w, d, l, self._smem_read(cta, a, size, dataclasses.replace(acc, lane=l), w))
            return h
        if space == "global":
            what = ins.text.strip()[:70]

            def h(w, lanes):
                self._global_access(w, "ld.global")
                for l in lanes:
                    addr = ga(w, l)
                    for j, d in enumerate(dsts):
                        self._set(w, d, l, self._global_load(addr + j * size, size, f"{w.name()}: {what}"))
            return h
        if space == "shared":
            def h(w, lanes):
                acc = self._generic_access(w, "ld.shared")
                for l in lanes:
                    addr = ga(w, l)
                    cta = self._own_cta(w, addr, ins)
                    for j, d in enumerate(dsts):
                        a = (addr & OFFSET_MASK) + j * size
                        self._set(w, d, l, self._smem_read(cta, a, size, dataclasses.replace(acc, lane=l), w))
            return h
        raise SimError(f"no semantics for {ins.op}")

    def _op_st(self, ins: Instr):
        parts = ins.op.split(".")
        space = parts[1]
        if space == "async":
            return self._st_async(ins)
        t = _type(ins.op)
        size = _BITS[t] // 8
        ga = self._addr(ins.args[0])
        srcs = self._vec(ins.args[1]) if ins.args[1].startswith("{") else [ins.args[1]]
        getters = [self._getter(s) for s in srcs]
        if space == "shared":
            def h(w, lanes):
                for s in srcs:
                    if s in w.poisoned:
                        self._read(w, ins, s, 0)
                acc = self._generic_access(w, "st.shared")
                for l in lanes:
                    addr = ga(w, l)
                    cta = self._own_cta(w, addr, ins)
                    for j, g in enumerate(getters):
                        wacc = dataclasses.replace(acc, lane=l)
                        for off, part, v in _parts(g(w, l), size):
                            self._smem_write(cta, (addr & OFFSET_MASK) + j * size + off, part, v, wacc, w)
                        w.unfenced.append((l, wacc))
            return h
        if space == "global":
            def h(w, lanes):
                for s in srcs:
                    if s in w.poisoned:
                        self._read(w, ins, s, 0)
                self._global_access(w, "st.global")
                for l in lanes:
                    addr = ga(w, l)
                    for j, g in enumerate(getters):
                        for off, part, v in _parts(g(w, l), size):
                            self._global_store(addr + j * size + off, part, v, f"{w.name()} st.global")
            return h
        raise SimError(f"no semantics for {ins.op}")

    # --------------------------------------------------------------------------------------------
    # shared memory and the race checks
    # --------------------------------------------------------------------------------------------
    def _generic_access(self, w: Warp, what: str) -> Access:
        c = w.tick()
        return Access("generic", (w.key, c), warp=w, epoch=w.epoch, what=what)

    def _own_cta(self, w: Warp, addr: int, ins: Instr) -> Cta:
        r = addr >> RANK_SHIFT
        if r != w.cta.rank:
            self.error(f"{w.name()}: {ins.text.strip()[:70]} uses CTA {r}'s smem through a shared::cta access")
        return w.cta

    def _ordered(self, prev: Access, cur: Access, vc: dict) -> bool:
        """prev happens-before cur (cur's thread has the clock ``vc``)."""
        if prev.warp is not None and prev.warp is cur.warp:
            if prev.kind in ("generic", "alloc") and cur.kind in ("generic", "alloc"):
                return prev.lane == cur.lane or prev.epoch < cur.epoch
        return covered(vc, prev.token)

    def _visible(self, write: Access, read: Access, vc: dict) -> bool:
        """The data of ``write`` is visible to ``read``."""
        if write.kind in ("generic", "alloc", "cpasync-done") and read.kind not in ("generic", "alloc"):
            # an async-proxy reader: the writing lane fenced after its write, and the fence is ordered
            if write.fence is None:
                return False
            ftoken, fepoch = write.fence
            if write.warp is read.warp:
                return write.lane == read.lane or fepoch < read.epoch
            return covered(vc, ftoken)
        if write.kind == "cpasync":
            return False  # not yet waited for (cp.async.wait_group)
        return self._ordered(write, read, vc)

    def _bounds(self, cta: Cta, addr: int, size: int, what: str) -> None:
        if addr + size > self.smem_bytes:
            self.error(f"cta {cta.rank}: {what} accesses smem 0x{addr:x}, past the {self.smem_bytes} B the launch "
                       f"asks for")

    def _smem_write(self, cta: Cta, addr: int, size: int, value, acc: Access, w: Warp | None) -> None:
        self._bounds(cta, addr, size, acc.what)
        vc = w.vc if w is not None else {}
        for chunk in range(addr >> 4, (addr + size - 1 >> 4) + 1):
            meta = cta.meta.get(chunk)
            if meta is not None and meta[0] is acc:
                continue  # another element of the same access
            if meta is not None:
                last, reads = meta
                for r in reads:
                    if r.warp is None or r.warp is not acc.warp or r.kind != "generic" or acc.kind != "generic":
                        if not self._ordered(r, acc, vc):
                            self.error(f"cta {cta.rank}: {acc.what} overwrites smem 0x{chunk << 4:x} while "
                                       f"{r.what} may still read it")
                if last is not None and not self._ordered(last, acc, vc) and not (
                        last.kind == acc.kind == "generic" and last.warp is acc.warp):
                    self.error(f"cta {cta.rank}: {acc.what} writes smem 0x{chunk << 4:x} unordered with "
                               f"{last.what}")
            cta.meta[chunk] = [acc, []]
        for a in [x for x in range(addr - 7, addr + size) if x in cta.smem]:
            s, _ = cta.smem[a]
            if a + s > addr and a < addr + size:
                del cta.smem[a]
        cta.smem[addr] = (size, value)

    def _smem_read(self, cta: Cta, addr: int, size: int, acc: Access, w: Warp | None):
        self._bounds(cta, addr, size, acc.what)
        vc = w.vc if w is not None else {}
        for chunk in range(addr >> 4, (addr + size - 1 >> 4) + 1):
            meta = cta.meta.get(chunk)
            if meta is None:
                cta.meta[chunk] = meta = [None, []]
            last = meta[0]
            if meta[1] and meta[1][-1] is acc:
                continue
            if last is not None and not self._visible(last, acc, vc):
                self.error(f"cta {cta.rank}: {acc.what} reads smem 0x{chunk << 4:x} before {last.what} is visible "
                           f"to it")
            meta[1].append(acc)
        entry = cta.smem.get(addr)
        if entry is None:
            return 0 if acc.kind == "generic" else ZERO
        if entry[0] != size:
            self.error(f"cta {cta.rank}: {acc.what} reads {size} B at 0x{addr:x}, written as {entry[0]} B")
        return entry[1]

    def _global_load(self, addr: int, size: int, what: str):
        """What an ``ld.global`` of ``size`` bytes at ``addr`` reads: an element of a global tensor (an
        ``Elem`` tag in its coordinates), or a pair of them (a 32-bit load of a 16-bit tensor: (lower,
        upper)). Outside every tensor, misaligned, or from C (its stores are what the check reads): reported, 0."""
        g = self._global_at(addr)
        if g is None or g.name == "C" or size not in (g.elem_bytes, 2 * g.elem_bytes):
            where = "outside every tensor" if g is None else f"in {g.name} ({g.elem_bytes}-B elements)"
            self.error(f"{what}: a {size}-B load at 0x{addr:x}, {where}")
            return 0
        out = []
        for off in range(0, size, g.elem_bytes):
            rc = g.coord(addr + off)
            if rc is None:
                self.error(f"{what}: a load at 0x{addr + off:x} outside {g.name}'s {g.shape[0]} x {g.shape[1]} "
                           f"elements (or misaligned)")
                return 0
            out.append(Elem(g.name, *rc))
        return out[0] if len(out) == 1 else tuple(out)

    def _global_store(self, addr: int, size: int, value, what: str) -> None:
        for g in self.globals:
            if g.name == "C":
                rc = g.coord(addr)
                if rc is None or size != g.elem_bytes:
                    self.error(f"{what}: store of {size} B at 0x{addr:x} outside C (or misaligned)")
                    return
                self.c_out.setdefault(rc, []).append(value)
                return

    # --------------------------------------------------------------------------------------------
    # barriers
    # --------------------------------------------------------------------------------------------
    def _barrier(self, addr: int, w: Warp, ins: Instr, remote_ok: bool = False) -> tuple:
        r = addr >> RANK_SHIFT
        if not 0 <= r < len(self.ctas):
            raise SimError(f"{w.name()}: {ins.text.strip()[:70]}: mbarrier address 0x{addr:x} outside the cluster")
        cta = self.ctas[r]
        if r != w.cta.rank and not remote_ok:
            self.error(f"{w.name()}: {ins.text.strip()[:70]} uses CTA {r}'s mbarrier through shared::cta")
        b = cta.barriers.get(addr & OFFSET_MASK)
        if b is None:
            self.error(f"{w.name()}: {ins.text.strip()[:70]} uses an mbarrier at 0x{addr & OFFSET_MASK:x} "
                       f"of CTA {r} that was never initialised")
            b = cta.barriers[addr & OFFSET_MASK] = Barrier(("b", r, addr & OFFSET_MASK), 1 << 30)
        elif b.inited_by is not None and b.inited_by[0] != w.key and not covered(w.vc, b.inited_by):
            self.error(f"{w.name()}: {ins.text.strip()[:70]} uses mbarrier 0x{addr & OFFSET_MASK:x} of CTA {r} "
                       f"before its initialisation is known to it (no fence.mbarrier_init + barrier after init)")
        return cta, b

    def _remote(self, w: Warp, cta: Cta, what: str, token) -> None:
        if cta is w.cta:
            return
        if cta.exited:
            self.error(f"{w.name()}: {what} reaches CTA {cta.rank} after it exited")
        cta.remote.append((what, token))

    def _arrive(self, b: Barrier, vc: dict, count: int = 1, tx: int = 0, src: int | None = None) -> None:
        if src is not None and src != b.key[1]:
            b.remote.add(src)
        join(b.vc, vc)
        b.tx += tx
        b.pending -= count
        if b.pending < 0:
            self.error(f"mbarrier {b.key}: more arrivals than its count {b.count} in phase {b.phase}")
            b.pending = 0
        self._maybe_complete(b)

    def _complete_tx(self, b: Barrier, nbytes: int, src: int | None = None) -> int:
        """Transaction bytes land on ``b`` (sent by CTA ``src``); returns the phase they count toward."""
        if src is not None and src != b.key[1]:
            b.remote.add(src)
        phase = b.phase
        b.tx -= nbytes
        self._maybe_complete(b)
        return phase

    def _maybe_complete(self, b: Barrier) -> None:
        if b.pending == 0 and b.tx == 0:
            vc = dict(b.vc)
            vc[b.key] = max(vc.get(b.key, 0), b.phase + 1)
            b.phase_vcs.append(vc)
            b.phase_remote.append(frozenset(b.remote))
            b.phase += 1
            b.pending = b.count
            b.vc = {}
            b.remote = set()
        elif b.pending == 0 and b.tx < 0:
            self.error(f"mbarrier {b.key}: phase {b.phase} has its arrivals and {-b.tx} more transaction bytes "
                       f"than expected")

    def _op_mbarrier(self, ins: Instr):
        op, a = ins.op, ins.args
        if op.startswith("mbarrier.init"):
            ga, gc = self._addr(a[0]), self._getter(a[1])

            def h(w, lanes):
                for l in lanes:
                    addr = ga(w, l)
                    off = addr & OFFSET_MASK
                    self._own_cta(w, addr, ins)
                    b = w.cta.barriers.get(off)
                    if b is not None and (b.pending != b.count or b.tx):
                        self.error(f"{w.name()}: mbarrier.init of 0x{off:x} while a phase is in progress")
                    w.cta.barriers[off] = Barrier(("b", w.cta.rank, off), gc(w, l), (w.key, w.tick()))
            return h
        if op.startswith("mbarrier.try_wait") or op.startswith("mbarrier.test_wait"):
            dst = a[0]
            ga, gp = self._addr(a[1]), self._getter(a[2])
            cluster_scope = ".cluster." in op + "."  # .acquire.cluster; the default is .acquire.cta

            def h(w, lanes):
                done_all = True
                for l in lanes:
                    cta, b = self._barrier(ga(w, l), w, ins)
                    parity = gp(w, l) & 1
                    done = b.phase % 2 != parity
                    if done and b.phase:
                        # the latest completed phase with this parity
                        p = b.phase - 1 if (b.phase - 1) % 2 == parity else b.phase - 2
                        if p >= 0:
                            join(w.vc, b.phase_vcs[p])
                            if b.phase_remote[p] and not cluster_scope and self.CLUSTER_SCOPE_RULE:
                                self.error(f"{w.name()}: {ins.text.strip()[:70]} acquires at CTA scope a phase of "
                                           f"mbarrier 0x{b.key[2]:x} that CTA {min(b.phase_remote[p])} signalled "
                                           f"(the wait must be .acquire.cluster)")
                    if not done:
                        done_all = False
                    self._set(w, dst, l, 1 if done else 0)
                if not done_all:
                    w.blocked = f"mbarrier.try_wait on {b.key} parity {parity}"
            return h
        if op.startswith("mbarrier.arrive") or op.startswith("mbarrier.expect_tx"):
            remote = "shared::cluster" in op
            expect = "expect_tx" in op
            arrive = op.startswith("mbarrier.arrive")
            ga = self._addr(a[1])
            g3 = self._getter(a[2]) if len(a) > 2 else None

            cluster_release = ".cluster." in op.replace("shared::cluster", "") + "."

            def h(w, lanes):
                for l in lanes:
                    cta, b = self._barrier(ga(w, l), w, ins, remote_ok=remote)
                    c = w.tick()
                    self._remote(w, cta, "a remote mbarrier arrive", (w.key, c))
                    if cta is not w.cta and arrive and not cluster_release and self.CLUSTER_SCOPE_RULE:
                        self.error(f"{w.name()}: {ins.text.strip()[:70]} arrives on CTA {cta.rank}'s mbarrier with "
                                   f"a CTA-scope release (a remote arrive must be .release.cluster)")
                    if expect:
                        tx = g3(w, l)
                        if arrive:
                            self._arrive(b, w.vc, 1, tx, src=w.cta.rank)
                        else:
                            b.tx += tx
                    else:
                        self._arrive(b, w.vc, g3(w, l) if g3 is not None else 1, src=w.cta.rank)
            return h
        raise SimError(f"no semantics for {op}")

    def _op_fence(self, ins: Instr):
        if ins.op.startswith("fence.proxy.async"):
            def h(w, lanes):
                c = w.tick()
                keep = []
                lanes_set = set(lanes)
                for lane, acc in w.unfenced:
                    if lane in lanes_set:
                        acc.fence = ((w.key, c), w.epoch)
                    else:
                        keep.append((lane, acc))
                w.unfenced = keep
            return h
        def release(w, lanes):
            # fence.mbarrier_init.release.cluster, fence.acq_rel / fence.sc: what this thread did so far is
            # released to whoever synchronizes with a later (even relaxed) arrival of it
            w.release_vc = dict(w.vc)
        return release

    def _op_membar(self, ins: Instr):
        return lambda w, lanes: None

    def _op_prefetch(self, ins: Instr):
        return lambda w, lanes: None

    def _op_bar(self, ins: Instr):
        if ins.op.startswith("bar.warp.sync"):
            def h(w, lanes):
                alive = w.stack[0][1]
                if sum(1 << i for i in lanes) != alive:
                    self.error(f"{w.name()}: bar.warp.sync with {len(lanes)} of the warp's lanes converged")
                w.epoch += 1
                w.tick()
            return h
        gid = self._getter(ins.args[0])
        gcount = self._getter(ins.args[1]) if len(ins.args) > 1 else None
        return self._named_barrier(ins, gid, gcount)

    def _op_barrier(self, ins: Instr):
        if ins.op.startswith("barrier.cluster.arrive"):
            relaxed = ".relaxed" in ins.op  # no release: the arrival orders none of the thread's earlier accesses

            def h(w, lanes):
                st = self.cluster_bar
                w.cluster_arrivals += 1
                # a relaxed arrival releases only what a fence before it released (fence.mbarrier_init)
                join(st["vc"], w.release_vc if relaxed else w.vc)
                w.tick()
                st["arrived"] += len(lanes)
                if st["arrived"] == self.threads * len(self.ctas):
                    vc = dict(st["vc"])
                    st["phase_vcs"].append(vc)
                    st["phase"] += 1
                    st["arrived"] = 0
                    st["vc"] = {}
            return h
        if ins.op.startswith("barrier.cluster.wait"):
            def h(w, lanes):
                st = self.cluster_bar
                if st["phase"] < w.cluster_arrivals:
                    w.blocked = "barrier.cluster.wait"
                    return
                join(w.vc, st["phase_vcs"][w.cluster_arrivals - 1])
                w.epoch += 1
            return h
        if ins.op.startswith("barrier.red"):
            return self._reduce_barrier(ins)
        gid = self._getter(ins.args[0])
        gcount = self._getter(ins.args[1]) if len(ins.args) > 1 else None
        return self._named_barrier(ins, gid, gcount)

    def _reduce_barrier(self, ins: Instr):
        """``barrier.red.popc.u32 d, id, count, {!}p``: the named barrier's wait, and d = how many of the threads that
        arrived in that generation had p set (the active lanes of each warp)."""
        if ".popc" not in ins.op:
            raise SimError(f"{ins.text.strip()[:80]}: only barrier.red.popc is supported")
        dst, pred = ins.args[0], ins.args[-1].strip()
        gid = self._getter(ins.args[1])
        gp, negate = self._getter(pred.lstrip("!")), pred.startswith("!")
        wait = self._named_barrier(ins, gid, self._getter(ins.args[2]) if len(ins.args) == 4 else None)

        def h(w, lanes):
            key = (w.cta.rank, gid(w, lanes[0]))
            if w.bar_wait is None:  # arriving: count this warp's set predicates into the generation's sum
                gen = self.named[key]["gen"] if key in self.named else 0
                w.red_gen = gen
                self.red_popc[(key, gen)] = self.red_popc.get((key, gen), 0) + sum(
                    bool(gp(w, l)) != negate for l in lanes)
            wait(w, lanes)
            if w.bar_wait is None:  # released
                for l in lanes:
                    self._set(w, dst, l, self.red_popc[(key, w.red_gen)])
        return h

    def _named_barrier(self, ins: Instr, gid, gcount):
        def h(w, lanes):
            bid = gid(w, lanes[0])
            count = gcount(w, lanes[0]) if gcount is not None else self.threads
            key = (w.cta.rank, bid)
            st = self.named.setdefault(key, {"arrived": 0, "gen": 0, "vc": {}, "count": count, "vcs": []})
            if w.bar_wait is None:
                if st["arrived"] and st["count"] != count:
                    self.error(f"{w.name()}: bar.sync {bid} with count {count}, others use {st['count']}")
                st["count"] = count
                join(st["vc"], w.vc)
                w.tick()
                st["arrived"] += 32  # a warp arrives whole
                w.bar_wait = (key, st["gen"])
                if st["arrived"] >= count:
                    if st["arrived"] > count:
                        self.error(f"bar.sync {bid}: {st['arrived']} threads arrived for a count of {count}")
                    st["vcs"].append(dict(st["vc"]))
                    st["gen"] += 1
                    st["arrived"] = 0
                    st["vc"] = {}
            gen = w.bar_wait[1]
            if st["gen"] <= gen:
                w.blocked = f"bar.sync {bid}"
                return
            join(w.vc, st["vcs"][gen])
            w.bar_wait = None
            w.epoch += 1  # a CTA barrier also orders the lanes of each participating warp
        return h

    # --------------------------------------------------------------------------------------------
    # asynchronous copies
    # --------------------------------------------------------------------------------------------
    def _op_cp(self, ins: Instr):
        op = ins.op
        if op.startswith("cp.async.bulk.tensor"):
            return self._tma_load(ins) if ".shared::cluster.global" in op or ".shared::cta.global" in op \
                else self._tma_store(ins)
        if op.startswith("cp.async.bulk.commit_group"):
            def h(w, lanes):
                for l in lanes:
                    w.bulk_groups.setdefault(l, [[]]).append([])
            return h
        if op.startswith("cp.async.bulk.wait_group"):
            if ".read" not in op:
                raise SimError(f"{op}: only .read waits are modelled")
            gn = self._getter(ins.args[0])

            def h(w, lanes):
                c = w.tick()
                for l in lanes:
                    groups = w.bulk_groups.setdefault(l, [[]])
                    n = gn(w, l)
                    committed = groups[:-1]
                    for grp in committed[:max(0, len(committed) - n)]:
                        for p in grp:
                            p.token = (w.key, c)
                    w.bulk_groups[l] = committed[max(0, len(committed) - n):] + [groups[-1]]
            return h
        if op.startswith("cp.async.commit_group"):
            def h(w, lanes):
                for l in lanes:
                    w.cp_groups.setdefault(l, [[]]).append([])
            return h
        if op.startswith("cp.async.wait_group") or op.startswith("cp.async.wait_all"):
            gn = self._getter(ins.args[0]) if ins.args else (lambda w, l: 0)

            def h(w, lanes):
                c = w.tick()
                for l in lanes:
                    groups = w.cp_groups.setdefault(l, [[]])
                    n = gn(w, l)
                    committed = groups[:-1]
                    for grp in committed[:max(0, len(committed) - n)]:
                        for acc in grp:
                            acc.kind = "cpasync-done"
                            acc.token = (w.key, c)
                            w.unfenced.append((l, acc))
                    w.cp_groups[l] = committed[max(0, len(committed) - n):] + [groups[-1]]
            return h
        if op.startswith("cp.async.cg") or op.startswith("cp.async.ca"):
            gd, gs = self._addr(ins.args[0]), self._addr(ins.args[1])
            size = int(ins.args[2])

            def h(w, lanes):
                self._global_access(w, "cp.async")
                for l in lanes:
                    dst, src = gd(w, l), gs(w, l)
                    cta = self._own_cta(w, dst, ins)
                    g = self._global_at(src)
                    if g is None:
                        self.error(f"{w.name()}: cp.async from 0x{src:x}, outside A and B")
                        continue
                    acc = Access("cpasync", None, warp=w, lane=l, epoch=w.epoch, what=f"{w.name()} cp.async")
                    w.tick()
                    for j in range(0, size, g.elem_bytes):
                        rc = g.coord(src + j)
                        val = Elem(g.name, *rc) if rc is not None else ZERO
                        self._smem_write(cta, (dst & OFFSET_MASK) + j, g.elem_bytes, val, acc, w)
                    w.cp_groups.setdefault(l, [[]])[-1].append(acc)
            return h
        raise SimError(f"no semantics for {op}")

    def _global_at(self, addr: int):
        for g in self.globals:
            if g.base <= addr < g.base + g.size_bytes():
                return g
        return None

    def _tensormap(self, w: Warp, addr: int, ins: Instr) -> TensorMap:
        idx = (addr - PARAM_BASE) >> 12
        if not 0 <= idx < len(self.param_names) or self.param_names[idx] not in self.tensormaps:
            raise SimError(f"{w.name()}: {ins.text.strip()[:70]}: 0x{addr:x} is not a tensor map")
        tm = self.tensormaps[self.param_names[idx]]
        g = next(x for x in self.globals if x.name == tm.tensor)
        if tm.dtype and g.dtype and (tm.dtype, tm.elem_bytes) != (g.dtype, g.elem_bytes):
            self.error(f"{w.name()}: the tensor map of {tm.tensor} encodes {tm.dtype} ({tm.elem_bytes} B) elements, "
                       f"{tm.tensor} holds {g.dtype} ({g.elem_bytes} B)")
        return tm

    def _box_elements(self, tm: TensorMap, coords: list):
        """(linear index in the box, tensor coordinate or None when outside the tensor)."""
        g = next(x for x in self.globals if x.name == tm.tensor)
        inner, outer = tm.box
        for i1 in range(outer):
            for i0 in range(inner):
                pos = [0, 0]
                pos[tm.dims[0]] = coords[0] + i0
                pos[tm.dims[1]] = coords[1] + i1
                inside = 0 <= pos[0] < g.rows and 0 <= pos[1] < g.cols
                yield i1 * inner + i0, (tuple(pos) if inside else None)

    def _tma_load(self, ins: Instr):
        op, a = ins.op, ins.args
        gdst = self._addr(a[0])
        tm_op = a[1].strip()[1:-1]
        tm_reg, coords_txt = tm_op.split(",", 1)
        gtm = self._getter(tm_reg.strip())
        gcoords = [self._getter(c) for c in self._vec(coords_txt.strip())]
        gbar = self._addr(a[2])
        gmask = self._getter(a[3]) if ".multicast::cluster" in op else None
        cta_group2 = ".cta_group::2" in op

        def h(w, lanes):
            self._global_access(w, "a TMA load")
            for l in lanes:
                tm = self._tensormap(w, gtm(w, l), ins)
                coords = [g(w, l) for g in gcoords]
                dst, bar = gdst(w, l), gbar(w, l)
                # multicast: the box lands at the same offset in every CTA of the mask, each counting it on
                # its own mbarrier at the barrier's offset -- with .cta_group::2 on the mbarrier at that offset in
                # the CTA of the destination's pair that [mbar] names (its rank's low bit: the leader's, 0, as
                # the DSL and CUTLASS clear the peer bit), where a 2-CTA MMA's full barriers live
                targets = [(dst >> RANK_SHIFT, bar)]
                if gmask is not None:
                    mask = gmask(w, l)
                    pair_bit = (bar >> RANK_SHIFT) & 1
                    targets = [(r, (bar & OFFSET_MASK) | ((r & ~1 | pair_bit) if cta_group2 else r) << RANK_SHIFT)
                               for r in range(len(self.ctas)) if mask >> r & 1]
                if not cta_group2 and bar >> RANK_SHIFT != dst >> RANK_SHIFT:
                    self.error(f"{w.name()}: a TMA load into CTA {dst >> RANK_SHIFT} signals CTA "
                               f"{bar >> RANK_SHIFT}'s mbarrier without .cta_group::2")
                nbytes = tm.box[0] * tm.box[1] * tm.elem_bytes
                w.tick()
                for r, bar_r in targets:
                    tgt = self.ctas[r]
                    bcta, b = self._barrier(bar_r, w, ins, remote_ok=True)
                    phase = b.phase
                    acc = Access("tma", (b.key, phase + 1), what=f"TMA load by {w.name()}")
                    base = dst & OFFSET_MASK
                    if base % {128: 1024, 64: 512, 32: 256}.get(tm.swizzle, 16):
                        self.error(f"{w.name()}: TMA box at smem 0x{base:x} is not aligned to its swizzle pattern")
                    for lin, pos in self._box_elements(tm, coords):
                        phys = isa.swizzle(base + lin * tm.elem_bytes, tm.swizzle)
                        val = ZERO if pos is None else Elem(tm.tensor, *pos)
                        self._smem_write(tgt, phys, tm.elem_bytes, val, acc, w)
                    self._remote(w, tgt, "a TMA load", acc.token)
                    self._remote(w, bcta, "a TMA complete_tx", acc.token)
                    self._complete_tx(b, nbytes, src=w.cta.rank)
        return h

    def _tma_store(self, ins: Instr):
        a = ins.args
        tm_op = a[0].strip()[1:-1]
        tm_reg, coords_txt = tm_op.split(",", 1)
        gtm = self._getter(tm_reg.strip())
        gcoords = [self._getter(c) for c in self._vec(coords_txt.strip())]
        gsrc = self._addr(a[1])

        def h(w, lanes):
            self._global_access(w, "a TMA store")
            for l in lanes:
                tm = self._tensormap(w, gtm(w, l), ins)
                coords = [g(w, l) for g in gcoords]
                src = gsrc(w, l)
                cta = self._own_cta(w, src, ins)
                pend = Pending()
                acc = Access("tmastore", pend, warp=w, lane=l, epoch=w.epoch, what=f"TMA store by {w.name()}")
                w.tick()
                g = next(x for x in self.globals if x.name == tm.tensor)
                base = src & OFFSET_MASK
                for lin, pos in self._box_elements(tm, coords):
                    phys = isa.swizzle(base + lin * tm.elem_bytes, tm.swizzle)
                    val = self._smem_read(cta, phys, tm.elem_bytes, acc, w)
                    if pos is not None:  # the TMA clips at the tensor's edges
                        self._global_store(g.addr(pos), g.elem_bytes, val,
                                           f"TMA store by {w.name()}")
                w.bulk_groups.setdefault(l, [[]])[-1].append(pend)
        return h

    def _st_async(self, ins: Instr):
        ga = self._addr(ins.args[0])
        srcs = self._vec(ins.args[1]) if ins.args[1].startswith("{") else [ins.args[1]]
        getters = [self._getter(s) for s in srcs]
        gbar = self._addr(ins.args[2])
        size = _BITS[_type(ins.op)] // 8

        def h(w, lanes):
            for s in srcs:
                if s in w.poisoned:
                    self._read(w, ins, s, 0)
            for l in lanes:
                addr, bar = ga(w, l), gbar(w, l)
                if addr >> RANK_SHIFT != bar >> RANK_SHIFT:
                    self.error(f"{w.name()}: st.async into CTA {addr >> RANK_SHIFT} counted on CTA "
                               f"{bar >> RANK_SHIFT}'s mbarrier")
                tgt = self.ctas[addr >> RANK_SHIFT]
                bcta, b = self._barrier(bar, w, ins, remote_ok=True)
                w.tick()
                acc = Access("stasync", (b.key, b.phase + 1), what=f"st.async by {w.name()}")
                for j, g in enumerate(getters):
                    self._smem_write(tgt, (addr & OFFSET_MASK) + j * size, size, g(w, l), acc, w)
                self._remote(w, tgt, "an st.async", acc.token)
                self._complete_tx(b, size * len(getters), src=w.cta.rank)
        return h

    # --------------------------------------------------------------------------------------------
    # tcgen05
    # --------------------------------------------------------------------------------------------
    def _op_tcgen05(self, ins: Instr):
        op = ins.op
        kind = op.split(".")[1]
        return getattr(self, "_tc_" + kind.split("::")[0])(ins)

    def _peer_ok(self, w: Warp, what: str) -> None:
        peer = self.ctas[w.cta.rank ^ 1]
        if not any(k[0] == "w" and k[1] == peer.rank for k in w.vc):
            self.error(f"{w.name()}: {what} with cta_group::2 before the peer CTA is known to run "
                       f"(no cluster barrier before it)")

    def _tc_alloc(self, ins: Instr):
        gd, gn = self._addr(ins.args[0]), self._getter(ins.args[1])
        two = "cta_group::2" in ins.op

        def h(w, lanes):
            l = lanes[0]
            n = gn(w, l)
            cta = w.cta
            if cta.relinquished:
                self.error(f"{w.name()}: tcgen05.alloc after tcgen05.relinquish_alloc_permit")
            if two:
                self._peer_ok(w, "tcgen05.alloc")
            if n < 32 or n > 512 or n & (n - 1):
                self.error(f"{w.name()}: tcgen05.alloc of {n} columns (a power of 2 in [32, 512])")
            used = sorted(cta.tmem_alloc.items())
            base = 0
            for b, c in used:
                if base + n <= b:
                    break
                base = max(base, b + c)
            if base + n > 512:
                self.error(f"{w.name()}: tcgen05.alloc of {n} columns: TMEM has no room (it would block)")
                return
            cta.tmem_alloc[base] = n
            acc = self._generic_access(w, "tcgen05.alloc")
            acc.kind = "alloc"
            acc.lane = l
            self._smem_write(cta, gd(w, l) & OFFSET_MASK, 4, base, acc, w)
        return h

    def _tc_relinquish_alloc_permit(self, ins: Instr):
        def h(w, lanes):
            w.cta.relinquished = True
        return h

    def _tc_dealloc(self, ins: Instr):
        ga, gn = self._getter(ins.args[0]), self._getter(ins.args[1])
        two = "cta_group::2" in ins.op

        def h(w, lanes):
            l = lanes[0]
            taddr, n = ga(w, l), gn(w, l)
            col = taddr & 0xFFFF
            cta = w.cta
            if cta.tmem_alloc.get(col) != n:
                self.error(f"{w.name()}: tcgen05.dealloc of {n} columns at {col}, allocated {cta.tmem_alloc}")
            cta.tmem_alloc.pop(col, None)
            ctas = [cta, self.ctas[cta.rank ^ 1]] if two else [cta]
            for c in ctas[:1]:
                for (q, chunk), (write, reads) in c.tmem_meta.items():
                    if not col // 32 <= chunk < (col + n) // 32:
                        continue
                    for acc in ([write] if write else []) + reads:
                        why = self._tmem_unordered(acc, w)
                        if why:
                            self.error(f"{w.name()}: tcgen05.dealloc of columns {col}.. while {acc.what} of "
                                       f"lanes {32 * q}.. column {32 * chunk} may still be in flight ({why})")
        return h

    def _tc_mma(self, ins: Instr):
        a = ins.args
        gd, gad, gbd, gid = self._addr(a[0]), self._getter(a[1]), self._getter(a[2]), self._getter(a[3])
        gen = self._getter(a[-1])
        two = "cta_group::2" in ins.op

        def h(w, lanes):
            for l in lanes:
                self._mma(w, ins, gd(w, l), gad(w, l), gbd(w, l), gid(w, l), bool(gen(w, l)), two)
        return h

    def _mma(self, w: Warp, ins: Instr, taddr: int, adesc: int, bdesc: int, idesc: int, accumulate: bool,
             two: bool) -> None:
        d = isa.decode_idesc(idesc)
        name = f"{w.name()}: tcgen05.mma"
        # the operand type the MMA computes with (idesc bits 7-9 / 10-12) must be the type A and B hold
        want = {g.name: isa.KIND_F16_TYPES.get(g.dtype) for g in self.globals if g.name in ("A", "B")}
        if d.sparse or d.dtype != 1 or d.negate_a or d.negate_b or not d.reserved_ok:
            self.error(f"{name}: instruction descriptor 0x{idesc:08x} is not a dense kind::f16 MMA into fp32: {d}")
        if (d.atype, d.btype) != (want["A"], want["B"]):
            self.error(f"{name}: instruction descriptor 0x{idesc:08x} multiplies A as type {d.atype} and B as type "
                       f"{d.btype} (0 f16, 1 bf16), but A holds {self._dtype('A')} and B {self._dtype('B')}")
        m_total = d.m
        if (two and m_total != 256) or (not two and m_total != 128):
            self.error(f"{name}: M={m_total} with cta_group::{2 if two else 1} (the kernels use 128 / 256)")
            return
        if two and w.cta.rank % 2:
            self.error(f"{name}: a cta_group::2 MMA issued by the odd CTA of the pair")
        ad, bd = isa.decode_smem_desc(adesc), isa.decode_smem_desc(bdesc)
        self.mma_kinds.add((d, dataclasses.replace(ad, start=0), dataclasses.replace(bd, start=0), two))
        for which, desc in (("A", ad), ("B", bd)):
            if desc.version != 1 or desc.lbo_mode or desc.swizzle_mode not in isa.SWIZZLE_BYTES:
                self.error(f"{name}: {which} descriptor 0x{(adesc if which == 'A' else bdesc):016x} has invalid "
                           f"fixed fields or swizzle mode: {desc}")
                return
        ctas = [w.cta, self.ctas[w.cta.rank ^ 1]] if two else [w.cta]
        rows = m_total // len(ctas)
        ncols = d.n // len(ctas)
        pend = Pending()
        w.pending_mma.append(pend)
        read_acc = Access("mma", pend, what=f"tcgen05.mma by {w.name()}")
        a_vals, b_vals = [], []
        for v, cta in enumerate(ctas):
            for i in range(rows):
                for kk in range(16):
                    a_vals.append((v * rows + i, kk, self._operand(cta, ad, i, kk, d.transpose_a, read_acc, w)))
            for j in range(ncols):
                for kk in range(16):
                    b_vals.append((v * ncols + j, kk, self._operand(cta, bd, j, kk, d.transpose_b, read_acc, w)))
        try:
            m0, ka = _affine(a_vals, "A", self.globals, name)
            n0, kb = _affine(b_vals, "B", self.globals, name)
        except SimValueError as e:
            self.error(str(e))
            return
        if ka is not None and kb is not None and ka != kb:
            self.error(f"{name}: A's k-block starts at {ka}, B's at {kb}")
        k0 = ka if ka is not None else kb
        col = taddr & 0xFFFF
        if taddr >> 16:
            self.error(f"{name}: accumulator at TMEM lane {taddr >> 16}, not 0")
        for v, cta in enumerate(ctas):
            if not any(b <= col and col + d.n <= b + c for b, c in cta.tmem_alloc.items()):
                self.error(f"{name}: accumulator columns {col}..{col + d.n - 1} of CTA {cta.rank} are not allocated")
            write = Access("mma", pend, warp=w, what=f"tcgen05.mma by {w.name()}")
            self._tmem_access(cta, w, range(4), col, d.n, write, write=True)
            key = (col, d.n)
            region = {"m0": None if m0 is None else m0 + v * rows, "n0": n0,
                      "ks": () if k0 is None else ((k0, k0 + 16),)}
            if accumulate:
                old = cta.tmem.get(key)
                if old is None:
                    self.error(f"{name}: accumulates into TMEM columns {col}.. that hold no accumulator")
                else:
                    for f in ("m0", "n0"):
                        if old[f] is not None and region[f] is not None and old[f] != region[f]:
                            self.error(f"{name}: accumulates tile {f}={region[f]} into one holding {f}={old[f]}")
                        region[f] = old[f] if region[f] is None else region[f]
                    try:
                        region["ks"] = merge_ranges(old["ks"] + region["ks"])
                    except SimValueError as e:
                        self.error(f"{name}: {e}")
            for other in [k for k in cta.tmem if k != key and k[0] < col + d.n and col < k[0] + k[1]]:
                del cta.tmem[other]
            cta.tmem[key] = region

    def _dtype(self, tensor: str) -> str:
        return next(g.dtype for g in self.globals if g.name == tensor)

    def _operand(self, cta: Cta, desc, mn: int, kk: int, mn_major: bool, acc: Access, w: Warp):
        # kind::f16: both f16 and bf16 elements are 2 bytes
        addr = isa.swizzle(isa.operand_offset(desc, mn, kk, mn_major, 2), isa.SWIZZLE_BYTES[desc.swizzle_mode])
        return self._smem_read(cta, addr, 2, acc, w)

    def _tmem_unordered(self, prev: Access, w: Warp) -> str | None:
        """Why ``prev`` (a TMEM access) is not ordered before ``w``'s next TMEM access, or None.

        The PTX ISA's tcgen05 rules: a tcgen05.ld of the same warp is ordered by its tcgen05.wait::ld; a
        tcgen05.ld of another warp by that warp's tcgen05.fence::before_thread_sync after the wait, a thread
        synchronization, and ``w``'s tcgen05.fence::after_thread_sync after it; an MMA (complete at its
        tcgen05.commit, which fences before its arrive) by an observed commit and ``w``'s
        after_thread_sync fence."""
        if prev.kind == "tcgen05.ld":
            if prev.warp is w:
                return None if covered(w.vc, prev.token) else "before its tcgen05.wait::ld"
            if covered(w.tc_vc, prev.xtoken):
                return None
            if not covered(w.vc, prev.token):
                return "unordered (no wait and thread synchronization between them)"
            if covered(w.vc, prev.xtoken):
                return "without tcgen05.fence::after_thread_sync after the thread synchronization"
            return f"without tcgen05.fence::before_thread_sync by {prev.warp.name()} after its tcgen05.wait::ld"
        if covered(w.tc_vc, prev.token):
            return None
        if covered(w.vc, prev.token):
            return "without tcgen05.fence::after_thread_sync after the wait that saw its commit"
        return "before the MMA is known complete"

    def _tmem_access(self, cta: Cta, w: Warp, quarters, col: int, ncols: int, acc: Access, write: bool) -> None:
        for q in quarters:
            for chunk in range(col // 32, (col + ncols - 1) // 32 + 1):
                meta = cta.tmem_meta.setdefault((q, chunk), [None, []])
                last, reads = meta
                if write:
                    for r in reads:
                        why = self._tmem_unordered(r, w)
                        if why:
                            self.error(f"{acc.what} writes TMEM lanes {32 * q}.. column {32 * chunk} of CTA "
                                       f"{cta.rank} while {r.what} may still read them ({why})")
                    if last is not None and last.warp is not w:
                        why = self._tmem_unordered(last, w)
                        if why:
                            self.error(f"{acc.what} writes TMEM of CTA {cta.rank} unordered with {last.what} ({why})")
                    cta.tmem_meta[(q, chunk)] = [acc, []]
                else:
                    if last is None:
                        self.error(f"{acc.what} reads TMEM lanes {32 * q}.. column {32 * chunk} of CTA {cta.rank} "
                                   f"that no MMA wrote")
                    else:
                        why = self._tmem_unordered(last, w)
                        if why:
                            self.error(f"{acc.what} reads TMEM lanes {32 * q}.. column {32 * chunk} of CTA "
                                       f"{cta.rank} written by {last.what} {why}")
                    reads.append(acc)

    def _tc_commit(self, ins: Instr):
        gb = self._addr(ins.args[0])
        gmask = self._getter(ins.args[1]) if ".multicast::cluster" in ins.op else None

        def h(w, lanes):
            for l in lanes:
                w.commits += 1
                token = (("c",) + w.key, w.commits)
                for p in w.pending_mma:
                    p.token = token
                w.pending_mma = []
                vc = dict(w.vc)
                vc[token[0]] = token[1]
                bar = gb(w, l)
                ranks = [bar >> RANK_SHIFT] if gmask is None else \
                    [r for r in range(len(self.ctas)) if gmask(w, l) >> r & 1]
                if gmask is not None and not ranks:
                    self.error(f"{w.name()}: tcgen05.commit with an empty multicast mask")
                for r in ranks:
                    cta, b = self._barrier((bar & OFFSET_MASK) | r << RANK_SHIFT, w, ins, remote_ok=True)
                    self._remote(w, cta, "a tcgen05.commit arrive", token)
                    self._arrive(b, vc, src=w.cta.rank)
                w.tick()
        return h

    def _tc_ld(self, ins: Instr):
        m = re.search(r"\.32x32b\.x(\d+)\.", ins.op + ".")
        if not m:
            raise SimError(f"{ins.op}: only tcgen05.ld.32x32b is modelled")
        n = int(m.group(1))
        dsts = self._vec(ins.args[0])
        ga = self._getter(ins.args[1].strip()[1:-1])

        def h(w, lanes):
            taddr = ga(w, lanes[0])
            lane0, col = taddr >> 16, taddr & 0xFFFF
            cta = w.cta
            if lane0 != 32 * (w.wid % 4):
                self.error(f"{w.name()}: tcgen05.ld of TMEM lanes {lane0}.., but warp {w.wid} may only access "
                           f"lanes {32 * (w.wid % 4)}..{32 * (w.wid % 4) + 31}")
            pend = Pending()
            w.ld_pending.append(pend)
            ld = Access("tcgen05.ld", pend, warp=w, what=f"tcgen05.ld by {w.name()}", xtoken=Pending())
            w.ld_issued.append(ld)
            self._tmem_access(cta, w, [lane0 // 32], col, n, ld, write=False)
            region = next(((k, r) for k, r in cta.tmem.items() if k[0] <= col and col + n <= k[0] + k[1]), None)
            for l in lanes:
                for j, dreg in enumerate(dsts):
                    if region is None:
                        val = ZERO
                    else:
                        (c0, _), r = region
                        val = Acc(None if r["m0"] is None else r["m0"] + lane0 + l,
                                  None if r["n0"] is None else r["n0"] + col + j - c0, r["ks"])
                    self._set(w, dreg, l, val)
            w.poisoned.update(dsts)
            w.tick()
        return h

    def _tc_wait(self, ins: Instr):
        if "wait::ld" in ins.op:
            def h(w, lanes):
                c = w.tick()
                for p in w.ld_pending:
                    p.token = (w.key, c)
                w.ld_pending = []
                w.ld_waited += w.ld_issued
                w.ld_issued = []
                w.poisoned = set()
            return h
        return lambda w, lanes: None

    def _tc_fence(self, ins: Instr):
        """tcgen05.fence::before_thread_sync: the warp's waited tcgen05.ld's become visible to whoever
        synchronizes with its later arrivals (a clock entry of the warp's fences). after_thread_sync: the
        warp's later TMEM accesses are ordered after everything it has synchronized with so far."""
        if "before_thread_sync" in ins.op:
            def h(w, lanes):
                w.tc_before += 1
                key = ("tcb",) + w.key
                w.vc[key] = w.tc_before
                for ld in w.ld_waited:
                    ld.xtoken.token = (key, w.tc_before)
                w.ld_waited = []
                w.tick()
            return h
        if "after_thread_sync" in ins.op:
            def h(w, lanes):
                w.tc_vc = dict(w.vc)
                w.tick()
            return h
        raise SimError(f"no semantics for {ins.op}")

    # --------------------------------------------------------------------------------------------
    # the end
    # --------------------------------------------------------------------------------------------
    def _cta_exit(self, cta: Cta) -> None:
        cta.exited = True
        for w in cta.warps:
            join(cta.exit_vc, w.vc)
        for what, token in cta.remote:
            if not covered(cta.exit_vc, token):
                self.error(f"cta {cta.rank} exits while {what} into it may still be in flight")
        cta.remote = []
        for w in cta.warps:
            for lane, groups in w.bulk_groups.items():
                if any(p.token is None for grp in groups for p in grp):
                    self.error(f"{w.name()} lane {lane} exits while a TMA store may still read its smem "
                               f"(no cp.async.bulk.wait_group.read 0)")
        if cta.tmem_alloc:
            self.error(f"cta {cta.rank} exits with TMEM columns still allocated: {cta.tmem_alloc}")

    def check_barriers_at_rest(self) -> None:
        for cta in self.ctas:
            for off, b in cta.barriers.items():
                if b.pending != b.count or b.tx:
                    self.error(f"cta {cta.rank}: mbarrier 0x{off:x} ends mid-phase ({b.count - b.pending} of "
                               f"{b.count} arrivals, {b.tx} transaction bytes outstanding)")


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------
_BITS = {"b8": 8, "u8": 8, "s8": 8, "b16": 16, "u16": 16, "s16": 16, "b32": 32, "u32": 32, "s32": 32,
         "b64": 64, "u64": 64, "s64": 64, "pred": 1, "f32": 32}


def _type(op: str) -> str:
    for part in reversed(op.split(".")):
        if part in _BITS:
            return part
    raise SimError(f"no type in {op}")


def _norm(v, bits: int, signed: bool):
    if not isinstance(v, int):
        return v
    v &= (1 << bits) - 1
    if signed and v >> (bits - 1):
        v -= 1 << bits
    return v


def _arith(op, vals, bits, signed):
    name = op.split(".")[0]
    mask = (1 << bits) - 1
    x = [_norm(v, bits, signed) for v in vals]
    if name == "add":
        r = x[0] + x[1]
    elif name == "sub":
        r = x[0] - x[1]
    elif name == "mul":
        if ".wide" in op:
            return (x[0] * x[1]) & ((1 << (2 * bits)) - 1)
        if ".hi" in op:
            return ((x[0] * x[1]) >> bits) & mask
        r = x[0] * x[1]
    elif name == "mad":
        r = x[0] * x[1] + x[2]
    elif name == "div":
        q = abs(x[0]) // abs(x[1])
        r = q if (x[0] >= 0) == (x[1] >= 0) else -q
    elif name == "rem":
        r = abs(x[0]) % abs(x[1])
        r = r if x[0] >= 0 else -r
    elif name == "min":
        r = min(x[0], x[1])
    elif name == "max":
        r = max(x[0], x[1])
    elif name == "neg":
        r = -x[0]
    elif name == "abs":
        r = abs(x[0])
    elif name == "and":
        r = (vals[0] & vals[1]) if bits > 1 else int(bool(vals[0]) and bool(vals[1]))
    elif name == "or":
        r = (vals[0] | vals[1]) if bits > 1 else int(bool(vals[0]) or bool(vals[1]))
    elif name == "xor":
        r = (vals[0] ^ vals[1]) if bits > 1 else int(bool(vals[0]) != bool(vals[1]))
    elif name == "not":
        r = (~vals[0]) if bits > 1 else int(not vals[0])
    elif name == "shl":
        r = (vals[0] << vals[1]) if vals[1] < bits else 0
    elif name == "shr":
        s = min(vals[1], bits)
        r = x[0] >> s if signed else (vals[0] & mask) >> s
    else:
        raise SimError(f"no semantics for {op}")
    return r & mask if bits > 1 else r


_HALF = {"f16": "f16", "bf16": "bf16", "f16x2": "f16", "bf16x2": "bf16"}


def _parts(value, size: int) -> list:
    """(byte offset, bytes, value) of a register stored as ``size`` bytes: a packed pair of 16-bit elements
    (a tuple (lower, upper), e.g. from cvt.rn.bf16x2.f32) is two elements, the lower half first."""
    if isinstance(value, tuple) and len(value) == 2:
        half = size // 2
        return [(0, half, value[0]), (half, half, value[1])]
    return [(0, size, value)]


_ALU_OPS = {"add", "sub", "mul", "mad", "div", "rem", "min", "max", "neg", "abs", "and", "or", "xor", "not", "shl",
            "shr", "fma", "tanh"}


_FX_ARITY = {"add": 2, "sub": 2, "mul": 2, "fma": 3, "max": 2, "min": 2, "neg": 1, "abs": 1, "tanh": 1, "cvt": 1}


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _float_op(op: str, vals):
    """An fp32 instruction on values. Two accumulators add as ``Acc + Acc`` (the split-K reduce and stream-K's
    halves: the check reads their K order); adding zero (a zero-filled or zero-initialized operand) leaves the
    other operand; numbers alone are computed (immediates); anything else becomes an ``Fx`` for the final check
    to evaluate. ``add.rn.f32.bf16 d, a, c`` (sm_100's mixed add) widens its 16-bit ``a`` first."""
    parts = op.split(".")
    name = parts[0]
    if name not in _FX_ARITY or len(vals) != _FX_ARITY[name]:
        raise SimError(f"{op} on {vals!r}: no fp32 semantics")
    if name == "cvt":  # cvt.f32.{bf16,f16}: a 16-bit value widened
        name = f"cvt.f32.{parts[-1]}"
    elif name == "add" and parts[-1] in ("bf16", "f16"):
        vals = [_float_op(f"cvt.f32.{parts[-1]}", [vals[0]]), vals[1]]
    if name == "add":
        a, b = vals
        if isinstance(a, Acc) and isinstance(b, Acc):
            return a + b
        if a is ZERO or (_is_number(a) and a == 0):
            return b
        if b is ZERO or (_is_number(b) and b == 0):
            return a
    for v in vals:
        if isinstance(v, tuple) or isinstance(v, bool):
            raise SimError(f"{op} on {vals!r}: not fp32 values")
    fx = Fx(name, tuple(0.0 if v is ZERO else v for v in vals))
    if all(_is_number(v) for v in fx.args):
        from ptxkit.numerics import evaluate

        return evaluate(fx, None, None)
    return fx


_CMP = {
    "eq": lambda a, b: int(a == b), "ne": lambda a, b: int(a != b),
    "lt": lambda a, b: int(a < b), "le": lambda a, b: int(a <= b),
    "gt": lambda a, b: int(a > b), "ge": lambda a, b: int(a >= b),
    "lo": lambda a, b: int(a < b), "ls": lambda a, b: int(a <= b),
    "hi": lambda a, b: int(a > b), "hs": lambda a, b: int(a >= b),
}

_SPECIAL = {
    "%tid.x": lambda w, l: 32 * w.wid + l,
    "%tid.y": lambda w, l: 0,
    "%tid.z": lambda w, l: 0,
    "%laneid": lambda w, l: l,
    "%warpid": lambda w, l: w.wid,
    "%ctaid.x": lambda w, l: w.cta.ctaid[0],
    "%ctaid.y": lambda w, l: w.cta.ctaid[1],
    "%ctaid.z": lambda w, l: w.cta.ctaid[2],
    "%cluster_ctarank": lambda w, l: w.cta.rank,
}


def _affine(vals, tensor: str, globals_, name: str):
    """An MMA operand read as (mn, kk, value) must be one affine block of ``tensor``: value (mn, kk) is
    element (mn0 + mn, k0 + kk), or zero exactly where that element lies outside the tensor.
    Returns (mn0, k0), None for a coordinate no element pinned down."""
    g = next(x for x in globals_ if x.name == tensor)
    mn0 = k0 = None
    for mn, kk, v in vals:
        if v is ZERO:
            continue
        if not isinstance(v, Elem) or v.tensor != tensor:
            raise SimValueError(f"{name}: operand {tensor} ({mn}, {kk}) reads {v!r}, not an element of {tensor}")
        if mn0 is None:
            mn0, k0 = v.row - mn, v.col - kk
        if (v.row, v.col) != (mn0 + mn, k0 + kk):
            raise SimValueError(f"{name}: operand {tensor} ({mn}, {kk}) reads {tensor}[{v.row}, {v.col}], the "
                                f"block starts at {tensor}[{mn0}, {k0}]: wrong descriptor, stage or coordinate")
    if mn0 is not None:
        for mn, kk, v in vals:
            if v is ZERO and 0 <= mn0 + mn < g.rows and 0 <= k0 + kk < g.cols:
                raise SimValueError(f"{name}: operand {tensor} ({mn}, {kk}) reads zero where "
                                    f"{tensor}[{mn0 + mn}, {k0 + kk}] belongs")
    return mn0, k0


def _post_dominators(k: Kernel) -> dict:
    """Immediate post-dominator of every conditional branch (None: the paths meet only at the exit)."""
    from ptxkit.cfg import successors

    n = len(k.instrs)
    exit_node = n
    succ = [successors(k, i) or [exit_node] for i in range(n)]
    full = (1 << (n + 1)) - 1
    pdom = [full] * n + [1 << exit_node]
    changed = True
    while changed:
        changed = False
        for i in range(n - 1, -1, -1):
            s = full
            for j in succ[i]:
                s &= pdom[j]
            new = s | (1 << i)
            if new != pdom[i]:
                pdom[i] = new
                changed = True
    out = {}
    for i, ins in enumerate(k.instrs):
        if not ins.op.startswith("bra") or ins.pred is None:
            continue
        strict = pdom[i] & ~(1 << i)
        out[i] = None
        j = strict
        while j:
            low = j & -j
            node = low.bit_length() - 1
            j ^= low
            if node < n and pdom[node] == strict:
                out[i] = node
                break
    return out
