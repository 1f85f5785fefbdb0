#!/usr/bin/env python3
"""Lists functions longer than a limit (default 120 lines) in C++ sources.

issue 33's "done when": no non-table function over ~120 lines in runtime/,
spmd/propagation* or tools/. A function is a top-level or namespace-level
definition: a line that opens a brace at depth 0 of its namespace, through
the brace that closes it. Functions that only register table entries
(their name starts with Register) are tables, not logic, and are skipped.

  scripts/long_functions.py [--limit N] PATH...   (files or directories)
Exit status 1 if any function is over the limit.
"""
import argparse
import pathlib
import re
import sys

SIGNATURE = re.compile(r"^[A-Za-z_][\w:<>,*&\s~]*\b([A-Za-z_~][\w:~]*)\s*\(")


def strip(line: str) -> str:
    """The line without comments and string or character literals."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//")[0]


def functions(path: pathlib.Path):
    """(name, first line, line count) of each function defined in `path`,
    methods defined inside classes included."""
    lines = path.read_text(errors="replace").splitlines()
    scopes = []          # one per open brace: "scope" (namespace, class), "fn", "block"
    start = None         # (name, line) of the function being read
    pending = None       # a signature seen, its brace not yet
    opens_scope = False  # the next brace opens a namespace or class
    for number, raw in enumerate(lines, 1):
        line = strip(raw)
        in_scope = all(kind == "scope" for kind in scopes)
        if in_scope and start is None:
            if re.match(r"^\s*(namespace\b|extern \"C\"|(class|struct|union|enum)\b[^;(]*$)",
                        line):
                opens_scope = True
            else:
                match = SIGNATURE.match(line.strip()) if pending is None else None
                if match and not line.lstrip().startswith(
                        ("return", "if", "for", "while", "using", "case")):
                    pending = (match.group(1), number)
        for ch in line:
            if ch == "{":
                if opens_scope:
                    scopes.append("scope")
                    opens_scope = False
                elif all(k == "scope" for k in scopes) and start is None and pending is not None:
                    start = pending
                    scopes.append("fn")
                else:
                    scopes.append("block")
            elif ch == "}" and scopes:
                kind = scopes.pop()
                if kind == "fn" and start is not None:
                    yield start[0], start[1], number - start[1] + 1
                    start = None
                    pending = None
        if all(k == "scope" for k in scopes) and line.rstrip().endswith(";"):
            pending = None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=120)
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    files = []
    for p in map(pathlib.Path, args.paths):
        files += sorted(p.rglob("*.cc")) if p.is_dir() else [p]
    long = []
    for f in files:
        for name, line, count in functions(f):
            if count > args.limit and not name.split("::")[-1].startswith("Register"):
                long.append((count, f"{f}:{line}", name))
    for count, where, name in sorted(long, reverse=True):
        print(f"{count:5d} {where} {name}")
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main())
