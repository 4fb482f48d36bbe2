"""``cute_gemm.nn``: torch modules on the ladder's kernels -- ``Linear``, a drop-in ``torch.nn.Linear``, and
``swap_linear``, which puts a model's linear layers on the kernels in place.

    import cute_gemm.nn
    layer = cute_gemm.nn.Linear(4096, 11008, bias=False, device="cuda", dtype=torch.bfloat16)
    skipped = cute_gemm.nn.swap_linear(model)   # [(name, why)] of the nn.Linear layers left as they are

``Linear`` is a subclass of ``torch.nn.Linear`` with nothing added but the ``phase`` it runs (default
"best"): the same parameters, initialization, ``state_dict`` and ``repr``, so checkpoints move between the
two freely. Its forward calls ``cute_gemm.linear`` -- forward and backward on the kernels, under
``torch.compile`` and autocast too -- when the kernels take the call: a CUDA input on a Hopper or Blackwell
GPU, x and the weight (and bias) of one 16-bit dtype (or any float dtype under a 16-bit ``torch.autocast``:
F.linear's casts), in and out features multiples of 8 (16-byte rows), x's last dim contiguous. Anything
else -- a CPU input, fp32 without autocast, an odd width -- runs ``F.linear``, so a swapped model still
runs everywhere it ran.

``swap_linear`` changes the class of each plain ``nn.Linear`` module in place (``module.__class__``):
the module object, its Parameters, hooks and place in the model stay the same, so an optimizer built
before the swap keeps working. It leaves, and names with the reason, the layers whose weights the kernels
cannot take (dtype not fp16/bf16 -- unless ``autocast=True``, for fp32 master weights trained under a
16-bit autocast -- or features not multiples of 8) and subclasses of ``nn.Linear`` (their forward is
their own).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from cute_gemm.runtime import gemm as _gemm

_HALF = (torch.float16, torch.bfloat16)
_ARCH_OK: dict = {}  # CUDA device index -> whether a ladder runs there (compute capability 9.0 / 10.x)


class Linear(torch.nn.Linear):
    """``torch.nn.Linear`` whose forward runs ``cute_gemm.linear`` where the kernels take the call (see the
    module's docstring), ``F.linear`` elsewhere. ``phase``: what ``cute_gemm.linear`` runs ("best")."""

    phase = "best"  # a class default, so a module whose class ``swap_linear`` changed has it too
    accumulate_grad = False  # the backward adds dW into an existing weight.grad in place (``cute_gemm.linear``)

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None,
                 phase: str = "best", accumulate_grad: bool = False) -> None:
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        if phase != "best":
            self.phase = str(phase)
        if accumulate_grad:
            self.accumulate_grad = True

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if takes(input, self.weight, self.bias):
            return _gemm.linear(input, self.weight, self.bias, phase=self.phase, accumulate_grad=self.accumulate_grad)
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return super().extra_repr() + ("" if self.phase == "best" else f", phase={self.phase!r}")


def takes(x, w, bias=None) -> bool:
    """True when ``cute_gemm.linear`` takes (x, w, bias) as ``Linear.forward`` would call it: CUDA x on a
    GPU of a ladder, x's last dim contiguous, in and out features multiples of 8, and x, w, bias of one
    16-bit dtype once autocast's casts are applied."""
    if not (isinstance(x, torch.Tensor) and x.dim() >= 1 and x.stride(-1) == 1 and _on_gpu(x)):
        return False
    n, k = w.shape
    if n % 8 or k % 8 or x.shape[-1] != k or any(t.device != x.device for t in (w, bias) if t is not None):
        return False
    if torch.is_autocast_enabled(x.device.type):  # as cute_gemm.linear casts (runtime.linear.autocast)
        dt = torch.get_autocast_dtype(x.device.type)
        if dt not in _HALF or not all(t.is_floating_point() and t.dtype != torch.float64
                                      for t in (x, w, bias) if t is not None):
            return False
    else:
        dt = x.dtype
        if dt not in _HALF or w.dtype != dt or (bias is not None and bias.dtype != dt):
            return False
    return True


def _on_gpu(x) -> bool:
    """x is on a CUDA GPU that a ladder runs on (asked once per device; not again while traced)."""
    if not x.is_cuda:
        return False
    if torch.compiler.is_compiling():
        return True
    dev = x.get_device()
    ok = _ARCH_OK.get(dev)
    if ok is None:
        from cute_gemm.runtime.arch import family_of_capability

        ok = _ARCH_OK[dev] = family_of_capability(*torch.cuda.get_device_capability(dev)) is not None
    return ok


def swap_linear(model: torch.nn.Module, autocast: bool = False, phase: str = "best") -> list[tuple[str, str]]:
    """Put ``model``'s plain ``torch.nn.Linear`` modules (``model`` itself too) on the kernels, in place, by
    making each a ``cute_gemm.nn.Linear`` (same object and Parameters); return [(name, why)] for those
    left as they are. ``autocast``: take fp32 weights too (they run on the kernels under a 16-bit
    ``torch.autocast``, F.linear outside it). ``phase``: what the swapped layers run ("best")."""
    dtypes = (*_HALF, torch.float32) if autocast else _HALF
    left = []
    for name, module in model.named_modules():
        if not isinstance(module, torch.nn.Linear) or type(module) is Linear:
            continue
        why = why_not(module, dtypes)
        if why:
            left.append((name, why))
            continue
        module.__class__ = Linear
        if phase != "best":
            module.phase = str(phase)
    return left


def why_not(module: torch.nn.Linear, dtypes=_HALF) -> str | None:
    """Why ``swap_linear`` leaves an ``nn.Linear`` module (None: it takes it)."""
    if type(module) is not torch.nn.Linear:
        return f"a subclass of nn.Linear ({type(module).__name__}): its forward is its own"
    w = module.weight
    if w.dtype not in dtypes:
        names = " or ".join(str(d).replace("torch.", "") for d in dtypes)
        return f"weight is {w.dtype}: the kernels take {names}" + ("" if torch.float32 in dtypes else
                                                                       " (autocast=True takes fp32 too)")
    if module.in_features % 8 or module.out_features % 8:
        return (f"{module.in_features} -> {module.out_features} features: the kernels take multiples of 8 "
                f"(16-byte rows)")
    return None


__all__ = ["Linear", "swap_linear", "takes", "why_not"]
