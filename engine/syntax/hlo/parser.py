"""XLA HLO text -> the parse tree of tree.py (grammar: ../shared/docs/hlo_text.md §3).

    module      ::= ['HloModule' name [':'] (',' attr)*] [stack frames] computation+
    computation ::= ['ENTRY'] name ['(' (name ':' shape),* ')' '->' shape] '{' instruction+ '}'
                    (',' attr)*
    instruction ::= ['ROOT'] name '=' shape opcode '(' operands ')' (',' attr)*
    operand     ::= [shape] name | shape opcode '(' operands ')'      (a nested instruction)

Attribute values, layouts and constant literals are kept as their exact text with their position;
attr_values.py and literals.py decode them, so their errors point inside the value. A file may
hold several modules separated by `// -----` lines; each keeps its true positions in the file.
"""
from __future__ import annotations

import re
from typing import Optional

from ...ir.errors import ParseError, SourcePos, SourceText
from .attr_basic import decode_instruction_names
from .lexer import ELEMENT_TYPES, Cursor
from .shapes import parse_shape, starts_shape
from .stack_frames import SECTION_WORDS, parse_stack_frames, starts_stack_frames
from .tree import (
    HloAttr,
    HloComputation,
    HloInstruction,
    HloModuleText,
    HloOperand,
    HloParameterDecl,
)

