#!/usr/bin/env python3
"""Every option of the `dnntune` command is defined once: one row in frontend/option_rows.cpp.

Fails when a file of cli/ hands CLI11 a literal "--name" or "-x" (add_option, add_flag,
add_option_function, add_flag_callback, add_flag_function: a definition that is not a row), when
a file of cli/, frontend/ or python/ other than option_rows.cpp holds an option name as a string
literal ("--name or '--name: a message or an argument list names the option from its row, with
long_name), or when two rows of option_rows.cpp carry the same name, unless the second says why
right above it with a comment holding "another meaning" (a name two commands use for two
different things).

  option_definitions_test.py SOURCE_DIR           the check (ctest)
  option_definitions_test.py SOURCE_DIR --counts  also the definitions per name, most first
"""
import collections
import pathlib
import re
import sys

CALL = re.compile(r'\badd_(?:option|flag)(?:_function|_callback)?\s*(?:<[^>]*>)?\s*\(\s*"(-[^"]*)"')
LITERAL = re.compile(r"""["']--[a-z]""")
SOURCES = (".cpp", ".hpp", ".h", ".py", ".txt")
ROW = re.compile(r'\bconst\s+OptionRow\s+(\w+)\s*\{\s*"([^"]*)"')


def option_name(names):
    """The option's name: its first long one ("-o,--output" -> --output, "--fabric,--network" ->
    --fabric); None for a positional argument."""
    listed = [name.strip() for name in names.split(",") if name.strip().startswith("-")]
    long = [name for name in listed if name.startswith("--")]
    return (long or listed or [None])[0]


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def main():
    source = pathlib.Path(sys.argv[1])
    show_counts = "--counts" in sys.argv[2:]
    table = source / "frontend" / "option_rows.cpp"
    definitions = collections.defaultdict(list)  # name -> ["file:line", ...]
    problems = []

    table_text = table.read_text()
    table_lines = table_text.splitlines()
    for match in ROW.finditer(table_text):
        line = line_of(table_text, match.start())
        # The row's own comment: the lines of `//` right above it.
        above = []
        index = line - 2
        while index >= 0 and table_lines[index].strip().startswith("//"):
            above.append(table_lines[index])
            index -= 1
        justified = any("another meaning" in comment for comment in above)
        name = option_name(match.group(2))
        where = f"frontend/option_rows.cpp:{line} ({match.group(1)})"
        if definitions[name] and not justified:
            problems.append(f"{name}: a second row {where} beside {definitions[name][0]}; one row per name "
                            "(or say why above it: // another meaning: ...)")
        definitions[name].append(where)

    for path in sorted((source / "cli").glob("*.cpp")):
        text = path.read_text()
        for match in CALL.finditer(text):
            where = f"cli/{path.name}:{line_of(text, match.start())}"
            definitions[option_name(match.group(1))].append(where)
            problems.append(f"{where}: {match.group(1)} is defined with CLI11 directly; make it a row of "
                            "frontend/option_rows.cpp and add it with add_value, add_list or add_flag")

    for folder in ("cli", "frontend", "python"):
        for path in sorted((source / folder).rglob("*")):
            if path == table or not path.is_file() or path.suffix not in SOURCES:
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if LITERAL.search(line):
                    problems.append(f"{path.relative_to(source)}:{number}: an option name as a literal: name it from "
                                    f"its row (long_name(option_rows::...)): {line.strip()}")

    if show_counts:
        repeated = sorted(definitions.items(), key=lambda item: (-len(item[1]), item[0]))
        print(f"{sum(len(places) for places in definitions.values())} option definitions for "
              f"{len(definitions)} names")
        for name, places in repeated:
            print(f"{len(places):3d} {name}: {', '.join(places)}")
    for problem in problems:
        print(problem)
    print(f"{len(problems)} option definitions or names outside the one row per name")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
