#!/usr/bin/env bash
# tests/style/format_check.sh SOURCE_DIR — fails when a C++ or CUDA file of the tree is not as
# clang-format writes it with the tree's .clang-format (one formatter for the whole tree), and
# names each such file. Fix: clang-format -i FILE.
set -euo pipefail
source_dir=$1
command -v clang-format >/dev/null \
    || { echo "clang-format is not installed (setup/debian-packages.txt lists it)" >&2; exit 1; }
cd "$source_dir"
files=()
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.cpp' '*.hpp' '*.cu' '*.h')
else  # a source tree without git (an unpacked archive): every source but build folders'
    mapfile -t files < <(find . -type d -exec test -e '{}/CMakeCache.txt' \; -prune -o -type f \
        \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.h' \) -print | sed 's|^\./||')
fi
((${#files[@]} > 0)) || { echo "no source files found under $source_dir" >&2; exit 1; }
existing=()
for file in "${files[@]}"; do [[ -f "$file" ]] && existing+=("$file"); done
# One clang-format for all files (a process per file spent most of this test's time starting
# them): it names each file it would change in its diagnostics, "FILE:LINE:COLUMN: error: ...".
report=$(clang-format --dry-run --Werror "${existing[@]}" 2>&1 >/dev/null) && status=0 || status=$?
mapfile -t unformatted < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: .*clang-format-violations.*/\1/p' <<<"$report" | sort -u)
if ((status != 0 && ${#unformatted[@]} == 0)); then
    echo "clang-format failed (exit $status) without naming a file: $(head -3 <<<"$report")" >&2
    exit 1
fi
if ((${#unformatted[@]} > 0)); then
    echo "not formatted (clang-format -i FILE fixes each):" >&2
    printf '  %s\n' "${unformatted[@]}" >&2
    exit 1
fi
echo "ok: ${#existing[@]} files formatted"
