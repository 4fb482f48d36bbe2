"""The bench's result document, schema ``cute-gemm/bench-v2``: what a result file must carry, written,
read back and validated.

One JSON document: where and how it was measured (environment, data kind, protocol, telemetry, the
operands -- layout and dtypes -- every kernel of the run computed, or null for a run whose shapes carried
their own, the run's device-copy bandwidth), and one row per (kernel, shape) for phases and peers alike
(``kind: phase|peer``) with its operands, the check, the time spread over the interleaved rounds, the
bandwidth it reached (TB/s, % of the copy bandwidth), and the SM clock, power, energy efficiency and
throttle reasons recorded while it was timed. Documents written before the operands were recorded are the
worklog's problem (``operands_of``). ``api`` holds the
host-overhead measurement of ``cute-gemm bench --api`` (``host_overhead``); ``ncu_check`` is the place for a profiler cross-check of the timings (null until
``cute_gemm.profiling.ncu_check`` fills it).
"""

from __future__ import annotations

import json

from cute_gemm.measure.check import ATOL_K, tolerance
from cute_gemm.measure.inputs import DATA_KINDS
from phases.operands import LAYOUTS, WORKLOG, Operands

SCHEMA = "cute-gemm/bench-v2"
STATUSES = ("ok", "skipped", "absent", "failed", "error")


def check_text(operands: Operands = WORKLOG) -> str:
    """The check's criteria in one line, for a run's operands (the tolerances depend on C's type)."""
    return (f"{tolerance(operands).describe()} (cuBLASLt on the same tensors; atol x sqrt(K/{ATOL_K}) past K = "
            f"{ATOL_K}), no NaN left, "
            f"a repeat bit-identical")


CHECK = check_text()

# dense fp16 tensor peak (datasheet, TFLOP/s) by device-name fragment; used for "% of peak"
PEAK_TFLOPS = {"H200": 989.0, "H100": 989.0, "B200": 2250.0, "B300": 2500.0}


def peak_for(device_name: str) -> float | None:
    for frag, tf in PEAK_TFLOPS.items():
        if frag in device_name:
            return tf
    return None


def operands_record(ops: Operands) -> dict:
    return {"layout": ops.layout, "ab": ops.ab, "c": ops.c, "label": ops.label()}


def _of_record(rec: dict) -> Operands:
    return Operands.of(rec.get("layout", "nn"), rec.get("ab", "fp16"), rec.get("c", "fp32"))


def operands_of(doc: dict, row: dict | None = None) -> Operands | None:
    """The operands a document's kernels computed (the worklog's for documents that do not say); with ``row``, that
    row's (its own record, else the document's). None: a run of per-shape operands, asked without a row."""
    if row is not None and isinstance(row.get("operands"), dict):
        return _of_record(row["operands"])
    if "operands" in doc and doc["operands"] is None:
        return None
    return _of_record(doc.get("operands") or {})


def _check_text(kinds: list[Operands]) -> str:
    """``check_text`` of a run's operands; for several that differ in it, each labelled with the operands."""
    texts = {check_text(o): o for o in kinds}
    return next(iter(texts)) if len(texts) == 1 else "; ".join(f"{o.label()}: {t}" for t, o in texts.items())


def document(results: list[dict], *, data: str, protocol: dict, telemetry: dict, api: dict | None = None,
             env: dict | None = None, operands: Operands | list = WORKLOG, copy_bandwidth: dict | None = None) -> dict:
    """A bench-v2 document around ``results``; ``env``: ``environment.record()`` taken at the start;
    ``copy_bandwidth``: ``bandwidth.copy_bandwidth()`` of this run (None: not measured). ``operands``: the run's,
    or a list of the several its shapes computed (then the document's ``operands`` is null and each row's count)."""
    kinds = list(operands) if isinstance(operands, (list, tuple)) else [operands]
    if env is None:
        from cute_gemm.measure import environment

        env = environment.record()
    return {
        "schema": SCHEMA,
        **env,
        "data": data,
        "operands": operands_record(kinds[0]) if len(kinds) == 1 else None,
        "protocol": {**protocol, "check": _check_text(kinds), "check_peers": "the same without the repeat",
                     "check_data": "randn"},
        "telemetry": telemetry,
        "peak_tflops": peak_for(env["gpu"]["name"]) if env.get("gpu") else None,
        "copy_bandwidth": copy_bandwidth,
        "ncu_check": None,
        "results": results,
        "api": api,
    }


def _bad_operands(rec) -> str | None:
    try:
        if rec["layout"] not in LAYOUTS:
            raise ValueError(f"layout {rec['layout']!r}")
        Operands.of(rec["layout"], rec["ab"], rec["c"])
    except (TypeError, KeyError, ValueError) as exc:
        return str(exc)
    return None


