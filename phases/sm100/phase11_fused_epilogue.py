"""sm100 phase 11: the fused epilogue -- y = act(A @ B + bias) + residual before the rounding (beyond the worklog).

Compared to phase 10 (swap-AB, split-K in a cluster), only the epilogue changes. Where phase 10's reduce adds
the cluster's partial tiles and rounds the 16-B vector it stores, phase 11 first passes the fp32 sum through
``phases.epilogue.apply``:
1. ``+ bias``: the 8-B vector of the bias (16-bit, A's dtype) at the same coordinates, from a broadcast view
   with C's shape (stride 0 along the tokens), loaded straight into registers: each value is used once;
2. the activation (``relu``, tanh-form ``gelu``, ``silu``) on each value, with the SFU's ``tanh.approx.f32``;
3. ``+ residual``: the vector of a tensor of C's shape and dtype, transposed with C (the kernel stores C^T);
   or, ``gated`` (a gated MLP's up projection, SwiGLU / GeGLU, the weight's rows interleaved gate, up, ...), step
   2 becomes act(gate) * up of each vector's pairs: C has N / 2 columns, two stored values per vector;
then the rounding to C's type and the store, as before. A split-K tile applies it once, after its reduce:
the epilogue reads the *sum* of the K ranges, never a partial (with split_k = 1 the one partial tile is the sum).

Why: ``linear(x, w, b)`` and its activation are otherwise three kernels, and the two after the GEMM each read
and write all of y; at decode shapes each of those launches costs about as much as the GEMM's epilogue. Why
before the rounding: the unfused sequence rounds y to bf16, then rounds gelu(y) again; here the rounding
happens once, on the fp32 result (``phases.epilogue`` says more).

The same fields sit on the persistent phases (sm90 6, 7 and 8, the gated pairs too; sm100 6, not gated), which
apply them to each accumulator register before its TMA-store slab (``phases.epilogue.apply_at``): ``phase="best"``
picks among those and this phase per shape, as it picks without an epilogue.

Numbers: phase 10's tile, ring, TMEM and cluster; the epilogue adds no smem and, per 16-B C vector, one 8-B load of
the bias and one of the residual (16-bit C), a handful of FMAs and one ``tanh.approx`` per value.

Constraints: phase 10's; the bias a contiguous vector of N values of A's dtype, the residual C's shape, dtype
and row-major layout, both 16-B aligned. All epilogue fields off: phase 10's kernel, instruction for instruction.
"""

import dataclasses

import cutlass
import cutlass.cute as cute

from phases import epilogue
from phases.sm100.phase10_swap_ab import Sm100Phase10, Sm100Phase10Config


@dataclasses.dataclass(frozen=True)
class Sm100Phase11Config(Sm100Phase10Config, epilogue.EpilogueFields):
    """Phase 10's fields and the epilogue's: ``bias``, ``activation``, ``residual`` (``phases.epilogue``)."""


class Sm100Phase11(Sm100Phase10):
    """Phase 10 with the fused epilogue: bias, activation and residual applied to the reduced fp32 tile."""

    phase = "11"
    Config = Sm100Phase11Config
    summary = "fused epilogue: act(C + bias) + residual in fp32 after the split-K reduce, before the rounding"
    adds = "fused epilogue: bias, activation (relu, gelu, silu) and residual in registers before the store"
    worklog = ""
    parent = "10"
    # the config that shows the step (compare 10 11, the report's step 10 -> 11): F.linear's bias and a gelu;
    # the default (every field off) is phase 10's kernel, which would show only a new name
    lesson_config = {"bias": True, "activation": "gelu"}

    def config_problems(self) -> list[str]:
        return super().config_problems() + self.cfg.epilogue_problems()

    def can_implement(self, m: int, n: int, k: int) -> list[str]:
        return super().can_implement(m, n, k) + self.cfg.shape_problems(n, self.divisibility()[1])

    def activation(self) -> str:
        return self.cfg.activation

    def gated(self) -> bool:
        return self.cfg.gated

    @staticmethod
    def problem_mnk(mA, mC):
        """(M, N, K) of the GEMM: the tokens from C^T, N from the weights B^T (N, K) -- C^T has N / 2 rows when gated."""
        return mC.shape[1], mA.shape[0], mA.shape[1]

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream, mBias=None, mD=None):
        # the bias over the problem's N, which is C^T's mode 0 here: element (n, m) of the view is bias[n]; gated,
        # it runs over the GEMM's N (the weights' rows, gate and up interleaved), twice C's
        bias = None
        if cutlass.const_expr(mBias is not None):
            bias = epilogue.bias_view(mBias, mC, n_mode=0, shape=(mA.shape[0], mC.shape[1]))
        Sm100Phase10.__call__(self, mA, mB, mC, stream, bias, mD)
