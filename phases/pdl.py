"""Programmatic dependent launch in the kernels of both ladders (a config with ``use_pdl``): the two points
of the protocol, written once. A kernel launched with it may start while the previous kernel of its stream is
still running; it calls ``pdl_wait`` before its first global access and ``pdl_launch_dependents`` once its
CTA's work is done (sm90 phases 6-10, sm100 phases 6, 7, 9 and 10)."""

import cutlass
import cutlass.cute as cute


@cute.jit
def pdl_wait(cfg: cutlass.Constexpr):
    """With ``use_pdl``: the launch may have started while the previous kernel of the stream was still
    running (its CTAs take SMs as that kernel's CTAs leave them); everything before this -- barrier init,
    tensor-map prefetch, the schedule -- overlapped its tail, and no thread touches global memory before
    that kernel has finished and flushed (``griddepcontrol.wait``). Without it, nothing."""
    if cutlass.const_expr(cfg.use_pdl):
        cute.arch.griddepcontrol_wait()


@cute.jit
def pdl_launch_dependents(cfg: cutlass.Constexpr):
    """With ``use_pdl``: this CTA's work is done, the next kernel of the stream may launch
    (``griddepcontrol.launch_dependents``; it still waits for this one to finish before its first access)."""
    if cutlass.const_expr(cfg.use_pdl):
        cute.arch.griddepcontrol_launch_dependents()
