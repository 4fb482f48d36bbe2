"""sm90 phase kernels, found by module name (`phaseN_<what>.py`)."""

from phases._discover import collect

ALL = collect(__name__, __path__)
