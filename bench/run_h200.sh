#!/usr/bin/env bash
# The H200 runs behind docs/results.md, each under 10 minutes: one `case` arm per device run, kept in a topic file
# of bench/runs/ and run by name through this dispatcher (on an H200, from the repository root, the project installed).
#
#   bash bench/run_h200.sh CASE          run CASE (no CASE: sweep); its output goes to $OUT (default out/)
#   bash bench/run_h200.sh --list        every case: its name, its file, and one line on what it runs
#   bash bench/run_h200.sh --which CASE  the file that holds CASE
#
# How a result was produced: docs/results.md names its case (`bash bench/run_h200.sh regime4`); the commands are
# that case's arm, `regime4)`, in one file of bench/runs/ -- `grep -n '^regime4)' bench/runs/*.sh`, or --which.
# The topic files (each opens with its cases, one line each, oldest first):
#   big_shapes.sh     the sweep, the shapes issue 10's targets name (sustained), no regression there, the skinny shape
#   sets.sh           issue 18's criteria and the named and held-out sets with the model's picks
#   tune.sh           `cute-gemm tune` and programmatic dependent launch: sets tuned, then benched
#   checks.sh         a config's GPU tests, the four sanitizers and the stress run before best may pick it
#   model_changes.sh  a change to the model tried: the candidates a refit reads, the picks it moves beside the old
#   weight_stream.sh  1-128 tokens (decode): kernels probed for the weight stream beside best's pick
#   token_tiles.sh    129-512 tokens: token-tile arrangements probed beside best's pick
#   prefill.sh        512-16384 tokens: the prefill/training set's three GEMMs beside the vendors (issue 45)
#   epilogue.sh       fused epilogues (bias, gelu/silu, residual) beside the unfused torch ops and quack (issue 47)
#   train.sh          whole training steps on the kernels beside nn.Linear: micro-batches, tuned picks (issue 46)
# bench/runs/common.sh holds what every case shares (the shell's options, $OUT, the GPU's clocks into $OUT/gpu.txt,
# beside()); each topic file sources it, so `bash bench/runs/FILE.sh CASE` runs a case too.
set -uo pipefail
RUNS="$(dirname "${BASH_SOURCE[0]}")/runs"

# "NAME FILE" for every case, from the arms `NAME)` (or `NAME1|NAME2)`) of the topic files
cases() {
  awk '/^[a-z0-9][a-z0-9|-]*\)/ { sub(/\).*/, ""); n = split($0, names, "|")
                                 for (i = 1; i <= n; i++) print names[i], FILENAME }' "$RUNS"/*.sh
}

# "NAME  FILE  N. what it runs" for every case; the lines come from each file's index (`#   NAME  N. ...`)
list() {
  awk 'FNR == 1 { file = FILENAME; sub(/.*\//, "", file) }
       /^#   [a-z0-9-]+  +[0-9]+\. / { name = $2; sub(/^#   [a-z0-9-]+ +/, ""); line[name] = $0 }
       /^[a-z0-9][a-z0-9|-]*\)/ { sub(/\).*/, ""); n = split($0, names, "|")
         for (i = 1; i <= n; i++) printf "%-17s %-16s %s\n", names[i], file, \
           (names[i] in line) ? line[names[i]] : "(no line in the file'"'"'s index)" }' "$RUNS"/*.sh
}

case "${1:-sweep}" in
--list | -l | help | -h | --help)
  case "$1" in -l | --list) ;; *) awk 'NR > 1 && !/^#/ { exit } NR > 1 { print substr($0, 3) } END { print "" }' "${BASH_SOURCE[0]}" ;; esac
  list
  exit 0
  ;;
--which)
  file=$(cases | awk -v c="${2:-}" '$1 == c { print $2 }')
  [ -n "$file" ] || { echo "run_h200.sh: no case '${2:-}' (bash bench/run_h200.sh --list)" >&2; exit 1; }
  echo "$file"
  exit 0
  ;;
esac
CASE=${1:-sweep}
file=$(cases | awk -v c="$CASE" '$1 == c { print $2 }')
[ -n "$file" ] || { echo "run_h200.sh: no case '$CASE' (bash bench/run_h200.sh --list)" >&2; exit 2; }
exec bash "$file" "$CASE"
