"""Capturing a compiled run: instrument, compile with XLA, run, write the capture directory.

`capture(text, filename, arguments, directory, ...)` is the whole of `hlodbg capture`: the
program instrumented (transform.py) is compiled by XLA for the module's grid
(`mhlo.num_replicas` x `mhlo.num_partitions` devices) through engine/machine/xla/runtime.py, run
with the arguments, and every captured instance written with CaptureWriter (decode.py names
them). On many hosts (`jax.distributed` joined first: `runtime.initialize_distributed`) every
host runs this with the same program and arguments: each puts only its own shards, writes its
own devices' values and index, host 0 also the manifest, program and inputs, and after a barrier
host 0 merges the indexes.

What is exact: the values are XLA's own for the compiled program, fusions included, but of the
program with extra outputs: XLA may fuse (and so round) a little differently than without them,
which is why `--values` can ask for fewer.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...ir.errors import HlodbgError
from ...machine.memory import format_bytes
from ...machine.xla import runtime as xla
from ..capture_format import CaptureError, CaptureWriter, earlier_capture, merge
from .decode import Decoder, Pieces
from .transform import DEFAULT_LOOP_CAPACITY, Instrumented, Selection, instrument

GLOBAL_VALUES = "device 0 holds the global array"


@dataclass
class CaptureSummary:
    directory: Path
    values: int  # instances this host wrote
    bytes: int
    devices: int
    hosts: int
    seconds: dict[str, float]
    manifest: dict = field(default_factory=dict)
    host: int = 0  # this process, on many hosts
    unmerged: str = ""  # why host 0 could not merge the hosts' indexes (no shared file system)

    def memory_text(self) -> str:
        """XLA's memory per device: the captured values are outputs (loop buffers included), so
        what capturing costs is in the outputs more than in temp memory."""
        memory = self.manifest.get("xla_memory", {})
        text = (f"XLA memory per device: temp {format_bytes(memory.get('temp', 0))}, "
                f"outputs {format_bytes(memory.get('output', 0))}")
        baseline = self.manifest.get("baseline", {}).get("xla_memory")
        if baseline:
            text += (f" (uncaptured: temp {format_bytes(baseline.get('temp', 0))}, "
                     f"outputs {format_bytes(baseline.get('output', 0))})")
        return text

    def describe(self) -> str:
        s = self.seconds
        hosts = f" on {self.hosts} hosts" if self.hosts > 1 else ""
        who = f"host {self.host} " if self.hosts > 1 else ""
        return (f"{who}captured {self.values:,} value instance(s) ({format_bytes(self.bytes)}) from {self.devices} "
                f"{self.manifest.get('platform', '')} device(s){hosts} into {self.directory}: "
                f"instrumenting {s['instrument']:.2f}s, XLA compile {s['compile']:.2f}s, run {s['run']:.2f}s, "
                f"write {s['write']:.2f}s; {self.memory_text()}"
                + (f"; {len(self.manifest['left_out'])} note(s) on what was left out in capture.json" if self.manifest.get("left_out") else "")
                + (f". Not merged yet ({self.unmerged}): copy every host's values/h<k>-*.npy and index-host<k>.csv "
                   f"into {self.directory}, then run hlodbg capture --merge {self.directory}" if self.unmerged else ""))


def capture(text: str, filename: str, arguments: Sequence[np.ndarray], directory: str | Path, *,
            platform: str = "cpu", entry: str = "main", selected: Selection = None, values: str = "all",
            loop_capacity: int = DEFAULT_LOOP_CAPACITY, baseline: bool = False) -> CaptureSummary:
    """Capture one run of the program `text` with `arguments` into `directory` (see the module
    docstring); `selected`/`values` say which values (None/"all": every value but constants)."""
    rt = xla.runtime(platform)
    host = rt.process_index if rt.process_count > 1 else None
    earlier = earlier_capture(directory, host)
    if earlier:  # never mix two runs' files (a reader could not tell them apart)
        raise CaptureError(f"{directory} already holds a capture ({', '.join(earlier)}); remove it or capture into "
                           f"another directory")
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    instrumented = instrument(text, filename, entry, selected, loop_capacity)
    seconds["instrument"] = time.perf_counter() - start
    module = instrumented.module
    replicas, partitions = module.num_replicas, module.num_partitions
    if replicas > 1 and partitions > 1:
        raise HlodbgError(f"{filename}: a capture runs either replicas or SPMD partitions; this module asks for "
                          f"{replicas} replicas x {partitions} partitions")
    devices = rt.require(replicas * partitions)
    start = time.perf_counter()
    executable = rt.compile(entry_named_main(instrumented.text, module, instrumented.entry), devices, replicas, partitions, what=f"{filename} (instrumented for capture)")
    seconds["compile"] = time.perf_counter() - start

    start = time.perf_counter()
    try:
        decoders = _run(rt, executable, instrumented, arguments, devices, replicas, partitions)
    except xla.XlaError as error:
        if "RESOURCE_EXHAUSTED" not in error.message:
            raise
        raise xla.XlaError(f"{error.message.rstrip('.')}; every captured value is an output XLA keeps in memory "
                           f"(inside a while loop, --loop-capacity iterations of it): capture fewer values with "
                           f"--values, or lower --loop-capacity") from None
    seconds["run"] = time.perf_counter() - start

    writer = CaptureWriter(directory, host=host)
    try:
        start = time.perf_counter()
        written = 0
        left_out = list(instrumented.left_out)
        for decoder in decoders:
            for instance in decoder.instances():
                output = instance.output
                writer.add(output.op, output.result, instance.context, instance.device, instance.array)
                written += instance.array.nbytes
            left_out.extend(note for note in decoder.left_out() if note not in left_out)
        seconds["write"] = time.perf_counter() - start
        if selected is not None:
            left_out.insert(0, f"values --values {values!r} did not select")
        manifest = _manifest(rt, filename, instrumented, devices, replicas, partitions, values, loop_capacity,
                             left_out, executable, seconds)
        if baseline:
            manifest["baseline"] = _baseline(rt, entry_named_main(text, instrumented.original, instrumented.entry), filename,
                                             devices, replicas, partitions)
        first = host in (None, 0)
        writer.finish(manifest if first else None, text if first else None, list(arguments) if first else None)
    except BaseException:  # interrupted (Ctrl-C) or failed: leave no half-written capture behind
        writer.discard()
        raise
    unmerged = ""
    if host is not None:
        rt.barrier("hlodbg capture written")
        if first:
            try:
                merge(directory)
            except CaptureError as error:  # the other hosts wrote to their own disks
                unmerged = str(error)
    return CaptureSummary(Path(directory), len(writer.rows), written, len(devices), rt.process_count, seconds, manifest,
                          host or 0, unmerged)


def entry_named_main(text: str, module, entry: str) -> str:
    """`text` with its entry function called `main`, the function XLA runs (an HLO module printed
    as StableHLO calls its entry `main.4`); the capture's names stay the program's own."""
    if entry == "main":
        return text
    if "main" in module.functions:
        raise HlodbgError(f"XLA runs a module's @main; this module has one besides @{entry}, so capture @main "
                          f"(or move @{entry} into a module of its own)")
    if module.function(entry).visibility.strip('"') != "public":
        raise HlodbgError(f"@{entry} is private: XLA runs a module's public @main; capture that instead")
    reference = re.compile(r'@(?:"' + re.escape(entry) + r'"|' + re.escape(entry) + r")(?![\w$.])")
    return reference.sub("@main", text)


def _run(rt, executable, instrumented: Instrumented, arguments, devices, replicas: int, partitions: int) -> list[Decoder]:
    """Run the instrumented program; a Decoder per group of devices whose results are read alike."""
    position = {d.id: i for i, d in enumerate(devices)}
    local = {position[d.id] for d in rt.local_devices if d.id in position}
    outputs = instrumented.outputs
    extra = slice(instrumented.first_output, None)
    if replicas > 1:
        per_device = executable.run_spmd([list(arguments)] * len(devices))
        _wait([r for results in per_device for r in results], executable)
        decoders = []
        for d, results in enumerate(per_device):
            pieces = [_pieces(rt, r, position) for r in results[extra]]
            decoders.append(Decoder(outputs, pieces, [d], local))
        return decoders
    if partitions > 1:
        shapes = [t.shape for t in instrumented.module.function(instrumented.entry).function_type.results]
        results = executable.run_global(executable.put_global(list(arguments)), shapes)
    else:
        results = executable.run(list(arguments))
    _wait(results, executable)
    pieces = [_pieces(rt, r, position) for r in results[extra]]
    return [Decoder(outputs, pieces, [0], local)]


def _pieces(rt, array: Any, position: dict[int, int]) -> Pieces:
    return Pieces([(position[device.id], index, shard) for device, index, shard in rt.local_shards(array)], rt.to_host)


def _wait(results: Sequence[Any], executable) -> None:
    """Wait for the run; XLA reports what failed while running (out of memory) only now."""
    try:
        for result in results:
            ready = getattr(result, "block_until_ready", None)
            if ready is not None:
                ready()
    except Exception as error:  # noqa: BLE001 - JaxRuntimeError and friends
        lines = (str(error).strip() or type(error).__name__).splitlines()
        raise xla.XlaError(f"XLA ({executable.runtime.platform}) failed running {executable.what}: {lines[0]}") from None


def _manifest(rt, filename: str, instrumented: Instrumented, devices, replicas: int, partitions: int, values: str,
              loop_capacity: int, left_out: list[str], executable, seconds: dict) -> dict:
    manifest = {
        "program": Path(filename).name,
        "entry": instrumented.entry,
        "target": f"xla:{rt.platform}",
        "platform": rt.platform,
        "jax_version": rt.jax.__version__,
        "devices": [{"id": i, "kind": rt.device_kind(d), "host": int(getattr(d, "process_index", 0))}
                    for i, d in enumerate(devices)],
        "grid": [replicas, partitions],
        "hosts": rt.process_count,
        "values": values,
        "loop_capacity": loop_capacity,
        "outputs": len(instrumented.outputs),
        "left_out": left_out,
        "xla_memory": memory_figures(executable),
        "seconds": {k: round(v, 4) for k, v in seconds.items()},
    }
    if partitions > 1:
        manifest["global_values"] = GLOBAL_VALUES
    return manifest


def _baseline(rt, text: str, filename: str, devices, replicas: int, partitions: int) -> dict:
    """The program compiled as it is, for comparison: compile seconds and XLA's memory."""
    start = time.perf_counter()
    executable = rt.compile(text, devices, replicas, partitions, what=filename)
    return {"compile_seconds": round(time.perf_counter() - start, 4), "xla_memory": memory_figures(executable)}


def compiled_memory(text: str, module, filename: str, platform: str = "cpu", entry: str = "main") -> dict:
    """XLA's figures for the program compiled as it is, on `platform`'s devices: compile seconds and
    the memory (bytes per device) of XLA's buffer assignment for the fused program — what
    `jax.jit(f).lower(x).compile().memory_analysis()` reports, and what decides whether it fits."""
    rt = xla.runtime(platform)
    replicas, partitions = module.num_replicas, module.num_partitions
    devices = rt.require(replicas * partitions)
    return _baseline(rt, entry_named_main(text, module, entry), filename, devices, replicas, partitions)


def memory_figures(executable) -> dict:
    """XLA's compiled memory statistics in bytes (per device)."""
    stats = executable.memory()
    names = {"argument": "argument_size_in_bytes", "output": "output_size_in_bytes", "temp": "temp_size_in_bytes",
             "alias": "alias_size_in_bytes", "generated_code": "generated_code_size_in_bytes"}
    return {key: int(getattr(stats, attr)) for key, attr in names.items() if hasattr(stats, attr)}
