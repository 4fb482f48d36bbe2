"""The report in a real browser: headless Chromium (the distribution's ``chromium`` and ``chromium-driver``,
driven through Selenium) opens the report of the committed results with every network request blocked,
steps through every page with the keyboard (→), and on each asserts the phase names, a number taken from
the results JSON and a line of the source diff; then the picker (any two phases, across ladders too),
a permalink opened cold, the folds of the diff, the page's diff opcodes against difflib's, and no console
error and no request beyond the file itself. It saves a screenshot of one step page
(out/report/sm90_5-6.png).

Skips, saying why, where Selenium, Chromium or its driver is missing; with CUTE_GEMM_REQUIRE_BROWSER=1
(CI sets it) a missing browser fails instead.

Regenerate the README's screenshot (docs/report_step.png) with ``python -m tests.test_report_browser``.
"""

import difflib
import os
import shutil
import sys
import tempfile
import time

import pytest

from cute_gemm.measure import results
from cute_gemm.report import html
from cute_gemm.runtime import registry
try:
    from report_build import OUT, ROOT, committed_report
except ImportError:  # python -m tests.test_report_browser
    from tests.report_build import OUT, ROOT, committed_report

CHROMIUM = ("chromium", "chromium-browser")
CHROMEDRIVER = ("chromedriver",)
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1400,1000")
BLOCKED = ["http://*", "https://*", "ws://*", "wss://*", "ftp://*"]
SCREENSHOT = os.path.join(OUT, "sm90_5-6.png")
HEADLINE = "4096x4096x4096"


def _which(names, env):
    found = os.environ.get(env)
    return found if found and os.path.exists(found) else next(filter(None, map(shutil.which, names)), None)


def _missing() -> str | None:
    """Why the browser cannot run here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install 'cute-gemm[browser]')"
    if not _which(CHROMIUM, "CUTE_GEMM_CHROMIUM"):
        return "no Chromium (apt-get install chromium chromium-driver, or CUTE_GEMM_CHROMIUM=path)"
    if not _which(CHROMEDRIVER, "CUTE_GEMM_CHROMEDRIVER"):
        return "no chromedriver (apt-get install chromium-driver, or CUTE_GEMM_CHROMEDRIVER=path)"
    return None


def start_browser(profile_dir: str):
    """Headless Chromium with the network closed: DNS resolves nothing, and every http(s)/ws(s)/ftp request is
    blocked by DevTools before it leaves; console and network events are logged for the test to read."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = _which(CHROMIUM, "CUTE_GEMM_CHROMIUM")
    for flag in (*FLAGS, f"--user-data-dir={profile_dir}"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=opts, service=Service(executable_path=_which(CHROMEDRIVER, "CUTE_GEMM_CHROMEDRIVER")))
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": BLOCKED})
    return driver


@pytest.fixture(scope="module")
def browser():
    why = _missing()
    if why:
        if os.environ.get("CUTE_GEMM_REQUIRE_BROWSER", "") not in ("", "0"):
            pytest.fail(f"CUTE_GEMM_REQUIRE_BROWSER is set but {why}")
        pytest.skip(why)
    with tempfile.TemporaryDirectory(prefix="cute-gemm-chromium-") as profile:
        driver = start_browser(profile)
        try:
            yield driver
        finally:
            driver.quit()