def _validate_result(i: int, r: dict, per_row: bool = False) -> list[str]:
    errs = [f"results[{i}].{key} missing" for key in ("kind", "key", "label", "shape", "status") if key not in r]
    if errs:
        return errs
    if r.get("operands") is not None or per_row:
        why = _bad_operands(r.get("operands"))
        if why:
            errs.append(f"results[{i}].operands is not a layout and dtypes record ({why})")
    if r["kind"] not in ("phase", "peer"):
        errs.append(f"results[{i}].kind is {r['kind']!r}, expected 'phase' or 'peer'")
    if r["kind"] == "phase" and "phase" not in r:
        errs.append(f"results[{i}].phase missing")
    if r["status"] not in STATUSES:
        errs.append(f"results[{i}].status is {r['status']!r}, expected one of {', '.join(STATUSES)}")
    if r["status"] != "ok":
        if r.get("timing"):
            errs.append(f"results[{i}] has status {r['status']!r} but carries a timing")
        if not r.get("reason"):
            errs.append(f"results[{i}] has status {r['status']!r} but no reason")
        return errs
    t = r.get("timing") or {}
    for key in ("ms_min", "ms_median", "ms_max", "tflops", "rounds", "launches_per_graph"):
        if key not in t:
            errs.append(f"results[{i}].timing.{key} missing")
    if all(k in t for k in ("ms_min", "ms_median", "ms_max")) and not (t["ms_min"] <= t["ms_median"] <= t["ms_max"]):
        errs.append(f"results[{i}]: min <= median <= max does not hold")
    if not (r.get("check") or {}).get("passed"):
        errs.append(f"results[{i}] is timed but its check did not pass")
    pw = r.get("power")
    if not isinstance(pw, dict):
        errs.append(f"results[{i}].power missing")
    else:
        for key in ("sm_clock_mhz", "power_w", "tflops_per_kw", "throttle_reasons"):
            if key not in pw:
                errs.append(f"results[{i}].power.{key} missing")
    return errs


def validate_doc(doc) -> list[str]:
    """Schema problems of a bench-v2 document ([] = valid). Used by `plot`, `load` and the tests."""
    if not isinstance(doc, dict):
        return [f"expected a JSON object, got {type(doc).__name__}"]
    if doc.get("schema") == "cute-gemm/bench-v1":
        return ["it is a bench-v1 result (single launches timed between CUDA events, before the CUDA-graph "
                "protocol); this version reads bench-v2: measure again with `cute-gemm bench`"]
    errs = [f"missing '{key}'" for key in ("schema", "date", "command", "gpu", "versions", "data", "protocol",
                                           "telemetry", "ncu_check", "results") if key not in doc]
    if errs:
        return errs
    if doc["schema"] != SCHEMA:
        errs.append(f"schema is {doc['schema']!r}, expected {SCHEMA!r}")
    if not isinstance(doc["gpu"], dict) or "name" not in doc["gpu"]:
        errs.append("gpu.name missing")
    if doc["data"] not in DATA_KINDS:
        errs.append(f"data is {doc['data']!r}, expected one of {', '.join(DATA_KINDS)}")
    if doc.get("operands") is not None:  # optional: documents from before it are the worklog's problem; null: per row
        why = _bad_operands(doc["operands"])
        if why:
            errs.append(f"operands is not a layout and dtypes record ({why})")
    bw = doc.get("copy_bandwidth")
    if bw is not None and not (isinstance(bw, dict) and isinstance(bw.get("tb_s"), (int, float)) and bw["tb_s"] > 0):
        errs.append("copy_bandwidth.tb_s missing or not a positive number")
    for key in ("rounds", "sustained_s", "cold_l2"):
        if key not in (doc["protocol"] or {}):
            errs.append(f"protocol.{key} missing")
    if not isinstance(doc["results"], list):
        return errs + ["results is not a list"]
    if not doc["results"] and not doc.get("api"):
        errs.append("no results and no api section")
    for i, r in enumerate(doc["results"]):
        errs += _validate_result(i, r, per_row="operands" in doc and doc["operands"] is None)
    return errs


def save(doc: dict, path: str):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")


_NOT_TEXT = {b"\x1f\x8b": "gzip-compressed", b"\x89PNG": "a PNG image", b"PK\x03\x04": "a zip archive"}


def read_json(path: str, expected: str):
    """The JSON in ``path``, or ValueError with one sentence saying what the file is instead (``expected``
    names what was wanted, e.g. "a result file written by `cute-gemm bench`"). OSError propagates."""
    with open(path, "rb") as f:
        data = f.read()
    kind = next((k for magic, k in _NOT_TEXT.items() if data.startswith(magic)), None)
    if kind:
        raise ValueError(f"{path} is {kind}, not JSON; expected {expected}")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not a text file; expected {expected}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                         f"expected {expected}") from None


def load(path: str) -> dict:
    """Read and validate a bench-v2 JSON file; ValueError with one clear sentence otherwise.

    (OSError, e.g. a missing file, propagates for the caller to word.)
    """
    doc = read_json(path, "a result file written by `cute-gemm bench`")
    errs = validate_doc(doc)
    if errs:
        more = f" (and {len(errs) - 3} more)" if len(errs) > 3 else ""
        raise ValueError(f"{path} is not a cute-gemm bench-v2 result: " + "; ".join(errs[:3]) + more)
    return doc


