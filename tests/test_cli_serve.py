"""`hlodbg serve` and launch options: what each browser session runs, the URLs the browser is
given, and breakpoints given at launch that are not saved with the program."""
from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from hlodbg.cli import _parser, main
from hlodbg.ui_entry import build_app, server_options

NAN_PROGRAM = Path(__file__).parent / "data" / "nan_in_loop.mlir"


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("HLODBG_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def _options(*argv: str, address=lambda: "192.168.7.20"):
    args = _parser().parse_args(["serve", str(NAN_PROGRAM), *argv])
    return server_options(args, address)


def test_serve_on_localhost_hands_out_its_own_url():
    options, lines = _options("--port", "8766")
    assert options["host"] == "localhost" and options["port"] == 8766
    assert options["public_url"] == "http://localhost:8766"
    assert lines == ["serving hlodbg on http://localhost:8766 (Ctrl-C stops)"]


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_serve_on_all_addresses_hands_out_an_address_others_can_reach(host):
    options, lines = _options("--host", host, "--port", "8766")
    assert options["host"] == host and options["public_url"] == "http://192.168.7.20:8766"
    text = "\n".join(lines)
    assert "0.0.0.0" not in options["public_url"] and "http://192.168.7.20:8766" in text and "--public-url" in text


def test_serve_public_url_is_what_the_browser_is_given():
    options, lines = _options("--host", "0.0.0.0", "--public-url", "https://dbg.example.org/")
    assert options["public_url"] == "https://dbg.example.org"
    assert lines == ["serving hlodbg on https://dbg.example.org (Ctrl-C stops)"]


def test_serve_rejects_a_public_url_that_is_not_one(capsys):
    assert main(["serve", str(NAN_PROGRAM), "--public-url", "dbg.example.org:8000"]) == 2
    err = capsys.readouterr().err
    assert "error: --public-url must start with http:// or https://" in err and "Traceback" not in err


def test_serve_builds_the_server_with_the_public_url(monkeypatch, capsys):
    import hlodbg.serve as serve_module
    import hlodbg.serve_zygote as zygote_module

    built = {}

    class FakeServer:
        def __init__(self, **options):
            built.update(options)
            self.link = f"{options['public_url']}/?token={options['token']}"

        def serve(self):
            built["served"] = True

    class FakeZygote:
        @classmethod
        def start(cls, warm, run):
            return cls()

        def close(self):
            built["zygote closed"] = True

    monkeypatch.setattr(serve_module, "WorkshopServer", FakeServer)
    monkeypatch.setattr(zygote_module, "Zygote", FakeZygote)
    assert main(["serve", str(NAN_PROGRAM), "--host", "0.0.0.0", "--port", "8766", "--public-url", "http://10.1.2.3:8766"]) == 0
    assert built["served"] and built["public_url"] == "http://10.1.2.3:8766" and built["host"] == "0.0.0.0"
    assert built["zygote closed"] and built["max_sessions"] == 40 and len(built["token"]) >= 32
    assert f"http://10.1.2.3:8766/?token={built['token']}" in capsys.readouterr().err


def test_every_browser_session_keeps_its_own_breakpoints():
    options, _ = _options("--break-on", "nan")
    command = shlex.split(options["command"])
    assert command[-1] == "--no-save" and command[command.index("--break-on") + 1] == "nan"
    # the command each browser session runs builds an app that neither loads nor saves breakpoints
    app = build_app(_parser().parse_args(command[command.index("open"):]))
    assert app.error is None and app.options["persist"] is False


def test_this_machines_address_is_a_name_or_address_others_can_use():
    from hlodbg.ui_entry import machine_address

    address = machine_address()
    assert address and address not in ("0.0.0.0", "::") and " " not in address


@pytest.mark.parametrize("argv, message", [
    (["--target", "tpu-v9"], "unknown target 'tpu-v9'"),
    (["--layout", "arg0=1,0"], "--layout applies to TPU targets"),
    (["--target", "tpu", "--layout", "arg0"], "expected NAME=SPEC"),
    (["--target", "tpu", "--break-on", "diverge", "--against", "gpu"], "unknown target 'gpu'"),
    (["--target", "tpu", "--against", "cpu"], "add --break-on diverge"),
])
def test_serve_refuses_bad_target_options_before_serving(monkeypatch, capsys, argv, message):
    import hlodbg.serve as serve_module

    monkeypatch.setattr(serve_module, "WorkshopServer", lambda **options: pytest.fail("served"))
    assert main(["serve", str(NAN_PROGRAM), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_serve_refuses_a_program_it_cannot_open_before_serving(monkeypatch, capsys, tmp_path):
    import hlodbg.serve as serve_module

    monkeypatch.setattr(serve_module, "WorkshopServer", lambda **options: pytest.fail("served"))
    assert main(["serve", str(tmp_path / "missing.mlir")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_serve_refuses_no_sessions_at_all(monkeypatch, capsys):
    import hlodbg.serve as serve_module

    monkeypatch.setattr(serve_module, "WorkshopServer", lambda **options: pytest.fail("served"))
    assert main(["serve", str(NAN_PROGRAM), "--max-sessions", "0"]) == 2
    assert "--max-sessions must be at least 1" in capsys.readouterr().err


def test_served_sessions_share_half_the_memory_unless_told():
    command = shlex.split(_options("--max-sessions", "8")[0]["command"])
    budget = command[command.index("--memory") + 1]
    assert budget.endswith("M") and 64 <= int(budget[:-1]) <= (os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")) // 16 // 2**20 + 1
    command = shlex.split(_options("--memory", "2G")[0]["command"])
    assert command[command.index("--memory") + 1] == "2G"
