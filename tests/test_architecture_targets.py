"""Targets are declared, not probed (issue 34): outside engine/machine/, no code asks a backend
what it can do with `getattr`/`hasattr`, compares target names, or tests a backend's class. What a
machine is, is a method or typed property of `Backend` (engine/machine/backend.py); which targets
there are and the options each takes, the registry (engine/machine/targets.py).

The checks read the source (engine/, layouts/, hlodbg/, ui/) with `ast`; each finder is tested on
a snippet that does what it must catch, so a finder that went blind fails too.
"""
from __future__ import annotations

import ast
from functools import cache
from pathlib import Path
from typing import Iterator

from hlodbg.engine.machine.backend import Backend
from hlodbg.engine.machine.targets import OPTIONS, target_names

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ("engine", "layouts", "hlodbg", "ui")
# Where targets are defined: the only place that may look at a backend's class or a target's name.
MACHINE = ROOT / "engine" / "machine"

# What a backend has, beyond what every object has: a getattr/hasattr of one of these is a probe.
# Its options and its name are left out: the command line's arguments and every named thing have them too.
BACKEND_ATTRIBUTES = (frozenset(name for name in dir(Backend) if not name.startswith("_")) - frozenset(dir(object))
                      - frozenset(OPTIONS) - {"name"})
# Words that make an expression a backend (or a target standing for one).
BACKEND_WORDS = ("backend", "machine", "target")


def checked_files() -> Iterator[Path]:
    for folder in CHECKED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if MACHINE not in path.parents and ".venv" not in path.parts:
                yield path


def _text(node: ast.AST) -> str:
    return ast.unparse(node).lower()


def backend_probes(tree: ast.AST) -> Iterator[int]:
    """Lines with `getattr(x, "name", ...)` or `hasattr(x, "name")` where x is a backend (its
    expression names one) or "name" is something a Backend has."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2):
            continue
        subject, attribute = node.args[0], node.args[1]
        named = attribute.value if isinstance(attribute, ast.Constant) and isinstance(attribute.value, str) else None
        if any(word in _text(subject) for word in BACKEND_WORDS) or named in BACKEND_ATTRIBUTES:
            yield node.lineno


def target_name_comparisons(tree: ast.AST, names: frozenset[str]) -> Iterator[int]:
    """Lines comparing with a target's name (`== "cpu"`, `!= DEFAULT_TARGET`, `in ("tpu", ...)`)
    or testing one's prefix (`.startswith("xla:")`)."""
    def is_name(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value.lower() in names
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(is_name(element) for element in node.elts)
        return isinstance(node, ast.Name) and node.id == "DEFAULT_TARGET"

    prefixes = {name.split(":")[0] + ":" for name in names if ":" in name} | {"tpu-", "tpu"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(is_name(side) for side in (node.left, *node.comparators)):
            yield node.lineno
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("startswith", "endswith") and node.args
              and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).lower() in prefixes):
            yield node.lineno


def backend_class_tests(tree: ast.AST) -> Iterator[int]:
    """Lines with `isinstance(x, SomethingBackend)` / `issubclass(...)` or `type(x) is ...Backend`."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass")
                and len(node.args) == 2 and _text(node.args[1]).rstrip(")").endswith("backend")):
            yield node.lineno
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass")
              and len(node.args) == 2 and isinstance(node.args[1], ast.Tuple)
              and any(_text(e).endswith("backend") for e in node.args[1].elts)):
            yield node.lineno
        elif isinstance(node, ast.Compare) and any(_text(side).endswith("backend") for side in node.comparators) \
                and isinstance(node.left, ast.Call) and _text(node.left.func) == "type":
            yield node.lineno


@cache
def parsed() -> list[tuple[Path, ast.AST]]:
    return [(path, ast.parse(path.read_text(), str(path))) for path in checked_files()]


def _found(finder, *args) -> list[str]:
    return [f"{path.relative_to(ROOT)}:{line}" for path, tree in parsed() for line in sorted(set(finder(tree, *args)))]


def _names() -> frozenset[str]:
    return frozenset(target_names())


def test_no_getattr_probes_of_backends_outside_the_machine_layer():
    found = _found(backend_probes)
    assert not found, "ask the Backend (a method or typed property with a CPU default), do not probe it: " + ", ".join(found)


def test_no_target_name_comparisons_outside_the_machine_layer():
    found = _found(target_name_comparisons, _names())
    assert not found, ("a target's name says which it is, not what it can do: ask its Backend or its registry entry "
                       "(engine/machine/targets.py): " + ", ".join(found))


def test_no_backend_isinstance_checks_outside_the_machine_layer():
    found = _found(backend_class_tests)
    assert not found, "declare what the machine does on Backend and override it: " + ", ".join(found)


def test_the_finders_find_what_they_look_for():
    probes = ast.parse('g = getattr(backend, "generation", None)\n'
                       'l = getattr(session.backend, "anything")\n'
                       'f = getattr(target, "layout_for", None)\n'
                       'ok = getattr(args, "target", None)\n'
                       'ok = getattr(value, "shape", None)\n')
    assert sorted(backend_probes(probes)) == [1, 2, 3]
    names = frozenset({"cpu", "tpu-v5e", "tpu", "xla:cpu"})
    comparisons = ast.parse('a = target.describe() == "cpu"\n'
                            'b = "tpu-v5e" if x == "cpu" else "cpu"\n'
                            'c = name != DEFAULT_TARGET\n'
                            'd = target.startswith("xla:")\n'
                            'e = name in ("tpu", "gpu")\n'
                            'ok = op.dialect == "chlo"\n'
                            'ok = platform\n')
    assert sorted(target_name_comparisons(comparisons, names)) == [1, 2, 3, 4, 5]
    classes = ast.parse('a = isinstance(b, CaptureBackend)\n'
                        'b = isinstance(b, (TpuBackend, int))\n'
                        'c = isinstance(b, machine.XlaBackend)\n'
                        'ok = isinstance(b, np.ndarray)\n'
                        'd = type(b) is CpuBackend\n')
    assert sorted(backend_class_tests(classes)) == [1, 2, 3, 5]
