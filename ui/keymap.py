"""The debugger's keys, each with an id, and the user's remapping from a config file.

`$XDG_CONFIG_HOME/hlodbg/keys.toml` (or `$HLODBG_CONFIG_DIR/keys.toml`):

    [keys]
    step = "n,f10"          # binding id = comma-separated keys
    step_in = "s,f11"

Unknown ids, key names Textual does not know, keys two bindings would share and unreadable files
are reported (file:line, the entry, what is wrong), never fatal: the defaults stay.
"""
from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from textual.binding import Binding
from textual.keys import REPLACED_KEYS, Keys, _normalize_key_list, format_key, key_to_character


def _b(key: str, action: str, description: str, id: str, show: bool = False) -> Binding:
    return Binding(key, action, description, show=show, id=id)


# Single keys, pudb/gdb style; they mean the same whatever pane the mouse last touched (the panes
# take no keyboard focus; only the command line does, and Escape leaves it). Help shows them in
# these groups.
RUN_BINDINGS = [
    _b("n", "move('step')", "step over", "step", True),
    _b("s", "move('step_in')", "step in", "step_in", True),
    _b("f", "move('step_out')", "step out", "step_out", True),
    _b("c", "move('continue_')", "continue", "continue", True),
    _b("N", "move('back')", "step over backwards", "back"),
    _b("S", "move('back_in')", "step in backwards", "back_in"),
    _b("F", "move('back_out')", "step out backwards", "back_out"),
    _b("C", "move('reverse_continue')", "continue backwards", "reverse_continue"),
    _b("t", "run_to_selected", "run to the selected op", "run_to", True),
    _b("b", "toggle_breakpoint", "toggle a breakpoint on the selected op", "toggle_breakpoint", True),
    _b("r", "move('restart')", "restart", "restart"),
    _b("slash", "command('/')", "search ops by name, kind, %value or location", "search", True),
    _b("g", "command('show %')", "go to a value: show it and its op", "goto_value"),
    _b("colon", "command('')", "command line", "command_line"),
    _b("e", "export_svg", "export the graph as SVG", "export", True),
    _b("question_mark", "help", "help", "help", True),
    _b("q", "app.quit", "quit", "quit", True),  # the app's action: the screen has none of that name
    _b("escape", "interrupt", "interrupt a running move", "interrupt"),
    _b("ctrl+c", "interrupt", "interrupt a running move", "interrupt_ctrl_c"),
    _b("T", "toggle_theme", "light / dark theme", "theme"),
    _b("D", "next_device", "focus the next device of the grid", "next_device"),
    _b("w", "toggle_lockstep", "grid: other devices follow the focused one (lock-step) or wait", "lockstep"),
]
GRAPH_BINDINGS = [
    _b("left,h", "pan(-8, 0)", "pan the graph left", "pan_left"),
    _b("right,l", "pan(8, 0)", "pan the graph right", "pan_right"),
    _b("up,k", "pan(0, -4)", "pan the graph up", "pan_up"),
    _b("down,j", "pan(0, 4)", "pan the graph down", "pan_down"),
    _b("H", "select_neighbour('left')", "select the op to the left", "select_left"),
    _b("L", "select_neighbour('right')", "select the op to the right", "select_right"),
    _b("K", "select_neighbour('up')", "select the op above", "select_up"),
    _b("J", "select_neighbour('down')", "select the op below", "select_down"),
    _b("plus,equals_sign", "zoom(1)", "zoom in", "zoom_in"),
    _b("minus", "zoom(-1)", "zoom out", "zoom_out"),
    _b("full_stop", "toggle_follow", "follow the current op", "follow"),  # ".": Textual names it by its Unicode name
    _b("z", "toggle_focus", "focus mode: the neighbourhood of the selected op", "focus"),
    _b("enter,o", "open_selected", "open the selected loop, region or call", "open"),
    _b("u,backspace", "go_up", "back to the enclosing cluster", "up"),
]
INSPECTOR_BINDINGS = [
    _b("v", "inspector('next_value')", "inspect the next value", "next_value"),
    _b("V", "inspector('previous_value')", "inspect the previous value", "previous_value"),
    _b("right_square_bracket", "inspector('index_next')", "next index along the fixed axis", "index_next"),
    _b("left_square_bracket", "inspector('index_previous')", "previous index along the fixed axis", "index_previous"),
    _b("a", "inspector('cycle_fixed_axis')", "choose the fixed axis [ ] move along", "fixed_axis"),
    _b("x", "inspector('cycle_col_axis')", "choose the axis shown as columns", "col_axis"),
    _b("y", "inspector('cycle_row_axis')", "choose the axis shown as rows", "row_axis"),
    _b("d", "inspector('toggle_diff')", "diff against the previous loop iteration", "diff"),
    _b("E", "inspector('exact_statistics')", "exact statistics of a value over 100M elements (mean/std sampled)", "exact"),
    _b("pagedown", "scroll_slice(10, 0)", "scroll the slice down", "slice_down"),
    _b("pageup", "scroll_slice(-10, 0)", "scroll the slice up", "slice_up"),
    _b("greater_than_sign", "scroll_slice(0, 4)", "scroll the slice right", "slice_right"),
    _b("less_than_sign", "scroll_slice(0, -4)", "scroll the slice left", "slice_left"),
    _b("shift+up", "move_cursor(-1, 0)", "element cursor up", "cursor_up"),
    _b("shift+down", "move_cursor(1, 0)", "element cursor down", "cursor_down"),
    _b("shift+left", "move_cursor(0, -1)", "element cursor left", "cursor_left"),
    _b("shift+right", "move_cursor(0, 1)", "element cursor right", "cursor_right"),
    _b("p", "inspector('toggle_physical')", "physical view: layout, tiles, where the cursor's element lives", "physical", True),
    _b("m", "toggle_memory", "memory pane: live buffers, peak, HBM of the focused device", "memory", True),
]
# Teaching: the explain pane and the lesson panel (hlodbg lesson NAME).
TEACHING_BINDINGS = [
    _b("i", "toggle_explain", "explain pane: what the op in view does, with its numbers (:lang ja|hi|en)", "explain", True),
    _b("A", "answer_lesson", "lesson: type an answer to the question (Escape: back to the debugger's keys)", "lesson_answer"),
]
BINDING_GROUPS = (("run", RUN_BINDINGS), ("graph", GRAPH_BINDINGS), ("values", INSPECTOR_BINDINGS),
                  ("teaching", TEACHING_BINDINGS))
