"""Control flow of a parsed PTX kernel, and the static checks that need only the code, not a run.

Everything works on instruction indices: successors, reachability with some instructions or edges cut,
and a forward data-flow over registers. The checks answer questions like "can a path from the entry
reach this ``tcgen05.alloc`` without passing a ``barrier.cluster.wait``?".
"""

from __future__ import annotations

from ptxkit.parse import Instr, Kernel, registers

# opcodes (by prefix) whose operands are all read: stores, barriers, async copies, MMA issue, ...
_NO_DEST = ("st.", "red.", "cp.", "bar.", "barrier.", "bra", "ret", "exit", "fence.", "prefetch.",
            "tcgen05.mma", "tcgen05.commit", "tcgen05.alloc", "tcgen05.dealloc", "tcgen05.relinquish",
            "tcgen05.wait", "mbarrier.init", "mbarrier.arrive.shared::cluster", "griddepcontrol", "trap",
            "membar", "setmaxnreg")


def successors(k: Kernel, i: int) -> list[int]:
    ins = k.instrs[i]
    if ins.op.startswith("bra"):
        tgt = k.labels[ins.args[0]]
        return [tgt] if ins.pred is None else [tgt, i + 1]
    if ins.op in ("ret", "exit", "trap") and ins.pred is None:
        return []
    return [i + 1] if i + 1 < len(k.instrs) else []


def reachable(k: Kernel, start: int = 0, cut=lambda ins: False, drop_edge=lambda i, j: False) -> set[int]:
    """Instructions reachable from ``start``; paths stop at instructions where ``cut`` holds (they are
    reached but not passed) and never take an edge where ``drop_edge(i, j)`` holds."""
    seen, stack = set(), [start]
    while stack:
        i = stack.pop()
        if i in seen or i >= len(k.instrs):
            continue
        seen.add(i)
        if cut(k.instrs[i]) and i != start:
            continue
        stack.extend(j for j in successors(k, i) if not drop_edge(i, j))
    return seen


def defs_uses(ins: Instr) -> tuple[list[str], list[str]]:
    """(registers written, registers read) by an instruction; the guard predicate is read."""
    uses = [ins.pred.lstrip("!")] if ins.pred else []
    if not ins.args:
        return [], uses
    if ins.op.startswith(_NO_DEST):
        return [], uses + [r for a in ins.args for r in registers(a)]
    if ins.op.startswith(("mbarrier.arrive", "mbarrier.expect_tx")) and ins.args[0] == "_":
        return [], uses + [r for a in ins.args[1:] for r in registers(a)]
    return registers(ins.args[0]), uses + [r for a in ins.args[1:] for r in registers(a)]


def elect_predicates(k: Kernel) -> dict[str, bool]:
    """Predicate registers that encode "this lane was elected by elect.sync": True if the predicate is
    true exactly in the elected lane, False if exactly in the others (its negation)."""
    out: dict[str, bool] = {}
    for ins in k.instrs:
        if ins.op.startswith("elect.sync"):
            out[ins.args[0].split("|")[1].strip()] = True
        _propagate(ins, out)
    return out


def lane0_predicates(k: Kernel) -> dict[str, bool]:
    """Predicate registers that encode "this is lane 0" (a comparison of %laneid with 0): True if the
    predicate is true exactly in lane 0, False if exactly in the other lanes."""
    lane_regs = {ins.args[0] for ins in k.instrs if ins.base == "mov" and ins.args[1:] == ["%laneid"]}
    out: dict[str, bool] = {}
    for ins in k.instrs:
        if ins.base == "setp" and ins.args[1] in lane_regs and ins.args[2] == "0":
            if ".eq." in ins.op + ".":
                out[ins.args[0]] = True
            elif ".ne." in ins.op + ".":
                out[ins.args[0]] = False
        _propagate(ins, out)
    return out


def _propagate(ins: Instr, out: dict[str, bool]) -> None:
    if ins.op == "not.pred" and ins.args[1] in out:
        out[ins.args[0]] = not out[ins.args[1]]
    elif ins.op == "mov.pred" and ins.args[1] in out:
        out[ins.args[0]] = out[ins.args[1]]