_DASHES = re.compile(r"//[ \t]*-----")
_SPLIT = re.compile(r"[ \t]*//[ \t]*-----[ \t]*\r?")
_OPCODE_CALL = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\s*\(")
_HEAD = re.compile(r"(?:(ROOT)[ \t]+)?%?([A-Za-z_][A-Za-z0-9_.\-]*)[ \t]*=[ \t]*")
_OPERAND_NAME = re.compile(r"%?([A-Za-z_][A-Za-z0-9_.\-]*)")
_PLAIN_OPERANDS = re.compile(r"[ \t]*(?:%?[A-Za-z_][A-Za-z0-9_.\-]*[ \t]*,[ \t]*)*"
                             r"%?[A-Za-z_][A-Za-z0-9_.\-]*[ \t]*\)")
_ATTRIBUTE_HEAD = re.compile(r"[ \t]*,[ \t]*([A-Za-z_][A-Za-z0-9_.\-]*)=")
_KEYWORDS = frozenset(("HloModule", "ENTRY", "ROOT", *SECTION_WORDS))
# Deeper nesting of operand instructions than this is surely not a program (and would exhaust
# Python's stack); shapes have their own limit in shapes.py.
_MAX_NESTING = 64


def parse_hlo_modules(text: str, filename: str = "<string>") -> list[HloModuleText]:
    """Every module of an HLO text file (one per `// -----` separated chunk that is not blank)."""
    source = SourceText(text, filename)
    bounds = [0] + [b for start, end in _split_lines(text) for b in (start, end)] + [len(text)]
    modules = []
    for start, end in zip(bounds[::2], bounds[1::2]):
        cur = Cursor(source, start, end)
        if not cur.at_end():
            modules.append(_Parser(cur).module())
    if not modules:
        everything = Cursor(source)
        everything.skip()
        everything.expected("'HloModule' or a computation")
    return modules


def _split_lines(text: str):
    """(start, end) of each `// -----` line. Found by its dashes first: a line-anchored regex
    would try every offset of a multi-megabyte constant."""
    for m in _DASHES.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        line_end = len(text) if line_end < 0 else line_end
        if _SPLIT.fullmatch(text, line_start, line_end):
            yield line_start, line_end


def parse_inline_computation(attr: HloAttr, name: str) -> HloComputation:
    """A computation written in place of its name (`to_apply={ x = f32[] parameter(0) ... }`,
    which XLA's parser accepts), read from the attribute's text at its true position; `name`
    is the one to give it (XLA's are generated too)."""
    start = attr.pos.offset
    if not (attr.text.startswith("{") and attr.text.endswith("}")):
        raise ParseError(f"expected a computation name or an inline '{{ instructions }}' for "
                         f"'{attr.name}'", attr.pos)
    cur = Cursor(attr.pos.source, start + 1, start + len(attr.text) - 1)
    instructions, root = _Parser(cur).body(name, start, closing=None)
    return HloComputation(name, instructions, root, attr.pos, start + len(attr.text))


class _Parser:
    def __init__(self, cur: Cursor):
        self.cur = cur

    # -- module -----------------------------------------------------------------------------------

    def module(self) -> HloModuleText:
        cur = self.cur
        cur.skip()
        start = cur.pos
        name: Optional[str] = None
        attrs: dict[str, HloAttr] = {}
        if cur.accept_keyword("HloModule"):
            if cur.peek() == '"':
                name = cur.string("the module's name")
            else:
                name = cur.name("the module's name")[0]
            cur.accept(":")  # very old XLA: `HloModule convolution.167:`
            self.attributes(attrs, "module header")
        stack_frames = parse_stack_frames(cur) if starts_stack_frames(cur) else None
        computations: dict[str, HloComputation] = {}
        entry: Optional[HloComputation] = None
        while not cur.at_end():
            computation = self.computation(computations)
            computations[computation.name] = computation
            if computation.is_entry:
                if entry is not None:
                    cur.fail(f"a second ENTRY computation '{computation.name}' (the entry is "
                             f"already '{entry.name}', at {entry.pos})", computation.pos.offset)
                entry = computation
        if not computations:
            cur.expected("a computation ('[ENTRY] name [(params) -> shape] {')")
        in_order = list(computations.values())
        return HloModuleText(name, attrs, in_order, entry or in_order[-1], cur.source,
                             cur.at(start), stack_frames)

    def attributes(self, attrs: dict[str, HloAttr], owner: str) -> int:
        """`, name=value` pieces: each value's exact text into `attrs`; returns the offset
        just past the last value. The common `, name=` is matched in one step; anything else
        goes through the exact reads."""
        cur = self.cur
        last_end = cur.pos
        while True:
            head = _ATTRIBUTE_HEAD.match(cur.text, cur.pos, cur.end)
            if head:
                cur.pos = head.end()
                self._attribute_value(attrs, head.group(1), head.start(1), owner)
            elif cur.accept(","):
                name, at = cur.name(f"an attribute name in the {owner}")
                if not cur.text.startswith("=", cur.pos):
                    cur.expected(f"'=' after attribute name '{name}'")
                cur.pos += 1
                self._attribute_value(attrs, name, at, owner)
            else:
                return last_end
            last_end = cur.pos

    def _attribute_value(self, attrs: dict[str, HloAttr], name: str, at: int,
                         owner: str) -> None:
        cur = self.cur
        if name in attrs:
            cur.fail(f"attribute '{name}' is given twice in the {owner}", at)
        what = f"a value for attribute '{name}'"
        if name == "literal" and cur.peek() != "(" and starts_shape(cur):
            # custom-call's `literal=f32[] 0.1` / `literal=s32[2]{0} {1, 2}`: a shape, then
            # the literal after a space.
            value_start = cur.pos
            parse_shape(cur)
            value_end = cur.value_extent(what)[1]
        else:
            value_start, value_end = cur.value_extent(what)
        attrs[name] = HloAttr(name, cur.text[value_start:value_end], cur.at(value_start))

    # -- computation ------------------------------------------------------------------------------

    def computation(self, earlier: dict[str, HloComputation]) -> HloComputation:
        cur = self.cur
        cur.skip()
        start = cur.pos
        is_entry = cur.accept_keyword("ENTRY")
        if cur.peek_name() in _KEYWORDS:
            cur.expected("a computation name")
        name, name_at = cur.name("a computation ('[ENTRY] name [(params) -> shape] {')")
        if name in earlier:
            cur.fail(f"computation '{name}' is already defined (at {earlier[name].pos})", name_at)
        signature = result_shape = None
        if cur.peek() == "(":
            signature = self._signature()
            cur.expect("->", "'->' and the computation's result shape")
            result_shape = parse_shape(cur, "the computation's result shape")
        cur.expect("{", f"'{{' opening the body of computation '{name}'")
        instructions, root = self.body(name, name_at, closing="}")
        if (result_shape is not None and root.shape is not None
                and result_shape.text(False) != root.shape.text(False)):
            # As XLA's parser: the printed result shape is the root's (layouts aside).
            cur.fail(f"the result shape {result_shape.text(False)} of computation '{name}' is not the "
                     f"shape of its root '{root.name}', {root.shape.text(False)}", result_shape.pos.offset)
        computation = HloComputation(name, instructions, root, cur.at(start), cur.pos,
                                     is_entry, signature, result_shape)
        if cur.peek() == ",":
            computation.end = self.attributes(computation.attrs,
                                              f"attributes of computation '{name}'")
        return computation

    def body(self, name: str, name_at: int, closing: Optional[str]):
        """Instructions up to `closing` (or the cursor's end for None): (instructions, root)."""
        cur = self.cur
        body = _Body(self, name)
        while not (cur.accept(closing) if closing else cur.at_end()):
            if cur.at_end():
                cur.fail(f"computation '{name}' is never closed (expected '{closing}')",
                         name_at)
            body.instruction()
        if not body.instructions:
            cur.fail(f"computation '{name}' has no instructions", name_at)
        return body.instructions, body.finish()

    def _signature(self) -> list[HloParameterDecl]:
        """`(p: f32[2], q: (s32[], u32[]))` — the parameters as the printer lists them."""
        cur = self.cur
        cur.expect("(")
        params: list[HloParameterDecl] = []
        if cur.accept(")"):
            return params
        while True:
            name, at = cur.name("a parameter name in the signature")
            cur.expect(":", f"':' and the shape of parameter '{name}'")
            params.append(HloParameterDecl(name, parse_shape(cur), cur.at(at)))
            if cur.accept(")"):
                return params
            cur.expect(",", "',' or ')' in the computation's parameter list")


class _Body:
    """The instructions of one computation as they are read, with the names they define."""

    def __init__(self, parser: _Parser, computation: str):
        self.parser = parser
        self.cur = parser.cur
        self.computation = computation
        self.instructions: list[HloInstruction] = []
        self.defined: dict[str, HloInstruction] = {}
        self.roots: list[HloInstruction] = []
        # Nested operand instructions get generated names; a later instruction may write the
        # same name, so each is remembered with the operand that refers to it.
        self.generated: dict[str, HloOperand] = {}
        self.counter = 0

    def instruction(self) -> None:
        cur = self.cur
        cur.skip()
        head = _HEAD.match(cur.text, cur.pos, cur.end)  # `[ROOT] name = ` in one step
        if head and head.group(2) not in _KEYWORDS:
            is_root, name, at = bool(head.group(1)), head.group(2), head.start(2)
            cur.pos = head.end()
            if cur.text[at - 1] == "%":
                at -= 1
        else:
            is_root, name, at = self._head()
        if name in self.generated:
            self._rename_generated(name)
        if name in self.defined:
            cur.fail(f"instruction '{name}' is already defined in computation "
                     f"'{self.computation}' (at {self.defined[name].pos})", at)
        if (not starts_shape(cur) and _OPCODE_CALL.match(cur.text, cur.pos, cur.end)
                and not cur.text.startswith("b(", cur.pos)):
            shape = None  # XLA infers some opcodes' shapes; the lowering does (infer_shape.py)
        else:
            shape = parse_shape(cur, f"the shape of instruction '{name}'")
        instruction = self._rhs(name, at, shape, depth=0)
        if cur.peek() == ",":
            instruction.end = self.parser.attributes(instruction.attrs,
                                                     f"attributes of instruction '{name}'")
        if "control-predecessors" in instruction.attrs:
            self._check_predecessors(instruction.attrs["control-predecessors"])
        instruction.is_root = is_root
        self._define(instruction)
        if is_root:
            self.roots.append(instruction)

    def _head(self) -> tuple[bool, str, int]:
        """`[ROOT] name =` token by token, for the exact error when the one-step match fails."""
        cur = self.cur
        is_root = cur.accept_keyword("ROOT")
        word = cur.peek_name()
        if word in _KEYWORDS or word is None:
            cur.expected(f"an instruction ('[ROOT] name = shape opcode(...)') or '}}' closing "
                         f"computation '{self.computation}'")
        name, at = cur.name()
        if name in self.defined:
            cur.fail(f"instruction '{name}' is already defined in computation "
                     f"'{self.computation}' (at {self.defined[name].pos})", at)
        cur.expect("=", f"'=' after instruction name '{name}'")
        return is_root, name, at

    def _define(self, instruction: HloInstruction) -> None:
        self.instructions.append(instruction)
        self.defined[instruction.name] = instruction

    def _rhs(self, name: str, at: int, shape, depth: int) -> HloInstruction:
        """`opcode(operands)`: the operands, or a constant's literal text, or a parameter number."""
        cur = self.cur
        opcode, opcode_at = cur.name(f"the opcode of instruction '{name}'")
        if opcode in ELEMENT_TYPES or opcode in _KEYWORDS:
            cur.fail(f"expected an opcode, found '{opcode}'", opcode_at)
        open_at = cur.expect("(", f"'(' after opcode '{opcode}'")
        literal = literal_pos = None
        operands: list[HloOperand] = []
        if opcode == "constant":
            close = cur.group_end(open_at)
            literal, literal_pos = cur.text[open_at + 1:close - 1], cur.at(open_at + 1)
            if not literal.strip():
                cur.fail("expected the constant's literal between the parentheses", open_at + 1)
            cur.pos = close
        elif opcode == "parameter":
            cur.skip()
            literal_pos = cur.at()
            number = cur.integer("the parameter number")
            if number < 0:
                cur.fail("a parameter number cannot be negative", literal_pos.offset)
            literal = str(number)
            cur.expect(")", "')' after the parameter number")
        elif plain := _PLAIN_OPERANDS.match(cur.text, open_at + 1, cur.end):
            # The common `(a, %b.1)`: all operands found by one regex step.
            source = cur.source
            operands = [HloOperand(m.group(1), SourcePos(source, m.start()))
                        for m in _OPERAND_NAME.finditer(cur.text, plain.start(), plain.end())]
            cur.pos = plain.end()
        elif not cur.accept(")"):
            while True:
                operands.append(self._operand(depth))
                if cur.accept(")"):
                    break
                cur.expect(",", f"',' or ')' in the operands of '{name}'")
        for operand in operands:
            if operand.name not in self.defined:
                cur.fail(f"operand '{operand.name}' is not defined before this use in "
                         f"computation '{self.computation}' (an instruction's operands come "
                         f"before it)", operand.pos.offset)
        return HloInstruction(name, shape, opcode, operands, {}, cur.at(at), cur.at(opcode_at),
                              cur.pos, literal=literal, literal_pos=literal_pos)

    def _operand(self, depth: int) -> HloOperand:
        """`name`, `f32[4]{0} name` (older XLA printed operand shapes), or a nested instruction
        `f32[] constant(1)`, which is hoisted before its user under a generated name."""
        cur = self.cur
        cur.skip()
        shape = parse_shape(cur) if starts_shape(cur) else None
        name, at = cur.name("an operand (an instruction name)")
        if cur.peek() != "(":
            return HloOperand(name, cur.at(at), shape)
        if depth >= _MAX_NESTING:
            cur.fail(f"operand instructions are nested more than {_MAX_NESTING} deep", at)
        cur.pos = at  # the opcode is read again by _rhs
        nested = self._rhs(self._fresh_name(name), at, shape, depth + 1)
        operand = HloOperand(nested.name, cur.at(at))
        self._define(nested)
        self.generated[nested.name] = operand
        return operand

    def _check_predecessors(self, attr: HloAttr) -> None:
        """Control predecessors, like operands, are instructions defined before (XLA's rule)."""
        for name in decode_instruction_names(attr.text, attr.pos):
            if name not in self.defined:
                at = re.search(rf"%?{re.escape(name)}(?![\w.\-])", attr.text)
                self.cur.fail(f"control predecessor '{name}' is not defined before this instruction in "
                              f"computation '{self.computation}'", attr.pos.offset + (at.start() if at else 0))

    def _fresh_name(self, opcode: str) -> str:
        while True:
            self.counter += 1
            candidate = f"{opcode}.nested.{self.counter}"
            if candidate not in self.defined:
                return candidate

    def _rename_generated(self, name: str) -> None:
        """A written instruction takes a name given to a nested one: the nested one moves."""
        nested = self.defined.pop(name)
        operand = self.generated.pop(name)
        nested.name = operand.name = self._fresh_name(nested.opcode)
        self.defined[nested.name] = nested
        self.generated[nested.name] = operand

    def finish(self) -> HloInstruction:
        """Checks the parameter numbers (0..n-1, each once) and returns the root: the
        ROOT-marked instruction, else the last one."""
        taken: dict[int, HloInstruction] = {}
        for instruction in self.instructions:
            if instruction.opcode == "parameter":
                number = int(instruction.literal)
                if number in taken:
                    self.cur.fail(f"parameter number {number} is already taken by "
                                  f"'{taken[number].name}'", instruction.literal_pos.offset)
                taken[number] = instruction
        for number, instruction in taken.items():
            if number >= len(taken):
                self.cur.fail(f"parameter number {number} leaves a gap: computation "
                              f"'{self.computation}' has {len(taken)} parameter(s), numbered "
                              f"from 0", instruction.literal_pos.offset)
        if len(self.roots) > 1:
            self.cur.fail(f"computation '{self.computation}' has a second ROOT instruction (the "
                          f"first is '{self.roots[0].name}')", self.roots[1].pos.offset)
        if self.roots:
            return self.roots[0]
        return self.instructions[-1]
