"""What a phase's generated code is, with no GPU: compile-only inspection.

``census(ptx)`` counts the instructions that tell the ladder's story (static occurrences in the PTX);
``ptxas_resources`` reads registers, spills and smem from the ptxas remarks; ``inspect_phase`` compiles
a registered phase (any config) for a named target and returns census + resources; ``sass`` disassembles a
cubin (what ptxas made of the PTX: where it scheduled what) where nvdisasm is installed.
"""

from __future__ import annotations

import dataclasses
import os
import re

from cute_gemm.runtime import arch as _arch
from cute_gemm.runtime.problem import Problem

# name -> regex over the PTX text. Order is the order reports print.
CENSUS = {
    "tcgen05.mma cta_group::1": r"tcgen05\.mma\.cta_group::1\b",
    "tcgen05.mma cta_group::2": r"tcgen05\.mma\.cta_group::2\b",
    "tcgen05.commit": r"tcgen05\.commit\b",
    "tcgen05.commit multicast": r"tcgen05\.commit\.[^;]*multicast::cluster",
    "tcgen05.ld": r"tcgen05\.ld\b",
    "tcgen05.alloc": r"tcgen05\.alloc\b",
    "wgmma.mma_async": r"wgmma\.mma_async\b",
    "cp.async.cg (16 B)": r"cp\.async\.cg\.shared\.global",
    "bulk tensor load": r"cp\.async\.bulk\.tensor\.\dd\.shared::(?:cluster|cta)\.global",
    "bulk tensor store": r"cp\.async\.bulk\.tensor\.\dd\.global\.shared::cta",
    "multicast::cluster": r"\.multicast::cluster",
    "mbarrier wait": r"mbarrier\.(?:try_wait|test_wait)",
    "mbarrier expect_tx": r"mbarrier\.(?:arrive\.)?expect_tx",
    "mbarrier complete_tx": r"mbarrier::complete_tx",
    "fence.proxy.async.shared::cta": r"fence\.proxy\.async\.shared::cta",
    "setmaxnreg": r"setmaxnreg\.",
    "stmatrix": r"stmatrix\.",
    "st.global": r"\bst\.global\.",
    "st.shared": r"\bst\.shared\.",
    "bar.sync": r"\b(?:bar|barrier)\.sync\b",
    "bar.arrive": r"\b(?:bar|barrier)(?:\.cta)?\.arrive\b",
    "st.async (DSMEM)": r"\bst\.async\.",
    "ld.shared::cluster (DSMEM)": r"\bld\.shared::cluster\.",
    "cluster barrier": r"\bbarrier\.cluster\.(?:arrive|wait)\b",
    "griddepcontrol (PDL)": r"\bgriddepcontrol\.",
    "cluster launch": r"\.(?:reqnctapercluster|explicitcluster)\b",
}
_CENSUS_RE = {k: re.compile(v) for k, v in CENSUS.items()}


def nvdisasm() -> str | None:
    """The nvdisasm binary: on PATH, or the ``sass`` extra's (``pip install 'cute-gemm[sass]'``: the
    nvidia-cuda-nvdisasm wheel's ``nvidia/cu*/bin``); None where neither is."""
    import glob
    import importlib.util
    import shutil

    found = shutil.which("nvdisasm")
    if found:
        return found
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        for path in sorted(glob.glob(os.path.join(root, "cu*", "bin", "nvdisasm")), reverse=True):
            if os.access(path, os.X_OK):
                return path
    return None


def sass(cubin: bytes) -> str:
    """The SASS of ``cubin`` (``nvdisasm -c``: code only, one instruction a line); RuntimeError where no nvdisasm is
    installed or it fails."""
    import subprocess
    import tempfile

    tool = nvdisasm()
    if tool is None:
        raise RuntimeError("nvdisasm is not installed (pip install 'cute-gemm[sass]')")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        run = subprocess.run([tool, "-c", f.name], capture_output=True, text=True, timeout=120)
    if run.returncode:
        raise RuntimeError(f"nvdisasm failed: {run.stderr.strip()[:300]}")
    return run.stdout


def census(ptx: str) -> dict[str, int]:
    return {name: len(rx.findall(ptx)) for name, rx in _CENSUS_RE.items()}


def instruction_descriptors(ptx: str) -> list[int]:
    """32-bit constants in the PTX that look like tcgen05 f16 instruction descriptors (D=f32 bit set)."""
    found = set()
    for tok in re.findall(r"\b(?:0x[0-9a-fA-F]{8}|\d{8,10})\b", ptx):
        v = int(tok, 0)
        if v < 2**32 and (v >> 4) & 0x3 == 1 and ((v >> 17) & 0x3F) and ((v >> 24) & 0x1F):
            found.add(v)
    return sorted(found)


