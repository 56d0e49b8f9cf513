"""What an editor waits for under `hlodbg dap` (issue 37): from starting the server to the first
stop (a process's start, the launch: parse, arguments, target), one step, one step back, and a
continue to the end of the run, on the shared programs (../shared/programs, with their inputs).

The server runs as the editor starts it (`hlodbg dap` on stdio, a fresh process per program); the
figures are wall-clock medians of --repeats sessions.
Run: python benchmarks/dap.py [--repeats 3] [--only mlp,gpt_tiny]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from hlodbg.dap.wire import Wire

PROGRAMS = Path(__file__).resolve().parents[1].parent / "shared" / "programs"


class Client:
    def __init__(self) -> None:
        self.server = subprocess.Popen([sys.executable, "-m", "hlodbg", "dap"], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.wire = Wire(self.server.stdout, self.server.stdin)
        self.seq = 0

    def request(self, command: str, **arguments) -> dict:
        self.seq += 1
        self.wire.send({"seq": self.seq, "type": "request", "command": command, "arguments": arguments})
        while True:
            message = self.wire.receive()
            if message is None:
                raise SystemExit(f"the server ended during {command}")
            if message["type"] == "response" and message["request_seq"] == self.seq:
                if not message["success"]:
                    raise SystemExit(f"{command} failed: {message['message']}")
                return message

    def until_stopped(self) -> dict:
        while True:
            message = self.wire.receive()
            if message is None:
                raise SystemExit("the server ended before stopping")
            if message["type"] == "event" and message["event"] in ("stopped", "terminated"):
                return message

    def move(self, command: str) -> float:
        start = time.perf_counter()
        self.request(command, threadId=1)
        self.until_stopped()
        return time.perf_counter() - start

    def close(self) -> None:
        self.request("disconnect")
        self.server.wait()


def session(name: str) -> dict[str, float]:
    start = time.perf_counter()
    client = Client()
    client.request("initialize", adapterID="hlodbg")
    client.request("launch", program=str(PROGRAMS / f"{name}.mlir"), args=str(PROGRAMS / f"{name}.inputs.npz"),
                   stopOnEntry=True)
    client.request("configurationDone")
    client.until_stopped()
    figures = {"first stop": time.perf_counter() - start}
    client.request("stackTrace", threadId=1)
    figures["step"] = client.move("next")
    figures["step back"] = client.move("stepBack")
    figures["continue to the end"] = client.move("continue")
    figures["reverse continue"] = client.move("reverseContinue")
    client.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", help="comma-separated program names (default: every shared program)")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    if not PROGRAMS.is_dir():
        raise SystemExit(f"{PROGRAMS} is not present")
    names = options.only.split(",") if options.only else sorted(p.stem for p in PROGRAMS.glob("*.mlir"))
    table = {}
    for name in names:
        runs = [session(name) for _ in range(options.repeats)]
        table[name] = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    if options.json:
        print(json.dumps(table, indent=2))
        return
    keys = list(next(iter(table.values())))
    print(f"{'program':<18}" + "".join(f"{key:>22}" for key in keys))
    for name, figures in table.items():
        print(f"{name:<18}" + "".join(f"{figures[key] * 1000:>20.0f}ms" for key in keys))


if __name__ == "__main__":
    main()
