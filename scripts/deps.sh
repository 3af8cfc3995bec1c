#!/usr/bin/env bash
# Installs the Debian 12 packages brook's build, tests, benchmarks, examples and
# fuzzer need. Runs apt only when something is missing (apt-get update once, then
# apt-get install -y), through sudo when not root.
#
#   ./scripts/deps.sh                 # install what is missing
#   source scripts/deps.sh; brook_deps   # the same from another script
#
# BROOK_SKIP_DEPS=1 skips everything (a machine set up by other means).
#
# brook_use_ccache (for scripts that configure build trees) routes compiles
# through ccache when it is installed, unless BROOK_CCACHE=0 or
# CMAKE_CXX_COMPILER_LAUNCHER is already set. It takes effect when a build tree
# is first configured.

BROOK_DEPS_PACKAGES=(
  build-essential cmake ninja-build git pkg-config
  libboost-dev libfmt-dev catch2
  zlib1g-dev libsnappy-dev liblz4-dev libzstd-dev        # the opt-in codecs' tests; a host needs only those it enables
  libbenchmark-dev libconcurrentqueue-dev librocksdb-dev  # benchmarks and their baselines
  librdkafka-dev                                          # benchmark-only: the broker benchmarks' client
  clang libclang-rt-14-dev                                # the libFuzzer target
  clang-format                                            # scripts/format.sh (test.sh's format stage)
  ccache                                                  # rebuilds, and CI after a local run
  kcat python3-kafka python3-confluent-kafka              # real Kafka clients against `brook serve`
)

brook_deps() {
  if [[ "${BROOK_SKIP_DEPS:-0}" == 1 ]]; then
    echo "deps: BROOK_SKIP_DEPS=1, not checking packages"
    return 0
  fi
  if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "deps: no dpkg-query (not Debian?); install these yourself: ${BROOK_DEPS_PACKAGES[*]} nodejs npm" >&2
    return 0
  fi

  local wanted=("${BROOK_DEPS_PACKAGES[@]}")
  # Node runs the kafkajs cross-check in tests/compat; keep any node already on PATH.
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    wanted+=(nodejs npm)
  fi

  local missing=() p
  for p in "${wanted[@]}"; do
    if [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]]; then
      missing+=("$p")
    fi
  done
  if ((${#missing[@]} == 0)); then
    echo "deps: all ${#wanted[@]} packages installed"
    return 0
  fi

  local sudo=()
  if ((EUID != 0)); then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "deps: missing ${missing[*]}; run as root or install sudo" >&2
      return 1
    fi
    sudo=(sudo)
  fi
  echo "deps: installing ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
}

brook_use_ccache() {
  if [[ "${BROOK_CCACHE:-1}" == 0 || -n "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]] || ! command -v ccache >/dev/null 2>&1; then
    return 0
  fi
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache
  # Hits across checkouts in different directories (CI clones afresh beside the work tree).
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(pwd)}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
}

# Executed rather than sourced: install now.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  brook_deps
fi
