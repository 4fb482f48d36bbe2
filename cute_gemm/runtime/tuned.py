"""Measured picks of ``phase="best"``: a per-GPU table on disk that ``cute-gemm tune`` fills.

``choose``'s model ranks every candidate (phase, config) of a shape; its times are off by ~10% per config
(``bench/fit_best.py``), so where two candidates are within that, the model's first is a coin toss. Tuning
times the model's cheapest few candidates of a shape on this GPU, side by side (``cute_gemm.measure.tune``),
and keeps the fastest here. ``phase="best"`` then runs that config for the shape, and the model's pick for
every shape the table does not hold: a lookup, once per shape (the call's fast path caches the plan).

One JSON file per GPU name in the kernel cache's directory for these kernel sources
(``<cache dir>/<fingerprint>/tuned-<gpu>.json``, ``cute_gemm.runtime.cache``): an edit of a kernel or a new
DSL starts an empty table, as it starts an empty compile cache, since a timing says nothing of other code.
Keys are (arch, M, N, K, operands). ``CUTE_GEMM_TUNED=0`` makes ``best`` ignore the table (the model only).
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import tempfile
import threading

from cute_gemm.runtime import cache

SCHEMA = "cute-gemm/tuned-v1"
_TABLES: dict = {}  # path -> {key: entry}, read once per process (``store`` keeps it current)
_LOCK = threading.Lock()


def enabled() -> bool:
    return os.environ.get("CUTE_GEMM_TUNED", "") not in ("0", "false", "no", "off")


def path(gpu: str) -> pathlib.Path:
    """The table of GPU ``gpu`` (its name, as torch gives it) for these kernel sources."""
    slug = re.sub(r"[^a-z0-9]+", "-", gpu.lower()).strip("-") or "gpu"
    return cache.cache_dir() / cache.fingerprint() / f"tuned-{slug}.json"


def key(arch: str, m: int, n: int, k: int, operands=None) -> str:
    """'sm90 64x4096x4096 nn fp16->fp32': one row of the table."""
    from phases.operands import WORKLOG

    return f"{arch} {m}x{n}x{k} {(operands or WORKLOG).label()}"


def entries(gpu: str) -> dict:
    """{key: entry} of ``gpu``'s table ({} when there is none or it cannot be read: a table is a cache)."""
    p = path(gpu)
    if p not in _TABLES:
        try:
            doc = json.loads(p.read_text())
            table = doc["entries"] if doc.get("schema") == SCHEMA and doc.get("gpu") == gpu else {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            table = {}
        _TABLES[p] = table if isinstance(table, dict) else {}
    return _TABLES[p]


def lookup(gpu: str, arch: str, m: int, n: int, k: int, operands=None) -> tuple[str, dict] | None:
    """(phase, config overrides) tuned for the shape on ``gpu``, or None (not tuned, or the table is off)."""
    if not enabled():
        return None
    entry = entries(gpu).get(key(arch, m, n, k, operands))
    if not isinstance(entry, dict) or not isinstance(entry.get("phase"), str):
        return None
    return entry["phase"], dict(entry.get("config") or {})


def store(gpu: str, arch: str, m: int, n: int, k: int, operands, phase: str, config: dict, **detail) -> pathlib.Path:
    """Keep (phase, config) as the tuned pick of the shape on ``gpu`` (``detail``: what the tuning measured,
    kept beside it for ``cute-gemm tune --show``). The file is rewritten through a temporary one renamed into
    place: a reader never sees half of it. Returns its path."""
    p = path(gpu)
    with _LOCK:
        table = dict(entries(gpu))
        table[key(arch, m, n, k, operands)] = {"phase": phase, "config": dict(config), **detail}
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, suffix=".json.tmp")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump({"schema": SCHEMA, "gpu": gpu, "entries": table}, f, indent=1, sort_keys=True)
            os.replace(tmp, p)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        _TABLES[p] = table
    return p


def forget(gpu: str) -> bool:
    """Delete ``gpu``'s table; True if there was one."""
    p = path(gpu)
    with _LOCK:
        _TABLES.pop(p, None)
        try:
            p.unlink()
            return True
        except FileNotFoundError:
            return False


__all__ = ["SCHEMA", "enabled", "path", "key", "entries", "lookup", "store", "forget"]
