#!/usr/bin/env bash
# Install what floe needs on a fresh Debian 12 machine (run as root). Idempotent: when every
# Debian package is already installed, apt is not touched at all.
#
#   scripts/install-deps.sh run    what building and running floe needs (`make run`)
#   scripts/install-deps.sh test   the above, plus what the tests need: GoogleTest, a PostgreSQL
#                                  server, Chromium, Node.js and the npm packages of the
#                                  independent readers from the committed package-lock.json
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-test}"

# Building and running floe: compiler, build tools, the libraries floe links (jemalloc is its
# allocator: docs/state.md, "Memory"), and the time zone database ('table.local-time-zone' names
# are checked against it).
RUN_PACKAGES=(
  g++ make cmake ninja-build ccache pkg-config git
  libzstd-dev libsnappy-dev zlib1g-dev libssl-dev
  libsimdjson-dev nlohmann-json3-dev librdkafka-dev libcpp-httplib-dev
  libsqlite3-dev libpq-dev librocksdb-dev libjemalloc-dev
  tzdata
)
# Tests only: unit tests, the PostgreSQL server of the JDBC catalog tests, headless Chromium for
# the web UI test, Node.js for the multi-process and interop tests, clang-format for `make format`,
# clang for the thread-safety analysis (scripts/thread-safety-check.sh), perf for the profile bench
# (bench/profile.sh), GNU time for the benches' CPU seconds (bench/kafka_formats.mjs needs it).
TEST_PACKAGES=(
  libgtest-dev libgmock-dev googletest
  postgresql chromium
  nodejs npm clang-format clang
  linux-perf time
)

die() {
  echo "install-deps: error: $*" >&2
  exit 1
}

case "$mode" in
  run) PACKAGES=("${RUN_PACKAGES[@]}") ;;
  test) PACKAGES=("${RUN_PACKAGES[@]}" "${TEST_PACKAGES[@]}") ;;
  *) die "unknown mode '$mode' (run or test)" ;;
esac

installed() {
  # node/npm may come from another Debian-format source (e.g. a nodejs package that bundles
  # npm and conflicts with Debian's npm): a working command counts as installed.
  case "$1" in
    nodejs) command -v node > /dev/null && return 0 ;;
    npm) command -v npm > /dev/null && return 0 ;;
  esac
  dpkg-query -W -f='${Status}' "$1" 2> /dev/null | grep -q '^install ok installed$'
}

missing=()
for p in "${PACKAGES[@]}"; do
  installed "$p" || missing+=("$p")
done

if ((${#missing[@]})); then
  [[ $(id -u) -eq 0 ]] || die "missing Debian packages (${missing[*]}) and not root; run as root"
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update || die "apt-get update failed"
  apt-get install -y --no-install-recommends "${missing[@]}" || die "apt-get install failed for: ${missing[*]}"
  for p in "${missing[@]}"; do
    installed "$p" || die "package $p is still not installed"
  done
else
  echo "install-deps: all ${#PACKAGES[@]} Debian packages for '$mode' already installed"
fi

[[ "$mode" == test ]] || {
  echo "install-deps: done ($mode)"
  exit 0
}

command -v node > /dev/null || die "node not found after installing nodejs"
command -v npm > /dev/null || die "npm not found after installing npm"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
((node_major >= 18)) || die "node $(node --version) is too old for the interop tests (need >= 18)"

cd "$repo"
[[ -f package-lock.json ]] || die "$repo/package-lock.json is missing"
# npm ci removes and reinstalls node_modules: skip it when the installed tree already matches
# the lock file (npm writes node_modules/.package-lock.json as its record of the install).
if [[ -f node_modules/.package-lock.json ]] && node -e '
  const fs = require("fs")
  const want = JSON.parse(fs.readFileSync("package-lock.json", "utf8")).packages
  const have = JSON.parse(fs.readFileSync("node_modules/.package-lock.json", "utf8")).packages
  for (const [k, v] of Object.entries(want)) {
    if (k === "" || (v.optional && !have[k])) continue
    if (!have[k] || have[k].version !== v.version || !fs.existsSync(k)) process.exit(1)
  }
' 2> /dev/null; then
  echo "install-deps: node_modules already matches package-lock.json"
else
  echo "install-deps: npm ci"
  npm ci --no-audit --no-fund || die "npm ci failed in $repo"
fi
echo "install-deps: done ($mode)"
