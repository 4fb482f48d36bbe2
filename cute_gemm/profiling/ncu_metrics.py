"""The Nsight Compute metrics `cute-gemm profile` reads, in one place, and the parsers for ncu's output.

Everything here is pure text handling (no GPU, no ncu): the raw-page CSV that ``ncu --csv --page raw``
prints, the metric list that ``ncu --query-metrics`` prints, and unit normalisation. The column names
are ours; the metric names are ncu's (checked against a real ``ncu --query-metrics --chip gh100``).
"""

from __future__ import annotations

import csv
import dataclasses
import re


@dataclasses.dataclass(frozen=True)
class Column:
    """One row of the profile table: what we call it, the ncu metric(s) behind it, how to show it.

    ``metrics`` holds one name, or several whose values add up (static + dynamic shared memory).
    ``unit`` is the unit values are kept in after :func:`to_base` (ns, hz, byte, %, or a count).
    ``scale`` and ``digits`` turn that into the printed number (ns -> us: scale 1e-3).
    """

    label: str
    metrics: tuple[str, ...]
    unit: str
    scale: float = 1.0
    digits: int = 0
    note: str = ""  # what a reader needs to read the row right, printed under the table


# our column -> ncu metric(s). Launch statistics (launch__*) come from ncu's LaunchStats section, which
# --query-metrics does not list; every other name here is a hardware metric that it does list.
COLUMNS: dict[str, Column] = {
    "duration": Column("duration (us)", ("gpu__time_duration.sum",), "ns", 1e-3, 2),
    # ncu's own "SM Frequency" / "Elapsed Cycles" (SpeedOfLight section) are these two GPC-clock metrics
    "sm_clock": Column("SM clock (GHz)", ("gpc__cycles_elapsed.avg.per_second",), "hz", 1e-9, 2),
    "cycles": Column("elapsed cycles", ("gpc__cycles_elapsed.max",), "cycle"),
    # HMMA/HGMMA cycles: the tensor sub-pipe wgmma runs on
    "tensor_pipe": Column("tensor pipe (% elapsed)",
                          ("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",), "%", 1, 1),
    "shared_pipe": Column("shared pipe (% elapsed)",
                          ("sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_elapsed",), "%", 1, 1,
                          note="shared pipe: the pipe FP16 and tensor instructions share. A GEMM that runs no other "
                               "FP16 math keeps it busy exactly while the tensor pipe is, so the two rows agree"),
    "gmma_issue": Column("gmma issue (% active)",
                         ("sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active",), "%", 1, 1),
    "occupancy": Column("achieved occupancy (%)", ("sm__warps_active.avg.pct_of_peak_sustained_active",), "%", 1, 1),
    "registers": Column("registers/thread", ("launch__registers_per_thread",), "register/thread"),
    "smem": Column("smem/CTA (bytes)",
                   ("launch__shared_mem_per_block_dynamic", "launch__shared_mem_per_block_static"), "byte"),
    "dram": Column("DRAM throughput (%)", ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",), "%", 1, 1),
    "l2": Column("L2 throughput (%)", ("lts__throughput.avg.pct_of_peak_sustained_elapsed",), "%", 1, 1),
    "l2_hit": Column("L2 hit rate (%)", ("lts__t_sector_hit_rate.pct",), "%", 1, 1),
    "conflicts_ld": Column("smem bank conflicts, ld",
                           ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",), "count"),
    "conflicts_st": Column("smem bank conflicts, st",
                           ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",), "count"),
}

# ncu's warp-state reasons (its WarpStateStats section). Each metric is the average number of warps in
# that state per issued instruction; together they make up the warp's cycles between two issues, so a
# reason's share of the sum is its share of where the warps waited ("selected" is the issuing itself).
STALL_REASONS = (
    "barrier", "branch_resolving", "dispatch_stall", "drain", "gmma", "imc_miss", "lg_throttle",
    "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction",
    "not_selected", "selected", "short_scoreboard", "sleeping", "tex_throttle", "wait",
)
DURATION_METRIC = "gpu__time_duration.sum"


def stall_metric(reason: str) -> str:
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


def all_metrics() -> list[str]:
    """Every metric the profile table needs, columns first, each once."""
    names = [m for col in COLUMNS.values() for m in col.metrics]
    names += [stall_metric(r) for r in STALL_REASONS]
    return list(dict.fromkeys(names))


def is_launch_stat(metric: str) -> bool:
    """launch__* values come with ncu's LaunchStats section, not from a hardware counter."""
    return metric.startswith("launch__")


# ------------------------------------------------------------------------------------------ units
_TIME_NS = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6, "s": 1e9,
            "second": 1e9}
_PREFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}


def to_base(value: float, unit: str) -> tuple[float, str]:
    """A value in ncu's printed unit -> (value, base unit): time in ns, frequency in hz, sizes in bytes.

    ncu's raw page prints base units (ns, hz, byte) by default, but scales them (us, Ghz, Kbyte) when
    asked to or in other pages; either way the numbers we keep are comparable.
    """
    u = unit.strip()
    low = u.lower()
    if low in _TIME_NS:
        return value * _TIME_NS[low], "ns"
    m = re.fullmatch(r"([kmgt]?)hz", low)
    if m:
        return value * _PREFIX[m.group(1)], "hz"
    m = re.fullmatch(r"cycle/([num]?)s(?:econd)?", low)
    if m:
        return value * {"n": 1e9, "u": 1e6, "m": 1e3, "": 1.0}[m.group(1)], "hz"
    m = re.fullmatch(r"([kmgt]?)byte(/.*)?", low)
    if m:
        return value * _PREFIX[m.group(1)], "byte" + (m.group(2) or "")
    return value, u


def parse_number(text: str) -> float | None:
    """'7,712' -> 7712.0; '' / 'n/a' / anything not a number -> None."""
    try:
        return float(text.replace(",", "").strip())
    except ValueError:
        return None


# --------------------------------------------------------------------------------- raw-page CSV
@dataclasses.dataclass
class KernelRow:
    """One profiled launch from ncu's raw page: identity plus every metric as (base value, unit)."""

    id: int
    name: str
    block: str
    grid: str
    metrics: dict[str, tuple[float | None, str]]

    def value(self, metric: str) -> float | None:
        hit = self.metrics.get(metric)
        return None if hit is None else hit[0]


_IDENTITY = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
             "Grid Size", "Device", "CC")


