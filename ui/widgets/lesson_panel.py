"""The lesson panel: walks a lesson's questions beside the debugger (`hlodbg lesson NAME`).

One question at a time: its text, an input for the answer (Enter checks it with the lesson's
checker, engine/debug/lessons.py), and words typed instead of an answer — `hint` (the next hint),
`answer` (hlodbg's own answer), `next`, `back`. A right answer moves on; progress counts the
questions answered right. When the question names an op, the debugger selects it.
"""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static

from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.engine.ir.phrases import Phrase

QUESTION_OF = Phrase("Question {number} of {total}")
PROGRESS = Phrase("{done} of {total} answered right")
DONE = Phrase("Lesson done: {done} of {total} answered right.")
HOW_TO = Phrase("Press A, type an answer and press Enter (Escape: back to the debugger's keys). Or type: hint, answer, next, back.")

COMMANDS = {"hint": "hint", "?": "hint", "answer": "answer", "next": "next", "skip": "next", "back": "back", "prev": "back"}


class LessonPanel(Vertical):
    """The questions of one lesson run (engine.debug.lessons.LessonRun)."""

    DEFAULT_CSS = """
    LessonPanel { dock: right; width: 46; height: 100%; border: round $accent; padding: 0 1; background: $surface; }
    LessonPanel > Static { height: auto; margin-bottom: 1; }
    LessonPanel > #lesson-feedback { min-height: 2; }
    """

    class Asked(Message):
        """A question is shown; the screen may select the op it is about."""

        def __init__(self, op) -> None:
            super().__init__()
            self.op = op

    def __init__(self, lesson_run, lang: str = "en", **kwargs):
        super().__init__(**kwargs)
        self.lesson_run = lesson_run
        self.lang = lang
        self.current = 0
        self.right: set[int] = set()
        self.hints_shown: dict[int, int] = {}

    @property
    def questions(self):
        return self.lesson_run.lesson.questions

    @property
    def question(self):
        return self.questions[self.current]

    def compose(self) -> ComposeResult:
        yield Static(Text(self.lesson_run.lesson.about, style="dim"), id="lesson-about")
        yield Static(id="lesson-question")
        yield Input(placeholder="answer", id="lesson-answer")
        yield Static(id="lesson-feedback")
        yield Static(id="lesson-progress")
        yield Static(Text(HOW_TO.say(self.lang), style="dim"), id="lesson-help")

    def on_mount(self) -> None:
        self.border_title = self.lesson_run.lesson.title
        self.show_question()

    def show_question(self, feedback: str = "") -> None:
        q = self.question
        text = Text()
        text.append(QUESTION_OF.say(self.lang, number=self.current + 1, total=len(self.questions)) + "\n", style="bold")
        text.append(q.ask)
        self.query_one("#lesson-question", Static).update(text)
        self.query_one("#lesson-feedback", Static).update(feedback)
        self._show_progress()
        self.post_message(self.Asked(self.lesson_run.op_of(q)))

    def _show_progress(self) -> None:
        done, total = len(self.right), len(self.questions)
        phrase = DONE if done == total else PROGRESS
        self.query_one("#lesson-progress", Static).update(Text(phrase.say(self.lang, done=done, total=total), style="cyan"))

    def focus_answer(self) -> None:
        self.screen.set_focus(self.query_one("#lesson-answer", Input))

    def on_key(self, event) -> None:
        """Escape leaves the answer box: the debugger's single keys (n, s, c...) work again."""
        if event.key == "escape" and isinstance(self.screen.focused, Input) and self.screen.focused.id == "lesson-answer":
            self.screen.set_focus(None)
            event.stop()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        typed = event.value.strip()
        event.input.value = ""
        if not typed:
            return
        self.respond(typed)

    def respond(self, typed: str) -> str:
        """Act on what was typed (an answer or a word); returns the feedback shown."""
        command = COMMANDS.get(typed.lower())
        q = self.question
        if command == "hint":
            shown = self.hints_shown.get(q.number, 0)
            self.hints_shown[q.number] = shown + 1
            return self._feedback(self.lesson_run.hint(q, shown, self.lang), "yellow")
        if command == "answer":
            try:
                return self._feedback(self.lesson_run.reveal(q, self.lang), "magenta")
            except HlodbgError as e:
                return self._feedback(e.message, "red")
        if command in ("next", "back"):
            self.current = (self.current + (1 if command == "next" else -1)) % len(self.questions)
            self.show_question()
            return ""
        try:
            verdict = self.lesson_run.check(q, typed, self.lang)
        except HlodbgError as e:  # hlodbg cannot answer this one (say, no provenance for its op)
            return self._feedback(e.message, "red")
        if not verdict.correct:
            return self._feedback(verdict.message, "red")
        self.right.add(q.number)
        if len(self.right) < len(self.questions):
            self.current = (self.current + 1) % len(self.questions)
            while self.question.number in self.right:
                self.current = (self.current + 1) % len(self.questions)
        self.show_question(feedback=Text(verdict.message, style="green"))
        return verdict.message

    def _feedback(self, message: str, style: str) -> str:
        self.query_one("#lesson-feedback", Static).update(Text(message, style=style))
        return message
