"""The Textual app: `hlodbg prog.mlir` opens the debugger, a bad file opens the error screen."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional, Sequence, Union

from textual.app import App

from hlodbg.engine.ir.errors import HlodbgError

from .keymap import load_keymap
from .screens.error import ErrorScreen
from .session_files import SessionFiles

KEYS_PROBLEMS_SECONDS = 30


class HlodbgApp(App):
    """hlodbg's window. Give it a loaded Program (anything with `module`, `name`, `source` and
    `debug(...)`, which builds the debugging target), or the error that stopped loading one.
    `args`: the arguments, or a function the session's thread calls for them (read meanwhile)."""

    CSS_PATH = "app.tcss"
    TITLE = "hlodbg"

    def __init__(self, program=None, error: Optional[HlodbgError] = None, args: Optional[Union[Sequence, Callable]] = None, seed: int = 0,
                 entry: str = "main", break_on: Optional[str] = None, memory=None, persist: bool = True,
                 keymap_path: Optional[Path] = None, replicas: Optional[int] = None, partitions: Optional[int] = None,
                 device=None, backend=None, explain: bool = False, lesson=None, lessons=None,
                 downloads: Optional[Path] = None, **kwargs):
        super().__init__(**kwargs)
        # A served session (`downloads`: its own folder) writes files only there and offers them
        # to the browser; a local one writes where its user says.
        self.files = SessionFiles(downloads)
        self.program = program
        self.error = error
        self.options = dict(args=args, seed=seed, entry=entry, memory=memory, persist=persist, replicas=replicas, partitions=partitions, device=device,
                            backend=backend)
        self.break_on = break_on
        self.keymap_path = keymap_path
        self.controller = None
        self.explain = explain  # open with the explain pane shown
        self.lesson = lesson  # a LessonRun (engine/debug/lessons.py): the lesson panel walks its questions
        self.lessons = lessons  # a LessonMenu: the lesson picker opens first (hlodbg lesson --pick)
        if program is not None:
            self.sub_title = f"{program.name} — {program.op_count} ops, {len(program.functions)} functions"

    def on_mount(self) -> None:
        keymap, problems = load_keymap(self.keymap_path)
        if keymap:
            self.set_keymap(keymap)
        if problems:  # one notice for the file, read before the defaults it kept are a surprise
            self.notify("\n".join(problem.short() for problem in problems), title=f"{problems[0].path}: not as written",
                        severity="warning", timeout=KEYS_PROBLEMS_SECONDS, markup=False)
        if self.lessons is not None and self.program is None and self.error is None:
            from .screens.lesson_picker import LessonPickerScreen

            self.push_screen(LessonPickerScreen(self.lessons.entries))
            return
        if self.error is not None or self.program is None:
            self.push_screen(ErrorScreen("hlodbg could not open the program", self.error.render() if self.error else "no program given"))
            return
        self._open()

    def _open(self) -> None:
        from .controller import SessionController
        from .screens.main import MainScreen

        program, options = self.program, self.options
        try:  # the graph pane builds the graph on its own thread
            controller = SessionController(lambda: _open_target(program, options))
        except HlodbgError as e:
            self.error = e  # the exit status says so too (hlodbg open exits 2)
            self.push_screen(ErrorScreen(f"hlodbg could not start a run of {program.name}", e.render()))
            return
        self.controller = controller  # what reading the saved breakpoints said: with the first state shown
        screen = MainScreen(program, None, controller, self.break_on, explain=self.explain, files=self.files)
        self.push_screen(screen)
        if self.lesson is not None:
            self.call_after_refresh(self._add_lesson_panel, screen)

    def _add_lesson_panel(self, screen) -> None:
        from hlodbg.engine.ir.phrases import language_from_environment

        from .widgets.lesson_panel import LessonPanel

        screen.mount(LessonPanel(self.lesson, lang=language_from_environment(), id="lesson"))

    def on_lesson_panel_asked(self, event) -> None:
        """The lesson panel shows a question about an op: select that op in the debugger."""
        select = getattr(self.screen, "select_op", None)
        if select is not None and event.op is not None:
            select(event.op)

    def open_lesson(self, name: str) -> None:
        """Open lesson `name` from the picker in this session (the menu loads its program)."""
        try:
            program, lesson, args = self.lessons.open(name)
        except HlodbgError as e:
            self.push_screen(ErrorScreen(f"hlodbg could not open the lesson {name}", e.render()))
            return
        self.program, self.lesson, self.explain = program, lesson, True
        self.options["args"] = args
        self.sub_title = f"lesson {name} — {program.name}"
        self._open()

    def action_toggle_explain(self) -> None:
        """Show or hide the explain pane of the debugger."""
        from .screens.main import MainScreen

        screen = self.screen
        if isinstance(screen, MainScreen):
            screen.action_toggle_explain()

    def on_unmount(self) -> None:
        if self.controller is not None:
            self.controller.close()


def _open_target(program, options: dict):
    """The program's debugging target (hlodbg.Program.debug builds every one). The arguments may
    come as a function that waits for them (files still being read while the app started)."""
    args = options["args"]
    if callable(args):
        args = args()
    return program.debug(args, seed=options["seed"], entry=options["entry"], memory=options["memory"],
                         persist=options["persist"], replicas=options["replicas"], partitions=options["partitions"],
                         focus=options["device"], backend=options["backend"])


__all__ = ["HlodbgApp"]
