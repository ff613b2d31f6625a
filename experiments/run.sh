#!/usr/bin/env bash
# The reference study's experiments against floe, one after another, then the report.
#
#   bash experiments/run.sh [--quick] [NAME...]
#
# --quick: each experiment at its CI size (minutes in all); without it, full size (by hand).
# NAME: only these experiments (directories under experiments/). Results go to
# experiments/results/<name>-<date>[-quick].json unless RESULTS_DIR says where; a full run also
# rewrites experiments/REPORT.md. FLOE: the binary (default build/src/floe/cli/floe).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/.."
quick=()
names=()
for a in "$@"; do
  case "$a" in
    --quick) quick=(--quick) ;;
    -*) echo "experiments: unknown option $a (accepted: --quick)" >&2; exit 2 ;;
    *) names+=("$a") ;;
  esac
done
if [[ ${#names[@]} -eq 0 ]]; then
  for d in experiments/*/; do [[ -f "$d/run.mjs" ]] && names+=("$(basename "$d")"); done
fi
for name in "${names[@]}"; do
  [[ -f "experiments/$name/run.mjs" ]] || { echo "experiments: no experiment '$name'" >&2; exit 2; }
  args=("${quick[@]}")
  if [[ -n "${RESULTS_DIR:-}" ]]; then
    args+=(--result "$RESULTS_DIR/$name${quick:+-quick}.json" --out "$RESULTS_DIR/out/$name")
  fi
  echo "experiments: $name ${quick[*]}"
  node "experiments/$name/run.mjs" "${args[@]}"
done
if [[ ${#quick[@]} -eq 0 && -z "${RESULTS_DIR:-}" ]]; then node experiments/report.mjs --write; fi
