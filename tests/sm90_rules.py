"""Protocol rules the sm90 kernels' PTX must follow, checked on the compiled code without running it.

Each rule returns a list of problems (strings; empty: the rule holds) for a parsed kernel
(``ptxkit.parse.parse``). ``tests/test_sm90_ptx_static.py`` applies them to every sm90 phase, with the
worklog's operands and with others, and to small hand-written PTX that breaks each rule (a check that
cannot fail is a defect). Why each rule holds, from the PTX ISA, is in its docstring.

Two kinds of analysis:

- control-flow rules (``ptxkit.cfg``): "on every path from X to Y there is a Z" (proxy fences, the
  cluster barriers around the DSMEM reduce, programmatic dependent launch);
- a path-sensitive walk of one thread (``Walker``): every path through the kernel, with the values of
  the registers that are constants on that path (loop counters, stage indices, phase bits, a
  warpgroup's id when the thread is given), so that a branch such as "release the previous stage only
  after the first k-tile" is followed exactly where its condition is known; the rules ride along as
  a small state (the wgmma groups in flight, the stages held, the registers touched).
  Loop counters that grow past ``CAP`` are forgotten (widened), so the walk ends.

Rules checked on the PTX machine's run instead (``tests/sm90kit``), because their counts depend on
which warps read which stage and on the CTA's rank: mbarrier arrival counts, expect_tx bytes against
the bytes that land, multicast masks against the CTAs that expect the bytes.
"""

from __future__ import annotations

import re

from ptxkit import cfg
from ptxkit.parse import Instr, Kernel, registers

# --------------------------------------------------------------------------------------------------
# instruction classes
# --------------------------------------------------------------------------------------------------


def is_tma_store(ins: Instr) -> bool:
    """A bulk (tensor) copy that reads shared memory through the async proxy and writes global memory."""
    return ins.op.startswith(("cp.async.bulk.tensor", "cp.async.bulk.global", "cp.reduce.async.bulk")) and \
        ".global.shared" in ins.op


def is_tma_load(ins: Instr) -> bool:
    return ins.op.startswith("cp.async.bulk.tensor") and re.search(r"\.shared::(cta|cluster)\.global", ins.op) is not None


def is_wgmma(ins: Instr) -> bool:
    return ins.op.startswith("wgmma.mma_async")


def is_generic_smem_write(ins: Instr) -> bool:
    """A write of shared memory through the generic proxy: st.shared, or the landing of cp.async copies
    (their data is written once ``cp.async.wait_group`` / ``wait_all`` says so)."""
    return ins.op.startswith(("st.shared", "cp.async.wait_group", "cp.async.wait_all"))


def is_cta_barrier(ins: Instr) -> bool:
    """A barrier at which the CTA's threads meet (named or not, waiting or arriving), or the cluster's."""
    return ins.op.startswith(("bar.sync", "bar.arrive", "bar.red", "barrier.sync", "barrier.arrive", "barrier.red",
                              "barrier.cta", "bar.cta", "barrier.cluster.arrive"))


def is_global_access(ins: Instr) -> bool:
    """An instruction that reads or writes global memory (the tensors A, B, C)."""
    op = ins.op
    if op.startswith(("ld.global", "st.global", "red.global", "atom.global", "ld.global.nc")):
        return True
    if op.startswith(("cp.async.cg", "cp.async.ca")):
        return True  # cp.async from global
    return op.startswith(("cp.async.bulk", "cp.reduce.async.bulk")) and ".global" in op


def is_mbarrier_arrive(ins: Instr) -> bool:
    return ins.op.startswith("mbarrier.arrive")


# --------------------------------------------------------------------------------------------------
# (a) proxy fence -> barrier -> async-proxy read
# --------------------------------------------------------------------------------------------------


