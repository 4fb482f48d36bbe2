"""The runtime: what a caller's ``cute_gemm.gemm()`` runs, and nothing else.

- ``gemm``: the public calls (``gemm``, ``linear``, ``compile_only``, ``precompile``); ``linear``: the eager
  ``linear`` (F.linear's meaning on the plans);
- ``plan``: one compiled kernel per (device, phase, config, operands) -- a plan -- and the eager call path;
- ``torch_ops``: the same calls as torch custom ops (``torch.compile``, CUDA graphs);
- ``choose``: ``phase="best"``'s pick per shape;
- ``compile`` / ``cache``: compiling a phase (no GPU needed) and keeping it on disk;
- ``registry`` / ``arch`` / ``problem``: the phases, the architectures, the problem and its validation.

Imports run downward: ``gemm`` -> ``torch_ops`` -> ``linear`` -> ``plan`` -> the rest. torch, cutlass and tvm_ffi are
imported inside functions only; nothing here imports rich, matplotlib, pynvml, triton or quack (the
measurement, profiling, report and CLI layers above do).
"""
