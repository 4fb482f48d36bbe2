#!/usr/bin/env bash
# bench/runs/train.sh: one topic of the H200 runs (bash bench/run_h200.sh --list shows every case).
# Training on the kernels (issue 46): bench/train.py's whole steps -- forward, backward and a fused AdamW step of a
# Llama-style block's linear layers -- with cute_gemm.nn against the same model on torch.nn.Linear (cuBLAS), and
# `cute-gemm tune --explore` over the prefill set, whose GEMMs are the step's.
#
# Run from the repository root: bash bench/run_h200.sh CASE. Each case's comment says what it ran and, once run,
# what came back; docs/results.md and docs/training.md hold the tables. Cases (the number orders the device runs):
#   train-accumulate  1. gradient accumulation: 4 micro-batches per step, accumulate_grad's reduce-add vs autograd's add
#   prefill-explore   2. tune --explore over the prefill set's forward and dX thirds, then the training step again
#   train-kernels     3. 1 and 4 micro-batches with --kernel-time: each model's step, host and GPU kernel time on the H200
#   train-gemms       4. the step's GEMMs one by one (--set train-step): best, phases 7 and 8, beside cuBLAS and cuBLASLt
#   train-median      5. issue 46's criterion three times on one machine: the median of the runs, not one run's
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
case "${1:-}" in
train-accumulate)
  # 1. (ran 2026-12-05 on an H100, 10 loss steps: S 0.64, M 0.74, L 1.02 -- the host's time, not the GPU's; after
  #    the autograd node stopped binding its arguments S 0.76, M 0.96, L 1.02, accumulate_grad M 1.04, L 1.12)
  #    (built 2026-12-05, third session) the three sizes with 4 micro-batches per
  #    optimizer step: nn.Linear, cute-gemm, and cute-gemm with accumulate_grad (from the second micro-batch on, dW is
  #    added into weight.grad by the TMA's reduce-add instead of a new dW that autograd adds); 5 rounds of 3 steps
  timeout 500 python3 bench/train.py --out "$OUT/train_acc" --micro-batches 4 --rounds 5 --steps 3 --loss-steps 20 \
    --no-quack 2>&1 | grep -v -i warn | tail -14
  ;;
prefill-explore)
  # 2. (not yet run) the forward and dX thirds of the prefill set tuned with --explore (the model's 2 cheapest and the
  #    configs no GPU has timed: choose.EXPLORE), the tuned table then used by the training step (S and M sizes)
  for s in fwd dx; do
    timeout 200 python3 -m cute_gemm tune --set "prefill-$s" --top 2 --explore --rounds 3 --quiet \
      --out "$OUT/tune_explore_$s.json" > "$OUT/tune_explore_$s.log" 2>&1
    tail -14 "$OUT/tune_explore_$s.log"
  done
  timeout 150 python3 bench/train.py --out "$OUT/train_tuned" --sizes S,M --rounds 5 --steps 5 --loss-steps 10 \
    --no-quack 2>&1 | grep -v -i warn | tail -8
  ;;
train-kernels)
  # 3. (ran 2026-12-05 on an H100, seventh session: 1 micro-batch S 0.997, M 1.016, L 0.997, kernels S 25.49 / 25.19
  #    ms; 4 micro-batches the host's, S 46.2 / 36.3 ms; built 2026-12-05, fourth session) the step at 1 and 4
  #    micro-batches on the H200 with each model's GPU kernel time (--kernel-time, torch.profiler) beside its step
  #    time and host time: on an H100 the S step at 4 micro-batches was the host's (26.7 / 27.3 ms of kernels in
  #    34.6 / 45.1 ms steps), and at one micro-batch the GPU's; this says which on the H200, after the autograd node stopped binding its arguments per call
  for mb in 1 4; do
    timeout 200 python3 bench/train.py --out "$OUT/train_kernels_mb$mb" --micro-batches $mb --rounds 5 --steps 5 \
      --loss-steps 10 --kernel-time --no-quack 2>&1 | grep -v -i warn | grep "ms/step"
  done
  ;;
train-gemms)
  # 4. (ran 2026-12-05, fifth session, H200: best 0.993 over the 27, lowest 0.942; seventh, H100: 0.999, lowest 0.949;
  #    the step's GEMM time weighted by
  #    calls 0.991 / 1.011 / 1.011 of cuBLAS's at S / M / L) the step's kernel time is the sum of 27 GEMMs' (9 per
  #    size, each run 1-16 times a step): which of them is behind cuBLAS, and which phase would not be. Cold L2 as the
  #    prefill set
  timeout 420 python3 -m cute_gemm bench --set train-step --best --phases 7,8 --config 7:use_pdl=true \
    --config 8:use_pdl=true --peers cublas,cublaslt --cold-l2 --quiet --no-plot --out "$OUT/train_step.json" \
    > "$OUT/train_step.log" 2>&1
  tail -40 "$OUT/train_step.log"
  ;;
train-median)
  # 5. (ran 2026-12-05 on an H100, seventh session: medians S 0.987, M 1.002, L 1.004; 2026-12-06 on an H100, twelfth:
  #    S 0.999, M 1.003, L 1.007; built 2026-12-05, sixth
  #    session) the step's ratio to nn.Linear moved 3% between two runs of the
  #    same kernels (fifth session: S 0.983 then 1.016), so the criterion is read as the median of three runs of its
  #    command on one warm machine; the first as stated (200 loss steps, quack beside), the others the timing alone
  for i in 1 2 3; do
    extra=""; [ $i -gt 1 ] && extra="--loss-steps 10 --no-quack"
    # shellcheck disable=SC2086
    timeout 190 python3 bench/train.py --out "$OUT/train_$i" $extra 2>&1 | grep -v -i warn | grep "ms/step"
  done
  ;;
*)
  echo "$0: no case '${1:-}' here (bash bench/run_h200.sh --list)" >&2
  exit 2
  ;;
esac