def unfenced_async_reads(k: Kernel) -> list[str]:
    """(a) Generic-proxy writes of shared memory reach an async-proxy reader only through
    ``fence.proxy.async`` followed by a barrier.

    PTX ISA (memory consistency model, proxies; ``cp.async.bulk.tensor``, ``wgmma.mma_async``): a TMA
    store and a wgmma read shared memory through the *async proxy*; writes made through the generic proxy
    (``st.shared``; ``cp.async``, whose data counts as written once ``cp.async.wait_group`` returns) become
    visible to it only after the writing thread executes ``fence.proxy.async.shared::cta``. The C staging
    tile (or a cp.async stage) is written by many threads and read by one TMA store (or by the warpgroup's
    wgmma), so each writer must fence *before* the barrier that hands the tile to the reader: a fence
    after the barrier orders nothing for the reader. Checked on every path from a write to a reader:
    a fence, then a barrier, must come between them.
    """
    problems = []
    readers = {i.index for i in k.instrs if is_tma_store(i) or is_wgmma(i)}
    if not readers:
        return []
    seen_bad: set = set()
    for w in (i for i in k.instrs if is_generic_smem_write(i)):
        # states: 0 written, not fenced; 1 fenced, no barrier yet. A barrier in state 1 ends the path.
        stack = [(j, 0) for j in cfg.successors(k, w.index)]
        visited = set()
        while stack:
            j, st = stack.pop()
            if (j, st) in visited or j >= len(k.instrs):
                continue
            visited.add((j, st))
            ins = k.instrs[j]
            if j in readers and (w.index, j) not in seen_bad:
                seen_bad.add((w.index, j))
                what = "no fence.proxy.async" if st == 0 else "fence.proxy.async but no barrier after it"
                problems.append(f"{ins.text.strip()[:70]!r} reads smem written by {w.text.strip()[:50]!r} "
                                f"with {what} on a path between them")
                continue
            if ins.op.startswith("fence.proxy.async"):
                st = 1
            elif is_cta_barrier(ins) and st == 1:
                continue  # ordered for every reader behind this barrier
            stack.extend((s, st) for s in cfg.successors(k, j))
    return problems


# --------------------------------------------------------------------------------------------------
# (e) the DSMEM reduce between cluster barriers
# --------------------------------------------------------------------------------------------------


def _cluster_arrive_release(ins: Instr) -> bool:
    return ins.op.startswith("barrier.cluster.arrive") and ".relaxed" not in ins.op


def _cluster_pair_between(k: Kernel, starts: list[int], targets: set[int], to_exit: bool) -> list[int]:
    """Of the paths from each start (exclusive), those reaching a target (or the kernel's exit when
    ``to_exit``) without passing a releasing ``barrier.cluster.arrive`` followed by a
    ``barrier.cluster.wait``: returns the starts with such a path."""
    bad = []
    for s in starts:
        stack = [(j, 0) for j in cfg.successors(k, s)] or ([(None, 0)] if to_exit else [])
        visited = set()
        hit = False
        while stack and not hit:
            j, st = stack.pop()
            if j is None or j >= len(k.instrs):
                hit = hit or to_exit
                continue
            if (j, st) in visited:
                continue
            visited.add((j, st))
            ins = k.instrs[j]
            if j in targets:
                hit = True
                break
            if _cluster_arrive_release(ins):
                st = 1
            elif ins.op.startswith("barrier.cluster.wait") and st == 1:
                continue
            succ = cfg.successors(k, j)
            if not succ:
                hit = hit or (to_exit and ins.op in ("ret", "exit"))
            stack.extend((x, st) for x in succ)
        if hit:
            bad.append(s)
    return bad


