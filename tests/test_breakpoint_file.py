"""The file a program's breakpoints are saved in: every field checked (a file of another form is
said and left as it is), entries that no longer resolve kept and shown, and two sessions on one
program saving at once without losing each other's breakpoints or failing."""
from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.debug.breakpoint_file import Contents, merged

DATA = Path(__file__).parent / "data"
NAN_PROGRAM = DATA / "nan_in_loop.mlir"
HUNDREDS = np.full(4, 100, np.float32)


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    """Breakpoint files go to a per-test directory, never the user's."""
    monkeypatch.setenv("HLODBG_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def session():
    return hlodbg.load(NAN_PROGRAM).session([HUNDREDS])


def saved_file(state_dir) -> Path:
    first = session()
    first.break_at("nan")
    first.close()
    (path,) = state_dir.rglob("*.json")
    return path


def entry(spec: str, enabled: bool = True) -> dict:
    return {"spec": spec, "condition": None, "ignore": 0, "enabled": enabled}


@pytest.mark.parametrize("content,said", [
    (b'{"version": 1, "breakpoints": 5, "watches": []}', '"breakpoints" must be a list, not the number 5'),
    (b'{"version": 1, "breakpoints": [], "watches": null}', '"watches" must be a list, not null'),
    (b'{"version": 1, "breakpoints": [{"spec": "nan", "ignore": 1e400}]}',
     "not JSON (the number 1e400 is out of range)"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply to be a breakpoint file"),
    (b'{"version": 1, "breakpoints": ["\xff"]}', "not UTF-8 text (byte 0xff at offset 32)"),
    (b'{"version": 7, "breakpoints": []}', '"version" is 7; this hlodbg reads version 1'),
    (b'[1, 2]', 'expected an object with "breakpoints" and "watches", not a list'),
    (b'{"breakpoints": [NaN]}', "not JSON (NaN is not a number JSON has)"),
], ids=["breakpoints-5", "watches-null", "ignore-1e400", "nested-100k", "not-utf8", "version-7", "a-list", "NaN"])
def test_a_file_of_another_form_is_said_and_left_as_it_is(state_dir, content, said):
    path = saved_file(state_dir)
    path.write_bytes(content)
    again = session()
    assert again.breakpoints.breakpoints == []  # the defaults: no breakpoints
    assert again.breakpoints.messages == [f"ignored {path}: not a breakpoint file ({said}); it is left as it is"]
    again.break_at("inf")
    again.watch("%a.sum()")
    again.close()
    assert path.read_bytes() == content


def test_a_breakpoint_file_that_is_a_fifo_is_said_not_waited_on(state_dir):
    import os

    path = saved_file(state_dir)
    path.unlink()
    os.mkfifo(path)
    again = session()
    assert again.breakpoints.messages == [f"ignored {path}: not a breakpoint file (not a regular file); it is left as it is"]
    again.close()


@pytest.mark.parametrize("bad,said", [
    ({"spec": "nan", "ignore": -1}, '"ignore" must be a whole number of hits from 0 to 9223372036854775807, not -1'),
    ({"spec": "nan", "ignore": 2.5}, '"ignore" must be a whole number of hits from 0 to 9223372036854775807, not 2.5'),
    ({"spec": "nan", "ignore": 10**30}, '"ignore" must be a whole number of hits from 0 to 9223372036854775807, not 1000000000000000000000000000000'),
    ({"spec": "nan", "enabled": "yes"}, '"enabled" must be true or false, not "yes"'),
    ({"spec": ["nan"]}, '"spec" must be the place, such as "%12" or "nan", not a list'),
    ({"spec": "nan", "condition": 5}, '"condition" must be an expression or null, not 5'),
    ("nan", 'expected an object with "spec", not a string'),
])
def test_an_entry_of_the_wrong_form_is_said_and_kept_as_it_was(state_dir, bad, said):
    path = saved_file(state_dir)
    path.write_text(json.dumps({"version": 1, "breakpoints": [bad, entry("inf")], "watches": [None, "%a.sum()"]}))
    again = session()
    assert [bp.spec for bp in again.breakpoints.breakpoints] == ["inf"] and again.breakpoints.watches == ["%a.sum()"]
    assert again.breakpoints.messages == [f"kept an unreadable entry of {path} as it is: {said}",
                                          f"kept an unreadable watch of {path} as it is: a watch is an expression in a string"]
    again.break_at("nan")
    again.close()
    data = json.loads(path.read_text())
    assert data["breakpoints"] == [bad, entry("inf"), entry("nan")] and data["watches"] == [None, "%a.sum()"]


def test_a_saved_breakpoint_that_no_longer_resolves_is_kept_shown_and_deletable(state_dir):
    path = saved_file(state_dir)
    gone = {"spec": "@update:%renamed", "condition": "iteration == 2", "ignore": 0, "enabled": True}
    path.write_text(json.dumps({"version": 1, "breakpoints": [gone, entry("nan")], "watches": []}))
    again = session()
    (unresolved,) = again.breakpoints.unresolved
    assert unresolved.describe() == "#1 @update:%renamed if iteration == 2 [unresolved: no value %renamed in @update]"
    assert [bp.describe() for bp in again.breakpoints.breakpoints] == ["#2 nan"]
    again.break_at("inf")  # a save keeps it
    assert json.loads(path.read_text())["breakpoints"] == [gone, entry("nan"), entry("inf")]
    with pytest.raises(hlodbg.HlodbgError, match="#1 .* points nowhere in this program"):
        again.breakpoints.enable(1, False)
    again.breakpoints.remove(1)
    again.close()
    assert json.loads(path.read_text())["breakpoints"] == [entry("nan"), entry("inf")]


def test_a_breakpoint_read_in_another_spelling_is_kept_as_written_and_deleted_for_good(state_dir):
    path = saved_file(state_dir)
    written = [{"spec": " while if iteration == 1"}, {"spec": "nan", "ignore": 0}, {"spec": "nan", "ignore": 0}]
    path.write_text(json.dumps({"version": 1, "breakpoints": written}))
    again = session()
    assert [bp.describe() for bp in again.breakpoints.breakpoints] == ["#1 while if iteration == 1", "#2 nan"]
    again.break_at("inf")
    assert json.loads(path.read_text())["breakpoints"] == [*written, entry("inf")]  # as written, duplicates too
    again.breakpoints.remove(1)
    again.breakpoints.remove(2)
    again.close()
    assert json.loads(path.read_text())["breakpoints"] == [entry("inf")]
    assert again.breakpoints.messages == []  # no other session was here


def test_two_sessions_on_one_program_keep_each_others_breakpoints(state_dir):
    path = saved_file(state_dir)  # holds nan
    first, second = session(), session()
    first.break_at("inf")
    second.break_at("while")
    second.watch("%a.sum()")
    first.breakpoints.remove(1)  # nan, which both had: removed by the first, not put back by the second
    second.break_at("func.call")
    assert second.breakpoints.messages == [f"another session changed {path} too: its breakpoints and watches stay in the "
                                           "file beside this session's"]
    first.breakpoints.enable(2, False)  # inf, disabled
    first.close()
    second.close()
    data = json.loads(path.read_text())
    assert data["breakpoints"] == [entry("while"), entry("func.call"), entry("inf", enabled=False)]
    assert data["watches"] == ["%a.sum()"]
    third = session()
    assert sorted(bp.describe() for bp in third.breakpoints.breakpoints) == ["#1 while", "#2 func.call", "#3 inf [disabled]"]
    third.close()


def test_saves_of_two_sessions_at_once_never_fail_or_lose_a_watch(state_dir):
    path = saved_file(state_dir)
    sessions = [session(), session()]
    start = threading.Barrier(2)

    def watch_many(s, name):
        start.wait()
        for k in range(40):
            s.watch(f"%{name}.sum() + {k}")

    threads = [threading.Thread(target=watch_many, args=(s, name)) for s, name in zip(sessions, "ab")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for s in sessions:
        assert [m for m in s.breakpoints.messages if "could not save" in m] == []
        s.close()
    watches = json.loads(path.read_text())["watches"]
    assert sorted(watches) == sorted(f"%{name}.sum() + {k}" for name in "ab" for k in range(40))
    assert [p.name for p in path.parent.iterdir() if p.suffix == ".tmp"] == []


def test_a_save_that_fails_is_said_and_the_next_change_saves_again(state_dir):
    path = saved_file(state_dir)
    again = session()
    folder = path.parent
    moved = folder.with_name("moved")
    folder.rename(moved)
    folder.write_text("not a folder")  # where the breakpoints go is now a file
    again.break_at("inf")
    assert again.breakpoints.messages == [f"could not save breakpoints to {path}: File exists"]
    folder.unlink()
    moved.rename(folder)
    again.break_at("while")
    again.close()
    assert json.loads(path.read_text())["breakpoints"] == [entry("nan"), entry("inf"), entry("while")]


def test_merging_applies_only_this_sessions_changes():
    before = Contents([1, 2], ["w"])
    now = Contents([2, 3], ["w", "v"])  # another session removed 1 and added 3 and v
    ours = Contents([2, 4], [])  # this one removed 1 and w, added 4
    assert merged(now, before, ours) == Contents([2, 3, 4], ["v"])


async def test_the_debugger_shows_unresolved_breakpoints_and_says_a_failed_save(state_dir):
    from hlodbg.ui.app import HlodbgApp

    from .pilot import console_text, press, settle

    path = saved_file(state_dir)
    path.write_text(json.dumps({"version": 1, "breakpoints": [{"spec": "%renamed"}, entry("nan")], "watches": []}))
    app = HlodbgApp(hlodbg.load(NAN_PROGRAM), args=[HUNDREDS], memory="1G")
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        panel = str(app.screen.query_one("#breakpoints").render())
        assert "○ #1 %renamed [unresolved: no value %renamed in any function]" in panel and "● #2 nan" in panel
        (notice,) = [n for n in app._notifications if n.title == "saved breakpoints"]
        assert notice.message == ("saved breakpoint '%renamed' no longer applies: no value %renamed in any function "
                                  "(kept in the file as #1, unresolved)")
        folder = path.parent
        folder.rename(folder.with_name("moved"))
        folder.write_text("not a folder")
        await press(app, pilot, "b")  # a breakpoint on the op in view: its save fails
        said = f"could not save breakpoints to {path}: File exists"
        assert [n.message for n in app._notifications if n.title == "saved breakpoints"][-1] == said
        assert said in console_text(app.screen).replace("\n", "")