def only_reached_when(k: Kernel, idx: int, preds: dict[str, bool]) -> bool:
    """True if instruction ``idx`` runs only in the lanes where the condition that ``preds`` encodes holds
    (``elect_predicates`` or ``lane0_predicates``): with every branch edge taken only under that
    condition removed, the entry no longer reaches it."""

    def needs_condition(i: int, j: int) -> bool:
        ins = k.instrs[i]
        if not ins.op.startswith("bra") or ins.pred is None:
            return False
        neg = ins.pred.startswith("!")
        reg = ins.pred.lstrip("!")
        if reg not in preds:
            return False
        taken_iff_condition = preds[reg] != neg
        to_target = j == k.labels[ins.args[0]]
        return to_target == taken_iff_condition

    return idx not in reachable(k, drop_edge=needs_condition)


def passes_before(k: Kernel, idx: int, gate) -> bool:
    """True if every path from the entry to instruction ``idx`` passes an instruction where ``gate`` holds."""
    return idx not in reachable(k, cut=gate)


def unwaited_tcgen05_ld_uses(k: Kernel) -> list[str]:
    """Reads of a tcgen05.ld destination register before a tcgen05.wait::ld on some path.

    tcgen05.ld is asynchronous: its destination registers hold the TMEM values only once the thread has
    executed tcgen05.wait::ld. Forward data-flow of the set of registers still pending. A ``mov`` of a
    pending register (the compiler packs register pairs early) makes its destination pending rather
    than counting as a use: what matters is that no value reaches memory or arithmetic unwaited."""
    n = len(k.instrs)
    pending_in: list[set | None] = [None] * n
    pending_in[0] = set()
    work = [0]
    problems = {}
    while work:
        i = work.pop()
        ins = k.instrs[i]
        state = set(pending_in[i])
        defs, uses = defs_uses(ins)
        bad = [r for r in uses if r in state]
        if ins.op.startswith("tcgen05.wait::ld"):
            state = set()
        elif ins.op.startswith("tcgen05.ld") or (bad and ins.base == "mov"):
            state |= set(defs)
        else:
            if bad:
                problems[i] = f"{ins.text.strip()[:90]} reads {', '.join(sorted(set(bad))[:3])} before tcgen05.wait::ld"
            state -= set(defs)  # overwritten: no longer the load's value
        for j in successors(k, i):
            if pending_in[j] is None or not state <= pending_in[j]:
                pending_in[j] = state | (pending_in[j] or set())
                work.append(j)
    return [problems[i] for i in sorted(problems)]


# --- the PTX memory model at the hand-offs (tcgen05 thread-sync fences, cluster-scope signals) --------
def _release(ins: Instr) -> bool:
    """A thread synchronization that hands what the thread did to others: an mbarrier arrive, a CTA or
    cluster barrier (arrive or sync). ``bar.warp.sync`` only reconverges a warp (TMEM accesses are
    warp-collective)."""
    op = ins.op
    return (op.startswith("mbarrier.arrive") or op.startswith(("bar.sync", "bar.arrive", "barrier.sync",
            "barrier.arrive", "barrier.cta.", "barrier.cluster.arrive")) or op == "barrier") and \
        not op.startswith("bar.warp")


def _acquire(ins: Instr) -> bool:
    """A thread synchronization after which the thread may see what others did: an mbarrier wait, a CTA
    barrier it waits at, a cluster barrier wait."""
    op = ins.op
    return op.startswith(("mbarrier.try_wait", "mbarrier.test_wait", "bar.sync", "barrier.sync",
                          "barrier.cluster.wait", "barrier.cta.sync")) or op == "barrier"


def _forward(k: Kernel, init, step) -> None:
    """A forward may-analysis over the control flow: ``step(i, state) -> state`` (states are frozensets,
    joined by union) until nothing changes."""
    n = len(k.instrs)
    state_in: list = [None] * n
    state_in[0] = init
    work = [0]
    while work:
        i = work.pop()
        out = step(i, state_in[i])
        for j in successors(k, i):
            if state_in[j] is None or not out <= state_in[j]:
                state_in[j] = out | (state_in[j] or frozenset())
                work.append(j)


