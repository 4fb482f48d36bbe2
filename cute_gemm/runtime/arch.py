"""Architecture names: the short family name the registry uses and the exact target the compiler takes."""

from __future__ import annotations

# family -> the targets a kernel of that family can be compiled for (first = default)
TARGETS = {
    "sm90": ("sm_90a",),
    "sm100": ("sm_100a", "sm_103a"),
}
_TARGET_TO_FAMILY = {t: fam for fam, ts in TARGETS.items() for t in ts}


def family(name: str) -> str:
    """'sm_100a' / 'sm100' / 'sm_103a' / 'sm90a' -> 'sm100' / 'sm90'."""
    key = name.strip().lower()
    if key in TARGETS:
        return key
    norm = key if key.startswith("sm_") else "sm_" + key[2:] if key.startswith("sm") else key
    if not norm.endswith("a"):
        norm += "a"
    if norm in _TARGET_TO_FAMILY:
        return _TARGET_TO_FAMILY[norm]
    raise ValueError(f"unknown arch {name!r}: use one of {', '.join([*TARGETS, *_TARGET_TO_FAMILY])}")


def target(name: str) -> str:
    """'sm100' -> 'sm_100a'; 'sm_103a' -> 'sm_103a'; 'sm90' -> 'sm_90a'."""
    key = name.strip().lower()
    if key in TARGETS:
        return TARGETS[key][0]
    family(key)  # validates
    norm = key if key.startswith("sm_") else "sm_" + key[2:]
    return norm if norm.endswith("a") else norm + "a"


def family_of_capability(major: int, minor: int) -> str | None:
    """The kernel family a GPU of compute capability (major, minor) runs, or None."""
    if (major, minor) == (9, 0):
        return "sm90"
    if major == 10 and minor in (0, 3):
        return "sm100"
    return None


def target_of_capability(major: int, minor: int) -> str | None:
    if (major, minor) == (9, 0):
        return "sm_90a"
    if major == 10 and minor in (0, 3):
        return f"sm_10{minor}a"
    return None
