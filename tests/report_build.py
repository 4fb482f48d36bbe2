"""The report of the committed results, built once per test process (every phase compiled for its census,
~20 s) and shared by ``test_report.py`` and ``test_report_browser.py``: out/report/report.html."""

import functools
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "out", "report")


@functools.lru_cache(maxsize=None)
def committed_report() -> tuple[str, tuple[str, ...]]:
    """(path of the report of both ladders and the default results, its pages in stepping order)."""
    from cute_gemm.report import html
    from cute_gemm.runtime.arch import TARGETS

    paths, missing = html.default_results()
    assert not missing, f"committed results missing: {missing}"
    text, pages = html.build(list(TARGETS), html.load_inputs(paths), census=True)
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "report.html")
    html.write(path, text)
    return path, tuple(pages)