def parse_raw_csv(text: str) -> list[KernelRow]:
    """ncu's ``--csv --page raw`` output -> one KernelRow per profiled kernel, in profiling order.

    The CSV starts at the header row (first field "ID"); whatever came before it (==PROF== / ==WARNING==
    lines, the application's own output) is skipped. The row after the header holds the units; then
    one row per kernel. Numbers may carry thousands separators ("7,712").
    """
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID",')), None)
    if start is None:
        return []
    table = list(csv.reader(lines[start:]))
    header = table[0]
    if len(table) < 2:
        return []
    units = table[1]
    rows = []
    for fields in table[2:]:
        if len(fields) != len(header):  # a trailing ==PROF== line or application output
            continue
        rec = dict(zip(header, fields))
        metrics = {}
        for name, unit, raw in zip(header, units, fields):
            if name in _IDENTITY:
                continue
            num = parse_number(raw)
            metrics[name] = to_base(num, unit) if num is not None else (None, unit)
        rows.append(KernelRow(int(parse_number(rec["ID"]) or 0), rec["Kernel Name"], rec.get("Block Size", ""),
                              rec.get("Grid Size", ""), metrics))
    return sorted(rows, key=lambda r: r.id)


def column_values(row: KernelRow) -> dict[str, float | None]:
    """Our columns for one kernel, in their :class:`Column` units; None where a metric is absent."""
    out = {}
    for key, col in COLUMNS.items():
        vals = [row.value(m) for m in col.metrics]
        out[key] = None if any(v is None for v in vals) else sum(vals)
    return out


def stall_ratios(row: KernelRow) -> dict[str, float]:
    """reason -> ncu's warps-per-issue ratio, for the reasons the report has."""
    out = {}
    for r in STALL_REASONS:
        v = row.value(stall_metric(r))
        if v is not None:
            out[r] = v
    return out


def stall_shares(ratios: dict[str, float]) -> list[tuple[str, float]]:
    """[(reason, share)] sorted by share, largest first; share = ratio / sum of all ratios (0..1)."""
    total = sum(ratios.values())
    if total <= 0:
        return []
    return sorted(((r, v / total) for r, v in ratios.items()), key=lambda rv: -rv[1])


def missing_in_row(row: KernelRow, metrics) -> list[str]:
    """The metrics a kernel's report has no value for (not collected, or collected empty)."""
    return [m for m in metrics if row.value(m) is None]


# ---------------------------------------------------------------------------- --query-metrics
def parse_query_metrics(text: str) -> set[str]:
    """``ncu --query-metrics`` output -> the set of base metric names it lists.

    Lines look like ``dram__bytes   Counter   byte   # of bytes accessed in DRAM``; a few carry a
    collection prefix (``LTS.TriageCompute.lts__throughput``); wrapped description lines start with spaces.
    """
    names = set()
    for line in text.splitlines():
        if not line or line[0].isspace():
            continue
        token = line.split()[0]
        base = token.rsplit(".", 1)[-1]
        if "__" in base:
            names.add(base)
    return names


def metric_base(metric: str) -> str:
    """'lts__t_sector_hit_rate.pct' -> 'lts__t_sector_hit_rate' (ncu lists base names; suffixes are rollups)."""
    return metric.split(".", 1)[0]


def missing_metrics(metrics, available: set[str]) -> list[str]:
    """The metrics whose base name this ncu does not list (launch statistics are never listed: exempt)."""
    return [m for m in metrics if not is_launch_stat(m) and metric_base(m) not in available]
