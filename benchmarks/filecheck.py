"""A small FileCheck: matches a test's CHECK lines against a printed text, as LLVM's FileCheck does.

    mismatch = filecheck(check_text, output, prefixes=("CHECK",))   # None when it matches

Handles what StableHLO's tests use: the directives PREFIX:, -NEXT, -SAME, -LABEL, -DAG, -NOT,
-EMPTY and -COUNT-n; `{{regex}}`; `[[VAR:regex]]` definitions and `[[VAR]]` uses (a use in the
line that defines it is a back-reference); FileCheck's default whitespace rule (a run of spaces
or tabs in the pattern or the input matches any run, and a pattern's ends are trimmed).
Not handled: numeric variables (`[[#...]]`), `--implicit-check-not`, `--strict-whitespace`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_SUFFIXES = ("NEXT", "SAME", "LABEL", "DAG", "NOT", "EMPTY")
_POSIX_CLASSES = {"[:alpha:]": "a-zA-Z", "[:digit:]": "0-9", "[:alnum:]": "a-zA-Z0-9",
                  "[:space:]": r" \t\n\r\f\v", "[:upper:]": "A-Z", "[:lower:]": "a-z",
                  "[:xdigit:]": "0-9A-Fa-f", "[:punct:]": r"!-/:-@\[-`{-~"}
_VARIABLE = re.compile(r"\[\[(\$?[A-Za-z_][\w]*)(?::(.*?))?\]\]")


@dataclass
class Directive:
    kind: str        # "", "NEXT", "SAME", "LABEL", "DAG", "NOT", "EMPTY"
    pattern: str     # trimmed, whitespace-canonical
    line: int        # 1-based line in the check text

    def __str__(self) -> str:
        return f"line {self.line}: CHECK{'-' + self.kind if self.kind else ''}: {self.pattern}"


class CheckFileError(ValueError):
    """The check text itself is malformed (an unclosed `{{` or `[[`)."""


def directives(check_text: str, prefixes=("CHECK",)) -> list[Directive]:
    """The directives of `check_text` naming one of `prefixes`, in order."""
    alternatives = "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True))
    found_re = re.compile(r"(?<![\w-])(" + alternatives + r")(-[A-Z]+(?:-\d+)?)?:(.*)$")
    found = []
    for number, line in enumerate(check_text.splitlines(), 1):
        m = found_re.search(line)
        if not m:
            continue
        suffix = (m.group(2) or "")[1:]
        pattern = _canonical(m.group(3).strip())
        count = re.fullmatch(r"COUNT-(\d+)", suffix)
        if count:
            found.extend(Directive("", pattern, number) for _ in range(int(count.group(1))))
        elif suffix == "" or suffix in _SUFFIXES:
            found.append(Directive(suffix, pattern, number))
        # Anything else (`CHECK-PRETTY:` when only CHECK is a prefix) is not a directive.
    return found


def _canonical(text: str) -> str:
    return re.sub(r"[ \t]+", " ", text)


def _posix(regex: str) -> str:
    for posix, python in _POSIX_CLASSES.items():
        regex = regex.replace(posix, python)
    return regex


class _Matcher:
    def __init__(self, output: str):
        self.text = _canonical(output)
        self.variables: dict[str, str] = {}
        # Start offset of each line, to tell lines apart.
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", self.text)]

    def line_of(self, offset: int) -> int:
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def compile(self, directive: Directive) -> tuple[re.Pattern, dict[str, str]]:
        """The pattern as a Python regex (`.` never crosses a line) and its group -> variable names."""
        pattern, out, groups, defined_here = directive.pattern, [], {}, {}
        i = 0
        while i < len(pattern):
            if pattern.startswith("{{", i):
                end = pattern.find("}}", i + 2)
                if end < 0:
                    raise CheckFileError(f"{directive}: unclosed {{{{")
                # FileCheck's `}}` closes at the first `}}` not followed by another `}`.
                while pattern.startswith("}", end + 2):
                    end += 1
                out.append("(?:" + _posix(pattern[i + 2:end]) + ")")
                i = end + 2
                continue
            if pattern.startswith("[[", i):
                m = _VARIABLE.match(pattern, i)
                if m is None:
                    raise CheckFileError(f"{directive}: `[[` starts no variable")
                name, definition = m.group(1), m.group(2)
                if definition is not None:
                    group = f"v{len(groups)}"
                    groups[group] = name
                    defined_here[name] = group
                    out.append(f"(?P<{group}>{_posix(definition)})")
                elif name in defined_here:
                    out.append(f"(?P={defined_here[name]})")
                elif name in self.variables:
                    out.append(re.escape(self.variables[name]))
                else:
                    raise _Undefined(f"{directive}: variable {name} is used before it is defined")
                i = m.end()
                continue
            out.append(" +" if pattern[i] == " " else re.escape(pattern[i]))
            i += 1
        try:
            return re.compile("".join(out)), groups
        except re.error as error:
            raise CheckFileError(f"{directive}: bad regex: {error}") from None

    def search(self, directive: Directive, start: int, end: int):
        """The first match of `directive` in text[start:end] as (begin, end), its captures recorded."""
        regex, groups = self.compile(directive)
        m = regex.search(self.text, start, end)
        if m is None:
            return None
        for group, name in groups.items():
            self.variables[name] = m.group(group)
        return m.start(), m.end()


class _Undefined(Exception):
    pass


def filecheck(check_text: str, output: str, prefixes=("CHECK",)) -> str | None:
    """None if `output` satisfies the CHECK lines of `check_text`, else what failed, in words."""
    found = directives(check_text, prefixes)
    if not found:
        return "no directive with prefix " + "/".join(prefixes)
    matcher = _Matcher(output)
    try:
        return _check(found, matcher)
    except (_Undefined, CheckFileError) as error:
        return str(error)


def _check(found: list[Directive], matcher: _Matcher) -> str | None:
    # Labels first: they cut the output into blocks, and the other directives between two labels
    # match only inside the block between those labels' matches.
    blocks, position = [], 0
    label_indices = [i for i, d in enumerate(found) if d.kind == "LABEL"]
    for i in label_indices:
        hit = matcher.search(found[i], position, len(matcher.text))
        if hit is None:
            return f"{found[i]}: not found"
        blocks.append((i, hit))
        position = hit[1]
    matcher.variables.clear()  # set again in order by the directives below
    bounds = [(0, -1, None)]  # (from directive index, label index, (label begin, label end))
    for index, hit in blocks:
        bounds.append((index, index, hit))
    for k, (first, label_index, hit) in enumerate(bounds):
        last = bounds[k + 1][0] if k + 1 < len(bounds) else len(found)
        start = hit[1] if hit else 0
        end = bounds[k + 1][2][0] if k + 1 < len(bounds) else len(matcher.text)
        if hit is not None:
            matcher.search(found[label_index], hit[0], hit[1] + 1)  # record its captures, in order
            body = found[first + 1:last]
            previous = hit
        else:
            body = found[first:last]
            previous = None
        failure = _check_block(body, matcher, start, end, previous)
        if failure:
            return failure
    return None


def _check_block(found: list[Directive], matcher: _Matcher, start: int, end: int, previous) -> str | None:
    """Directives without labels, matched in text[start:end]; `previous` is the last match."""
    position, nots, i = start, [], 0
    while i < len(found):
        directive = found[i]
        if directive.kind == "NOT":
            nots.append(directive)
            i += 1
            continue
        if directive.kind == "DAG":
            group = []
            while i < len(found) and found[i].kind == "DAG":
                group.append(found[i])
                i += 1
            hits = []
            for dag in group:
                hit = _search_outside(matcher, dag, position, end, hits)
                if hit is None:
                    return f"{dag}: not found"
                hits.append(hit)
            failure = _check_nots(nots, matcher, position, min(h[0] for h in hits))
            if failure:
                return failure
            nots = []
            position = max(h[1] for h in hits)
            previous = max(hits, key=lambda h: h[1])
            continue
        if directive.kind == "EMPTY":
            line = matcher.line_of(previous[1]) + 1 if previous else matcher.line_of(position)
            if line >= len(matcher.line_starts) or line_text(matcher, line).strip():
                return f"{directive}: the next line is not empty"
            hit = (matcher.line_starts[line], matcher.line_starts[line])
        else:
            search_from = position
            if directive.kind == "NEXT" and previous is not None:
                # FileCheck searches from the end of the last match, then checks the line.
                search_from = previous[1]
            hit = matcher.search(directive, search_from, end)
            if hit is None:
                return f"{directive}: not found"
            if directive.kind in ("NEXT", "SAME") and previous is not None:
                expected = matcher.line_of(previous[1]) + (1 if directive.kind == "NEXT" else 0)
                got = matcher.line_of(hit[0])
                if got != expected:
                    where = "on the same line as" if got == expected - 1 else "not on the line after" \
                        if directive.kind == "NEXT" else "not on the same line as"
                    return f"{directive}: found {where} the previous match"
        failure = _check_nots(nots, matcher, position, hit[0])
        if failure:
            return failure
        nots = []
        position, previous = hit[1], hit
        i += 1
    return _check_nots(nots, matcher, position, end)


def line_text(matcher: _Matcher, line: int) -> str:
    begin = matcher.line_starts[line]
    stop = matcher.text.find("\n", begin)
    return matcher.text[begin: stop if stop >= 0 else len(matcher.text)]


def _search_outside(matcher: _Matcher, directive: Directive, start: int, end: int, taken) -> tuple | None:
    """The first match of a CHECK-DAG overlapping none of the group's earlier matches."""
    position = start
    while True:
        hit = matcher.search(directive, position, end)
        if hit is None:
            return None
        clash = next((t for t in taken if hit[0] < t[1] and t[0] < hit[1]), None)
        if clash is None:
            return hit
        position = clash[1]


def _check_nots(nots: list[Directive], matcher: _Matcher, start: int, end: int) -> str | None:
    for directive in nots:
        regex, _ = matcher.compile(directive)
        m = regex.search(matcher.text, start, end)
        if m:
            return f"{directive}: found although excluded: {m.group(0)!r}"
    return None
