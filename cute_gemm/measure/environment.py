"""What a result file records about where and how it was measured."""

from __future__ import annotations

import datetime
import importlib.metadata
import platform
import shlex
import subprocess
import sys


def _smi(query: str) -> str | None:
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits", "-i", "0"],
            capture_output=True, text=True, timeout=10,
        )
        return out.stdout.strip() or None if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


# result key -> the distributions that provide it (pynvml.py ships in nvidia-ml-py, or the older pynvml)
OPTIONAL_PACKAGES = {"triton": ("triton",), "quack": ("quack-kernels",), "pynvml": ("nvidia-ml-py", "pynvml"),
                     "rich": ("rich",)}


def versions() -> dict:
    out = {"python": platform.python_version()}
    try:
        import torch

        out["torch"] = torch.__version__
        out["torch_cuda"] = torch.version.cuda
    except ImportError:
        out["torch"] = None
    try:
        import cutlass

        out["nvidia_cutlass_dsl"] = cutlass.__version__
    except ImportError:
        out["nvidia_cutlass_dsl"] = None
    from cute_gemm import __version__

    out["cute_gemm"] = __version__
    # the peers' and the telemetry's packages, read from their metadata (importing quack or triton is slow)
    for key, dists in OPTIONAL_PACKAGES.items():
        out[key] = next((v for v in map(_dist_version, dists) if v), None)
    return out


def _dist_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def gpu() -> dict | None:
    """Name, SM count, capability, L2, clocks and driver of GPU 0, or None without one."""
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        prop = torch.cuda.get_device_properties(0)
    except Exception:
        return None
    info = {
        "name": prop.name,
        "capability": f"{prop.major}.{prop.minor}",
        "sm_count": prop.multi_processor_count,
        "l2_bytes": getattr(prop, "L2_cache_size", None),
        "memory_bytes": prop.total_memory,
        "driver": _smi("driver_version"),
    }
    clocks = _smi("clocks.sm,clocks.max.sm,clocks.mem")
    if clocks:
        parts = [p.strip() for p in clocks.split(",")]
        if len(parts) == 3:
            info["clock_sm_mhz"], info["clock_sm_max_mhz"], info["clock_mem_mhz"] = parts
    return info


def command() -> str:
    """The command line as typed: `python3 -m cute_gemm ...` shows as such, not as a __main__.py path."""
    argv = list(sys.argv)
    if argv and argv[0].endswith(("cute_gemm/__main__.py", "cute_gemm\\__main__.py")):
        argv[0:1] = ["python3", "-m", "cute_gemm"]
    elif argv:
        argv[0] = argv[0].rsplit("/", 1)[-1]
    return " ".join(shlex.quote(a) for a in argv)


def record() -> dict:
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command(),
        "host": platform.node(),
        "gpu": gpu(),
        "versions": versions(),
    }
