"""pyproject.toml declares what the wheel ships (issue 32: the first `make run` printed pages of
setuptools warnings, "Package 'hlodbg.sample_programs.lessons' is absent from the `packages`
configuration"): every folder of code is a listed package, every data file matches a package-data
pattern of its package, and data folders stay plain folders (include-package-data off, which is
what made setuptools take each for an undeclared package)."""
from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def _folder_of(package: str) -> Path:
    """The source folder of an import name, through package-dir's mappings (the longest wins)."""
    mapped = max((name for name in SETUPTOOLS["package-dir"] if package == name or package.startswith(name + ".")),
                 key=len)
    rest = package[len(mapped):].lstrip(".")
    return ROOT / SETUPTOOLS["package-dir"][mapped] / Path(*rest.split(".") if rest else ())


def _product_files() -> list[Path]:
    roots = {ROOT / folder for folder in SETUPTOOLS["package-dir"].values()}
    return [path for root in roots for path in root.rglob("*")
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"]


def test_every_folder_of_code_is_a_listed_package():
    listed = {_folder_of(package) for package in SETUPTOOLS["packages"]}
    code_folders = {path.parent for path in _product_files() if path.suffix == ".py"}
    assert sorted(map(str, code_folders - listed)) == []
    assert all((folder / "__init__.py").is_file() for folder in listed)


def test_every_data_file_is_declared_package_data():
    packages = {_folder_of(package): package for package in SETUPTOOLS["packages"]}
    undeclared = []
    for path in _product_files():
        if path.suffix == ".py":
            continue
        owner = next(folder for folder in path.parents if folder in packages)
        relative = path.relative_to(owner).as_posix()
        patterns = SETUPTOOLS["package-data"].get(packages[owner], [])
        if not any(fnmatch.fnmatchcase(relative, pattern) and relative.count("/") == pattern.count("/")
                   for pattern in patterns):
            undeclared.append(str(path.relative_to(ROOT)))
    assert undeclared == []


def test_data_folders_are_not_taken_for_packages():
    assert SETUPTOOLS.get("include-package-data") is False
