#!/usr/bin/env bash
# Clang's thread-safety analysis over every source under src/ (tests included) that sees
# floe/common/mutex.h, directly or through a header; fails on any finding.
#
#   scripts/thread-safety-check.sh BUILD_DIR
#
# Include paths and defines come from BUILD_DIR/compile_commands.json (written by the CMake
# configure), so the check needs no build and a GCC-configured tree will do. Syntax only: a
# few seconds a file, THREAD_SAFETY_JOBS files at a time (default: every core). CLANGXX
# overrides the compiler (default /usr/bin/clang++, Debian's clang).
set -euo pipefail

die() {
  echo "thread-safety-check: error: $*" >&2
  exit 2
}

[ $# -eq 1 ] || die "usage: scripts/thread-safety-check.sh BUILD_DIR"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
db="$(cd "$1" 2> /dev/null && pwd)/compile_commands.json" || die "no build directory '$1'"
[ -f "$db" ] || die "no $db (configure the build with CMake first)"
clangxx="${CLANGXX:-/usr/bin/clang++}"
[ -x "$clangxx" ] || die "no $clangxx (apt-get install clang)"
command -v node > /dev/null || die "node is needed to read compile_commands.json"

# Headers that reach mutex.h, to a fixed point; then the sources that include any of them.
cd "$repo/src"
includers() {  # includers GLOB HEADER...: the files matching GLOB that include a HEADER
  local glob="$1" patterns=()
  shift
  for h in "$@"; do patterns+=(-e "#include \"$h\""); done
  grep -rlF --include="$glob" "${patterns[@]}" floe | sort || true
}
reach=("floe/common/mutex.h")
while true; do
  mapfile -t next < <( (echo floe/common/mutex.h && includers '*.h' "${reach[@]}") | sort -u)
  [ "${#next[@]}" -eq "${#reach[@]}" ] && break
  reach=("${next[@]}")
done
mapfile -t sources < <(includers '*.cc' "${reach[@]}")
[ "${#sources[@]}" -gt 0 ] || die "no source includes floe/common/mutex.h"

# One line per source: the include paths, defines and language standard of its compile
# command, separated by \x1f. A source the build does not compile is an error, not a silent pass.
flags_of() {
  node - "$db" "$@" << 'EOF'
const fs = require('fs');
const [db, ...files] = process.argv.slice(2);
const real = (p) => (fs.existsSync(p) ? fs.realpathSync.native(p) : p);
const entries = new Map();
for (const e of JSON.parse(fs.readFileSync(db, 'utf8'))) {
  entries.set(real(require('path').resolve(e.directory, e.file)), e);
}
// POSIX shell words, enough for what CMake writes (quotes and backslashes).
function words(command) {
  const out = [];
  let cur = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (c === ' ' || c === '\t') {
      if (cur !== null) out.push(cur);
      cur = null;
    } else if (c === '\\') {
      cur = (cur ?? '') + command[++i];
    } else if (c === "'") {
      const end = command.indexOf("'", i + 1);
      cur = (cur ?? '') + command.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      cur = cur ?? '';
      for (i++; command[i] !== '"'; i++) cur += command[i] === '\\' ? command[++i] : command[i];
    } else {
      cur = (cur ?? '') + c;
    }
  }
  if (cur !== null) out.push(cur);
  return out;
}
const withValue = ['-I', '-isystem', '-iquote', '-idirafter', '-D', '-U', '-include'];
for (const file of files) {
  const e = entries.get(real(require('path').resolve(file)));
  if (!e) {
    console.log('MISSING');
    continue;
  }
  const args = e.arguments ?? words(e.command);
  const keep = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (withValue.includes(a)) {
      const v = args[++i];
      keep.push(a, a === '-D' || a === '-U' ? v : require('path').resolve(e.directory, v));
    } else if (/^-(I|D|U|std=)/.test(a)) {
      keep.push(a.startsWith('-I') ? '-I' + require('path').resolve(e.directory, a.slice(2)) : a);
    }
  }
  console.log(keep.join('\x1f'));
}
EOF
}

mapfile -t flags < <(flags_of "${sources[@]}")
[ "${#flags[@]}" -eq "${#sources[@]}" ] || die "could not read $db"
jobs="${THREAD_SAFETY_JOBS:-$(nproc)}"
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
check() {
  local src="$1" line="$2" args
  if [ "$line" = MISSING ]; then
    echo "src/$src is not in $db (tests are there with -DFLOE_BUILD_TESTS=ON)"
    return 1
  fi
  IFS=$'\x1f' read -r -a args <<< "$line"
  # Only the analysis: other Clang warnings are the GCC build's business.
  "$clangxx" -fsyntax-only -Wno-everything -Wthread-safety -Werror=thread-safety \
    "${args[@]}" "$src" 2>&1
}
for i in "${!sources[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  (check "${sources[$i]}" "${flags[$i]}" > "$logs/$i.log" && touch "$logs/$i.ok") &
done
wait
failed=0
for i in "${!sources[@]}"; do
  if [ -e "$logs/$i.ok" ]; then
    echo "ok    src/${sources[$i]}"
  else
    echo "FAIL  src/${sources[$i]}"
    failed=$((failed + 1))
  fi
  cat "$logs/$i.log"
done
if [ $failed -gt 0 ]; then
  echo "thread-safety-check: $failed of ${#sources[@]} sources FAILED"
  exit 1
fi
echo "thread-safety-check: ${#sources[@]} sources clean"
