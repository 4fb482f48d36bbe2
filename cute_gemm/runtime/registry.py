"""Every (arch, phase) kernel, with its config, summary and what it adds over the previous phase.

A ladder's kernels load (and with them the CuTe DSL) the first time an entry of that ladder is asked
for; the other ladder stays unloaded. ``phase_ids`` lists a ladder's phases from its file names alone
(``phases/<arch>/phaseN_<what>.py``), for help texts that must not load the DSL.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from functools import lru_cache

from cute_gemm.errors import InputError, UnsupportedError
from cute_gemm.runtime.arch import TARGETS, family
from phases.base import PHASE_ALIASES, PHASE_IDS, field_problems


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

    def make(self, config=None, operands=None):
        """The kernel for ``config`` (None: the phase's default) and ``operands`` (None: the worklog's)."""
        return self.kernel_cls(config, operands)

    def default_config(self):
        return self.config_cls()

    def lesson_config(self):
        """The config that shows what this phase adds over its parent (``compare``, the HTML report's step):
        the kernel class's ``lesson_config`` overrides (phase 11: ``{"bias": True, "activation": "gelu"}``, whose
        default, every epilogue field off, is phase 10's kernel under a new name), else the default config."""
        over = getattr(self.kernel_cls, "lesson_config", None)
        return self.configured(dict(over)) if over else self.default_config()

    def cluster_ctas(self, config=None) -> int:
        """CTAs per cluster as the phase launches it (both pairs of an sm100 stream-K cluster, sm90's cluster_m x
        cluster_n), read from the config without compiling; the tests hold it against the compiled kernel's cluster."""
        cfg = config or self.default_config()
        return cfg.cluster_m * getattr(cfg, "cluster_n", 1) * getattr(cfg, "pairs", 1) * getattr(cfg, "split_k", 1)

    def overrides(self, config) -> dict:
        """The fields of ``config`` that differ from this phase's default, in field order."""
        default = self.default_config()
        return {f.name: getattr(config, f.name) for f in dataclasses.fields(config)
                if getattr(config, f.name) != getattr(default, f.name)}

    def overrides_label(self, config) -> str:
        """``overrides`` as a variant's label: 'bm=128 bn=64' ('' for the default)."""
        return overrides_label(self.overrides(config))

    def config_problems(self, config) -> list[str]:
        """Why this phase cannot be built with ``config`` (a config object), read from the config alone without
        compiling: a field below 1, else the phase's own rules (``GemmPhase.config_problems``, what its
        ``_setup_attributes`` asserts); [] if none."""
        return list(_config_problems(self.kernel_cls, config))

    def configured(self, config=None, check: bool = True):
        """A config of this phase from None (the default), a config object, or field overrides as a dict
        (``{"bn": 128}``) or a string (``"bn=128,stages=6"``, ``"activation=gelu"``); InputError names a field
        the phase's config does not have, or a value of the wrong kind (an integer field's non-integer, a
        switch's non-boolean, a word field's non-string); with ``check``, UnsupportedError (one line: what was
        given, what is allowed) a config the phase cannot be built with (``config_problems``), before anything
        compiles. A config the rules pass may still be refused by the compile (``cute_gemm.compile_only``)."""
        if config is None:
            return self.default_config()
        cfg = self._configured(config)
        why = self.config_problems(cfg) if check else []
        if why:
            label = self.overrides_label(cfg) or "its default config"
            raise UnsupportedError(f"{self.key} cannot be built with {label}: {'; '.join(why)}")
        return cfg

    def _configured(self, config):
        if isinstance(config, self.config_cls):
            return config
        if isinstance(config, str):
            config = parse_overrides(config)
        if not isinstance(config, dict):
            raise InputError(f"{self.key}: config must be None, a {self.config_cls.__name__}, a dict of field "
                             f"overrides or 'FIELD=VALUE,...', got {type(config).__name__}")
        fields = {f.name: f for f in dataclasses.fields(self.config_cls)}
        default = self.default_config()
        for name, value in config.items():
            if name not in fields:
                raise InputError(f"{name!r} is not a field of phase {self.phase}'s config ({', '.join(fields)})")
            if isinstance(getattr(default, name), bool):  # a switch (use_pdl): True/False, or 1/0
                if value not in (True, False):
                    raise InputError(f"{name}={value!r} is not a boolean")
                config[name] = bool(value)
            elif isinstance(getattr(default, name), str):  # a word (activation=gelu): its values are the rules'
                if not isinstance(value, str):
                    raise InputError(f"{name}={value!r} is not one of {', '.join(field_choices(self.config_cls)[name])}"
                                     if name in field_choices(self.config_cls) else f"{name}={value!r} is not a string")
            elif not isinstance(value, int) or isinstance(value, bool):
                raise InputError(f"{name}={value!r} is not an integer")
        return dataclasses.replace(default, **config)


@lru_cache(maxsize=4096)
def _config_problems(kernel_cls, config) -> tuple[str, ...]:
    """``PhaseEntry.config_problems``, kept per (kernel, config): ``gemm(config=...)`` asks on every call."""
    return tuple(field_problems(config) or kernel_cls(config).config_problems())


def field_choices(config_cls) -> dict[str, tuple[str, ...]]:
    """The allowed values of a config's word fields (``{"activation": ("none", "relu", "gelu", "silu")}`` for the
    fused epilogue's configs), which ``cute-gemm list --fields`` shows; {} for a config without any. The values
    themselves are the phase's rules' (``phases.epilogue.ACTIVATIONS``), not a copy."""
    import sys

    epilogue = sys.modules.get("phases.epilogue")  # loaded with any ladder whose configs have the fields
    if epilogue is not None and issubclass(config_cls, epilogue.EpilogueFields):
        return {"activation": tuple(epilogue.ACTIVATIONS)}
    return {}


def parse_overrides(text: str) -> dict:
    """'bn=128,stages=6,use_pdl=true,activation=gelu' -> {'bn': 128, 'stages': 6, 'use_pdl': True,
    'activation': 'gelu'}; InputError on an item without '='. A value that is neither an integer nor true/false
    stays a word, which ``PhaseEntry.configured`` takes for a word field only (an integer field's 'wide' is
    refused there: "bn='wide' is not an integer")."""
    over = {}
    for item in text.split(","):
        name, eq, value = (x.strip() for x in item.partition("="))
        if not eq or not name:
            raise InputError(f"{item.strip()!r}: expected FIELD=VALUE, e.g. bn=128")
        if value.lower() in ("true", "false"):  # a switch: use_pdl=true
            over[name] = value.lower() == "true"
            continue
        try:
            over[name] = int(value)
        except ValueError:
            over[name] = value
    return over


_PHASE_FILE = re.compile(r"phase(\d+[a-z]?)_")


def phase_ids(arch: str) -> list[str]:
    """The phase ids of a ladder from its module names (``phase2a_tma.py`` -> '2a'), in ladder order,
    without importing them (the test suite holds this against the loaded classes)."""
    import phases

    fam = family(arch)
    found = set()
    for path in phases.__path__:
        for info in pkgutil.iter_modules([f"{path}/{fam}"]):
            m = _PHASE_FILE.match(info.name)
            if m and m.group(1) in PHASE_IDS:
                found.add(m.group(1))
    return sorted(found, key=PHASE_IDS.index)


@lru_cache(maxsize=None)
def _ladder(fam: str) -> dict[str, PhaseEntry]:
    """The entries of one ladder, loading its kernel modules (phases.<fam>) on first use."""
    table = {}
    for cls in importlib.import_module(f"phases.{fam}").ALL:
        e = PhaseEntry(
            arch=cls.arch,
            phase=cls.phase,
            kernel_cls=cls,
            config_cls=cls.Config,
            summary=cls.summary,
            adds=cls.adds,
            worklog=cls.worklog,
        )
        if e.arch != fam:
            raise RuntimeError(f"{cls.__name__} in phases.{fam} says its arch is {e.arch}")
        if e.phase in table:
            raise RuntimeError(f"two kernels registered for {e.key}")
        table[e.phase] = e
    return table


def all_entries(arch: str | None = None) -> list[PhaseEntry]:
    """The entries of ``arch``'s ladder in ladder order (loads it), or of every ladder (sm90 first)."""
    fams = [family(arch)] if arch else list(TARGETS)
    return [e for fam in fams for e in sorted(_ladder(fam).values(), key=lambda e: PHASE_IDS.index(e.phase))]


def get(arch: str, phase: str | int) -> PhaseEntry:
    fam, pid = family(arch), parse_phase(phase)
    try:
        return _ladder(fam)[pid]
    except KeyError:
        have = ", ".join(e.phase for e in all_entries(fam)) or "none"
        raise LookupError(f"no {fam} kernel for phase {pid} (registered {fam} phases: {have})") from None


def overrides_label(over: dict) -> str:
    """Config overrides as the bench, tune and inspect label a variant: 'bm=128 bn=64' ('' for none)."""
    return " ".join(f"{k}={v}" for k, v in over.items())


def split_spec(spec: str) -> tuple[str, str | None]:
    """A kernel named with its config: '10:cluster_m=4,bn=128' -> ('10', 'cluster_m=4,bn=128'); a bare phase
    id -> (id, None). The overrides go to ``PhaseEntry.configured`` (the bench's, sanitizer's and stress's
    ``--config``)."""
    phase, _, over = spec.partition(":")
    return phase, over or None


def resolve(spec: str, default_arch: str) -> PhaseEntry:
    """'3' / 'sm90:3' / 'sm100:2a' -> entry."""
    if ":" in spec:
        arch, pid = spec.split(":", 1)
        return get(arch, pid)
    return get(default_arch, spec)
