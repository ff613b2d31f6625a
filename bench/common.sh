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
