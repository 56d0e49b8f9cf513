"""The layers of the code, checked: every import (at module level, inside functions and under
TYPE_CHECKING alike) goes down the layer order, and no two modules import each other, directly
or round a longer circle.

    engine:  ir < syntax < verify;  ir < machine < ops;  run (above verify and ops) < debug
    then:    engine < layouts < ui;  hlodbg (CLI and public API) wires them and sits on top

The engine never imports textual or graphviz, layouts never imports textual, and no module of
the product imports JAX (it is a test-time oracle) except the optional real-device backend,
engine/machine/xla/ (the `hlodbg[xla]` extra), which also hands programs to XLA as text and so
may use the printer (syntax) besides ir.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, Optional

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Folder -> import name, as pyproject.toml's package-dir maps them.
PACKAGES = {
    "hlodbg": "hlodbg",
    "engine": "hlodbg.engine",
    "layouts": "hlodbg.layouts",
    "ui": "hlodbg.ui",
    "sample_programs": "hlodbg.sample_programs",
}

ENGINE_LAYERS = ("ir", "syntax", "verify", "machine", "ops", "run", "debug")

# What each layer may import (besides itself).
ALLOWED: dict[str, set[str]] = {
    "ir": set(),
    "syntax": {"ir"},
    "verify": {"ir", "syntax"},
    "machine": {"ir"},
    "ops": {"ir", "machine"},
    "run": {"ir", "syntax", "verify", "machine", "ops"},
    "debug": {"ir", "syntax", "verify", "machine", "ops", "run"},
    "engine": set(ENGINE_LAYERS),  # hlodbg.engine's __init__: the engine's front door
    "layouts": {*ENGINE_LAYERS, "engine"},
    "ui": {*ENGINE_LAYERS, "engine", "layouts", "sample_programs"},
    "sample_programs": set(),
    "hlodbg": {*ENGINE_LAYERS, "engine", "layouts", "ui", "sample_programs"},
}

# The optional real-device backend: the one package allowed JAX, and the printer to talk to XLA.
XLA_BACKEND = "hlodbg.engine.machine.xla"
XLA_BACKEND_ALLOWED = {"ir", "syntax"}
# The JAX front door (`hlodbg.jax`, the optional `xla` extra): JAX functions lowered and trapped.
# Nothing else of hlodbg imports it, so hlodbg works without JAX installed.
JAX_FRONT_DOOR = "hlodbg.jax"

FORBIDDEN_THIRD_PARTY = {
    "engine": ("textual", "graphviz", "jax", "jaxlib"),
    "layouts": ("textual", "jax", "jaxlib"),
    "ui": ("jax", "jaxlib"),
    "hlodbg": ("jax", "jaxlib"),
}


def module_files() -> dict[str, tuple[Path, bool]]:
    """Every module of the product: import name -> (file, is a package)."""
    out: dict[str, tuple[Path, bool]] = {}
    for folder, name in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            out[".".join([name, *parts])] = (path, is_package)
    return out


def layer_of(module: str) -> str:
    parts = module.split(".")
    if parts[:2] == ["hlodbg", "engine"]:
        if len(parts) == 2:
            return "engine"
        return parts[2] if parts[2] in ENGINE_LAYERS else "engine"
    if len(parts) >= 2 and parts[1] in ("layouts", "ui", "sample_programs"):
        return parts[1]
    return "hlodbg"


def imports_of(module: str, path: Path, is_package: bool, known: set[str]) -> Iterator[tuple[str, int]]:
    """(imported module, line) for every import statement anywhere in the file."""
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = resolve(module, is_package, node.level, node.module)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield (sub if sub in known else base), node.lineno


def resolve(module: str, is_package: bool, level: int, name: Optional[str]) -> str:
    if level == 0:
        return name or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([name] if name else []))


def import_graph() -> tuple[dict[str, list[tuple[str, int]]], dict[str, list[tuple[str, int]]]]:
    """Edges between our modules, and imports of other distributions, with the line of each."""
    files = module_files()
    known = set(files)
    internal: dict[str, list[tuple[str, int]]] = {m: [] for m in files}
    external: dict[str, list[tuple[str, int]]] = {m: [] for m in files}
    for module, (path, is_package) in files.items():
        for target, line in imports_of(module, path, is_package, known):
            if target in known:
                if target != module:
                    internal[module].append((target, line))
            elif target.split(".")[0] != "hlodbg":
                external[module].append((target, line))
    return internal, external


def where(module: str, line: int) -> str:
    path, _ = module_files()[module]
    return f"{path.relative_to(ROOT)}:{line}"


def test_every_import_goes_down_the_layers():
    internal, _ = import_graph()
    wrong = []
    for module, targets in internal.items():
        layer = layer_of(module)
        for target, line in targets:
            other = layer_of(target)
            allowed = XLA_BACKEND_ALLOWED if _in_xla_backend(module) else ALLOWED[layer]
            if other != layer and other not in allowed:
                wrong.append(f"{where(module, line)}: {module} ({layer}) imports {target} ({other})")
    assert not wrong, "imports up the layer order:\n" + "\n".join(sorted(wrong))


def strongly_connected(graph: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's components, iteratively (the graph has hundreds of modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return components


def test_no_import_cycles():
    internal, _ = import_graph()
    graph = {m: sorted({t for t, _ in targets}) for m, targets in internal.items()}
    cycles = strongly_connected(graph)
    report = []
    for component in cycles:
        members = set(component)
        lines = sorted({f"  {where(m, line)}: imports {t}" for m in component for t, line in internal[m] if t in members})
        report.append("modules importing each other: " + ", ".join(component) + "\n" + "\n".join(lines))
    assert not cycles, "\n".join(report)


def test_the_cycle_finder_finds_cycles():
    graph = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"], "e": []}
    assert strongly_connected(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize("layer", sorted(FORBIDDEN_THIRD_PARTY))
def test_no_forbidden_libraries(layer):
    _, external = import_graph()
    wrong = []
    for module, targets in external.items():
        if layer_of(module) == layer or (layer == "engine" and layer_of(module) in ENGINE_LAYERS):
            for target, line in targets:
                if (_in_xla_backend(module) or _in_package(module, JAX_FRONT_DOOR)) and target.split(".")[0] in ("jax", "jaxlib"):
                    continue
                if target.split(".")[0] in FORBIDDEN_THIRD_PARTY[layer]:
                    wrong.append(f"{where(module, line)}: {module} imports {target}")
    assert not wrong, "\n".join(wrong)


def _in_xla_backend(module: str) -> bool:
    return _in_package(module, XLA_BACKEND)


def _in_package(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_only_the_jax_front_door_imports_it():
    """hlodbg.jax needs JAX; a module outside it importing it would make hlodbg need JAX."""
    internal, _ = import_graph()
    wrong = [f"{where(module, line)}: {module} imports {target}" for module, targets in internal.items()
             if not _in_package(module, JAX_FRONT_DOOR) for target, line in targets if _in_package(target, JAX_FRONT_DOOR)]
    assert not wrong, "\n".join(wrong)


def test_every_module_is_in_a_layer():
    """A new top-level module inside engine/ belongs in one of the layer folders."""
    stray = [m for m in module_files() if m.startswith("hlodbg.engine.") and m.split(".")[2] not in ENGINE_LAYERS]
    assert not stray, f"engine modules outside the layer folders: {stray}"


def test_every_package_is_in_the_distribution():
    """A package folder missing from pyproject.toml's `packages` would work in a checkout and be
    missing from an installed hlodbg."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {module for module, (_, is_package) in module_files().items() if is_package}
    assert packages - listed == set(), f"packages missing from pyproject.toml: {sorted(packages - listed)}"


