"""The PTX machine for sm_90a: ``ptxkit.machine.Machine`` plus the Hopper instructions of the sm90 ladder.

What the sm90 kernels use beyond the sm100 ones, with the PTX ISA's semantics:

- ``wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}`` with both operands read from shared memory
  through matrix descriptors (PTX ISA "Matrix Descriptor Format": start address, leading / stride
  byte offsets, swizzle mode 1 = 128 B, 2 = 64 B, 3 = 32 B; the canonical layouts are the ones
  ``ptxkit.isa`` decodes for tcgen05), ``imm-trans-a`` / ``imm-trans-b`` (0: K-major, 1: MN-major),
  ``scale-d`` (0: D = A*B, 1: D += A*B). Each warp of the warpgroup is modelled on its own: warp
  ``w % 4`` owns rows 16 (w % 4) .. +15 of the 64-row instruction tile, reads those rows of A and all
  of B, and holds in lane l, register i the element row 16 (w % 4) + l/4 + 8 ((i % 4) / 2), column
  8 (i / 4) + 2 (l % 4) + i % 2 (the wgmma D fragment of the PTX ISA's figures);
- the asynchrony: a wgmma's shared-memory reads and its register writes complete only when a
  ``wgmma.wait_group N`` retires its group (``wgmma.commit_group``). Until then its accumulator
  registers may be read by no other instruction (reported like an unwaited ``tcgen05.ld``), and its
  smem reads are in flight: a later write of that smem not ordered after the wait is a race. An
  arrive on an empty barrier whose stage a pending group still reads is reported at the arrive;
- ``wgmma.fence``: required before the first wgmma and between another instruction's write of an
  accumulator register and a wgmma that accumulates into it;
- ``bar.arrive`` (a named barrier arrive without a wait: the ping-pong turns), ``ld.shared::cluster``
  (a DSMEM read of a peer's smem: ordered by the cluster barriers, and in flight into the peer until
  this warp's next cluster arrive, so the peer must not exit before), ``griddepcontrol.wait`` (with
  ``pdl``, any global access before it is reported) and ``launch_dependents``, ``setmaxnreg``;
- ``cp.reduce.async.bulk.tensor...add`` (the TMA reduce-add of an ``accumulate`` config: C += the box):
  the TMA store's semantics -- the box read from smem in flight until its bulk group's ``wait_group.read``,
  clipped at C's edges -- with each element arriving in C as ``ReduceAdd(value)``, "C's old value plus
  value"; only ``.add`` is modelled.
"""

from __future__ import annotations

import dataclasses
import re

from ptxkit import isa
from ptxkit.machine import OFFSET_MASK, RANK_SHIFT, Access, Machine, Pending, SimError, join
from ptxkit.values import ZERO, Acc, SimValueError, merge_ranges

# wgmma descriptor bits 62-63 -> swizzle width; as the tcgen05 code ptxkit.isa decodes (SWIZZLE_BYTES)
_WGMMA_SWIZZLE = {0: (None, 0), 1: (128, 2), 2: (64, 4), 3: (32, 6)}
_WGMMA = re.compile(r"\.m64n(\d+)k16\.f32\.(f16|bf16)\.(f16|bf16)$")


def decode_wgmma_desc(v: int) -> isa.SmemDesc:
    """A wgmma matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address bits 0-13, LBO
    16-29, SBO 32-45 (each >> 4), base offset 49-51, swizzle mode 62-63; as an ``isa.SmemDesc``."""
    v &= (1 << 64) - 1
    _, mode = _WGMMA_SWIZZLE[(v >> 62) & 0x3]
    return isa.SmemDesc(start=(v & 0x3FFF) << 4, lbo=((v >> 16) & 0x3FFF) << 4, sbo=((v >> 32) & 0x3FFF) << 4,
                        version=1, base_offset=(v >> 49) & 0x7, lbo_mode=0, swizzle_mode=mode)


def fragment_position(wq: int, lane: int, i: int) -> tuple[int, int]:
    """(row, column) in the m64nN tile of register i of lane ``lane`` of warp ``wq`` of the warpgroup."""
    r = i % 4
    return 16 * wq + lane // 4 + 8 * (r // 2), 8 * (i // 4) + 2 * (lane % 4) + (r % 2)