def dsmem_outside_cluster_barriers(k: Kernel, split: int) -> list[str]:
    """(e) Every read of a peer CTA's shared memory (``ld.shared::cluster``) lies between two cluster
    barriers, and the reads cover every CTA of the cluster.

    PTX ISA (``barrier.cluster``; distributed shared memory): another CTA's ``st.shared`` is visible to
    this thread only if the writer's ``barrier.cluster.arrive`` (release semantics by default; ``.relaxed``
    has none) is followed by this thread's ``barrier.cluster.wait`` (acquire) before the read. And a
    CTA's shared memory exists only while the CTA runs: a peer may read it only while no path lets the
    CTA exit first, i.e. a second arrive/wait pair must follow the reads before anyone exits. So: on every
    path from a shared-memory write to an ``ld.shared::cluster`` and from an ``ld.shared::cluster`` to the
    exit, a releasing ``barrier.cluster.arrive`` then a ``barrier.cluster.wait``. The reduce of a split
    tile adds one partial tile from *every* CTA of the cluster: the ranks the ``mapa`` feeding the
    reads name must be 0 .. cluster-1, each once per vector read.
    """
    loads = [i.index for i in k.instrs if i.op.startswith("ld.shared::cluster")]
    if not loads:
        return [] if split <= 1 else [f"{split} CTAs split the tile but no ld.shared::cluster reads the peers' "
                                      "partial tiles"]
    problems = []
    writes = [i.index for i in k.instrs if i.op.startswith("st.shared")]
    for s in _cluster_pair_between(k, writes, set(loads), to_exit=False):
        problems.append(f"an ld.shared::cluster is reachable from {k.instrs[s].text.strip()[:60]!r} without a "
                        "releasing barrier.cluster.arrive + barrier.cluster.wait between them")
    for s in _cluster_pair_between(k, loads, set(), to_exit=True):
        problems.append(f"{k.instrs[s].text.strip()[:60]!r}: a path reaches the exit without a barrier.cluster "
                        "arrive + wait after it (the peer may exit while this read is in flight)")
        break
    # the ranks read: every ld.shared::cluster address comes from a mapa; its rank operand a constant
    ranks = []
    for i in k.instrs:
        if i.op.startswith("mapa"):
            r = i.args[2].strip()
            ranks.append(int(r) if re.fullmatch(r"-?\d+", r) else r)
    consts = sorted({r for r in ranks if isinstance(r, int)})
    if consts != list(range(split)):
        problems.append(f"the reduce's mapa names ranks {consts or ranks[:4]}, not every CTA 0..{split - 1} of the "
                        "cluster")
    return problems


# --------------------------------------------------------------------------------------------------
# (f) programmatic dependent launch
# --------------------------------------------------------------------------------------------------


def global_access_before_griddepcontrol_wait(k: Kernel, pdl: bool) -> list[str]:
    """(f) With programmatic dependent launch, no global memory access before ``griddepcontrol.wait``.

    PTX ISA (``griddepcontrol``): a kernel launched with programmatic stream serialization may start
    while the previous kernel in the stream still runs; ``griddepcontrol.wait`` blocks until that grid
    has completed and its memory operations are visible. Every load of A or B (TMA, cp.async, ld.global)
    and every store of C before it may read stale inputs or race with the previous kernel's accesses.
    Checked on every path from the entry. A kernel is PDL-launched if its config says so or its code
    has any ``griddepcontrol`` instruction.
    """
    if not pdl and not k.find("griddepcontrol"):
        return []
    gate = lambda ins: ins.op.startswith("griddepcontrol.wait")  # noqa: E731
    reach = set() if k.instrs and gate(k.instrs[0]) else cfg.reachable(k, 0, cut=gate)
    early = [i for i in k.instrs if is_global_access(i) and i.index in reach]
    if not k.find("griddepcontrol.wait"):
        return ["a PDL launch without griddepcontrol.wait: nothing waits for the previous grid"] + \
               [f"{i.text.strip()[:70]!r} is not preceded by griddepcontrol.wait" for i in early[:3]]
    return [f"{i.text.strip()[:70]!r} may run before griddepcontrol.wait" for i in early]


# --------------------------------------------------------------------------------------------------
# the path-sensitive walk of one thread
# --------------------------------------------------------------------------------------------------
CAP = 4  # a register updated from itself (x = x + 1: a loop counter) above CAP becomes BIG ("some integer >
# CAP"), below -CAP unknown: growing counters widen, and a comparison of a widened counter with a small
# constant is still decided
BIG = "BIG"
STATE_BUDGET = 400_000

_INT = re.compile(r"^-?\d+$|^-?0[xX][0-9a-fA-F]+$")


def _bits(op: str) -> int:
    for part in reversed(op.split(".")):
        if part in ("b64", "u64", "s64"):
            return 64
        if part in ("b32", "u32", "s32"):
            return 32
        if part in ("b16", "u16", "s16"):
            return 16
        if part == "pred":
            return 1
    return 32


