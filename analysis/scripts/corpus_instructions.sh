#!/usr/bin/env bash
# Instructions executed by paver's static analysis and by its interpreter mode, per corpus
# launch (issue 13: "no launch slower to analyse statically than to run in the
# interpreter", on one core as well as on two). For every `kernels/K/{small,paper}*.json`
# matching FILTER it runs, under callgrind (which counts every thread's instructions, so
# the count does not depend on the machine's load or on how many cores there are),
#
#     BIN analyze kernels/K/K.compute_70.ptx --launch L --quiet -o /dev/null
#     BIN analyze kernels/K/K.compute_70.ptx --launch L --quiet --dynamic -o /dev/null
#
# and prints `kernel launch static dynamic static/dynamic` (instructions), one row per launch.
# Both modes run the same descriptors and reuse walk after their footprints; only the
# footprints (static evaluation / interpreter run) differ.
#
# Usage: analysis/scripts/corpus_instructions.sh BIN [FILTER] (from the repository root)
#   FILTER: a substring of the launch path (`small`, `paper`, `jacobi3d`, ...); default `small`
# Needs valgrind. A small launch takes 1-30 s under callgrind; paper launches take minutes.
set -uo pipefail
[ $# -ge 1 ] || { sed -n '2,18p' "$0"; exit 2; }
bin=$(realpath "$1") filter=${2:-small}
count() {
  timeout 1200 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 |
    awk '/Collected/ {print $4}'
}
for l in kernels/*/small*.json kernels/*/paper*.json; do
  case "$l" in *"$filter"*) ;; *) continue ;; esac
  k=$(basename "$(dirname "$l")")
  ptx="kernels/$k/$k.compute_70.ptx"
  [ -f "$ptx" ] || continue
  s=$(count "$bin" analyze "$ptx" --launch "$l" --quiet -o /dev/null)
  d=$(count "$bin" analyze "$ptx" --launch "$l" --quiet --dynamic --max-instructions 100000000000 -o /dev/null)
  ratio=$(awk -v s="${s:-0}" -v d="${d:-0}" 'BEGIN { if (d > 0) printf "%.3f", s / d; else print "-" }')
  echo "$k $(basename "$l" .json) ${s:--} ${d:--} $ratio"
done
