"""`hlodbg dap`: the Debug Adapter Protocol server, driven by a small client over pipes
(tests/dap_client.py), over a process's stdio and over a socket. The npm DebugClient of VS Code
drives it in tests/test_dap_vscode_client.py."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hlodbg.dap.marks import combined_condition, hit_condition
from hlodbg.engine.debug.breakpoints import BreakpointError

from .dap_client import WAIT_SECONDS, DapClient
from .helpers import PROGRAMS, require_shared

DATA = Path(__file__).parent / "data"
NAN_PROGRAM = DATA / "nan_in_loop.mlir"
HLO_PROGRAM = DATA / "hlo_printer" / "control_flow.hlo"
HLODBG = [sys.executable, "-m", "hlodbg"]

# A program whose ops carry the JAX source lines they were lowered from.
LOCATED = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = stablehlo.sqrt %x : tensor<4xf32> loc(#loc2)
  %z = stablehlo.add %y, %y : tensor<4xf32> loc(#loc3)
  return %z : tensor<4xf32>
}
#loc1 = loc("model.py":12:8)
#loc2 = loc("jit(f)/sqrt"(#loc1))
#loc3 = loc("model.py":13:4)
"""


@pytest.fixture
def client():
    c = DapClient.in_process()
    yield c
    c.close()


@pytest.fixture
def nan_arguments(tmp_path) -> str:
    """nan_in_loop's argument: 100 goes 10, 3.16, 1.78, then sqrt of a negative (iteration 3)."""
    path = tmp_path / "x.npz"
    np.savez(path, x=np.full(4, 100, np.float32))
    return str(path)


def _mlp() -> tuple[str, str]:
    require_shared()
    return str(PROGRAMS / "mlp.mlir"), str(PROGRAMS / "mlp.inputs.npz")


def _line_of(path: str, text: str) -> int:
    return next(n for n, line in enumerate(Path(path).read_text().splitlines(), 1) if text in line)


def test_line_breakpoint_variables_step_and_step_back(client):
    program, inputs = _mlp()
    add = _line_of(program, "stablehlo.add")
    stop = client.launch(program=program, args=inputs, breakpoints={program: [{"line": add}]})
    placed = client.answers[program][0]
    assert placed["verified"] and placed["line"] == add and "%3 = stablehlo.add" in placed["message"]
    assert stop["body"]["reason"] == "breakpoint" and stop["body"]["hitBreakpointIds"] == [placed["id"]]
    top = client.top()
    assert (top["line"], top["source"]["path"]) == (add, os.path.abspath(program))
    operands = client.scope(top["id"], "Operands")
    assert [v["evaluateName"] for v in operands] == ["%0", "%2"]
    expected = np.load(inputs)
    x, w = expected["arg0"], expected["arg1"]
    assert operands[0]["value"].startswith("8x4xf32 min ") and operands[0]["indexedVariables"] == 8
    rows = client.request("variables", variablesReference=operands[0]["variablesReference"], start=2, count=1)["variables"]
    assert rows[0]["name"] == "[2]" and rows[0]["evaluateName"] == "%0[2]"
    elements = client.request("variables", variablesReference=rows[0]["variablesReference"])["variables"]
    assert [float(e["value"]) for e in elements] == pytest.approx((x @ w)[2].tolist(), rel=1e-5)
    assert client.request("evaluate", expression="%0.shape", frameId=top["id"])["result"] == "(8, 4)"
    hover = client.request("evaluate", expression="%0", frameId=top["id"], context="hover")
    assert hover["result"] == operands[0]["value"] and hover["variablesReference"] > 0

    assert client.stop("next")["body"]["reason"] == "step"
    assert client.top()["line"] == add + 1
    assert "%3 = stablehlo.add" in [s["name"] for s in client.request("scopes", frameId=client.top()["id"])["scopes"]][-2]
    assert client.stop("stepIn")["body"]["reason"] == "step"
    frames = client.request("stackTrace", threadId=1)["stackFrames"]
    assert [f["name"].split(":")[0] for f in frames] == ["@relu", "@main"] and frames[1]["line"] == add + 1
    assert client.stop("stepBack")["body"]["reason"] == "step"
    assert client.top()["line"] == add + 1
    assert client.stop("stepBack")["body"]["reason"] == "breakpoint"  # back onto the breakpoint's op: met again
    assert client.top()["line"] == add

    end = client.stop("continue")
    assert end["body"]["reason"] == "end"
    output = "".join(e["body"]["output"] for e in client.events if e["event"] == "output")
    assert "finished" in output and "result 0: 8x4xf32" in output
    results = client.scope(client.top()["id"], "Program results")
    assert results[0]["value"].startswith("8x4xf32")
    back = client.stop("reverseContinue")
    assert back["body"]["reason"] == "breakpoint" and client.top()["line"] == add


