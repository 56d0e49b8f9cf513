"""`hlodbg lesson [NAME]`: the lessons (one small annotated program per op family, with questions).

`hlodbg lesson` lists them; `hlodbg lesson gather` opens the debugger on one with the explain pane
and the lesson panel; `--questions` prints a lesson's questions with hlodbg's own answers (for a
teacher preparing a workshop); `--pick` opens the lesson picker, which `hlodbg serve --lessons`
runs in every browser tab.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from hlodbg.engine import HlodbgError


def add_options(lesson) -> None:
    lesson.description = ("Lessons: one small annotated program per op family, with questions that hlodbg checks. "
                          "Without NAME: the list.")
    lesson.set_defaults(handler=cmd_lesson)
    lesson.add_argument("name", nargs="?", metavar="NAME", help="the lesson to open (see the list)")
    lesson.add_argument("--questions", action="store_true", help="print the lesson's questions with hlodbg's answers instead of opening it")
    lesson.add_argument("--pick", action="store_true", help="open the lesson picker (what serve --lessons runs per browser tab)")
    lesson.add_argument("--folder", metavar="DIR", help="read lessons from DIR instead of hlodbg's own")


class LessonNotFound(HlodbgError):
    """A lesson name that is not in the folder."""


def catalog(folder: Optional[str] = None):
    from hlodbg.engine.debug.lessons import lesson_catalog
    from hlodbg.samples import lessons_folder

    return lesson_catalog(Path(folder) if folder else lessons_folder())


def find_lesson(name: str, folder: Optional[str] = None):
    lessons = catalog(folder)
    for lesson in lessons:
        if lesson.name == name:
            return lesson
    raise LessonNotFound(f"no lesson '{name}'; the lessons are: {', '.join(l.name for l in lessons)}")


def open_lesson(name: str, folder: Optional[str] = None):
    """(Program, LessonRun, arguments) of lesson `name`: its program loaded and verified, run once
    on its inputs by the checker; the arguments as Program.debug takes them ({position: array},
    and {ProcessId: {position: array}} for a device's own)."""
    from hlodbg.engine.debug.lessons import LessonRun
    from hlodbg.program import load

    lesson = find_lesson(name, folder)
    program = load(str(lesson.path))
    return program, LessonRun(lesson, program.module), {**lesson.inputs, **lesson.device_inputs}


@dataclass
class LessonMenu:
    """What the app's lesson picker shows and how it opens a lesson."""

    folder: Optional[str] = None

    @property
    def entries(self) -> list[tuple[str, str, str]]:
        return [(l.name, l.family, l.title) for l in catalog(self.folder)]

    def open(self, name: str):
        return open_lesson(name, self.folder)


def list_lessons(folder: Optional[str] = None) -> str:
    lessons = catalog(folder)
    width = max((len(l.name) for l in lessons), default=4)
    family_width = max((len(l.family) for l in lessons), default=6)
    lines = [f"{l.name:<{width}}  {l.family:<{family_width}}  {l.title}" for l in lessons]
    lines.append(f"{len(lessons)} lessons; open one with 'hlodbg lesson NAME'")
    return "\n".join(lines) + "\n"


def questions_text(name: str, folder: Optional[str] = None) -> str:
    _, run, _ = open_lesson(name, folder)
    lines = [f"{run.lesson.title} ({run.lesson.path.name})", ""]
    for q in run.lesson.questions:
        lines.append(f"{q.number}. [{q.kind}] {q.ask}")
        try:
            lines.append(f"   hlodbg: {run.show(q)}")
        except HlodbgError as e:
            lines.append(f"   hlodbg cannot answer it: {e.message}")
    return "\n".join(lines) + "\n"


def cmd_lesson(args) -> int:
    from hlodbg.ui_entry import run_app

    if args.pick:
        from hlodbg.ui.app import HlodbgApp

        return run_app(HlodbgApp(lessons=LessonMenu(args.folder)))
    if args.name is None:
        sys.stdout.write(list_lessons(args.folder))
        return 0
    if args.questions:
        sys.stdout.write(questions_text(args.name, args.folder))
        return 0
    from hlodbg.ui.app import HlodbgApp

    try:
        program, run, inputs = open_lesson(args.name, args.folder)
    except HlodbgError as e:
        return run_app(HlodbgApp(error=e))
    return run_app(HlodbgApp(program, args=inputs, explain=True, lesson=run))
