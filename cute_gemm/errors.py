"""The errors a caller can catch, and how any error reads on one line.

``InputError``: bad operands (dtype, device, layout, alignment), caught on the host before anything
compiles or launches. ``UnsupportedError``: the phase cannot run here (another GPU architecture, a shape
or a config the phase cannot do). Both are importable as ``cute_gemm.InputError`` /
``cute_gemm.UnsupportedError``. Nothing here imports anything beyond the standard library.
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad input caught on the host, before anything compiles or launches."""


class UnsupportedError(RuntimeError):
    """The phase cannot run here: wrong GPU architecture, or a shape or config it cannot do."""


def one_line(exc: BaseException) -> str:
    """An exception as the one line a report or a user sees: its type and the first line of its message."""
    msg = str(exc).splitlines()
    return f"{type(exc).__name__}: {msg[0]}" if msg else type(exc).__name__
