"""Measurement: check and time the phases on a GPU, beside their peers.

- ``check`` / ``reference`` / ``inputs``: a phase's C against cuBLASLt and float64, on fresh inputs;
- ``peers`` (``triton_mm``): the kernels the phases are timed beside;
- ``timing`` / ``power`` / ``environment``: CUDA-graph timing, NVML telemetry, where a run happened;
- ``shape``: one shape checked and timed; ``suite``: the bench over shapes; ``results``: its document;
- ``host_overhead``: the Python API's cost per call; ``selftest``: the sm100 check for a Blackwell owner;
- ``progress``: the progress bar of long runs.

Imports the runtime below it, never the profiling, report or CLI layers above.
"""
