"""The debugger's keys, each with an id, and the user's remapping from a config file.

`$XDG_CONFIG_HOME/hlodbg/keys.toml` (or `$HLODBG_CONFIG_DIR/keys.toml`):

    [keys]
    step = "n,f10"          # binding id = comma-separated keys
    step_in = "s,f11"

Unknown ids and unreadable files are reported, never fatal: the defaults stay.
"""
from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Optional

from textual.binding import Binding
from textual.keys import format_key


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
    _b("period", "toggle_follow", "follow the current op", "follow"),
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

# Keys whose Textual name format_key leaves as a word although they print a character.
PRINTED_KEYS = {"period": "."}


def key_label(key: str) -> str:
    """A key as printed on the keyboard: "/" for slash, "]" for right_square_bracket, "ctrl+c"."""
    *modifiers, name = key.split("+")
    return "+".join([*modifiers, PRINTED_KEYS.get(name) or format_key(name)])


def config_path() -> Path:
    root = os.environ.get("HLODBG_CONFIG_DIR")
    if root:
        return Path(root) / "keys.toml"
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "hlodbg" / "keys.toml"


def load_keymap(path: Optional[Path] = None) -> tuple[dict[str, str], list[str]]:
    """(binding id -> keys, problems) from the user's keys.toml; missing file: nothing to change."""
    path = path or config_path()
    if not path.is_file():
        return {}, []
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        return {}, [f"{path}: cannot read it ({e}); using the default keys"]
    table = data.get("keys", {})
    if not isinstance(table, dict):
        return {}, [f"{path}: [keys] must be a table of binding id = \"keys\""]
    known = {b.id for b in DEBUGGER_BINDINGS}
    keymap, problems = {}, []
    for binding_id, keys in table.items():
        if binding_id not in known:
            problems.append(f"{path}: unknown binding id '{binding_id}' (see ? for the ids)")
        elif not isinstance(keys, str) or not keys.strip():
            problems.append(f"{path}: keys for '{binding_id}' must be a string like \"n,f10\"")
        else:
            keymap[binding_id] = keys.replace(" ", "")
    return keymap, problems


__all__ = ["BINDING_GROUPS", "DEBUGGER_BINDINGS", "config_path", "key_label", "load_keymap"]
