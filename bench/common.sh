# Sourced by the bench scripts.

# bench_command SCRIPT [ARG...]: the command line that reproduces this run, for the results
# file: the knobs named in BENCH_KNOBS that are set in the environment, then `bash SCRIPT ARG...`.
# FLOE, OUT, INPUT_DIR and RESULT only say where things are; the results file records them apart.
bench_command() {
  local cmd="" k a
  for k in $BENCH_KNOBS; do
    if [[ -n "${!k+x}" ]]; then cmd+="$k=$(bench_quote "${!k}") "; fi
  done
  cmd+="bash $1"
  shift
  for a in "$@"; do cmd+=" $(bench_quote "$a")"; done
  printf '%s' "$cmd"
}

# Shell-quotes a word only when it needs it, so that the usual commands read as typed.
bench_quote() {
  if [[ "$1" =~ ^[A-Za-z0-9_./:=,+@-]+$ ]]; then
    printf '%s' "$1"
  else
    printf "'%s'" "${1//\'/\'\\\'\'}"
  fi
}

# run_node_bench NAME SCRIPT.mjs OUT_DEFAULT [ARG...]: the wrapper of a node bench: FLOE, OUT and
# RESULT (default bench/results/NAME-<UTC date>.json; RESULT= writes none) exported, the command
# recorded, floe and node checked, then the script run with ARG....
run_node_bench() {
  local name="$1" script="$2" out="$3"
  shift 3
  BENCH_KNOBS=""
  export BENCH_COMMAND="$(bench_command "bench/${script%.mjs}.sh" "$@")"
  export FLOE="${FLOE:-build/src/floe/cli/floe}"
  export OUT="${OUT:-$out}"
  export RESULT="${RESULT-bench/results/$name-$(date -u +%Y-%m-%d).json}"
  [[ -x "$FLOE" ]] || { echo "$name: $FLOE not found or not executable (build floe first, or set FLOE=...)" >&2; exit 2; }
  command -v node > /dev/null || { echo "$name: node (>= 20) not found" >&2; exit 2; }
  exec node "bench/$script" "$@"
}
