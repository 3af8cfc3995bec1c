#!/usr/bin/env bash
# Builds brook's example programs with the release preset and runs them in order:
#
#   ./scripts/demo.sh
#
# Each example is examples/<name>.cpp, built as target <name> into
# build/release/examples/<name>, and run without arguments from a fresh scratch
# working directory build/release/demo/<name>/ (so relative paths it writes to stay
# out of the source tree).
# BROOK_JOBS (build jobs, 2), BROOK_SKIP_DEPS=1 and BROOK_CCACHE=0 as in scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)

# The examples to run, in order. quickstart is the demo; the others run when written.
examples=(quickstart partition_log_tour pubsub_threads consumer_group replicated_cluster)
required=quickstart

# shellcheck source=scripts/deps.sh
source scripts/deps.sh
brook_deps
brook_use_ccache

if [[ ! -f "examples/$required.cpp" ]]; then
  echo "demo.sh: examples/$required.cpp missing: there is no demo to run yet" >&2
  exit 1
fi
targets=()
for e in "${examples[@]}"; do
  if [[ -f "examples/$e.cpp" ]]; then
    targets+=("$e")
  else
    echo "demo.sh: examples/$e.cpp not written yet; skipping $e"
  fi
done

printf '\n======== build (preset release): %s ========\n' "${targets[*]}"
cmake --preset release
cmake --build --preset release -j "${BROOK_JOBS:-2}" --target "${targets[@]}"

for e in "${targets[@]}"; do
  exe="$root/build/release/examples/$e"
  if [[ ! -x "$exe" ]]; then
    echo "demo.sh: $exe was not built; does examples/CMakeLists.txt add the target $e?" >&2
    exit 1
  fi
  dir="$root/build/release/demo/$e"
  rm -rf "$dir"
  mkdir -p "$dir"
  printf '\n======== %s ========\n' "${exe#"$root"/}"
  (cd "$dir" && "$exe")
done
printf '\ndemo.sh: ran %s\n' "${targets[*]}"