def idesc_fields(v: int) -> dict:
    """Decode the worklog's fields of an f16 instruction descriptor: N, M, B major."""
    return {"n": ((v >> 17) & 0x3F) << 3, "m": ((v >> 24) & 0x1F) << 4, "b_mn_major": bool((v >> 16) & 1)}


@dataclasses.dataclass
class Inspection:
    key: str
    target: str
    shape: str
    compile_s: float
    census: dict
    registers: int | None
    spill_bytes: int
    stack_bytes: int
    smem_bytes: int
    threads: int | None
    tmem_cols: int | None  # sm100 only
    grid_ctas: int  # CTAs launched at ``shape`` (persistent kernels: <= SMs)
    cluster: int
    config: dict
    operands: str = "nn fp16->fp32"  # what the kernel was compiled for: layout, A/B and C dtypes (Operands.label)
    ptx: str | None = dataclasses.field(default=None, repr=False)
    cubin: bytes | None = dataclasses.field(default=None, repr=False)

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.pop("ptx")
        d.pop("cubin")
        return d


_REGS = re.compile(r"Used (\d+) registers")
_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_SMEM = re.compile(r"(\d+) bytes smem")


def ptxas_resources(text: str) -> dict:
    """Registers, stack, spills and static smem from ptxas remarks (the largest over the kernels seen)."""
    res = {"registers": None, "stack_bytes": 0, "spill_stores": 0, "spill_loads": 0, "static_smem": 0}
    regs = [int(x) for x in _REGS.findall(text)]
    if regs:
        res["registers"] = max(regs)
    for stack, st, ld in _SPILL.findall(text):
        res["stack_bytes"] = max(res["stack_bytes"], int(stack))
        res["spill_stores"] = max(res["spill_stores"], int(st))
        res["spill_loads"] = max(res["spill_loads"], int(ld))
    smem = [int(x) for x in _SMEM.findall(text)]
    if smem:
        res["static_smem"] = max(smem)
    return res


def inspect_phase(entry, target: str | None = None, shape: Problem | None = None, config=None,
                  operands=None) -> Inspection:
    """Compile ``entry`` for ``target`` (default: its family's first target) and ``operands`` (a
    ``phases.operands.Operands``; None: the worklog's nn fp16 -> fp32) and report what it contains.

    The compile is the one that runs (symbolic M, N, K: it serves every shape the phase takes); ``shape``
    (default 4096^3) only picks the launch grid reported and must be a shape the phase takes.
    """
    from cute_gemm.runtime.compile import compile_kernel

    target = _arch.target(target or entry.arch)
    if _arch.family(target) != entry.arch:
        raise ValueError(f"{entry.key} is a {entry.arch} kernel; it cannot be compiled for {target}")
    p = shape or Problem(4096, 4096, 4096)
    kernel = entry.make(config, operands)
    why = kernel.can_implement(p.m, p.n, p.k)
    if why:
        ops = "" if operands is None else f" with {operands.label()}"
        raise ValueError(f"{entry.key} cannot do {p}{ops}: " + "; ".join(why))
    comp = compile_kernel(kernel, target, keep=True)
    res = ptxas_resources(comp.ptxas)
    attrs = kernel.attributes()
    gx, gy, gz = kernel.grid(p.m, p.n, p.k)
    return Inspection(
        key=" ".join(filter(None, [entry.key, entry.overrides_label(kernel.cfg)])),  # "sm90:8 bn=128" for a variant
        target=target,
        shape=str(p),
        compile_s=round(comp.seconds, 2),
        census=census(comp.ptx or ""),
        registers=res["registers"],
        spill_bytes=res["spill_stores"] + res["spill_loads"],
        stack_bytes=res["stack_bytes"],
        # dynamic smem the launch asks for plus any static smem ptxas reports
        smem_bytes=attrs["smem_bytes"] + res["static_smem"],
        threads=attrs["threads"],
        tmem_cols=attrs["tmem_cols"],
        grid_ctas=gx * gy * gz,
        cluster=attrs["cluster"][0] * attrs["cluster"][1] * attrs["cluster"][2],
        config=dataclasses.asdict(kernel.cfg),
        operands=kernel.operands.label(),
        ptx=comp.ptx,
        cubin=comp.cubin,
    )


def dump(ins: Inspection, entry, directory: str) -> list[str]:
    """Write <arch>_phase<id>.ptx and .cubin (e.g. sm100_phase0.ptx) into ``directory``."""
    os.makedirs(directory, exist_ok=True)
    stem = entry.file_stem if ins.target == _arch.target(entry.arch) else f"{entry.file_stem}_{ins.target}"
    out = []
    if ins.ptx:
        path = os.path.join(directory, stem + ".ptx")
        with open(path, "w") as f:
            f.write(ins.ptx)
        out.append(path)
    if ins.cubin:
        path = os.path.join(directory, stem + ".cubin")
        with open(path, "wb") as f:
            f.write(ins.cubin)
        out.append(path)
    return out