def tcgen05_unfenced_releases(k: Kernel) -> list[str]:
    """Thread synchronizations that a tcgen05.ld may precede without ``tcgen05.wait::ld`` and then
    ``tcgen05.fence::before_thread_sync`` between them: the TMEM read is then not ordered before what
    another thread does after synchronizing with this one (the next tile's MMA, the dealloc)."""
    problems = {}

    def step(i, state):
        ins = k.instrs[i]
        if ins.op.startswith("tcgen05.ld"):
            return frozenset({"unwaited"}) | (state - {"unwaited"})
        if ins.op.startswith("tcgen05.wait::ld"):
            return frozenset({"unfenced"}) if "unwaited" in state or "unfenced" in state else state
        if ins.op.startswith("tcgen05.fence::before_thread_sync"):
            return state - {"unfenced"}
        if _release(ins) and state:
            why = "before tcgen05.wait::ld" if "unwaited" in state else "without tcgen05.fence::before_thread_sync"
            problems[i] = f"{ins.text.strip()[:80]} may follow a tcgen05.ld {why}"
        return state

    _forward(k, frozenset(), step)
    return [problems[i] for i in sorted(problems)]


def tcgen05_unfenced_acquires(k: Kernel) -> list[str]:
    """tcgen05.ld's and tcgen05.dealloc's that a thread synchronization may precede without
    ``tcgen05.fence::after_thread_sync`` between them: the TMEM access is then not ordered after what the
    thread synchronized with (the MMAs' commit, the other warps' reads)."""
    problems = {}

    def step(i, state):
        ins = k.instrs[i]
        if _acquire(ins):
            return frozenset({"acquired"})
        if ins.op.startswith("tcgen05.fence::after_thread_sync"):
            return frozenset()
        if ins.op.startswith(("tcgen05.ld", "tcgen05.dealloc")) and state:
            problems[i] = f"{ins.text.strip()[:80]} may follow a thread synchronization without " \
                          f"tcgen05.fence::after_thread_sync"
        return state

    _forward(k, frozenset(), step)
    return [problems[i] for i in sorted(problems)]


def remote_signals(k: Kernel) -> list[str]:
    """The instructions by which a CTA signals an mbarrier of another CTA of its cluster: a remote arrive
    (``mbarrier.arrive...shared::cluster``), a multicast ``tcgen05.commit``, a ``.cta_group::2`` TMA load
    (the peer's bytes complete on the leader's barrier), an ``st.async`` completing on the peer's barrier."""
    out = []
    for ins in k.instrs:
        op = ins.op
        if (op.startswith("mbarrier.arrive") and "shared::cluster" in op) or \
                (op.startswith("tcgen05.commit") and "multicast" in op) or \
                (op.startswith("cp.async.bulk.tensor") and ".cta_group::2" in op) or \
                (op.startswith("st.async") and "mbarrier" in op):
            out.append(ins.text.strip())
    return out


def cta_scope_signals(k: Kernel) -> list[str]:
    """In a kernel whose CTAs signal each other's mbarriers (``remote_signals``): the mbarrier waits that
    acquire at CTA scope (the default ``.acquire.cta``: they do not synchronize with a release of another
    CTA) and the remote arrives that release at CTA scope. Each must be ``.cluster``."""
    if not remote_signals(k):
        return []
    out = []
    for ins in k.instrs:
        op = ins.op
        if op.startswith(("mbarrier.try_wait", "mbarrier.test_wait")) and ".acquire.cluster" not in op:
            out.append(f"{ins.text.strip()[:80]}: a CTA-scope acquire")
        if op.startswith("mbarrier.arrive") and "shared::cluster" in op and ".release.cluster" not in op:
            out.append(f"{ins.text.strip()[:80]}: a remote arrive with a CTA-scope release")
    return out
