"""A PTX kernel as data: its parameters and its instructions, with labels resolved.

Covers what the DSL's kernels contain (one ``.entry`` per module, straight PTX plus inline-asm blocks
``{ .reg .pred P1; LAB: ... }``, whose local labels and registers are renamed per block so that every
name is unique in the kernel).
"""

from __future__ import annotations

import dataclasses
import re

_ENTRY = re.compile(r"\.entry\s+(\w+)\s*\((.*?)\)\s*(.*?)\{", re.S)
_PARAM = re.compile(r"\.param\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+(\w+)(?:\[(\d+)\])?")
_LABEL = re.compile(r"^([$\w]+):$")
_REGDECL = re.compile(r"^\.reg\s+\.\w+\s+(.+);$")


@dataclasses.dataclass
class Param:
    name: str
    align: int
    size: int  # bytes


@dataclasses.dataclass
class Instr:
    index: int
    pred: str | None  # "%p3" / "!%p3" / None
    op: str  # the full opcode with its qualifiers: "mbarrier.try_wait.parity.shared.b64"
    args: list  # operand strings, vectors and addresses kept whole: "{%r1, %r2}", "[%r3+16]"
    text: str

    @property
    def base(self) -> str:
        """The opcode without qualifiers: "mbarrier"."""
        return self.op.split(".", 1)[0]


@dataclasses.dataclass
class Kernel:
    name: str
    params: list[Param]
    directives: str  # .reqntid, .reqnctapercluster, ... (as text)
    instrs: list[Instr]
    labels: dict[str, int]  # label -> index of the instruction it precedes

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    def find(self, prefix: str) -> list[Instr]:
        return [i for i in self.instrs if i.op.startswith(prefix)]


def _split_args(s: str) -> list[str]:
    """Operands separated by top-level commas (commas inside {} and [] belong to one operand)."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _statements(body: str):
    """Yield statements and block markers: ("{",), ("}",), ("label", name), ("stmt", text)."""
    body = re.sub(r"//[^\n]*", "", body)
    for raw in body.split("\n"):
        line = raw.strip()
        while line:
            if line[0] in "{}":
                yield (line[0],)
                line = line[1:].strip()
                continue
            m = re.match(r"^([$\w]+):", line)
            if m and not line.startswith("%"):
                yield ("label", m.group(1))
                line = line[m.end():].strip()
                continue
            end = line.find(";")
            if end < 0:
                raise ValueError(f"unterminated PTX statement: {line!r}")
            yield ("stmt", line[: end + 1])
            line = line[end + 1:].strip()


def parse(ptx: str) -> Kernel:
    m = _ENTRY.search(ptx)
    if not m:
        raise ValueError("no .entry in the PTX")
    name, params_text, directives = m.group(1), m.group(2), m.group(3)
    params = [Param(pm.group(3), int(pm.group(1) or 0), int(pm.group(4) or 0) or _SCALAR.get(pm.group(2), 0))
              for pm in _PARAM.finditer(params_text)]
    # the body: from the entry's opening brace to its matching close
    start = m.end()
    depth, pos = 1, start
    while depth:
        ch = ptx[pos]
        depth += ch == "{"
        depth -= ch == "}"
        pos += 1
    body = ptx[start: pos - 1]

    instrs: list[Instr] = []
    labels: dict[str, int] = {}
    scopes: list[dict] = [{}]  # renames of names declared in inline-asm blocks
    block_no = 0
    stmts = list(_statements(body))
    for pos, st in enumerate(stmts):
        if st[0] == "{":
            # names declared in the block (labels, .reg) are local to it: rename them all up front, so
            # that forward branches to a block-local label resolve too
            block_no += 1
            scope, depth = {"#": block_no}, 0
            for inner in stmts[pos:]:
                depth += inner[0] == "{"
                depth -= inner[0] == "}"
                if depth == 0:
                    break
                if depth == 1 and inner[0] == "label":
                    scope[inner[1]] = f"{inner[1]}#{block_no}"
                elif depth == 1 and inner[0] == "stmt" and (d := _REGDECL.match(inner[1])):
                    for reg in d.group(1).split(","):
                        scope[reg.strip()] = f"{reg.strip()}#{block_no}"
            scopes.append(scope)
            continue
        if st[0] == "}":
            scopes.pop()
            continue
        if st[0] == "label":
            labels[_rename(st[1], scopes)] = len(instrs)
            continue
        text = st[1]
        if text.startswith("."):
            continue
        instrs.append(_instr(len(instrs), text, scopes))
    # labels used before their block's declaration (forward jumps inside an asm block): resolve late
    for ins in instrs:
        if ins.op.startswith("bra"):
            tgt = ins.args[0]
            if tgt not in labels:
                raise ValueError(f"branch to unknown label {tgt!r}: {ins.text}")
    return Kernel(name, params, directives, instrs, labels)


_SCALAR = {"u32": 4, "s32": 4, "b32": 4, "u64": 8, "s64": 8, "b64": 8, "f32": 4, "u16": 2, "b16": 2, "u8": 1, "b8": 1}


def _rename(token: str, scopes: list[dict]) -> str:
    for scope in reversed(scopes[1:]):
        if token in scope:
            return scope[token]
    return token


def _instr(index: int, text: str, scopes: list[dict]) -> Instr:
    body = text[:-1].strip()
    pred = None
    if body.startswith("@"):
        p, body = body.split(None, 1)
        neg = p.startswith("@!")
        reg = _rename(p[2:] if neg else p[1:], scopes)
        pred = ("!" if neg else "") + reg
    parts = body.split(None, 1)
    op = parts[0]
    args = _split_args(parts[1]) if len(parts) > 1 else []
    if len(scopes) > 1:
        args = [re.sub(r"[$%]?\w+(?:#\d+)?", lambda mm: _rename(mm.group(0), scopes), a) for a in args]
    return Instr(index, pred, op, args, text)


def registers(operand: str) -> list[str]:
    """The registers an operand names: "%r1", "{%r1, %r2}", "[%r3+16]", "%r4|%p2" -> their names."""
    return re.findall(r"%\w+(?:#\d+)?|\bP\d+#\d+", operand)
