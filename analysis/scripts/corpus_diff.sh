#!/usr/bin/env bash
# Differential check of two paver builds' static analysis on the whole corpus: for every
# `kernels/K/{small,paper}*.json` it runs
#
#     OLD analyze kernels/K/K.compute_70.ptx --launch L --quiet -o OUT/old/K.L.json
#     NEW analyze kernels/K/K.compute_70.ptx --launch L --quiet -o OUT/new/K.L.json
#
# and compares the two documents byte for byte. A speed change to the analysis must leave
# every document unchanged; a launch either build refuses (the memory budget; btree_search's
# and mergesort_step's paper launches before 2026-11-28) counts as compared when both refuse
# with the same message.
#
# Usage: analysis/scripts/corpus_diff.sh OLD NEW [FILTER] (from the repository root)
#   FILTER: a substring of the launch path (`paper`, `small`, `mirror_boundary`, ...)
#   OUT: $CORPUS_DIFF_OUT, else a new temporary folder (kept, printed at the end)
# Exit status 0 when nothing differs, 1 otherwise; the differing launches are listed.
set -uo pipefail
[ $# -ge 2 ] || { sed -n '2,15p' "$0"; exit 2; }
old=$(realpath "$1") new=$(realpath "$2") filter=${3:-}
out=${CORPUS_DIFF_OUT:-$(mktemp -d -t corpus_diff.XXXXXX)}
mkdir -p "$out/old" "$out/new"
compared=0 differ=0
for l in kernels/*/small*.json kernels/*/paper*.json; do
  case "$l" in *"$filter"*) ;; *) continue ;; esac
  k=$(basename "$(dirname "$l")")
  ptx="kernels/$k/$k.compute_70.ptx"
  name="$k.$(basename "$l")"
  for side in old new; do
    bin=$old
    [ "$side" = new ] && bin=$new
    rm -f "$out/$side/$name"
    if ! "$bin" analyze "$ptx" --launch "$l" --quiet -o "$out/$side/$name" \
      2> "$out/$side/$name.err"; then
      # Keep only the message for the comparison, less the default memory budget, which
      # is a share of the memory free at that moment.
      tail -n 1 "$out/$side/$name.err" | sed -E 's/budget of [0-9]+ MiB/budget of N MiB/' \
        > "$out/$side/$name"
    fi
  done
  compared=$((compared + 1))
  if ! cmp -s "$out/old/$name" "$out/new/$name"; then
    differ=$((differ + 1))
    echo "DIFFERS: $l"
  fi
done
echo "compared $compared, differing $differ (documents in $out)"
[ "$differ" -eq 0 ]