def _signed(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if bits > 1 and v >> (bits - 1) else v


class Walker:
    """Every path of one thread through the kernel, with the registers that are constants on it.

    ``thread``: the thread's ``%tid.x`` (None: any thread), ``rank``: its ``%cluster_ctarank``. ``rule``
    gives the initial rule state, ``rule.step(walker, ins, env, state) -> state`` (may record
    problems) and ``rule.key(state)`` (hashable). Branch and predicate conditions that are constants on
    a path decide it; the others fork. ``mbarrier.try_wait`` succeeds (the thread is past its wait).
    """

    def __init__(self, k: Kernel, rule, thread: int | None = None, rank: int | None = None,
                 special: dict | None = None):
        self.k = k
        self.rule = rule
        self.special = {"%laneid": None if thread is None else thread % 32, "%tid.x": thread, "%tid.y": 0,
                        "%tid.z": 0, "%cluster_ctarank": rank, "%warpid": None if thread is None else thread // 32}
        self.special.update(special or {})
        self.states = 0
        control = control_registers(k)
        self.live = [lv & control for lv in live_registers(k)]

    def value(self, env: dict, op: str):
        op = op.strip()
        if _INT.match(op):
            return int(op, 0)
        if op in self.special:
            return self.special[op]
        return env.get(op)

    def run(self):
        start = (0, (), self.rule.initial())
        stack = [start]
        seen = set()
        while stack:
            pc, env_items, st = stack.pop()
            key = (pc, env_items, self.rule.key(st))
            if key in seen:
                continue
            seen.add(key)
            self.states += 1
            if self.states > STATE_BUDGET:
                raise RuntimeError(f"the walk of {self.k.name[:40]} passed {STATE_BUDGET} states")
            if pc >= len(self.k.instrs):
                self.rule.at_exit(self, st)
                continue
            ins = self.k.instrs[pc]
            env = dict(env_items)
            if ins.op.startswith("bra"):
                target = self.k.labels[ins.args[0]]
                cond = True if ins.pred is None else self._pred(env, ins.pred)
                if cond is None:
                    stack.append((target, self._live_items(target, env), st))
                    stack.append((pc + 1, self._live_items(pc + 1, env), st))
                else:
                    nxt = target if cond else pc + 1
                    stack.append((nxt, self._live_items(nxt, env), st))
                continue
            if ins.op in ("ret", "exit") and ins.pred is None:
                self.rule.at_exit(self, st)
                continue
            cond = True if ins.pred is None else self._pred(env, ins.pred)
            branches = [True, False] if cond is None else [cond]
            for executed in branches:
                e2 = dict(env)
                st2 = st
                if executed:
                    self._eval(ins, e2)
                    st2 = self.rule.step(self, ins, e2, st)
                elif cond is None:
                    # skipped on this path: nothing it would define is known afterwards either way
                    for d in cfg.defs_uses(ins)[0]:
                        e2.pop(d, None)
                stack.append((pc + 1, self._live_items(pc + 1, e2), st2))

    def _live_items(self, pc: int, env: dict) -> tuple:
        """The known registers still read on some path from ``pc``: dead values would only split states."""
        live = self.live[pc] if pc < len(self.live) else ()
        return tuple(sorted((r, v) for r, v in env.items() if r in live))

    def _pred(self, env, pred: str):
        neg = pred.startswith("!")
        v = self.value(env, pred.lstrip("!"))
        if v is None:
            return None
        return (not v) if neg else bool(v)

    def _eval(self, ins: Instr, env: dict) -> None:
        """The known value of the instruction's destination (if any), else forget it."""
        defs, _ = cfg.defs_uses(ins)
        val = None
        op, a = ins.op, ins.args
        base = ins.base
        bits = _bits(op)
        try:
            if op.startswith("mbarrier.try_wait") or op.startswith("mbarrier.test_wait"):
                val = 1
            elif base == "mov" and len(a) == 2 and not a[0].startswith("{") and not a[1].startswith("{"):
                val = self.value(env, a[1])
            elif base in ("add", "sub", "mul", "shl", "shr", "and", "or", "xor", "min", "max", "div", "rem") \
                    and len(a) == 3:
                x, y = self.value(env, a[1]), self.value(env, a[2])
                if BIG in (x, y):
                    val = _big_alu(base, x, y)
                elif x is not None and y is not None:
                    val = _alu(base, op, x, y, bits)
                elif base == "and" and bits == 1 and (x == 0 or y == 0):
                    val = 0
                elif base == "or" and bits == 1 and (x == 1 or y == 1):
                    val = 1
                elif base == "mul" and (x == 0 or y == 0):
                    val = 0
            elif base in ("not", "neg") and len(a) == 2:
                x = self.value(env, a[1])
                if x is not None:
                    val = (int(not x) if bits == 1 else (~x if base == "not" else -x))
            elif base == "selp" and len(a) == 4:
                p = self.value(env, a[3])
                if p is not None:
                    val = self.value(env, a[1] if p else a[2])
                else:
                    x, y = self.value(env, a[1]), self.value(env, a[2])
                    val = x if x is not None and x == y else None
            elif base == "setp" and len(a) == 3:
                x, y = self.value(env, a[1]), self.value(env, a[2])
                if BIG in (x, y) and None not in (x, y):
                    val = _big_cmp(op.split(".")[1], x, y)
                    defs = [a[0].split("|")[0]]
                elif x is not None and y is not None:
                    t = op.split(".")[-1]
                    bw = _bits(op)
                    if t.startswith("s"):
                        x, y = _signed(x, bw), _signed(y, bw)
                    else:
                        x, y = x & ((1 << bw) - 1), y & ((1 << bw) - 1)
                    cmpn = op.split(".")[1]
                    val = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y,
                           "lo": x < y, "ls": x <= y, "hi": x > y, "hs": x >= y}.get(cmpn)
                    val = None if val is None else int(val)
                defs = [a[0].split("|")[0]]
            elif base == "cvt" and len(a) == 2 and ".f" not in op:
                val = self.value(env, a[1])
            elif base == "shfl" and ".idx" in op and a[2].strip() == "0":
                # shfl.sync.idx from lane 0: the DSL's make_warp_uniform, of a value that is the same in
                # every lane of the warp (the warp index): this lane's value is lane 0's
                val = self.value(env, a[1])
        except (ArithmeticError, ValueError, TypeError):
            val = None
        for d in defs:
            env.pop(d, None)
        if val is None or len(defs) != 1:
            return
        if val == BIG:
            env[defs[0]] = BIG
            return
        v = _signed(val, max(bits, 2)) if bits > 1 else int(bool(val))
        counter = defs[0] in a[1:]  # x = x op y: a loop counter (or an accumulating address): widen it
        if counter and v > CAP and bits >= 16:
            env[defs[0]] = BIG
        elif not counter or v >= -CAP:
            env[defs[0]] = v


def control_registers(k: Kernel) -> frozenset:
    """Registers whose value may decide a branch or an instruction's guard (flow-insensitive backward
    closure from every predicate a branch or guard reads): the only values the walk needs to keep."""
    wanted = {i.pred.lstrip("!") for i in k.instrs if i.pred}
    defs_of: dict = {}
    for i in k.instrs:
        d, u = cfg.defs_uses(i)
        if i.op.startswith(("mbarrier.try_wait", "mbarrier.test_wait")):
            u = []  # the walk lets every wait succeed: its operands decide nothing
        for r in d:
            defs_of.setdefault(r, []).append(u)
    stack = list(wanted)
    while stack:
        r = stack.pop()
        for uses in defs_of.get(r, ()):
            for u in uses:
                if u not in wanted:
                    wanted.add(u)
                    stack.append(u)
    return frozenset(wanted)


def live_registers(k: Kernel) -> list[frozenset]:
    """Registers live on entry to each instruction (read on some path before being overwritten)."""
    n = len(k.instrs)
    du = [cfg.defs_uses(i) for i in k.instrs]
    preds: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        for j in cfg.successors(k, i):
            if j < n:
                preds[j].append(i)
    live = [frozenset()] * n
    work = list(range(n))
    while work:
        i = work.pop()
        out = set()
        for j in cfg.successors(k, i):
            if j < n:
                out |= live[j]
        defs, uses = du[i]
        kill = set(defs) if k.instrs[i].pred is None else set()
        new = frozenset((out - kill) | set(uses))
        if new != live[i]:
            live[i] = new
            work.extend(preds[i])
    return live


def _big_alu(base: str, x, y):
    """BIG (an integer > CAP) combined with a known or BIG value, where the result is BIG again."""
    other = y if x == BIG else x
    if other is None:
        return None
    if base in ("add", "max") and (other == BIG or other >= 0):
        return BIG
    if base == "mul" and (other == BIG or other > 0):
        return BIG
    if base == "shl" and x == BIG and y != BIG:
        return BIG
    if base == "min" and other != BIG and other <= CAP:
        return other
    return None


def _big_cmp(cmpn: str, x, y):
    """A comparison with BIG on one side and a known constant (<= CAP) on the other, if decided."""
    if x == BIG and y == BIG:
        return None
    if x == BIG:
        gt = 1  # x > y
    else:
        gt = 0  # x < y
    table = {"eq": 0, "ne": 1, "gt": gt, "hi": gt, "ge": gt, "hs": gt, "lt": 1 - gt, "lo": 1 - gt,
             "le": 1 - gt, "ls": 1 - gt}
    return table.get(cmpn)


def _alu(base: str, op: str, x: int, y: int, bits: int) -> int:
    mask = (1 << bits) - 1 if bits > 1 else 1
    signed = ".s" in op
    if base == "add":
        r = x + y
    elif base == "sub":
        r = x - y
    elif base == "mul":
        r = x * y
    elif base == "shl":
        r = x << y if y < 64 else 0
    elif base == "shr":
        r = (_signed(x, bits) >> y) if signed else ((x & mask) >> y)
    elif base == "and":
        r = x & y
    elif base == "or":
        r = x | y
    elif base == "xor":
        r = x ^ y
    elif base == "min":
        r = min(x, y)
    elif base == "max":
        r = max(x, y)
    elif base == "div":
        r = int(x / y)
    else:
        r = x - int(x / y) * y
    return r & mask


# --------------------------------------------------------------------------------------------------
# (b), (g), (h): the wgmma groups in flight
# --------------------------------------------------------------------------------------------------


def _first_events(k: Kernel, start: int, is_event) -> set[int]:
    """Indices of the first event instructions reached on the paths leaving ``start``."""
    out = set()
    stack = list(cfg.successors(k, start))
    seen = set()
    while stack:
        j = stack.pop()
        if j in seen or j >= len(k.instrs):
            continue
        seen.add(j)
        if j != start and is_event(k.instrs[j]):
            out.add(j)
            continue
        stack.extend(cfg.successors(k, j))
    return out


def consumer_waits(k: Kernel) -> set[int]:
    """The mbarrier waits after which a thread issues wgmma: the consumers' waits on a full barrier.

    A wait followed (before any other mbarrier operation or copy) by a ``wgmma.mma_async`` on every path
    hands the thread a stage to read; the producers' waits (on empty barriers) are followed by loads."""
    def event(ins):
        return (ins.op.startswith(("mbarrier.", "cp.async", "st.async", "wgmma.mma_async", "ld.shared", "st.shared"))
                or is_cta_barrier(ins))
    out = set()
    for ins in k.instrs:
        if ins.op.startswith(("mbarrier.try_wait", "mbarrier.test_wait")):
            firsts = _first_events(k, ins.index, event)  # (the inline wait's retry loop leads back to it)
            if firsts and all(is_wgmma(k.instrs[j]) for j in firsts):
                out.add(ins.index)
    return out


def wgmma_dest_registers(ins: Instr) -> tuple:
    return tuple(registers(ins.args[0]))


class WgmmaRule:
    """(b), (g), (h) in one walk: the state is (stages held, committed groups in flight with the stage
    each reads and the registers it writes, the open group, registers written since wgmma.fence).

    Stages are counted, not named: a consumer wait on a full barrier acquires the next stage (the newest
    held), and a consumer's arrive on an mbarrier while it holds stages releases the oldest one (a ring is
    released in the order it is acquired). A wgmma reads the stage acquired last before it. Stage tags
    are relative: 0 the newest held stage, growing by one at each new acquire.
    """

    MAX_HELD = 10

    def __init__(self, k: Kernel):
        self.k = k
        self.waits = consumer_waits(k)
        self.dregs = frozenset(r for i in k.instrs if is_wgmma(i) for r in wgmma_dest_registers(i))
        self.problems: dict = {}

    def initial(self):
        # held, groups ((tag, regs),...), open (tag or None, regs), touched (regs written since fence; ALL at entry)
        return (0, (), None, frozenset(), "ALL")

    def key(self, st):
        return st

    def report(self, kind: str, ins: Instr, msg: str) -> None:
        self.problems.setdefault((kind, ins.index), f"{ins.text.strip()[:80]!r}: {msg}")

    def at_exit(self, walker, st) -> None:
        pass

    def step(self, walker, ins: Instr, env: dict, st):
        held, groups, open_, open_regs, touched = st
        op = ins.op
        if is_wgmma(ins):
            d = frozenset(wgmma_dest_registers(ins))
            if touched == "ALL" or (d & touched):
                which = "before any wgmma.fence" if touched == "ALL" else \
                    f"after {sorted(d & touched)[0]} was written by another instruction since the last wgmma.fence"
                self.report("h", ins, f"wgmma.mma_async {which}")
            tag = 0 if held else None
            open_ = tag if open_ is None else (min(open_, tag) if tag is not None else open_)
            return (held, groups, open_, open_regs | d, touched)
        if op.startswith("wgmma.fence"):
            return (held, groups, open_, open_regs, frozenset())
        if op.startswith("wgmma.commit_group"):
            return (held, groups + ((open_, open_regs),), None, frozenset(), touched)
        if op.startswith("wgmma.wait_group"):
            n = int(ins.args[0])
            return (held, groups[len(groups) - n:] if n else (), open_, open_regs, touched)
        # registers read or written by other instructions while a group writing them is in flight (g)
        defs, uses = cfg.defs_uses(ins)
        inflight = frozenset().union(*(g[1] for g in groups)) | open_regs if (groups or open_regs) else frozenset()
        if inflight:
            hit = [r for r in uses if r in inflight]
            if hit:
                self.report("g", ins, f"reads {hit[0]}, an accumulator of a wgmma that no wgmma.wait_group has "
                                      "retired yet")
            hitw = [r for r in defs if r in inflight]
            if hitw and not hit:
                self.report("g", ins, f"writes {hitw[0]} while a wgmma writing it is in flight")
        if touched != "ALL":
            written = [r for r in defs if r in self.dregs]
            if written:
                touched = touched | frozenset(written)
        if ins.index in self.waits:
            if held >= self.MAX_HELD:
                return (held, groups, open_, open_regs, touched)
            shift = lambda t: None if t is None else t + 1  # noqa: E731
            return (held + 1, tuple((shift(t), r) for t, r in groups), shift(open_), open_regs, touched)
        if is_mbarrier_arrive(ins) and "expect_tx" not in op and held:
            oldest = held - 1
            late = [i for i, (t, _) in enumerate(groups) if t is not None and t >= oldest]
            if open_ is not None and open_ >= oldest:
                self.report("b", ins, "releases a stage that an uncommitted wgmma still reads")
            elif late:
                depth = len(groups) - late[0] - 1
                self.report("b", ins, f"releases a stage whose wgmma group is still in flight: {len(groups)} group(s) "
                                      f"may be pending and the one reading this stage was committed {depth} group(s) "
                                      f"before the last; a wgmma.wait_group {depth} (or less) must come first")
            return (held - 1, groups, open_, open_regs, touched)
        return (held, groups, open_, open_regs, touched)


def wgmma_problems(k: Kernel, threads: int | None = None, lanes=None) -> dict[str, list[str]]:
    """{"b": [...], "g": [...], "h": [...]}: the three wgmma rules of one walk over every thread's paths.

    (b) Before a consumer arrives on an empty barrier, the wgmma reading that stage has completed.
    PTX ISA (``wgmma.mma_async``, ``wgmma.commit_group``, ``wgmma.wait_group``): the MMA reads its
    shared-memory operands asynchronously until its group completes; ``wgmma.wait_group N`` waits until
    at most the N most recent committed groups are pending. The arrive on a stage's empty barrier lets
    the producer's next TMA load overwrite the stage, so the group that reads it must be older than the
    N newest at the last wait: N is derived from the groups committed since that group (the walk
    counts them on each path), not from a constant.

    (g) No accumulator register of a wgmma is read or written by another instruction before a
    ``wgmma.wait_group`` has retired its group. PTX ISA: "Accessing the accumulator register ... before
    the wgmma.wait_group ... results in undefined behavior."

    (h) A ``wgmma.fence`` comes before the first wgmma and between any other instruction's write of an
    accumulator register and the wgmma that accumulates into it. PTX ISA (``wgmma.fence``): required
    before the first ``wgmma.mma_async`` and "between a register access by a thread in the warpgroup and
    any wgmma.mma_async instruction that accesses the same registers" (the zeroing of the accumulator
    for the next tile is such an access).
    """
    rule = WgmmaRule(k)
    if threads is None:
        threads = reqntid(k)
    # one walk per warp and per lane that may arrive (lane r arrives on the barrier of CTA r of the
    # cluster): with the thread known, the role branches and the "lane 0 arrives" branches are decided
    for w in range(threads // 32):
        for lane in range(min(cluster_size(k), 32)) if lanes is None else lanes:
            Walker(k, rule, thread=32 * w + lane).run()
    out: dict = {"b": [], "g": [], "h": []}
    for (kind, idx), msg in sorted(rule.problems.items(), key=lambda kv: kv[0][1]):
        out[kind].append(msg)
    return out


def reqntid(k: Kernel) -> int:
    m = re.search(r"\.reqntid\s+(\d+),\s*(\d+),\s*(\d+)", k.directives)
    return int(m.group(1)) * int(m.group(2)) * int(m.group(3)) if m else 128


def cluster_size(k: Kernel) -> int:
    m = re.search(r"\.reqnctapercluster\s+(\d+),\s*(\d+),\s*(\d+)", k.directives)
    return int(m.group(1)) * int(m.group(2)) * int(m.group(3)) if m else 1


# --------------------------------------------------------------------------------------------------
# (i) setmaxnreg: the warpgroups' registers fit the CTA's pool
# --------------------------------------------------------------------------------------------------


class _SetmaxnregRule:
    def __init__(self):
        self.values: set = set()

    def initial(self):
        return None

    def key(self, st):
        return st

    def at_exit(self, walker, st) -> None:
        self.values.add(st)

    def step(self, walker, ins, env, st):
        if ins.op.startswith("setmaxnreg"):
            return int(ins.args[0])
        return st


def setmaxnreg_over_budget(k: Kernel, entry_regs: int, threads: int) -> list[str]:
    """(i) The registers the warpgroups ask for with ``setmaxnreg`` fit the pool the CTA started with.

    PTX ISA (``setmaxnreg``): ``.dec`` releases registers of the warp to a per-CTA pool, ``.inc`` blocks
    until the pool holds the requested registers; the pool starts with what the CTA was launched with,
    ``threads x`` the per-thread count ptxas allocated (``entry_regs``). If the warpgroups' final counts
    add up to more than that, the ``.inc`` never completes: the kernel hangs. The count of each warpgroup
    comes from a walk of its first thread's paths (the role branches decide on ``%tid.x``)."""
    total = 0
    detail = []
    for g in range(threads // 128):
        rule = _SetmaxnregRule()
        Walker(k, rule, thread=128 * g).run()
        vals = {entry_regs if v is None else v for v in rule.values}
        final = max(vals) if vals else entry_regs
        total += 128 * final
        detail.append(f"warpgroup {g}: {final}")
    if total > threads * entry_regs:
        return [f"the warpgroups ask for {total} registers ({', '.join(detail)} per thread), the CTA started with "
                f"{threads} x {entry_regs} = {threads * entry_regs}: setmaxnreg.inc would wait forever"]
    return []