DEBUGGER_BINDINGS = [binding for _, group in BINDING_GROUPS for binding in group]

def key_label(key: str) -> str:
    """A key as printed on the keyboard: "/" for slash, "]" for right_square_bracket, "ctrl+c"."""
    *modifiers, name = key.split("+")
    return "+".join([*modifiers, format_key(name)])


def config_path() -> Path:
    root = os.environ.get("HLODBG_CONFIG_DIR")
    if root:
        return Path(root) / "keys.toml"
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "hlodbg" / "keys.toml"


KEYS_FILE_LIMIT = 1 << 20  # bytes: a keys file is a few lines
MODIFIERS = ("ctrl", "shift", "alt", "meta", "super", "hyper")
# Textual's names of keys that print nothing (f1, pageup, escape, ...), and its short names of
# characters (slash, plus, minus, at, ...); any other character goes by its Unicode name
# (question_mark, left_square_bracket) or as itself.
NAMED_KEYS = frozenset(k.value for k in Keys if "+" not in k.value and not k.value.startswith("<"))
CHARACTER_NAMES = frozenset(REPLACED_KEYS)


@dataclass(frozen=True)
class KeyProblem:
    """Something wrong in keys.toml: at `line` (None: the whole file), `text` says what."""

    path: Path
    line: Optional[int]
    text: str

    def __str__(self) -> str:
        return f"{self.path}{f':{self.line}' if self.line else ''}: {self.text}"

    def short(self) -> str:
        """Without the file's name (said once, above a list of problems)."""
        return f"line {self.line}: {self.text}" if self.line else self.text


