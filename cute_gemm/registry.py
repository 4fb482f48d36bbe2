"""Every (arch, phase) kernel, with its config, summary and what it adds over the previous phase."""

from __future__ import annotations

import dataclasses
from functools import lru_cache

from cute_gemm.arch import family
from phases.base import PHASE_ALIASES, PHASE_IDS


def parse_phase(pid: str | int) -> str:
    """'2' -> '2b', 3 -> '3'; raises ValueError on an unknown id."""
    key = str(pid).strip().lower()
    key = PHASE_ALIASES.get(key, key)
    if key not in PHASE_IDS:
        raise ValueError(f"unknown phase {pid!r}: phase ids are {', '.join(PHASE_IDS)} ('2' means 2b)")
    return key


def parse_phase_list(spec: str) -> list[str]:
    """'0-3,5' -> ['0','1','2a','2b','3','5'] (a range takes every id between, both variants of 2)."""
    out: list[str] = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            lo, hi = (p.strip() for p in part.split("-", 1))
            lo_i = PHASE_IDS.index("2a" if lo == "2" else parse_phase(lo))
            hi_i = PHASE_IDS.index(parse_phase(hi))
            if lo_i > hi_i:
                raise ValueError(f"empty phase range {part!r}")
            out.extend(PHASE_IDS[lo_i : hi_i + 1])
        else:
            out.append(parse_phase(part))
    return list(dict.fromkeys(out))


@dataclasses.dataclass(frozen=True)
class PhaseEntry:
    arch: str  # "sm90" / "sm100"
    phase: str  # "0", "1", "2a", ...
    kernel_cls: type
    config_cls: type
    summary: str
    adds: str
    worklog: str

    @property
    def key(self) -> str:
        return f"{self.arch}:{self.phase}"

    @property
    def file_stem(self) -> str:
        """Name used for dumps: sm100_phase0, sm90_phase2b."""
        return f"{self.arch}_phase{self.phase}"

    def make(self, config=None):
        return self.kernel_cls(config)

    def default_config(self):
        return self.config_cls()

    def overrides(self, config) -> dict:
        """The fields of ``config`` that differ from this phase's default, in field order."""
        default = self.default_config()
        return {f.name: getattr(config, f.name) for f in dataclasses.fields(config)
                if getattr(config, f.name) != getattr(default, f.name)}


@lru_cache(maxsize=1)
def _entries() -> dict[tuple[str, str], PhaseEntry]:
    import phases

    table = {}
    for cls in phases.all_phases():
        e = PhaseEntry(
            arch=cls.arch,
            phase=cls.phase,
            kernel_cls=cls,
            config_cls=cls.Config,
            summary=cls.summary,
            adds=cls.adds,
            worklog=cls.worklog,
        )
        if (e.arch, e.phase) in table:
            raise RuntimeError(f"two kernels registered for {e.key}")
        table[(e.arch, e.phase)] = e
    return table


def all_entries(arch: str | None = None) -> list[PhaseEntry]:
    fam = family(arch) if arch else None
    ents = [e for e in _entries().values() if fam is None or e.arch == fam]
    return sorted(ents, key=lambda e: (e.arch != "sm90", PHASE_IDS.index(e.phase)))


def get(arch: str, phase: str | int) -> PhaseEntry:
    fam, pid = family(arch), parse_phase(phase)
    try:
        return _entries()[(fam, pid)]
    except KeyError:
        have = ", ".join(e.phase for e in all_entries(fam)) or "none"
        raise LookupError(f"no {fam} kernel for phase {pid} (registered {fam} phases: {have})") from None


def resolve(spec: str, default_arch: str) -> PhaseEntry:
    """'3' / 'sm90:3' / 'sm100:2a' -> entry."""
    if ":" in spec:
        arch, pid = spec.split(":", 1)
        return get(arch, pid)
    return get(default_arch, spec)