def test_nan_exception_breakpoint(client, nan_arguments):
    stop = client.launch(program=str(NAN_PROGRAM), args=nan_arguments, breakpoints={"exception": ["nan"]})
    body = stop["body"]
    assert body["reason"] == "exception" and "%s = stablehlo.sqrt" in body["description"]
    info = client.request("exceptionInfo", threadId=1)
    assert info["exceptionId"] == "nan" and info["details"]["typeName"] == "%s = stablehlo.sqrt"
    frames = client.request("stackTrace", threadId=1)["stackFrames"]
    assert [f["name"].split(":")[0] for f in frames] == ["@update", "@main while.body #3", "@main"]
    made = client.scope(frames[0]["id"], "Just computed")
    assert made[0]["name"] == "%s" and "4 NaN" in made[0]["value"]
    assert client.request("evaluate", expression="isnan(%s).sum()", frameId=frames[0]["id"])["result"] == "4"
    assert client.stop("stepBack")["body"]["reason"] == "step"
    assert client.top()["name"] == "@update: %s = stablehlo.sqrt"
    assert "not stopped at a NaN" in client.failure("exceptionInfo", {"threadId": 1})


def test_conditional_and_hit_count_breakpoints(client):
    program = str(NAN_PROGRAM)
    body_line = _line_of(program, "%next = stablehlo.add")
    stop = client.launch(program=program, breakpoints={program: [{"line": body_line, "hitCondition": "== 3"}]})
    assert stop["body"]["reason"] == "breakpoint"
    assert client.request("evaluate", expression="%i", frameId=client.top()["id"])["result"] == "2"
    answer = client.request("setBreakpoints", source={"path": program},
                            breakpoints=[{"line": body_line, "condition": "%i == 4"}])["breakpoints"][0]
    assert answer["verified"] and "if %i == 4" in answer["message"]
    assert client.stop("continue")["body"]["reason"] == "breakpoint"
    assert client.request("evaluate", expression="%i")["result"] == "4"
    assert client.request("evaluate", expression="iteration")["result"] == "4"


def test_function_breakpoint_by_op_kind_on_hlo_file(client):
    stop = client.launch(program=str(HLO_PROGRAM), breakpoints={"function": [{"name": "negate"}, {"name": "no_such_op"}]})
    negate, unknown = client.answers["function"]
    assert negate["verified"] and not unknown["verified"] and "no_such_op" in unknown["message"]
    assert stop["body"]["reason"] == "function breakpoint"
    top = client.top()
    assert top["source"]["path"].endswith("control_flow.hlo")
    assert "negate" in Path(HLO_PROGRAM).read_text().splitlines()[top["line"] - 1]
    # A line breakpoint on an HLO instruction is verified to it.
    line = _line_of(str(HLO_PROGRAM), "%grown = f32[4]{0} add")
    placed = client.request("setBreakpoints", source={"path": str(HLO_PROGRAM)}, breakpoints=[{"line": line}])
    assert placed["breakpoints"][0]["line"] == line
    assert line in [b["line"] for b in client.request("breakpointLocations", source={"path": str(HLO_PROGRAM)},
                                                      line=1, endLine=200)["breakpoints"]]


def test_jax_source_line_is_a_frame_of_its_own(client, tmp_path):
    program = tmp_path / "located.mlir"
    program.write_text(LOCATED)
    assert client.launch(program=str(program), stop_on_entry=True)["body"]["reason"] == "entry"
    frames = client.request("stackTrace", threadId=1)["stackFrames"]
    assert frames[0]["line"] == 2 and frames[0]["source"]["path"] == str(program)
    assert frames[1]["name"] == "model.py:12 (jit(f)/sqrt)" and frames[1]["line"] == 12
    # Read from the program's folder; not there: shown de-emphasised. Once it is, shown plainly.
    assert frames[1]["source"]["path"] == str(tmp_path / "model.py")
    assert frames[1]["source"]["presentationHint"] == "deemphasize"
    (tmp_path / "model.py").write_text("import jax\n" * 20)
    shown = client.request("stackTrace", threadId=1)["stackFrames"][1]["source"]
    assert shown == {"name": "model.py", "path": str(tmp_path / "model.py")}
    # The source frame shows the same op's values.
    assert client.request("scopes", frameId=frames[1]["id"])["scopes"][0]["name"] == "Operands of %y = stablehlo.sqrt"
    assert "model.py" not in json.dumps(client.answers)


