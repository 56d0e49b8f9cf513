"""The command line's commands are declared once (ui/commands.py COMMANDS): the dispatcher and the
help read the same declarations, so a command cannot be runnable and missing from the help, nor
listed and unknown."""
from __future__ import annotations

from hlodbg.ui.commands import COMMAND_NAMED, COMMANDS, HELP, QUIT_WORDS, Command, CommandResult, CommandRunner, help_text


def test_every_word_of_the_help_runs_its_command_and_every_command_is_in_the_help():
    words = [word for command in COMMANDS for word in (command.name, *command.aliases)]
    assert len(words) == len(set(words)), "two commands share a name or an abbreviation"
    for command in COMMANDS:
        assert command.usage.split()[0] == command.name, command  # the help shows it by its name
        assert command.usage in HELP, command.name
        assert command.joins or command.help.splitlines()[0] in HELP, command.name
        for alias in command.aliases:
            assert COMMAND_NAMED[alias] is command
    assert set(QUIT_WORDS) == {"quit", "q"}


def test_a_declared_command_is_dispatched_and_listed_from_its_one_declaration():
    asked = []
    toy = Command("toy", "toy N", "a toy command", lambda runner, rest: asked.append(rest) or CommandResult(f"toy {rest}"),
                  ("t",))
    text = help_text((*COMMANDS, toy))
    assert text.splitlines()[-1] == "  toy N [t]                  a toy command"
    COMMAND_NAMED.update(toy=toy, t=toy)
    try:
        runner = CommandRunner.__new__(CommandRunner)  # dispatching reads no session
        assert runner.run("t 3").output == "toy 3" and runner.run("toy  4 ").output == "toy 4"
    finally:
        del COMMAND_NAMED["toy"], COMMAND_NAMED["t"]
    assert asked == ["3", "4"]
    assert CommandRunner.__new__(CommandRunner).run("toy").error


def test_joined_commands_share_a_help_row_with_their_abbreviations():
    row = next(line for line in HELP.splitlines() if line.lstrip().startswith("step |"))
    assert row.startswith("  step | next | finish | continue | back | restart [s n f c]")
    assert "the same moves as the keys" in row