# -- one execution core ------------------------------------------------------------------------
# Where a step's evaluator may be called in a loop over steps: the interpreter's two loops (plain
# and observed), the plain loop's compiled form, and a fused group's members inside one fused step.
# Anywhere else an evaluator is called for one op (recomputing a dropped value, replaying one op's
# body for display, a backend wrapping an evaluator), never in a loop: a second op loop would have
# to be kept bit-identical and in step with these, as four of them once were.
EXECUTION_CORE = {"hlodbg.engine.run.interpreter", "hlodbg.engine.run.block_code", "hlodbg.engine.run.fusion"}
# Loops over a region's ops that are no run of it, each with its reason.
OTHER_EVALUATOR_LOOPS = {
    # sort's comparator read as a sort key: the few ops that map one operand to its key, applied to
    # the whole operand at once (a run of the comparator would compare pairs of elements).
    "hlodbg.engine.ops.sorting",
}


def evaluator_calls_in_loops(tree: ast.AST) -> Iterator[int]:
    """Lines where an evaluator (`x.evaluator(...)`, `x.evaluate(...)`, `evaluator(...)`) is called
    inside a for or while loop (comprehensions included) of the same function."""

    def calls_evaluator(node: ast.Call) -> bool:
        function = node.func
        if isinstance(function, ast.Name):
            return function.id == "evaluator"
        if not isinstance(function, ast.Attribute):
            return False
        receiver = function.value.id if isinstance(function.value, ast.Name) else ""
        return function.attr == "evaluator" or (function.attr == "evaluate" and "step" in receiver)

    def visit(node: ast.AST, in_loop: bool) -> Iterator[int]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                yield from visit(child, False)
                continue
            looping = in_loop or isinstance(child, (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp,
                                                    ast.DictComp, ast.GeneratorExp))
            if looping and isinstance(child, ast.Call) and calls_evaluator(child):
                yield child.lineno
            yield from visit(child, looping)

    yield from visit(tree, False)


def test_evaluators_run_in_a_loop_only_in_the_execution_core():
    found = []
    for module, (path, _) in module_files().items():
        if module in EXECUTION_CORE or module in OTHER_EVALUATOR_LOOPS:
            continue
        tree = ast.parse(path.read_text(), str(path))
        found += [where(module, line) for line in evaluator_calls_in_loops(tree)]
    assert not found, "a loop calling evaluators outside the execution core (engine/run/interpreter.py):\n" + "\n".join(found)


def test_the_loop_finder_finds_an_op_loop():
    text = "def run(steps, env):\n    for step in steps:\n        env[step] = step.evaluator(step.call)\n"
    assert list(evaluator_calls_in_loops(ast.parse(text))) == [3]
    assert list(evaluator_calls_in_loops(ast.parse("def one(step):\n    return step.evaluate([])\n"))) == []
    assert list(evaluator_calls_in_loops(ast.parse("outs = [step.evaluate(x) for step in steps]\n"))) == [1]
    assert list(evaluator_calls_in_loops(ast.parse("while True:\n    evaluator(call)\n"))) == [2]
