#!/usr/bin/env bash
# Builds and tests brook the way CI does (.ci/run calls this with no arguments).
#
#   ./scripts/test.sh                 # every stage: format release asan tsan fuzz
#   ./scripts/test.sh --quick         # release only
#   ./scripts/test.sh asan tsan       # just these stages, in this order
#   BROOK_TEST_STAGES="release asan" ./scripts/test.sh
#
# Stages (presets in CMakePresets.json, build trees in build/<preset>):
#   format   scripts/format.sh: every tracked C++ file matches .clang-format
#   release  Release, GCC: all targets (tests, benchmarks, examples, tools), every test
#   debug    Debug, GCC: all targets, every test (not in the default run)
#   asan     Debug + ASan/UBSan, GCC: every test
#   tsan     RelWithDebInfo + TSan, GCC: only the *_threaded_test.cpp tests (label "threaded")
#   fuzz     clang++ libFuzzer: brook_fuzz_record_batch, _request, _broker, _checkpoint and
#            _topic_config, each on a fresh corpus plus its committed one (tests/fuzz/corpus*),
#            BROOK_FUZZ_SECONDS (80) in all: 1/4 each to record_batch, request and broker, 1/8
#            each to checkpoint and topic_config; skipped until tests/fuzz exists
#
# Environment: BROOK_JOBS (build jobs, 2), BROOK_FUZZ_SECONDS (80), BROOK_FUZZ_SEED
# (libFuzzer -seed; random by default, printed as "INFO: Seed:"),
# BROOK_SKIP_DEPS=1 (do not check Debian packages), BROOK_CCACHE=0 (no ccache),
# BROOK_TEST_STAGES (as above).
#
# The last line printed is "summary: N passed, M failed", counting every test run
# by every ctest stage, or, when a step fails, a line naming that step. When a ctest
# stage fails, the lines before it name each failed test, the command that reruns it,
# and the seed variables (BROOK_*SEED*=N) its output printed to replay a seeded case;
# BROOK_SEED_BASE=N shifts every seeded test to fresh seeds (tests/support/seeds.hpp).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

default_stages=(format release asan tsan fuzz)
known_stages=" format release debug asan tsan fuzz "

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

