#!/usr/bin/env python3
"""tests/style/function_length_check.py SOURCE_DIR [LIMIT] — fails when a function of the tree's
C++ or CUDA sources is longer than LIMIT lines (150: a function that long does several things;
split it), naming each with its file, line and length.

It reads braces, not C++: a definition starts at a line in column 0 that is not a namespace,
class, struct, enum or union and holds a '(' , and ends where its outermost brace closes. String
and character literals and // comments are blanked first, so a brace in them does not count."""
import os
import re
import subprocess
import sys

SOURCES = ("*.cpp", "*.hpp", "*.cu", "*.h")
NOT_A_FUNCTION = re.compile(r"^(namespace|struct|class|enum|union|using|typedef|template\s*<[^>]*>\s*(struct|class))\b")


def source_files(root):
    try:
        listed = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "--", *SOURCES],
                                check=True, capture_output=True, text=True).stdout.split()
        return [path for path in listed if os.path.isfile(os.path.join(root, path))]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: every source outside build folders
        found = []
        for folder, folders, files in os.walk(root):
            folders[:] = [name for name in folders if not os.path.exists(os.path.join(folder, name, "CMakeCache.txt"))
                          and name != ".git"]
            found += [os.path.relpath(os.path.join(folder, name), root) for name in files
                      if name.endswith((".cpp", ".hpp", ".cu", ".h"))]
        return found


def code_of(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//")[0]


def long_functions(path, limit):
    with open(path, encoding="utf-8", errors="replace") as source:
        lines = source.read().split("\n")
    depth = namespaces = 0
    signature = start = None
    for index, line in enumerate(lines):
        code = code_of(line)
        if depth == namespaces and signature is None and re.match(r"^[A-Za-z_~]", line) \
                and not NOT_A_FUNCTION.match(line) and "(" in line:
            signature = index
        for char in code:
            if char == "{":
                if depth == namespaces and re.match(r"^namespace\b", line):
                    namespaces += 1
                elif depth == namespaces and signature is not None:
                    start = signature
                depth += 1
            elif char == "}":
                depth -= 1
                namespaces = min(namespaces, depth)
                if depth == namespaces and start is not None:
                    if index - start + 1 > limit:
                        yield start + 1, index - start + 1, lines[start].strip()
                    start = signature = None
        if depth == namespaces and code.rstrip().endswith(";"):
            signature = None


def main():
    root = sys.argv[1]
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 150
    files = source_files(root)
    if not files:
        sys.exit(f"no source files found under {root}")
    too_long = [(path, line, length, head) for path in sorted(files)
                for line, length, head in long_functions(os.path.join(root, path), limit)]
    for path, line, length, head in too_long:
        print(f"{path}:{line}: {length} lines, over {limit}: {head[:100]}", file=sys.stderr)
    if too_long:
        sys.exit(1)
    print(f"ok: no function over {limit} lines in {len(files)} files")


if __name__ == "__main__":
    main()
