"""What the code is and where the cycles go.

- ``codegen``: compile-only inspection of a phase (PTX census, ptxas resources), no GPU needed;
- ``ncu`` / ``ncu_metrics`` / ``driver``: Nsight Compute on one launch of each phase and peer;
- ``ncu_check``: the bench's CUDA-graph timings held against Nsight Compute's durations.

Imports the runtime and measurement layers below it, never the report or CLI layers above.
"""