def console_errors(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def requests_made(driver) -> list[tuple[str, str]]:
    """(event, URL or reason) of every request the page made or had blocked since the last call."""
    import json

    out = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg["method"] == "Network.requestWillBeSent":
            out.append(("request", msg["params"]["request"]["url"]))
        elif msg["method"] == "Network.loadingFailed":
            out.append(("failed", msg["params"].get("blockedReason") or msg["params"].get("errorText", "")))
    return out


def wait_for(driver, page: str, timeout: float = 10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if driver.execute_script("return document.body.dataset.page") == page:
            return
        time.sleep(0.05)
    raise AssertionError(f"the page did not become {page!r}: it is {driver.execute_script('return location.hash')!r}")


def press(driver, key):
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(key).perform()


def a_diff_line(a_file: str, b_file: str) -> str:
    """A line phase b adds or changes below its docstring (difflib on the two files), for the page to show."""
    lines = [open(os.path.join(ROOT, f), encoding="utf-8").read().splitlines() for f in (a_file, b_file)]
    skip = html.docstring_lines("\n".join(lines[1]) + "\n")
    ops = difflib.SequenceMatcher(None, *lines, autojunk=False).get_opcodes()
    return next(lines[1][j] for tag, _, _, j1, j2 in ops if tag in ("insert", "replace")
                for j in range(j1, j2) if j >= skip and lines[1][j].strip())


def step_text(driver) -> str:
    return driver.find_element("id", "step-page").text


def added_cells(driver) -> list[str]:
    return driver.execute_script(
        "return [...document.querySelectorAll('#step-page table.diff td.code.add')].map(td => td.textContent)")


def check_step(driver, page: str, numbers: dict):
    fam, pair = page.split("/")
    a, b = pair.split("-")
    ea, eb = registry.get(fam, a), registry.get(fam, b)
    text = step_text(driver)
    # the phase names
    assert f"{fam} · phase {a} → phase {b}" in text and f"{fam} phase {a}" in text and f"{fam} phase {b}" in text
    assert ea.summary in text and eb.summary in text
    # a number from the JSON
    for e in (ea, eb):
        tf = numbers.get((e.key, HEADLINE))
        if tf is not None:
            assert f"{tf:.1f}" in text, (page, e.key, tf)
        elif fam == "sm100":
            assert "Compile-verified only" in text and "no Blackwell GPU exists in this workplace" in text
        else:
            assert f"phase {e.phase}: not measured in these results" in text, (page, e.key)
    # a line of the source diff, as an added line of the side-by-side table
    phases = {p.key: p for p in html.load_phases(fam)[0]}
    line = a_diff_line(html._shown(phases[ea.key].file), html._shown(phases[eb.key].file))
    assert line in added_cells(driver), (page, line)
    # the generated code's census, and the counters where a profile has both phases
    assert "registers/thread" in text and "CTAs launched" in text
    assert "No census" not in text
    assert driver.execute_script("return document.querySelectorAll('#step-page table.diff tr').length") > 10


def test_step_through_every_page_with_the_keyboard(browser):
    from selenium.webdriver.common.keys import Keys

    path, pages = committed_report()
    doc = results.load(os.path.join(ROOT, html.DEFAULT_RESULTS[0]))
    numbers = {(r["key"], r["shape"]): r["timing"]["tflops"] for r in doc["results"]
               if r["kind"] == "phase" and r.get("timing") and not r.get("config")}
    url = "file://" + path
    browser.get("about:blank")
    requests_made(browser), console_errors(browser)  # drained: what the browser did before the report is not its
    browser.get(url + "#summary")
    wait_for(browser, "summary")
    assert browser.execute_script("return window.cuteGemmReport !== undefined")
    assert browser.execute_script("return JSON.parse(document.getElementById('data').textContent).pages") == list(pages)
    # the summary: both ladders, every phase, the plots decoded, what is measured and what is not
    text = browser.find_element("id", "summary-page").text
    assert "run and measured on an NVIDIA H200" in text and "No Blackwell GPU exists in this workplace" in text
    assert f"{numbers[('sm90:5', HEADLINE)]:.1f}" in text
    imgs = browser.execute_script("return [...document.images].map(i => [i.alt, i.complete && i.naturalWidth])")
    assert len(imgs) == 4 and all(w > 300 for _, w in imgs), imgs
    for i, page in enumerate(pages):
        wait_for(browser, page)
        assert browser.execute_script("return document.getElementById('where').textContent") == f"{i + 1} / {len(pages)}"
        if page != "summary":
            check_step(browser, page, numbers)
        if page == "sm90/5-6":
            os.makedirs(OUT, exist_ok=True)
            browser.save_screenshot(SCREENSHOT)
        assert console_errors(browser) == [], page
        press(browser, Keys.ARROW_RIGHT)
    time.sleep(0.2)
    assert browser.execute_script("return document.body.dataset.page") == pages[-1]  # the last page stays
    press(browser, Keys.ARROW_LEFT)
    wait_for(browser, pages[-2])
    # nothing was fetched but the file itself (images are data: URIs), nothing was blocked or failed
    made = requests_made(browser)
    assert made and all(kind == "request" and (u.split("#")[0] == url or u.startswith("data:")) for kind, u in made), made
    assert os.path.getsize(SCREENSHOT) > 50_000


def test_the_picker_diffs_any_two_phases(browser):
    from selenium.webdriver.support.select import Select

    path, _ = committed_report()
    browser.get("file://" + path + "#sm90/0-1")
    wait_for(browser, "sm90/0-1")
    Select(browser.find_element("id", "pick-a")).select_by_value("sm90:3")
    wait_for(browser, "sm90/3-1")
    Select(browser.find_element("id", "pick-b")).select_by_value("sm90:8")
    wait_for(browser, "sm90/3-8")
    text = step_text(browser)
    assert "Not a ladder step" in text and "cute-gemm compare sm90:3 sm90:8" in text
    assert a_diff_line("phases/sm90/phase3_wide.py", "phases/sm90/phase8_pingpong.py") in added_cells(browser)
    # across the ladders, as `cute-gemm compare sm90:3 sm100:3`
    Select(browser.find_element("id", "pick-b")).select_by_value("sm100:3")
    wait_for(browser, "sm90/3-sm100/3")
    text = step_text(browser)
    assert "sm90 phase 3 → sm100 phase 3" in text and "Compile-verified only" in text
    assert a_diff_line("phases/sm90/phase3_wide.py", "phases/sm100/phase3_wide.py") in added_cells(browser)
    # the picker leaves the keyboard to the stepping: → goes on from the step that ends at sm100:3
    from selenium.webdriver.common.keys import Keys

    press(browser, Keys.ARROW_RIGHT)
    wait_for(browser, "sm100/3-4")
    assert console_errors(browser) == []


def test_a_permalink_opens_its_page_and_the_diff_unfolds(browser):
    path, _ = committed_report()
    browser.get("about:blank")
    browser.get("file://" + path + "#sm90/6-7")
    wait_for(browser, "sm90/6-7")
    assert browser.title.startswith("sm90 · phase 6 → phase 7")
    rows = lambda: browser.execute_script("return document.querySelectorAll('#step-page table.diff tr').length")  # noqa: E731
    before = rows()
    browser.find_element("css selector", "#step-page tr.doc-fold").click()
    after = rows()
    assert after > before + 20
    doc_line = open(os.path.join(ROOT, "phases/sm90/phase7_stream_k.py"), encoding="utf-8").read().splitlines()[0]
    assert doc_line in added_cells(browser)  # the docstring's first line, now unfolded
    browser.get("file://" + path + "#sm90/no-such")
    wait_for(browser, "sm90/no-such")
    assert "No such page" in step_text(browser)
    assert console_errors(browser) == []


def test_the_pages_opcodes_are_difflibs(browser):
    path, _ = committed_report()
    browser.get("file://" + path + "#summary")
    wait_for(browser, "summary")
    data = browser.execute_script("const d = JSON.parse(document.getElementById('data').textContent);"
                                  "return Object.values(d.phases).map(p => [p.file, p.src])")
    files = dict(sorted(set(map(tuple, data)), key=lambda fs: fs[1]))
    by_index = {i: f for f, i in files.items()}
    lines = {i: open(os.path.join(ROOT, f), encoding="utf-8").read().splitlines() for i, f in by_index.items()}
    for i, j in ((0, 1), (5, 4), (7, 11), (3, len(lines) - 1)):
        want = [list(op) for op in difflib.SequenceMatcher(None, lines[i], lines[j], autojunk=False).get_opcodes()]
        got = browser.execute_script(f"return window.cuteGemmReport.opcodes({i}, {j})")
        assert got == want, (by_index[i], by_index[j])


def test_the_harness_sees_what_it_checks(browser):
    """The checks behind "works offline" and "no console errors" can fail: a page that asks for remote images
    has them blocked before they leave and the test sees the requests; a console error and an uncaught
    exception are both in the log the test reads."""
    browser.get("about:blank")
    requests_made(browser), console_errors(browser)
    browser.get('data:text/html,<img src="http://example.com/a.png"><img src="https://example.com/b.png">')
    time.sleep(0.5)
    made = requests_made(browser)
    assert [u for kind, u in made if kind == "request" and "example.com" in u] and ("failed", "inspector") in made, made
    browser.execute_script("console.error('planted error'); setTimeout(() => { throw new Error('planted throw'); });")
    time.sleep(0.3)
    errors = " ".join(console_errors(browser))
    assert "planted error" in errors and "planted throw" in errors, errors


def main(out: str = os.path.join(ROOT, "docs", "report_step.png")) -> int:
    """The README's screenshot: the top of the sm90 5 -> 6 page in a 1280-wide window, reduced to 256 colours."""
    from PIL import Image

    why = _missing()
    if why:
        print(why, file=sys.stderr)
        return 1
    path, _ = committed_report()
    with tempfile.TemporaryDirectory(prefix="cute-gemm-chromium-") as profile:
        driver = start_browser(profile)
        try:
            driver.set_window_size(1280, 1250)
            driver.get("file://" + path + "#sm90/5-6")
            wait_for(driver, "sm90/5-6")
            raw = os.path.join(OUT, "readme_raw.png")
            driver.save_screenshot(raw)
        finally:
            driver.quit()
    Image.open(raw).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(out, optimize=True)
    print(f"wrote {out} ({os.path.getsize(out) / 1024:.0f} KiB) from {path} ({os.path.getsize(path) / 2**20:.2f} MiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:]))
