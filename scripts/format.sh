#!/usr/bin/env bash
# Checks (default) or applies (--fix) the repository's .clang-format to every C++ file git
# tracks, except tests/layering/fixture (a planted-violation fixture whose include order is
# the test). clang-format 14 is Debian 12's (scripts/deps.sh installs it).
#
#   ./scripts/format.sh          # exit 1 and name the files that differ
#   ./scripts/format.sh --fix    # rewrite them in place
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fix=0
case "${1:-}" in
  --fix) fix=1 ;;
  "") ;;
  *) echo "format.sh: unknown argument $1 (use --fix or nothing)" >&2; exit 2 ;;
esac
command -v clang-format >/dev/null || { echo "format.sh: clang-format is not installed (scripts/deps.sh)" >&2; exit 2; }

listing=$(git ls-files '*.hpp' '*.ipp' '*.cpp' ':!:tests/layering/fixture/**')  # a git failure stops here (set -e)
mapfile -t files <<<"$listing"
if [[ -z "$listing" ]]; then
  echo "format.sh: git lists no C++ files; is this a clone of brook?" >&2
  exit 2
fi
if ((fix)); then
  clang-format -i "${files[@]}"
  echo "format.sh: formatted ${#files[@]} files"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  printf 'format.sh: not formatted (run ./scripts/format.sh --fix): %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "format.sh: ${#files[@]} files match .clang-format ($(clang-format --version | head -n 1))"