def test_devices_of_a_grid_are_threads(client):
    require_shared()
    program = str(PROGRAMS / "sharded_mlp_4x2.mlir")
    stop = client.launch(program=program, args=str(PROGRAMS / "sharded_mlp_4x2.inputs.npz"),
                         breakpoints={"function": [{"name": "all_reduce"}]})
    assert stop["body"]["reason"] == "function breakpoint"
    threads = client.request("threads")["threads"]
    assert [t["id"] for t in threads] == list(range(1, 9))
    assert threads[5]["name"] == "device 5 (replica 0, partition 5)"
    assert client.top(6)["name"].endswith("stablehlo.all_reduce")  # every device stopped there (lock-step)
    assert client.stop("next", threadId=3)["body"]["threadId"] == 3


def test_bad_requests_get_error_responses(client, tmp_path):
    assert "not been launched" in client.failure("stackTrace", {"threadId": 1})
    assert "does not support the request 'frobnicate'" in client.failure("frobnicate", {})
    assert "unknown attribute 'replica'" in client.failure("launch", {"program": str(NAN_PROGRAM), "replica": 2})
    assert "'program'" in client.failure("launch", {})
    assert "'replicas'" in client.failure("launch", {"program": str(NAN_PROGRAM), "replicas": "two"})
    missing = client.failure("launch", {"program": str(tmp_path / "absent.mlir")})
    assert "absent.mlir" in missing
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main( {\n")
    assert "bad.mlir:1:" in client.failure("launch", {"program": str(bad)})
    client.send_raw(b"Content-Length: 5\r\n\r\nhello")  # not JSON: said, skipped, the server goes on
    client.launch(program=str(NAN_PROGRAM), stop_on_entry=True)
    assert "not JSON" in "".join(e["body"].get("output", "") for e in client.events if e["event"] == "output")
    assert "launched its program already" in client.failure("launch", {"program": str(NAN_PROGRAM)})
    assert "no thread 9" in client.failure("stackTrace", {"threadId": 9})
    assert "no variables reference 99" in client.failure("variables", {"variablesReference": 99})
    assert "invalid syntax" in client.failure("evaluate", {"expression": "%i +"})
    assert "not computed" in client.failure("evaluate", {"expression": "%nope"})
    assert "must be an object" in client.failure("evaluate", ["x"])
    answers = client.request("setBreakpoints", source={"path": str(NAN_PROGRAM)},
                             breakpoints=[{"line": 999}, {"line": 5, "hitCondition": "often"},
                                          {"line": 5, "condition": "%i +"}])["breakpoints"]
    assert [a["verified"] for a in answers] == [False, False, False]
    assert "no op on line 999" in answers[0]["message"] and "hit count 'often'" in answers[1]["message"]
    other = client.request("setBreakpoints", source={"path": str(tmp_path / "other.mlir")}, breakpoints=[{"line": 3}])
    assert "not the program being debugged" in other["breakpoints"][0]["message"]
    assert "no exception filter 'oops'" in client.request("setExceptionBreakpoints", filters=["oops"])["breakpoints"][0]["message"]
    assert client.request("threads")["threads"] == [{"id": 1, "name": "device 0 (cpu)"}]  # still serving


def test_references_end_when_the_program_moves(client):
    client.launch(program=str(NAN_PROGRAM), stop_on_entry=True)
    frame = client.top()["id"]
    client.stop("next")
    assert "references last until the program moves" in client.failure("scopes", {"frameId": frame + 100})


def test_pause_and_disconnect_while_idle(client):
    client.launch(program=str(NAN_PROGRAM), stop_on_entry=True)
    assert client.request("pause", threadId=1) == {}
    client.close()
    client.server.join(WAIT_SECONDS)
    assert not client.server.is_alive()


def test_hit_counts_as_conditions():
    assert hit_condition("5") == "hit >= 5"
    assert hit_condition(" == 2") == "hit == 2"
    assert hit_condition("%3") == "hit % 3 == 0"
    assert combined_condition("%i > 1", "> 2") == "(%i > 1) and (hit > 2)"
    assert combined_condition(None, "") is None
    with pytest.raises(BreakpointError, match="% 0"):
        hit_condition("% 0")


def test_stdio_server(tmp_path):
    """`hlodbg dap` over its stdin/stdout, with nothing else written to stdout."""
    server = subprocess.Popen([*HLODBG, "dap"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    client = DapClient(server.stdout, server.stdin)
    try:
        stop = client.launch(program=str(NAN_PROGRAM), breakpoints={str(NAN_PROGRAM): [{"line": 17}]})
        assert stop["body"]["reason"] == "breakpoint" and client.top()["line"] == 17
        client.close()
        assert server.wait(WAIT_SECONDS) == 0
    finally:
        server.kill()


def test_port_server():
    server = subprocess.Popen([*HLODBG, "dap", "--port", "0"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        line = server.stderr.readline()
        assert line.startswith("hlodbg dap: listening on 127.0.0.1:"), line
        with socket.create_connection(("127.0.0.1", int(line.rsplit(":", 1)[1]))) as connection:
            client = DapClient(connection.makefile("rb"), connection.makefile("wb"))
            assert client.launch(program=str(NAN_PROGRAM), stop_on_entry=True)["body"]["reason"] == "entry"
            client.close()
    finally:
        server.kill()
        server.wait(WAIT_SECONDS)


def test_port_refused_with_a_message():
    result = subprocess.run([*HLODBG, "dap", "--port", "70000"], capture_output=True, text=True, timeout=WAIT_SECONDS)
    assert result.returncode == 2 and "a port is a number from 0 to 65535" in result.stderr


def test_pause_stops_an_endless_run_and_restart_goes_back(client):
    client.launch(program=str(DATA / "endless.mlir"), stop_on_entry=True)
    seen = len(client.events)
    client.request("continue", threadId=1)
    # The pause goes to the reader thread while the run goes on in the session thread; it is
    # answered, and the run stops, whenever it arrives (before the run starts, it stops at once).
    assert client.request("pause", threadId=1) == {}
    assert client.event("stopped", seen)["body"]["reason"] == "pause"
    assert client.top()["name"].startswith("@main while.")
    assert client.stop("restart")["body"]["description"] == "at the first op"
    assert client.top()["name"] == "@main: %r = stablehlo.while"


def test_stop_at_end_false_ends_the_session_with_the_run(client):
    client.request("initialize")
    client.request("launch", program=str(NAN_PROGRAM), stopAtEnd=False)
    assert client.stop("configurationDone")["event"] == "terminated"
    assert [e["event"] for e in client.events][-2:] == ["exited", "terminated"]


def test_break_on_stays_when_the_editor_sets_its_function_breakpoints(client, nan_arguments):
    client.request("initialize")
    client.request("launch", program=str(NAN_PROGRAM), args=nan_arguments, breakOn="nan")
    assert client.request("setFunctionBreakpoints", breakpoints=[]) == {"breakpoints": []}  # as VS Code sends
    stop = client.stop("configurationDone")["body"]
    assert stop["reason"] == "exception" and "NaN made by %s = stablehlo.sqrt" in stop["description"]
    assert client.scope(client.top()["id"], "Just computed")[0]["name"] == "%s"
    other = DapClient.in_process()
    assert "breakOn: cannot read 'no_such_op'" in other.failure("launch", {"program": str(NAN_PROGRAM),
                                                                           "breakOn": "no_such_op"})
    other.request("launch", program=str(NAN_PROGRAM))  # a launch that failed can be made again
    other.close()


def test_vscode_extension_declares_only_attributes_the_server_takes():
    from hlodbg.dap.launch import launch_attributes

    manifest = json.loads((Path(__file__).parents[1] / "editors" / "vscode" / "package.json").read_text())
    declared = manifest["contributes"]["debuggers"][0]["configurationAttributes"]["launch"]["properties"]
    assert set(declared) <= set(launch_attributes())


@pytest.mark.parametrize("name", ["mlp", "gpt_tiny", "cnn", "rnn_scan", "sort_topk", "embed_update", "mixed_bf16",
                                  "sharded_mlp_4x2"])
def test_shared_programs_run_to_the_end_and_back(client, name):
    """Each shared program under the editor: its inputs, a step into the first op, to the end (the
    results as XLA computed them), and back to the start."""
    require_shared()
    program = PROGRAMS / f"{name}.mlir"
    stop = client.launch(program=str(program), args=str(PROGRAMS / f"{name}.inputs.npz"), stop_on_entry=True)
    assert stop["body"]["reason"] == "entry"
    assert client.stop("stepIn")["body"]["reason"] == "step"
    assert client.top()["source"]["path"] == str(program)
    assert client.stop("continue")["body"]["reason"] == "end"
    results = client.scope(client.top()["id"], "Program results")
    expected = np.load(PROGRAMS / f"{name}.expected.npz")
    assert len(results) == len(expected.files)
    for k, variable in enumerate(results):
        want = expected[f"result{k}"]
        shown = "x".join(map(str, want.shape))
        assert variable["value"].startswith(shown) or (want.size <= 16 and "[" in variable["value"]), variable
    back = client.stop("reverseContinue")["body"]
    assert (back["reason"], back["description"]) == ("step", "at the first op")
    assert len(client.request("stackTrace", threadId=1)["stackFrames"]) == 1  # @main, before its first op


ODD_ARGUMENTS = [{}, {"threadId": "x"}, {"threadId": 0}, {"frameId": -1}, {"frameId": "a"}, {"variablesReference": "a"},
                 {"startFrame": "a", "threadId": 1}, {"levels": -3, "threadId": 1}, {"source": 5}, {"source": {"path": 5}},
                 {"breakpoints": "x"}, {"breakpoints": [5, {"line": "a"}, {"line": 3, "condition": 5}]},
                 {"filters": [5, ["nan"]]}, {"filters": ["nan"], "filterOptions": [{"filterId": "nan", "condition": 5}]},
                 {"line": "a"}, {"line": 3, "endLine": "x"}, {"expression": 5}, {"expression": "%i", "frameId": 99999},
                 {"variablesReference": 1, "start": "a"}, {"source": {"sourceReference": "a"}},
                 {"breakpoints": [{"name": 5}, {"name": "add", "condition": 3}]}]
LOOKING = ["stackTrace", "scopes", "variables", "evaluate", "setBreakpoints", "setFunctionBreakpoints",
           "setExceptionBreakpoints", "breakpointLocations", "exceptionInfo", "source", "threads"]


def test_arguments_of_the_wrong_type_get_error_responses_not_internal_errors(client):
    client.launch(program=str(NAN_PROGRAM), stop_on_entry=True)
    for command in LOOKING:
        for arguments in ODD_ARGUMENTS:
            response = client.response(client.send(command, arguments))
            assert "internal error" not in response.get("message", ""), (command, arguments, response["message"])
    assert client.request("threads")["threads"] == [{"id": 1, "name": "device 0 (cpu)"}]


def test_disassembly_shows_what_each_hlo_instruction_became(client):
    client.launch(program=str(HLO_PROGRAM), breakpoints={"function": [{"name": "negate"}]})
    top = client.top()
    listing = client.request("disassemble", memoryReference=top["instructionPointerReference"], instructionOffset=-1,
                             instructionCount=3)["instructions"]
    here = listing[1]
    assert here["address"] == top["instructionPointerReference"]
    assert here["instruction"].split(" = ")[1].startswith("stablehlo.negate")  # the HLO `negate`, as StableHLO
    assert (here["line"], here["location"]["path"]) == (top["line"], top["source"]["path"])
    before = client.request("disassemble", memoryReference="0x0", instructionOffset=-2, instructionCount=3)["instructions"]
    assert [i.get("presentationHint") for i in before] == ["invalid", "invalid", None]
    assert "not an address" in client.failure("disassemble", {"memoryReference": "here", "instructionCount": 3})
    assert "instructionCount" in client.failure("disassemble", {"memoryReference": "0x0", "instructionCount": 10**9})


def test_the_server_ends_when_the_editor_goes_away_mid_run():
    server = subprocess.Popen([*HLODBG, "dap"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        client = DapClient(server.stdout, server.stdin)
        client.request("initialize")
        client.request("launch", program=str(DATA / "endless.mlir"))
        client.request("configurationDone")  # runs on for ever
        server.stdin.close()  # the editor is gone, without a disconnect
        assert server.wait(WAIT_SECONDS) == 0
    finally:
        server.kill()
