# bench/runs/common.sh: what every case shares, sourced by each topic file of bench/runs/ (not run by itself): the
# shell's options, $OUT (where a case writes; default out/, under the repository root, where the cases run), the
# GPU's clocks and power into $OUT/gpu.txt before the case, and beside().
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
export CUTE_GEMM_GPU_TEST_TIMEOUT=${CUTE_GEMM_GPU_TEST_TIMEOUT:-120}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv | tee "$OUT/gpu.txt"
# beside NAME LIMIT NOTE ARGS...: bench/candidates.py ARGS (the configs to time side by side at each shape) into
# $OUT/NAME.json (a fit_best candidates file; its log $OUT/NAME.log), then each shape's table without the warnings
beside() {
  local name=$1 limit=$2 note=$3
  shift 3
  timeout "$limit" python3 bench/candidates.py "$@" --out "$OUT/$name.json" --note "$note" > "$OUT/$name.log" 2>&1
  grep -v -i warn "$OUT/$name.log" | grep "best (\|phase 9\|phase 10\|cuBLAS\|^[0-9]" | head -90
}