def load_keymap(path: Optional[Path] = None) -> tuple[dict[str, str], list[KeyProblem]]:
    """(binding id -> keys, problems) from the user's keys.toml; missing file: nothing to change.
    Every problem names the file, the line of the entry, the entry and what is wrong with it; an
    entry with a problem is left out (its binding keeps its default keys), and a key one entry
    takes from another binding is said too."""
    path = path or config_path()
    if not path.is_file():
        return {}, []
    try:
        with open(path, "rb") as handle:
            raw = handle.read(KEYS_FILE_LIMIT + 1)
        if len(raw) > KEYS_FILE_LIMIT:
            return {}, [KeyProblem(path, None, f"larger than {KEYS_FILE_LIMIT:,} bytes, not a keys file; using the default keys")]
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as e:
        line_start = raw.rfind(b"\n", 0, e.start) + 1
        return {}, [KeyProblem(path, raw.count(b"\n", 0, e.start) + 1,
                               f"not UTF-8 text (byte {raw[e.start]:#04x} at column {e.start - line_start + 1}); using the default keys")]
    except (OSError, tomllib.TOMLDecodeError) as e:
        return {}, [KeyProblem(path, None, f"cannot read it ({e}); using the default keys")]
    table = data.get("keys", {})
    if not isinstance(table, dict):
        return {}, [KeyProblem(path, None, "[keys] must be a table of binding id = \"keys\"; using the default keys")]
    known = {b.id for b in DEBUGGER_BINDINGS}
    keymap, problems = {}, []
    for binding_id, keys in table.items():
        line, entry = _line_of(text, binding_id), f"{binding_id} = {_toml_text(keys)}"
        if binding_id not in known:
            problems.append(KeyProblem(path, line, f"{entry}: no binding has the id '{binding_id}' (? lists the ids)"))
            continue
        if isinstance(keys, list) and keys and all(isinstance(k, str) for k in keys):
            keys = ",".join(keys)
        if not isinstance(keys, str) or not keys.strip():
            problems.append(KeyProblem(path, line, f"{entry}: the keys must be a string like \"n,f10\""))
            continue
        names = [key.strip() for key in keys.split(",")]
        wrong = list(dict.fromkeys(problem for problem in map(key_problem, names) if problem))
        if wrong:
            problems.append(KeyProblem(path, line, f"{entry}: {'; '.join(wrong)}; {binding_id} keeps its default keys"))
            continue
        keymap[binding_id] = ",".join(names)
    problems += [KeyProblem(path, _line_of(text, taker), f"{taker} = {_toml_text(keymap[taker])}: {clash}")
                 for taker, clash in _clashes(keymap)]
    return keymap, sorted(problems, key=lambda problem: problem.line or 0)


def key_problem(key: str) -> Optional[str]:
    """What is wrong with one key of a keys.toml entry ("ctrl+n", "f10", "?", "question_mark"), or None."""
    if not key:
        return "an empty key (a comma with no key before or after it)"
    *modifiers, base = key.split("+")
    unknown = [m for m in modifiers if m not in MODIFIERS]
    if unknown:
        return f"'{key}': {unknown[0]!r} is not a modifier ({', '.join(MODIFIERS)})"
    if not base:
        return f"'{key}': no key after '+'"
    if (len(base) == 1 and base.isprintable()) or base in NAMED_KEYS or base in CHARACTER_NAMES or key_to_character(base):
        return None
    return f"'{key}' is not a key name (a character such as n or ?, f1-f24, up, pageup, escape, space, ctrl+n, ...)"


def _clashes(keymap: dict[str, str]) -> list[tuple[str, str]]:
    """(the entry that takes the key, what happens) for each key two bindings would share once
    `keymap` is applied: the remapped binding takes it (as Textual's keymap does; of two remapped
    ones the first in the help's order), and the other goes on with the keys it has left, or none."""
    keys_of = {b.id: [_canonical(k) for k in keymap.get(b.id, b.key).split(",")] for b in DEBUGGER_BINDINGS}
    said = []
    holder: dict[str, str] = {}
    for binding in DEBUGGER_BINDINGS:
        for key in keys_of[binding.id]:
            first = holder.setdefault(key, binding.id)
            if first == binding.id:
                continue
            # the id the user remapped is the one that takes the key, as Textual's keymap does
            taker, loser = (binding.id, first) if first not in keymap else (first, binding.id)
            left = [key_label(k) for k in keys_of[loser] if k != key]
            rest = f"still on {', '.join(left)}" if left else "it has no key left: give it one in [keys]"
            said.append((taker, f"{key_label(key)} is also {loser}'s key: it does {taker}, no longer {loser} ({rest})"))
    return said


def _canonical(key: str) -> str:
    """A key as Textual names it once a keymap is applied: "?" -> "question_mark" (App.set_keymap
    normalizes with this same function; Textual exports no public name for it)."""
    return _normalize_key_list(key)


def _line_of(text: str, binding_id: str) -> int:
    """The line of `binding_id = ...` in the file (1 when it cannot be found)."""
    pattern = re.compile(rf"^\s*[\"']?{re.escape(binding_id)}[\"']?\s*=", re.MULTILINE)
    found = pattern.search(text)
    return text.count("\n", 0, found.start()) + 1 if found else 1


def _toml_text(value) -> str:
    """An entry's value as it is written in the file, shortened."""
    text = f'"{value}"' if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
    return text if len(text) <= 40 else text[:39] + "…"


__all__ = ["BINDING_GROUPS", "DEBUGGER_BINDINGS", "KeyProblem", "config_path", "key_label", "key_problem", "load_keymap"]
