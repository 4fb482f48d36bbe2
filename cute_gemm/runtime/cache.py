"""Compiled kernels kept across processes: one object file per (target, phase, config) on disk.

A compiled TVM-FFI function is exported with ``export_to_c`` to ``<dir>/<fingerprint>/<name>.o`` and a
later process loads it with ``cute.runtime.load_module`` instead of compiling again. The fingerprint
hashes every source file the kernels are built from (``sources()``: ``phases/`` and the module that
compiles them, ``cute_gemm/runtime/compile.py``) and the
versions of Python, the DSL and tvm-ffi, so an edit or an upgrade starts a fresh directory instead of
loading a stale kernel. Writes go to a temporary file renamed into place: two processes compiling the
same kernel at once both succeed, and a reader never sees half a file.

``CUTE_GEMM_CACHE_DIR`` moves the cache (default ``~/.cache/cute-gemm``); ``CUTE_GEMM_NO_DISK_CACHE=1``
turns it off.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import platform
import tempfile
from functools import lru_cache

_RUNTIME = pathlib.Path(__file__).resolve().parent
_ROOT = _RUNTIME.parent.parent  # the checkout (or site-packages) holding cute_gemm/ and phases/


def enabled() -> bool:
    return os.environ.get("CUTE_GEMM_NO_DISK_CACHE", "") not in ("1", "true", "yes")


def cache_dir() -> pathlib.Path:
    default = pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache")) / "cute-gemm"
    return pathlib.Path(os.environ.get("CUTE_GEMM_CACHE_DIR", default))


@lru_cache(maxsize=1)
def fingerprint() -> str:
    """Hash of the kernel sources and the toolchain versions (16 hex digits)."""
    import cutlass
    import tvm_ffi

    h = hashlib.sha256()
    h.update(f"{platform.python_version()}|{cutlass.__version__}|{tvm_ffi.__version__}".encode())
    for path in sources():
        h.update(str(path.relative_to(_ROOT)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def sources() -> list[pathlib.Path]:
    """The files a compiled kernel is built from: every kernel module and the compile step itself."""
    return sorted((_ROOT / "phases").rglob("*.py")) + [_RUNTIME / "compile.py"]


def entry_name(key: str, target: str, config, operands=None) -> str:
    """A C symbol naming one compiled kernel: phase, target, layout and dtypes, and a hash of its config."""
    from phases.operands import WORKLOG

    ops = operands if operands is not None else WORKLOG
    cfg = hashlib.sha256(repr(config).encode()).hexdigest()[:12]
    tag = "" if ops == WORKLOG else f"_{ops.layout}_{ops.ab}_{ops.c}"
    return f"cute_gemm_{key.replace(':', '_')}_{target}{tag}_{cfg}"


def path_for(name: str) -> pathlib.Path:
    return cache_dir() / fingerprint() / f"{name}.o"


def load(name: str):
    """The cached function ``name``, or None when it is not on disk (or cannot be loaded)."""
    path = path_for(name)
    if not path.is_file():
        return None
    import cutlass.cute as cute

    try:
        return cute.runtime.load_module(str(path), enable_tvm_ffi=True)[name]
    except Exception:  # a truncated or foreign file: compile again (and overwrite it)
        return None


def store(name: str, compiled_fn) -> pathlib.Path | None:
    """Export ``compiled_fn`` under ``name``; returns the path, or None if the cache is not writable."""
    path = path_for(name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".o.tmp")
        os.close(fd)
    except OSError:
        return None
    try:
        compiled_fn.export_to_c(tmp, function_name=name)
        os.replace(tmp, path)
        return path
    except OSError:
        return None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
