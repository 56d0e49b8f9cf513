"""Write the HLO modules of an openxla/xla checkout's tests into a directory, one module per file,
for benchmarks/hlo_real_files.py: every `*.hlo` test file (its `// -----` chunks apart) and every
raw string of `xla/tests/*.cc` that holds an ENTRY computation; RUN/CHECK lines dropped,
duplicates dropped, and (with jaxlib installed) only the modules XLA's own parser accepts, so
that hlo_real_files.py's figures read "of what XLA's parser accepts".

Run: python benchmarks/xla_test_modules.py XLA_GIT_DIR OUT_DIR [--all]
XLA_GIT_DIR is a clone's `.git` (or a bare repository, as `fetch` brings one); the files are
read from HEAD with `git show`, so no work tree is needed. The modules are other projects' text:
keep them out of this repository.
"""
from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
from pathlib import Path

# R"(...)" and R"delim(...)delim": the C++ raw strings XLA's tests write HLO in.
RAW_STRING = re.compile(r'R"([A-Za-z_]*)\((.*?)\)\1"', re.S)
CHUNK = re.compile(r"(?m)^// -----.*$")
CHECK_LINE = re.compile(r"\s*(//|#)\s*(CHECK|RUN|COM)")


def git_files(git_dir: str) -> list[str]:
    return _git(git_dir, "ls-tree", "-r", "--name-only", "HEAD").splitlines()


def _git(git_dir: str, *args: str) -> str:
    """git's output; "" when git cannot give it (a snapshot may lack its largest files)."""
    done = subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True, errors="replace")
    return done.stdout if done.returncode == 0 else ""


def cleaned(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not CHECK_LINE.match(line)).strip() + "\n"


def modules_of(path: str, text: str) -> list[tuple[str, str]]:
    """(file name, module text) for each module `path` holds."""
    stem = path.replace("/", "__")
    if path.endswith(".hlo"):
        chunks = [c for c in CHUNK.split(text) if "ENTRY" in c]
        return [(f"{stem}.{i}.hlo" if len(chunks) > 1 else f"{stem}.hlo", cleaned(c)) for i, c in enumerate(chunks)]
    return [(f"{stem}.{i}.hlo", cleaned(m.group(2))) for i, m in enumerate(RAW_STRING.finditer(text))
            if "ENTRY" in m.group(2)]


def wanted(path: str) -> bool:
    # The fuzz corpus is generated text, not tests people wrote; its files are large and many.
    return (path.endswith(".hlo") and "/fuzz/" not in path) or re.fullmatch(r"xla/tests/[^/]*\.cc", path) is not None


def xla_parses(text: str) -> bool:
    from jaxlib import _hlo

    try:
        _hlo.hlo_module_from_text(text)
        return True
    except Exception:  # noqa: BLE001 (XLA's parser raises its runtime's error type)
        return False


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("git_dir")
    parser.add_argument("out", type=Path)
    parser.add_argument("--all", action="store_true", help="keep the modules XLA's parser refuses too")
    args = parser.parse_args(argv)
    try:
        import jaxlib  # noqa: F401
        check = not args.all
    except ImportError:
        check = False
        print("jaxlib is not installed: every module is kept (XLA's parser not asked)", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    seen, kept, refused = set(), 0, 0
    for path in filter(wanted, git_files(args.git_dir)):
        for name, text in modules_of(path, _git(args.git_dir, "show", f"HEAD:{path}")):
            digest = hashlib.sha1(text.encode()).digest()
            if digest in seen:
                continue
            seen.add(digest)
            if check and not xla_parses(text):
                refused += 1
                continue
            (args.out / name).write_text(text)
            kept += 1
    print(f"{kept} modules written to {args.out}" + (f"; {refused} refused by XLA's parser left out" if check else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
