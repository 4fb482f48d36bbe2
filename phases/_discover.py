"""Collect the phase classes of one arch package: every ``phaseN_*.py`` module's GemmPhase subclasses."""

from __future__ import annotations

import importlib
import pkgutil

from phases.base import PHASE_IDS, GemmPhase


def collect(package_name: str, package_path) -> list[type[GemmPhase]]:
    found = []
    for info in pkgutil.iter_modules(package_path):
        if not info.name.startswith("phase"):
            continue
        mod = importlib.import_module(f"{package_name}.{info.name}")
        for obj in vars(mod).values():
            if isinstance(obj, type) and issubclass(obj, GemmPhase) and obj.__module__ == mod.__name__:
                if getattr(obj, "phase", None) is not None and not getattr(obj, "abstract", False):
                    found.append(obj)
    found.sort(key=lambda cls: PHASE_IDS.index(cls.phase))
    return found