@dataclasses.dataclass(frozen=True)
class ReduceAdd:
    """What a TMA reduce-add writes to an element of C: its old value plus ``value`` (read, add, write)."""

    value: object


_TABLES: dict = {}


def _fragment_table(wq: int, n_cols: int) -> list:
    """[lane][register] -> (row, column) of warp ``wq``'s part of an m64nN accumulator."""
    key = (wq, n_cols)
    if key not in _TABLES:
        _TABLES[key] = [[fragment_position(wq, lane, i) for i in range(n_cols // 2)] for lane in range(32)]
    return _TABLES[key]


@dataclasses.dataclass
class _Group:
    pends: list  # Pending tokens of the wgmma smem reads
    regs: set  # accumulator registers the group writes
    chunks: set  # (cta rank, 16-byte chunk) of smem it reads


class Sm90Machine(Machine):
    """One cluster of an sm_90a launch (see the module docstring); ``pdl``: launched with programmatic
    dependent launch, so no global access may come before ``griddepcontrol.wait``."""

    # The base machine's cluster-scope rule (a wait observing another CTA's signal must be
    # .acquire.cluster, a remote arrive .release.cluster) is not applied here: the sm90 cluster phases
    # (4-8) still wait at the default CTA scope on their peers' multicast TMA bytes and remote arrives,
    # which that rule reports. Issue 19 moved the sm100 kernels to cluster scope; the sm90 kernels are
    # not changed by it.
    CLUSTER_SCOPE_RULE = False

    def __init__(self, kernel, *, pdl: bool = False, static_smem: dict | None = None, **kw):
        self.pdl = pdl
        self.static_smem = static_smem or {}  # name of a .shared array -> its offset in the CTA's window
        self.acc_regs = frozenset(r for ins in kernel.instrs if ins.op.startswith("wgmma.mma_async")
                                  for r in self._vec(ins.args[0]))
        self.guarded: dict = {}  # mbarrier key -> {(rank, chunk)} its waiter refills after the wait
        super().__init__(kernel, **kw)
        # a base machine that models PDL itself (Machine._global_access) decides from the code whether the
        # kernel is PDL-launched; the config's word counts too
        self.pdl = pdl or bool(getattr(self, "pdl", False))
        for cta in self.ctas:
            for w in cta.warps:
                w.wg_groups = []  # committed, not retired: [_Group]
                w.wg_open = _Group([], set(), set())
                w.touched = None  # accumulator registers written by other instructions since wgmma.fence
                w.pdl_waited = False
                w.last_wait = None  # key of the mbarrier this warp last waited on

    # ---- registers --------------------------------------------------------------------------------
    def _getter(self, op: str):
        op = op.strip()
        if re.match(r"^[A-Za-z_]\w*#\d+$", op):  # a register local to an inline-asm block (``p`` of a wgmma)
            return lambda w, l, r=op: w.regs[r][l] if r in w.regs else 0
        if re.match(r"^-?(0[xX][0-9a-fA-F]+|\d+)U$", op):  # an unsigned immediate: 0x3340U
            return super()._getter(op[:-1])
        if op in self.static_smem:  # a static shared array (phase 0): its place in the CTA's window
            off = self.static_smem[op]
            return lambda w, l: w.cta.rank << RANK_SHIFT | off
        return super()._getter(op)

    def _set(self, w, reg, lane, value) -> None:
        super()._set(w, reg, lane, value)
        if reg in self.acc_regs and w.touched is not None:
            w.touched.add(reg)

    def _smem_write(self, cta, addr: int, size: int, value, acc, w) -> None:
        """``Machine._smem_write`` (the same race checks), without its search for overlapping older values
        when the write replaces one of its own size at the same address (stored values never overlap, so
        then nothing else can): a TMA box is written element by element."""
        entry = cta.smem.get(addr)
        if entry is None or entry[0] != size:
            return super()._smem_write(cta, addr, size, value, acc, w)
        self._bounds(cta, addr, size, acc.what)
        vc = w.vc if w is not None else {}
        for chunk in range(addr >> 4, (addr + size - 1 >> 4) + 1):
            meta = cta.meta.get(chunk)
            if meta is not None and meta[0] is acc:
                continue
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
        cta.smem[addr] = (size, value)

    def _read(self, w, ins, reg, lane):
        if reg in w.poisoned and reg in self.acc_regs:
            self.error(f"{w.name()}: {ins.text.strip()[:80]} reads {reg}, an accumulator of a wgmma that no "
                       "wgmma.wait_group has retired")
            return w.regs[reg][lane] if reg in w.regs else 0
        return super()._read(w, ins, reg, lane)

    # ---- handlers ---------------------------------------------------------------------------------
    def _compile(self, ins):
        h = super()._compile(ins)
        if self.pdl and _global_access(ins) and not hasattr(Machine, "_global_access"):
            def checked(w, lanes, h=h, ins=ins):
                if not w.pdl_waited:
                    self.error(f"{w.name()}: {ins.text.strip()[:70]} accesses global memory before "
                               "griddepcontrol.wait (programmatic dependent launch)")
                return h(w, lanes)
            return checked
        return h

    def _op_prmt(self, ins):
        """``prmt.b32 d, a, b, c`` (default mode): byte i of d is byte (c >> 4i) & 7 of {b, a}, with the
        sign of that byte replicated when bit 3 of the selector is set."""
        if ins.op != "prmt.b32":
            raise SimError(f"no semantics for {ins.op}")
        d = ins.args[0]
        ga, gb, gc = (self._getter(x) for x in ins.args[1:4])

        def h(w, lanes):
            for l in lanes:
                src = (ga(w, l) & 0xFFFFFFFF) | (gb(w, l) & 0xFFFFFFFF) << 32
                c = gc(w, l)
                out = 0
                for i in range(4):
                    sel = (c >> 4 * i) & 0xF
                    byte = (src >> 8 * (sel & 7)) & 0xFF
                    if sel & 8:
                        byte = 0xFF if byte & 0x80 else 0
                    out |= byte << 8 * i
                self._set(w, d, l, out)
        return h

    def _op_dp2a(self, ins):
        """``dp2a.{lo,hi}.atype.btype d, a, b, c``: d = c + a.h0 * b.byte[0|2] + a.h1 * b.byte[1|3]."""
        parts = ins.op.split(".")
        hi = parts[1] == "hi"
        a_signed, b_signed = parts[2] == "s32", parts[3] == "s32"
        d = ins.args[0]
        ga, gb, gc = (self._getter(x) for x in ins.args[1:4])

        def half(v, i, signed):
            x = (v >> 16 * i) & 0xFFFF
            return x - 0x10000 if signed and x & 0x8000 else x

        def byte(v, i, signed):
            x = (v >> 8 * i) & 0xFF
            return x - 0x100 if signed and x & 0x80 else x

        def h(w, lanes):
            for l in lanes:
                a, b, c = ga(w, l), gb(w, l), gc(w, l)
                r = c + sum(half(a, i, a_signed) * byte(b, i + 2 * hi, b_signed) for i in range(2))
                self._set(w, d, l, r & 0xFFFFFFFF)
        return h

    def _op_cp(self, ins):
        """``cp.reduce.async.bulk.tensor``: the TMA store's handler, whose element stores become reduce-adds
        (``_global_store`` wraps them while it runs); every other copy is the base machine's."""
        if not ins.op.startswith("cp.reduce.async.bulk.tensor"):
            return super()._op_cp(ins)
        if ".add" not in ins.op or ".global.shared::cta" not in ins.op:
            raise SimError(f"{ins.op}: only the reduce-add of smem into global memory is modelled")
        store = self._tma_store(ins)

        def h(w, lanes):
            self._reducing = True
            try:
                return store(w, lanes)
            finally:
                self._reducing = False
        return h

    def _global_store(self, addr: int, size: int, value, what: str) -> None:
        if getattr(self, "_reducing", False):
            value, what = ReduceAdd(value), what.replace("TMA store", "TMA reduce-add")
        super()._global_store(addr, size, value, what)

    def _op_setmaxnreg(self, ins):
        return lambda w, lanes: None

    def _op_griddepcontrol(self, ins):
        base = getattr(super(), "_op_griddepcontrol", None)  # a base machine that models PDL: its state too
        h0 = base(ins) if base is not None else None
        if ".wait" in ins.op:
            def h(w, lanes):
                if h0 is not None:
                    h0(w, lanes)
                w.pdl_waited = True
                w.tick()
            return h
        return h0 or (lambda w, lanes: None)

    def _op_bar(self, ins):
        if ins.op.startswith("bar.arrive"):
            return self._named_arrive(ins)
        return super()._op_bar(ins)

    def _op_barrier(self, ins):
        if ins.op.startswith(("barrier.arrive", "barrier.cta.arrive")):
            return self._named_arrive(ins)
        return super()._op_barrier(ins)

    def _named_arrive(self, ins):
        """``bar.arrive id, count``: counts this warp toward the barrier's generation, does not wait."""
        gid = self._getter(ins.args[0])
        gcount = self._getter(ins.args[1])

        def h(w, lanes):
            bid, count = gid(w, lanes[0]), gcount(w, lanes[0])
            key = (w.cta.rank, bid)
            st = self.named.setdefault(key, {"arrived": 0, "gen": 0, "vc": {}, "count": count, "vcs": []})
            if st["arrived"] and st["count"] != count:
                self.error(f"{w.name()}: bar.arrive {bid} with count {count}, others use {st['count']}")
            st["count"] = count
            join(st["vc"], w.vc)
            w.tick()
            st["arrived"] += 32
            if st["arrived"] >= count:
                if st["arrived"] > count:
                    self.error(f"bar.arrive {bid}: {st['arrived']} threads arrived for a count of {count}")
                st["vcs"].append(dict(st["vc"]))
                st["gen"] += 1
                st["arrived"] = 0
                st["vc"] = {}
        return h

    def _op_ld(self, ins):
        space = ins.op.split(".")[1]
        if space != "shared::cluster":
            return super()._op_ld(ins)
        dsts = self._vec(ins.args[0]) if ins.args[0].startswith("{") else [ins.args[0]]
        size = {"f32": 4, "b32": 4, "u32": 4, "s32": 4, "b64": 8, "u64": 8, "f64": 8}[ins.op.split(".")[-1]]
        ga = self._addr(ins.args[1])

        def h(w, lanes):
            acc = self._generic_access(w, "ld.shared::cluster")
            targets = set()
            for l in lanes:
                addr = ga(w, l)
                r = addr >> RANK_SHIFT
                if not 0 <= r < len(self.ctas):
                    raise SimError(f"{w.name()}: {ins.text.strip()[:70]}: address 0x{addr:x} outside the cluster")
                tgt = self.ctas[r]
                targets.add(r)
                for j, d in enumerate(dsts):
                    a = (addr & OFFSET_MASK) + j * size
                    self._set(w, d, l, self._smem_read(tgt, a, size, dataclasses.replace(acc, lane=l), w))
            for r in targets:
                self._remote(w, self.ctas[r], "an ld.shared::cluster", acc.token)
        return h

    def _op_mbarrier(self, ins):
        h = super()._op_mbarrier(ins)
        op = ins.op
        if op.startswith(("mbarrier.try_wait", "mbarrier.test_wait")):
            ga = self._addr(ins.args[1])

            def waited(w, lanes):
                h(w, lanes)
                if w.blocked is None:
                    b = self._barrier_of(ga(w, lanes[0]))
                    w.last_wait = None if b is None else b.key
            return waited
        if op.startswith("mbarrier.arrive") and "expect_tx" not in op:
            ga = self._addr(ins.args[1])

            def arrive(w, lanes):
                b = self._barrier_of(ga(w, lanes[0]))
                if b is not None and (w.wg_groups or w.wg_open.chunks):
                    guarded = self.guarded.get(b.key)
                    if guarded:
                        for n, g in enumerate(reversed(w.wg_groups + [w.wg_open])):
                            if g.chunks & guarded:
                                self.error(f"{w.name()}: {ins.text.strip()[:60]} releases a stage that a wgmma "
                                           f"{'not yet committed' if n == 0 else f'group committed {n - 1} group(s) before the last'} "
                                           "still reads (no wgmma.wait_group retired it)")
                                break
                return h(w, lanes)
            return arrive
        return h

    def _barrier_of(self, addr: int):
        r = addr >> RANK_SHIFT
        if not 0 <= r < len(self.ctas):
            return None
        return self.ctas[r].barriers.get(addr & OFFSET_MASK)

    def _tma_load(self, ins):
        h = super()._tma_load(ins)
        gdst = self._addr(ins.args[0])
        gmask = self._getter(ins.args[3]) if ".multicast::cluster" in ins.op else None
        tm_reg = ins.args[1].strip()[1:-1].split(",", 1)[0].strip()
        gtm = self._getter(tm_reg)

        def load(w, lanes):
            h(w, lanes)
            if w.last_wait is None:
                return
            l = lanes[0]
            tm = self._tensormap(w, gtm(w, l), ins)
            dst = gdst(w, l)
            ranks = [dst >> RANK_SHIFT] if gmask is None else [r for r in range(len(self.ctas)) if gmask(w, l) >> r & 1]
            nbytes = tm.box[0] * tm.box[1] * tm.elem_bytes
            base = dst & OFFSET_MASK
            chunks = self.guarded.setdefault(w.last_wait, set())
            for r in ranks:
                chunks.update((r, c) for c in range(base >> 4, (base + nbytes - 1 >> 4) + 1))
        return load

    # ---- wgmma ------------------------------------------------------------------------------------
    def _op_wgmma(self, ins):
        kind = ins.op.split(".")[1]
        if kind == "fence":
            def h(w, lanes):
                w.touched = set()
            return h
        if kind == "commit_group":
            def h(w, lanes):
                w.wg_groups.append(w.wg_open)
                w.wg_open = _Group([], set(), set())
            return h
        if kind == "wait_group":
            n = int(ins.args[0])

            def h(w, lanes):
                keep = w.wg_groups[len(w.wg_groups) - n:] if n else []
                done = w.wg_groups[:len(w.wg_groups) - len(keep)]
                if done:
                    c = w.tick()
                    for g in done:
                        for p in g.pends:
                            p.token = (w.key, c)
                    # registers stay unreadable while any group still in flight writes them
                    w.poisoned = set().union(*(g.regs for g in keep)) | w.wg_open.regs
                w.wg_groups = keep
            return h
        if kind == "mma_async":
            return self._wgmma_mma(ins)
        raise SimError(f"no semantics for {ins.op}")

    def _wgmma_mma(self, ins):
        m = _WGMMA.search(ins.op)
        if not m or len(ins.args) != 8:
            raise SimError(f"only wgmma m64nNk16 f32 += f16/bf16 with both operands in smem is modelled: {ins.text}")
        n_cols = int(m.group(1))
        dregs = self._vec(ins.args[0])
        if len(dregs) != n_cols // 2:
            raise SimError(f"{ins.text.strip()[:60]}: {len(dregs)} accumulator registers for N={n_cols}")
        gad, gbd, gsc = self._getter(ins.args[1]), self._getter(ins.args[2]), self._getter(ins.args[3])
        scale_a, scale_b = int(ins.args[4]), int(ins.args[5])
        a_mn_major, b_mn_major = bool(int(ins.args[6])), bool(int(ins.args[7]))

        def h(w, lanes):
            name = f"{w.name()}: wgmma"
            if len(lanes) != 32:
                self.error(f"{name}: issued with {len(lanes)} of 32 lanes (.sync.aligned)")
            l0 = lanes[0]
            if w.touched is None:
                self.error(f"{name}: before any wgmma.fence")
            scale_d = bool(gsc(w, l0))
            if scale_d and w.touched:
                hit = sorted(w.touched & set(dregs))
                if hit:
                    self.error(f"{name}: accumulates into {hit[0]}, written by another instruction since the last "
                               "wgmma.fence")
            if scale_a != 1 or scale_b != 1:
                self.error(f"{name}: negated operands (imm-scale {scale_a}, {scale_b})")
            ad, bd = decode_wgmma_desc(gad(w, l0)), decode_wgmma_desc(gbd(w, l0))
            for which, d in (("A", ad), ("B", bd)):
                if d.swizzle_mode not in isa.SWIZZLE_BYTES:
                    self.error(f"{name}: {which} descriptor has an invalid swizzle mode")
                    return
            self.mma_kinds.add(("wgmma", n_cols, dataclasses.replace(ad, start=0), a_mn_major,
                                dataclasses.replace(bd, start=0), b_mn_major))
            wq = w.wid % 4
            pend = Pending()
            acc = Access("mma", pend, what=f"wgmma by {w.name()}")
            cta = w.cta
            group = w.wg_open
            a_vals = self._wg_operand(cta, ad, range(16 * wq, 16 * wq + 16), a_mn_major, acc, w, group)
            b_vals = self._wg_operand(cta, bd, range(n_cols), b_mn_major, acc, w, group)
            from ptxkit.machine import _affine  # the sm100 machine's operand check: one affine block

            try:
                m0, ka = _affine(a_vals, "A", self.globals, name)
                n0, kb = _affine(b_vals, "B", self.globals, name)
            except SimValueError as e:
                self.error(str(e))
                return
            if ka is not None and kb is not None and ka != kb:
                self.error(f"{name}: A's k-block starts at {ka}, B's at {kb}")
            k0 = ka if ka is not None else kb
            ks = () if k0 is None else ((k0, k0 + 16),)
            group.pends.append(pend)
            group.regs.update(dregs)
            table = _fragment_table(wq, n_cols)
            merged: dict = {}  # old K ranges -> old + this block (the lanes' registers share a few histories)
            for l in lanes:
                pos = table[l]
                for i, reg in enumerate(dregs):
                    row, col = pos[i]
                    mm = None if m0 is None else m0 + row
                    nn = None if n0 is None else n0 + col
                    regs = w.regs.get(reg)
                    if regs is None:
                        regs = w.regs[reg] = [0] * 32
                    old = regs[l]
                    if not scale_d or old is ZERO or (not isinstance(old, Acc) and old == 0):
                        regs[l] = Acc(mm, nn, ks)
                        continue
                    if not isinstance(old, Acc):
                        self.error(f"{name}: accumulates into {reg} holding {old!r}")
                        continue
                    if (old.m != mm and old.m is not None and mm is not None) or \
                            (old.n != nn and old.n is not None and nn is not None):
                        self.error(f"{name}: accumulates C[{mm}, {nn}] into {reg} holding C[{old.m}, {old.n}]")
                        continue
                    new_ks = merged.get(old.ks)
                    if new_ks is None:
                        try:
                            new_ks = merged[old.ks] = merge_ranges(old.ks + ks)
                        except SimValueError as e:
                            self.error(f"{name}: {e}")
                            return
                    regs[l] = Acc(old.m if mm is None else mm, old.n if nn is None else nn, new_ks)
            w.poisoned.update(dregs)
            w.tick()
        return h

    def _wg_operand(self, cta, desc, mns, mn_major: bool, acc: Access, w, group: _Group) -> list:
        """(mn, kk, value) of the operand's rows ``mns`` and k 0..15, read 16 bytes (8 elements) at a time:
        the race and visibility checks once per 16-byte chunk (the swizzle moves whole chunks)."""
        width = isa.SWIZZLE_BYTES[desc.swizzle_mode]
        smem = cta.smem
        out = []
        if mn_major:
            spans = [(mn0, kk) for kk in range(16) for mn0 in range(mns.start - mns.start % 8, mns.stop, 8)]
        else:
            spans = [(mn, k0) for mn in mns for k0 in (0, 8)]
        for a, b in spans:
            base = isa.swizzle(isa.operand_offset(desc, a, b, mn_major, 2), width)
            group.chunks.add((cta.rank, base >> 4))
            first = self._smem_read(cta, base, 2, acc, w)
            for e in range(8):
                if e == 0:
                    v = first
                else:
                    entry = smem.get(base + 2 * e)
                    v = ZERO if entry is None else entry[1]
                if mn_major:
                    if a + e in mns:
                        out.append((a + e, b, v))
                else:
                    out.append((a, b + e, v))
        return out

    # ---- the end ----------------------------------------------------------------------------------
    def _cta_exit(self, cta) -> None:
        for w in cta.warps:
            if w.wg_groups or w.wg_open.pends:
                self.error(f"{w.name()} exits with wgmma groups no wgmma.wait_group retired")
        super()._cta_exit(cta)


def _global_access(ins) -> bool:
    op = ins.op
    if op.startswith(("ld.global", "st.global", "red.global", "atom.global", "cp.async.cg", "cp.async.ca")):
        return True
    return op.startswith(("cp.async.bulk", "cp.reduce.async.bulk")) and ".global" in op
