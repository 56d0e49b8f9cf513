"""String literals as MLIR writes them (attributes and Shardy's axis names alike)."""
from __future__ import annotations


def quote_string(text: str) -> str:
    """A string literal as MLIR writes it (llvm::printEscapedString): `\\` for a backslash, two
    hex digits for `"` and control characters (`\\22`, `\\0A`); other characters as they are."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"' or code < 0x20 or code == 0x7F:
            out.append(f"\\{code:02X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
