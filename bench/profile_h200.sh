#!/usr/bin/env bash
# "Where did the cycles go": one profiled launch each of sm90 phase 5, phase 6 and cuBLAS at 4096^3
# (after warm-ups), with the clocks left alone. Text reports go to $OUT.
#   on the device: source .devcarry/setup.sh && bash bench/profile_h200.sh
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
NCU="ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section Occupancy --metrics sm__cycles_elapsed.avg.per_second"
ncu --query-metrics 2>/dev/null | grep -iE "gmma|pipe_tensor|shared" > "$OUT/metrics_available.txt"
for p in 5 6; do
  timeout 150 $NCU -k regex:Sm90Phase$p --launch-skip 4 --launch-count 1 \
    python3 -m cute_gemm run --phase $p --shape 4096,4096,4096 > "$OUT/ncu_phase$p.txt" 2>&1
done
timeout 150 $NCU -k regex:'nvjet|gemm|xmma' --launch-skip 8 --launch-count 1 python3 -c "
import torch
a = torch.randn(4096, 4096, device='cuda').half(); b = torch.randn(4096, 4096, device='cuda').half()
for _ in range(12): torch.mm(a, b, out_dtype=torch.float32)
torch.cuda.synchronize()" > "$OUT/ncu_cublas.txt" 2>&1
for f in "$OUT"/ncu_*.txt; do echo "== $f"; grep -E "^  [a-zA-Z_]|Duration|Throughput|SM Frequency|gmma|Pipe|Shared|Bank|Warp Cycles|Theoretical Occ|Achieved Occ|Registers|==PROF==|ERR" "$f" | head -60; done
