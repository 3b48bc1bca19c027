#!/usr/bin/env bash
# clang-format on the tree's C++ files (the repo's .clang-format), golden files excluded: tests
# compare them byte for byte with what the compiler emits.
#
#   bash scripts/format.sh           # rewrite the files in place (make format)
#   bash scripts/format.sh --check   # list the files that differ and exit 1 (make format-check)
#
# The files: what git tracks (plus untracked, not ignored ones) in a git checkout, else every
# C++ file outside build folders. Environment: CLANG_FORMAT (default clang-format).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
clang_format=${CLANG_FORMAT:-clang-format}
check=0
case ${1:-} in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

patterns=('*.cpp' '*.h' '*.cc' '*.hpp' '*.cu' '*.cuh')
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- "${patterns[@]}" |
    grep -v '/golden/' | while read -r f; do [[ -f $f ]] && printf '%s\n' "$f"; done)
else
  names=()
  for p in "${patterns[@]}"; do names+=(-o -name "$p"); done
  mapfile -t files < <(find . -path './build*' -prune -o -path '*/golden/*' -prune -o \
    -type f \( "${names[@]:1}" \) -print | sed 's|^\./||' | sort)
fi

if [[ $check -eq 0 ]]; then
  printf '%s\0' "${files[@]}" | xargs -0 -r "$clang_format" -i
  exit 0
fi
# One clang-format run for all files; only when that fails, one per file to name them.
if printf '%s\0' "${files[@]}" | xargs -0 -r "$clang_format" --dry-run --Werror 2>/dev/null; then
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$clang_format" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
echo "format-check: ${#bad[@]} of ${#files[@]} files are not formatted ($("$clang_format" --version)):" >&2
printf '  %s\n' "${bad[@]}" >&2
echo "format-check: run 'make format' (or clang-format -i on them)" >&2
exit 1
