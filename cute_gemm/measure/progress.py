"""The progress of long runs on stderr: a rich progress bar on a terminal, one line per step in a log.

``terminal`` is the rich Console every table of the project prints through: off a terminal (a log
file, a pipe) it is drawn at ``LOG_WIDTH`` columns so no column wraps.
"""

from __future__ import annotations

LOG_WIDTH = 220


def terminal(stderr: bool = False):
    """A rich Console on stdout (or stderr); wide when it writes to a file or a pipe."""
    from rich.console import Console

    c = Console(stderr=stderr)
    return c if c.is_terminal else Console(stderr=stderr, width=LOG_WIDTH)


class Progress:
    """``with Progress(total) as bar: bar.step(label)``: a rich progress bar on a terminal; in a log (stderr
    not a terminal) one line per step instead, so a run cut short by a timeout shows how far it got.
    ``enabled=False`` makes it silent."""

    def __init__(self, total: int, enabled: bool = True):
        self.total, self.enabled, self.done = total, enabled, 0
        self._bar = self._task = self._log = None

    def __enter__(self):
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn, \
                TimeElapsedColumn

            err = terminal(stderr=True)
            if err.is_terminal:
                self._bar = RichProgress(BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                         TextColumn("{task.description}"), console=err)
                self._bar.start()
                self._task = self._bar.add_task("", total=self.total)
            else:
                self._log = err
        return self

    def step(self, label: str, advance: int = 1):
        self.done += advance
        if self._bar is not None:
            self._bar.update(self._task, advance=advance, description=label)
        elif self._log is not None:
            self._log.print(f"[{self.done}/{self.total}] {label}", highlight=False)

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.stop()
