"""An op's facts are asked of its definition, never inferred from its colour: no code outside the
op definitions (engine/ir/opdefs.py, engine/ir/opset/) compares an op's category (`category ==`,
`.category in (...)`, `category_of(name) != ...`). The category is the colour views draw an op
in; what an op does is its `family`, and its other facts are traits (engine/ir/opdefs.py)."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("engine", "hlodbg", "layouts", "ui")
OP_DEFINITIONS = (ROOT / "engine" / "ir" / "opdefs.py", ROOT / "engine" / "ir" / "opset")


def _names_a_category(node: ast.AST) -> bool:
    """`x.category`, `category_of(...)` or a variable called `category`."""
    if isinstance(node, ast.Attribute):
        return node.attr == "category"
    if isinstance(node, ast.Call):
        func = node.func
        return (func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")) == "category_of"
    return isinstance(node, ast.Name) and node.id == "category"


def _is_literal(node: ast.AST) -> bool:
    """A string, or a tuple, list or set of strings: the names of categories."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_is_literal(e) for e in node.elts)
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def category_tests(source: str) -> Iterator[int]:
    """The lines of `source` that compare a category with named categories (a lookup of the
    colour in the palette, `category in CATEGORIES`, decides nothing about the op)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = (node.left, *node.comparators)
            if any(_names_a_category(side) for side in sides) and any(_is_literal(side) for side in sides):
                yield node.lineno


def _product_files() -> Iterator[Path]:
    for folder in PRODUCT:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == OP_DEFINITIONS[0] or OP_DEFINITIONS[1] in path.parents:
                continue
            yield path


def test_no_category_tests_outside_the_op_definitions():
    found = [f"{path.relative_to(ROOT)}:{line}" for path in _product_files()
             for line in category_tests(path.read_text(encoding="utf-8"))]
    assert found == [], "ask the op's family or a trait of its definition instead: " + ", ".join(found)


def test_the_finder_finds_category_tests():
    assert list(category_tests("if opdef.category == 'chlo':\n    pass\n")) == [1]
    assert list(category_tests("x = 1\nok = category_of(name) not in ('a', 'b')\n")) == [2]
    assert list(category_tests("category = category_of(n)\nif category != 'constant':\n    pass\n")) == [2]
    # The colour handed to a palette or looked up in it, and unicodedata's categories, are no op tests.
    assert list(category_tests("style = style_of(category_of(name))\nmn = unicodedata.category(ch) == 'Mn'\n")) == []
    assert list(category_tests("known = category in CATEGORIES\n")) == []