stages=()
while (($#)); do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --quick) stages+=(release) ;;
    --*) echo "test.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) stages+=("$1") ;;
  esac
  shift
done
if ((${#stages[@]} == 0)); then
  read -r -a stages <<<"${BROOK_TEST_STAGES:-${default_stages[*]}}"
fi
for s in "${stages[@]}"; do
  [[ "$known_stages" == *" $s "* ]] || { echo "test.sh: unknown stage '$s' (known:$known_stages)" >&2; exit 2; }
done
jobs=${BROOK_JOBS:-2}
fuzz_seconds=${BROOK_FUZZ_SECONDS:-80}

# --- bookkeeping ----------------------------------------------------------------
step="start"
total_passed=0
total_failed=0
report=()  # one line per stage for the closing table
scratch=$(mktemp -d)
trap 'rc=$?; rm -rf "$scratch"; if ((rc != 0)); then echo "test.sh: FAILED (exit $rc) during: $step"; fi' EXIT

banner() { printf '\n======== %s ========\n' "$*"; }
elapsed() { local s=$(($(date +%s) - $1)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

# Runs ctest with a test preset (extra arguments passed on), keeps its own output,
# and adds its counts to the totals. Sets ctest_result to "N passed, M failed".
run_ctest() {
  local preset=$1 log="$scratch/ctest-$1.log" rc=0
  shift
  step="ctest --preset $preset $*"
  ctest --preset "$preset" "$@" 2>&1 | tee "$log" || rc=$?
  local counts failed=0 total=0
  # "100% tests passed, 0 tests failed out of 57"; absent when no test matched.
  counts=$(sed -nE 's/^[0-9]+% tests passed, ([0-9]+) tests? failed out of ([0-9]+).*/\1 \2/p' "$log" | tail -n 1)
  if [[ -n "$counts" ]]; then
    read -r failed total <<<"$counts"
    ctest_result="$((total - failed)) passed, $failed failed"
  else
    ctest_result="no test matched"
  fi
  total_passed=$((total_passed + total - failed))
  total_failed=$((total_failed + failed))
  if ((rc != 0)); then
    report_failures "$preset" "$log"
    if [[ -n "$counts" ]]; then  # otherwise the EXIT trap names the failed step
      trap - EXIT
      rm -rf "$scratch"
      echo "summary: $total_passed passed, $total_failed failed"
    fi
    exit "$rc"
  fi
}

# After a failing ctest run: names each failed test with the command that reruns it alone,
# then every seed replay hint its output printed (seeded scenarios print lines such as
# "seed 17 (replay: BROOK_SCENARIO_SEED=17)"), so the CI log's last lines say what to run.
report_failures() {  # preset log
  local preset=$1 log=$2 num name why
  banner "$preset: failed tests"
  local failed_lines
  failed_lines=$(sed -n '/^The following tests FAILED:/,$p' "$log" | sed -nE 's/^[[:space:]]*([0-9]+) - (.*) \(([^()]*)\)[[:space:]]*$/\1\t\2\t\3/p')
  if [[ -z "$failed_lines" ]]; then
    echo "(ctest named no failed test; see its output above)"
  else
    while IFS=$'\t' read -r num name why; do
      echo "FAILED ($why): $name"
      echo "    rerun: ctest --preset $preset -I $num,$num --output-on-failure"
    done <<<"$failed_lines"
  fi
  local hints
  hints=$(grep -oE '(BROOK_[A-Z_]+=[0-9]+[[:space:]]*)+' "$log" | sed -E 's/[[:space:]]+$//' | sort -u | head -n 20 || true)
  if [[ -n "$hints" ]]; then
    echo "seeds to replay (prefix the rerun command with one of these):"
    sed 's/^/    /' <<<"$hints"
  fi
  if [[ -n "${BROOK_SEED_BASE:-}" ]]; then
    echo "this run had BROOK_SEED_BASE=$BROOK_SEED_BASE: set it for the reruns too"
  fi
}

configure_build() {  # preset [cmake --build arguments...]
  local preset=$1
  shift
  step="cmake --preset $preset"
  cmake --preset "$preset"
  step="cmake --build --preset $preset $*"
  cmake --build --preset "$preset" -j "$jobs" "$@"
}

# --- stages -----------------------------------------------------------------------
stage_deps() {
  banner "deps: Debian packages"
  step="scripts/deps.sh"
  # shellcheck source=scripts/deps.sh
  source scripts/deps.sh
  brook_deps
  brook_use_ccache
  echo "compiler launcher: ${CMAKE_CXX_COMPILER_LAUNCHER:-none} (for build trees configured from now on)"
}

stage_npm() {
  banner "npm: tests/compat (kafkajs cross-check)"
  if [[ ! -f tests/compat/package.json ]]; then
    echo "tests/compat/package.json does not exist yet; nothing to install"
    return 0
  fi
  if [[ ! -f tests/compat/package-lock.json ]]; then
    echo "test.sh: tests/compat/package.json has no package-lock.json beside it; run 'npm install' there and commit the lock file" >&2
  fi
  step="npm ci --prefix tests/compat"
  npm ci --prefix tests/compat --no-audit --no-fund
}

stage_format() {
  banner "format: scripts/format.sh"
  step="scripts/format.sh (run ./scripts/format.sh --fix)"
  ./scripts/format.sh
}

stage_full() {  # release or debug or asan: every target, every test
  local preset=$1
  banner "$preset: configure, build all targets, ctest (preset $preset)"
  configure_build "$preset"
  banner "$preset: ctest"
  run_ctest "$preset"
}

stage_tsan() {
  banner "tsan: configure, build the threaded tests, ctest -L threaded (preset tsan)"
  # tests/CMakeLists.txt names the executable of tests/<dir>/<name>_test.cpp
  # brook_test_<dir>_<name> and labels it "threaded" when <name> ends in _threaded;
  # build only those, not the whole suite a second time.
  local targets=() f rel
  while IFS= read -r f; do
    rel=${f#tests/}
    rel=${rel%_test.cpp}
    targets+=("brook_test_${rel//\//_}")
  done < <(find tests -name '*_threaded_test.cpp' -type f | sort)
  if ((${#targets[@]} == 0)); then
    step="cmake --preset tsan"
    cmake --preset tsan
    echo "no tests/**/*_threaded_test.cpp yet: nothing to build under TSan"
  else
    configure_build tsan --target "${targets[@]}"
  fi
  banner "tsan: ctest -L threaded"
  run_ctest tsan  # the tsan test preset selects label "threaded"; "No tests were found" exits 0
}

# The fuzzers (tests/fuzz/<name>_fuzz.cpp) and their committed seed corpora. stage_fuzz splits
# BROOK_FUZZ_SECONDS among them: 1/4 each to record_batch, request and broker (which runs each
# request through kafka_broker on a scratch node, some hundreds of inputs a second where the
# parsers run thousands: it gets a parser's share, not a small one), 1/8 each to checkpoint
# and topic_config, whose inputs are small text files (at least 1s each; -max_total_time=0
# would mean "forever").
fuzzers=(record_batch:corpus request:corpus_request broker:corpus_broker checkpoint:corpus_checkpoint
  topic_config:corpus_topic_config)

fuzz_share() {  # name -> seconds of fuzz_seconds for that fuzzer
  local big=$((fuzz_seconds / 4)) small=$((fuzz_seconds / 8)) s
  case "$1" in
    record_batch | request | broker) s=$big ;;
    checkpoint) s=$small ;;
    *) s=$((fuzz_seconds - 3 * big - small)) ;;
  esac
  echo $((s < 1 ? 1 : s))
}

stage_fuzz() {
  banner "fuzz: ${fuzzers[*]%%:*} for ${fuzz_seconds}s in all (preset fuzz, clang++)"
  if [[ ! -f tests/fuzz/CMakeLists.txt ]]; then
    echo "tests/fuzz/CMakeLists.txt does not exist yet; no fuzzer to run"
    fuzz_result="skipped (no tests/fuzz)"
    return 0
  fi
  local f name dir targets=()
  for f in "${fuzzers[@]}"; do targets+=("brook_fuzz_${f%%:*}"); done
  configure_build fuzz --target "${targets[@]}"
  local opts=() results=()
  if [[ -n "${BROOK_FUZZ_SEED:-}" ]]; then opts=(-seed="$BROOK_FUZZ_SEED"); fi
  for f in "${fuzzers[@]}"; do
    name=${f%%:*} dir=tests/fuzz/${f#*:}
    local exe secs corpus="$scratch/fuzz-corpus-$name" artifacts="build/fuzz/fuzz-artifacts/$name/" seeds=()
    exe=$(find build/fuzz -name "brook_fuzz_$name" -type f -perm -u+x | head -n 1)
    [[ -n "$exe" ]] || { step="finding the brook_fuzz_$name executable under build/fuzz"; return 1; }
    mkdir -p "$corpus" "$artifacts"
    if [[ -d "$dir" ]]; then seeds=("$dir"); fi
    secs=$(fuzz_share "$name")
    banner "fuzz: brook_fuzz_$name for ${secs}s on a fresh corpus plus $dir"
    step="$exe -max_total_time=$secs (crash inputs go to $artifacts)"
    "$exe" -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 -print_funcs=0 \
      "${opts[@]}" -artifact_prefix="$artifacts" "$corpus" "${seeds[@]}" 2>&1 | tee "$scratch/fuzz-$name.log"
    local runs
    runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$scratch/fuzz-$name.log" | tail -n 1)
    echo "fuzz: brook_fuzz_$name ran ${runs:-?} inputs in ${secs}s, no crash"
    results+=("$name ${runs:-?}")
  done
  local joined
  joined=$(printf '%s, ' "${results[@]}")
  fuzz_result="inputs: ${joined%, }; no crash"
}

# --- run --------------------------------------------------------------------------
t0=$(date +%s)
t=$(date +%s)
stage_deps
report+=("$(printf '%-8s %8s' deps "$(elapsed "$t")")")

for s in "${stages[@]}"; do
  if [[ "$s" == release || "$s" == debug || "$s" == asan ]]; then
    t=$(date +%s)
    stage_npm
    report+=("$(printf '%-8s %8s' npm "$(elapsed "$t")")")
    break
  fi
done

for s in "${stages[@]}"; do
  t=$(date +%s)
  case "$s" in
    format) stage_format; detail="every file formatted" ;;
    release | debug | asan) stage_full "$s"; detail=$ctest_result ;;
    tsan) stage_tsan; detail=$ctest_result ;;
    fuzz) fuzz_result=""; stage_fuzz; detail=$fuzz_result ;;
  esac
  report+=("$(printf '%-8s %8s  %s' "$s" "$(elapsed "$t")" "$detail")")
done

step="summary"
banner "done in $(elapsed "$t0")"
printf '%s\n' "${report[@]}"
echo "summary: $total_passed passed, $total_failed failed"
