"""What a device holds, op by op: live buffers, their logical and physical bytes, the peak and the
op where it happens, checked against the device's memory (a TPU generation's HBM, or this
machine's RAM on the CPU). Static: from the types and the backend's layouts, never from values.

The model is hlodbg's own way of running a program — op by op, every result in a buffer of its own
(no fusion), from the liveness of run/liveness.py:

- the live bytes at an op are those of every value live there: what is still needed from before,
  the op's operands and its results (an op reads and writes at once);
- the entry function's arguments stay live for the whole program, as XLA keeps parameters it is
  not told to donate (its memory_analysis() counts them apart as argument_size_in_bytes); a
  donated argument (JAX's `tf.aliasing_output` / `jax.buffer_donor`) dies at its last use;
- a call adds, at its own position, the callee's peak beyond the results it hands back (the
  callee's arguments are the caller's operands: no bytes of their own); so does every op naming a
  function to run (`callee_attr`);
- region arguments of ops whose regions alias their operands (while, if, case: `aliasing_regions`)
  take no bytes: they are the owner's operands or the loop-carried buffers; a while's result takes
  over the buffer of its operand when that operand dies at the while and the loop's regions do not
  read it themselves (XLA's in-place loop state; otherwise the state is a copy);
- combiner bodies applied element by element (reduce, sort, scatter, map: `expandable_body`) hold
  scalars in registers, not buffers: no bytes;
- tuples and tokens take no bytes (a tuple keeps its elements alive instead); tensors of dynamic
  shape cannot be counted and are reported as such;
- only buffers in the device's main memory (memory space 0: HBM on a TPU) count towards the peak:
  a buffer an HLO module's layout puts elsewhere (`S(1)`, a TPU's VMEM) is listed with its space
  and summed apart (`FunctionMemory.other_bytes_at`).

So the figures are an upper bound on what XLA needs after fusion (fused intermediates never reach
HBM), and exact for what each buffer takes in its layout.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np

from ..ir.core import Block, Function, Module, Operation, Value, symbol_name
from ..ir.errors import ExecutionError
from ..ir.opset import callee_attribute, has_aliasing_regions, has_expandable_body
from ..ir.types import TensorType
from ..ir.walks import callees_first
from ..machine.backend import Backend
from ..machine.xla_shapes import layout_text_of
from .liveness import FunctionLiveness, Liveness, liveness_of, reads_built_tuple

# Buffer.layout_source of a layout an HLO module gives a value on a machine that does not use
# layouts (the CPU keeps every array row-major and unpadded): shown, never counted.
MODULE_LAYOUT = "module"

# What a buffer is to the run, as XLA's memory_analysis() and XProf split the bytes: the entry's
# parameters, the values it returns, and everything else (a callee's peak counts as temporaries).
ARGUMENTS, TEMPORARIES, OUTPUTS = "arguments", "temporaries", "outputs"
KINDS = (ARGUMENTS, TEMPORARIES, OUTPUTS)


@dataclass(frozen=True)
class Buffer:
    """One live buffer: the value it holds and what it takes on the device."""

    value: Value
    logical_bytes: int
    physical_bytes: int
    layout: Optional[str] = None  # the backend's layout string (TPU), None on the CPU
    layout_source: Optional[str] = None  # "given", "option" or "default"
    function: str = ""  # the function the value belongs to (a callee's, at a peak inside a call)
    memory_space: int = 0  # XLA's S(n): 0 is the device's main memory, the only one the peak counts
    layout_origin: Optional[str] = None  # layout_source as reports say it: "given by the HLO module"

    @property
    def in_main_memory(self) -> bool:
        return self.memory_space == 0

    @property
    def name(self) -> str:
        return self.value.name

    @property
    def type(self) -> str:
        return str(self.value.type)

    @property
    def waste(self) -> float:
        """physical / logical bytes: how much the layout's padding multiplies the buffer."""
        return self.physical_bytes / self.logical_bytes if self.logical_bytes else 1.0


class FunctionMemory:
    """The live bytes of one function at each of its positions (run/liveness.py), on one backend."""

    def __init__(self, liveness: FunctionLiveness, backend: Backend, is_entry: bool,
                 callee: Callable[[Operation], Optional["FunctionMemory"]]):
        self.liveness = liveness
        self.function = liveness.function
        self.backend = backend
        self.is_entry = is_entry
        count = len(liveness.values)
        self.logical = np.zeros(count, np.int64)
        self.physical = np.zeros(count, np.int64)
        self.space = np.zeros(count, np.int64)  # the memory space of each buffer (0: main memory)
        self.start = liveness.start.copy()
        self.end = liveness.end.copy()
        self.dynamic: list[Value] = []  # tensors whose size the types do not fix
        last = liveness.size - 1
        owning = {block: _owns_buffers(block) for block in set(liveness.block_of)}
        for i, (value, block) in enumerate(zip(liveness.values, liveness.block_of)):
            if not owning[block] or (value.is_block_argument and not self._argument_owns_buffer(block)):
                continue
            if reads_built_tuple(value):
                continue  # the element's buffer, kept live by liveness as long as this read is
            if isinstance(value.type, TensorType) and not value.type.is_static:
                self.dynamic.append(value)
                continue
            self.logical[i], self.physical[i] = backend.buffer_bytes(value)
            self.space[i] = backend.memory_space(value)
            if is_entry and value.owner is self.function.body and not _donated(self.function, value.index):
                self.end[i] = last  # parameters stay for the whole program unless donated
        self.main = np.where(self.space == 0, self.physical, 0)  # what counts against the device's memory
        for position, op in enumerate(liveness.ops):
            if op.regions and has_aliasing_regions(op.name):
                self._hand_over_carried(op, position)
        self.extra = np.zeros(liveness.size, np.int64)  # a callee's peak beyond the results it returns
        self.callees: dict[int, FunctionMemory] = {}
        for position, op in enumerate(liveness.ops):
            inner = callee(op)
            if inner is None:
                continue
            self.extra[position] = max(0, inner.peak_bytes - self.result_bytes(position))
            self.callees[position] = inner
        self.timeline = self._sum(self.main) + self.extra
        self.logical_timeline = self._sum(np.where(self.space == 0, self.logical, 0))
        self.peak_position = int(np.argmax(self.timeline)) if liveness.size else 0
        self.peak_bytes: int = int(self.timeline[self.peak_position]) if liveness.size else 0

    def _argument_owns_buffer(self, block: Block) -> bool:
        """The entry function's arguments are buffers; a callee's are its caller's operands, and the
        region arguments of an op with aliasing regions are its operands or carried values."""
        if block is self.function.body:
            return self.is_entry
        return not _aliases_operands(block)

    def _hand_over_carried(self, op: Operation, position: int) -> None:
        """A while's result i takes over operand i's buffer when the operand dies at the while and
        its regions do not read it themselves (a captured value must stay as it was)."""
        if not any(len(r.blocks[0].arguments) == len(op.operands) == len(op.results) for r in op.regions):
            return
        index = self.liveness.index
        first = self.liveness.first[position]
        seen: set[Value] = set()
        for operand in op.operands:
            i = index.get(operand)
            if i is None or operand in seen or self.end[i] != position or self.start[i] >= position:
                continue
            if any(first <= self.liveness.position[user] < position for user, _ in operand.uses):
                continue
            seen.add(operand)
            self.end[i] = position - 1

    def _sum(self, sizes: np.ndarray) -> np.ndarray:
        steps = np.zeros(self.liveness.size + 1, np.int64)
        np.add.at(steps, self.start, sizes)
        np.add.at(steps, self.end + 1, -sizes)
        return np.cumsum(steps[:-1])

    # -- queries (cheap: no liveness is recomputed) ----------------------------------------------
    def position_of(self, op: Operation) -> int:
        return self.liveness.position[op]

    def bytes_at(self, position: int) -> int:
        """Physical bytes live at `position`, a callee's peak included."""
        return int(self.timeline[position])

    def buffers_at(self, position: int) -> list[Buffer]:
        """The buffers live at `position`, largest first (not those inside a callee)."""
        live = np.flatnonzero((self.start <= position) & (self.end >= position) & (self.physical > 0))
        buffers = [self._buffer(int(i)) for i in live]
        buffers.sort(key=lambda b: (-b.physical_bytes, self.liveness.index[b.value]))
        return buffers

    def other_bytes_at(self, position: int) -> dict[int, int]:
        """memory space -> bytes live at `position` in buffers outside the main memory (not this
        function's callees')."""
        live = (self.start <= position) & (self.end >= position) & (self.space != 0)
        return {int(space): int(self.physical[live & (self.space == space)].sum()) for space in np.unique(self.space[live])}

    def _buffer(self, i: int) -> Buffer:
        value = self.liveness.values[i]
        layout = source = origin = None
        assigned = self.backend.layout_for(value) if isinstance(value.type, TensorType) else None
        if assigned is not None:
            layout, source = str(assigned.layout), assigned.source
            origin = getattr(assigned, "origin", source)  # a stand-in machine's layout may not say
        elif isinstance(value.type, TensorType):  # a machine without layouts: the module's, for reference
            layout = layout_text_of(value)
            if layout is not None:
                source, origin = MODULE_LAYOUT, f"the module's, unused on {self.backend.describe()}"
        return Buffer(value, int(self.logical[i]), int(self.physical[i]), layout, source, self.function.sym_name,
                      int(self.space[i]), origin)

    def result_bytes(self, position: int) -> int:
        index = self.liveness.index
        return sum(int(self.main[index[r]]) for r in self.liveness.ops[position].results)

    def kind_of(self, value: Value) -> str:
        """ARGUMENTS, OUTPUTS or TEMPORARIES: a parameter of the entry function, a buffer it
        returns (a returned parameter stays an argument), or anything else."""
        return self._kind(value, self._returned() if self.is_entry else set())

    def _kind(self, value: Value, returned: set[Value]) -> str:
        if not self.is_entry:
            return TEMPORARIES
        if value.is_block_argument and value.owner is self.function.body:
            return ARGUMENTS
        return OUTPUTS if value in returned else TEMPORARIES

    def kind_timelines(self, logical: bool = False) -> dict[str, np.ndarray]:
        """KINDS -> the physical bytes of that kind live at every position (main memory only);
        they add up to `timeline`, a callee's peak counted as temporaries. `logical`: the bytes of
        data instead, without the layouts' padding (a callee's peak still counts whole)."""
        returned = self._returned() if self.is_entry else set()
        kinds = [self._kind(value, returned) for value in self.liveness.values]
        sizes = np.where(self.space == 0, self.logical, 0) if logical else self.main
        total = self.logical_timeline + self.extra if logical else self.timeline
        arguments = self._sum(np.where([k == ARGUMENTS for k in kinds], sizes, 0))
        outputs = self._sum(np.where([k == OUTPUTS for k in kinds], sizes, 0))
        return {ARGUMENTS: arguments, TEMPORARIES: total - arguments - outputs, OUTPUTS: outputs}

    def _returned(self) -> set[Value]:
        terminator = self.function.body.terminator
        return set() if terminator is None else {_buffer_owner(v) for v in terminator.operands}

    @property
    def argument_bytes(self) -> int:
        return sum(int(self.main[self.liveness.index[v]]) for v in self.function.arguments)

    @property
    def output_bytes(self) -> int:
        return sum(int(self.main[self.liveness.index[v]]) for v in self._returned() if v in self.liveness.index)


def _buffer_owner(value: Value) -> Value:
    """The value whose buffer `value` is: an element read out of a tuple the program built is the
    element itself (HLO's get-tuple-element of a tuple instruction takes no buffer of its own)."""
    while reads_built_tuple(value):
        read = value.defining_op
        value = read.operands[0].defining_op.operands[int(read.attributes["index"])]
    return value


# Argument attributes by which JAX donates an argument's buffer to the program (donate_argnums):
# XLA may reuse it once the argument is last read, as it reports in memory_analysis().alias_size_in_bytes.
DONATION_ATTRIBUTES = ("tf.aliasing_output", "jax.buffer_donor")


def _donated(function: Function, index: int) -> bool:
    attributes = function.arg_attrs(index)
    return any(name in attributes for name in DONATION_ATTRIBUTES)


def _owns_buffers(block: Block) -> bool:
    """Whether values of `block` take buffers: not inside a combiner applied element by element."""
    op = block.parent.parent if block.parent is not None else None
    while op is not None and not isinstance(op, Function):
        if has_expandable_body(op.name):
            return False
        op = op.parent_op
    return True


def _aliases_operands(block: Block) -> bool:
    owner = block.parent.parent if block.parent is not None else None
    return owner is not None and has_aliasing_regions(owner.name)


@dataclass
class Site:
    """A moment of a run on one device: the op running in each function frame, from the entry down
    (a call in the entry function, the op running inside its callee, and so on)."""

    frames: list[tuple[FunctionMemory, int]]  # (function, position)

    @property
    def op(self) -> Operation:
        memory, position = self.frames[-1]
        return memory.liveness.ops[position]

    @property
    def function(self) -> Function:
        return self.frames[-1][0].function

    @property
    def bytes(self) -> int:
        """Physical bytes live: each caller's at its call (without the results the call has not made
        yet), plus the innermost function's at its op (its own callee's peak included)."""
        total = 0
        for memory, position in self.frames[:-1]:
            total += memory.bytes_at(position) - int(memory.extra[position]) - memory.result_bytes(position)
        memory, position = self.frames[-1]
        return total + memory.bytes_at(position)

    def other_bytes(self) -> dict[int, int]:
        """memory space -> bytes live here outside the device's main memory (every frame's)."""
        total: dict[int, int] = {}
        for memory, position in self.frames:
            for space, count in memory.other_bytes_at(position).items():
                total[space] = total.get(space, 0) + count
        return total

    def buffers(self) -> list[Buffer]:
        """Every buffer live here: those of each frame on the way down (a call's results do not
        exist yet while its callee runs), largest first."""
        out: list[Buffer] = []
        for depth, (memory, position) in enumerate(self.frames):
            inside = depth + 1 < len(self.frames)
            results = set(memory.liveness.ops[position].results) if inside else set()
            out.extend(b for b in memory.buffers_at(position) if b.value not in results)
        out.sort(key=lambda b: -b.physical_bytes)
        return out


class DeviceMemory:
    """One device's memory profile for a run of `entry`."""

    def __init__(self, device: int, process: Any, backend: Backend, entry: FunctionMemory,
                 functions: dict[str, FunctionMemory]):
        self.device = device
        self.process = process
        self.backend = backend
        self.entry = entry
        self.functions = functions  # every function the run reaches, by name
        self.capacity_bytes, self.capacity_label = device_capacity(backend)

    @property
    def peak_bytes(self) -> int:
        return self.entry.peak_bytes

    def peak_site(self) -> Site:
        """Where the peak happens: down into a callee when its own peak makes the caller's."""
        frames = [(self.entry, self.entry.peak_position)]
        while True:
            memory, position = frames[-1]
            inner = memory.callees.get(position)
            if inner is None or memory.extra[position] == 0 or not inner.liveness.size:
                return Site(frames)
            frames.append((inner, inner.peak_position))

    def site(self, ops: Sequence[Operation]) -> Site:
        """The moment `ops[-1]` runs, reached through `ops[:-1]`: an op of the entry function (its
        regions included), then for each call on the way an op of the callee (the debugger's frames)."""
        frames: list[tuple[FunctionMemory, int]] = []
        memory: Optional[FunctionMemory] = self.entry
        for op in ops:
            if memory is None:
                raise ValueError(f"{frames[-1][0].liveness.ops[frames[-1][1]].name} calls no function: "
                                 f"{op.name} cannot run inside it")
            position = memory.liveness.position.get(op)
            if position is None:
                raise ValueError(f"{op.name} is not an op of @{memory.function.sym_name}")
            frames.append((memory, position))
            memory = memory.callees.get(position)
        if not frames:
            raise ValueError("site() needs at least one op")
        return Site(frames)

    @property
    def fits(self) -> Optional[bool]:
        return None if self.capacity_bytes is None else self.peak_bytes <= self.capacity_bytes

    def function(self, name: str) -> FunctionMemory:
        return self.functions[name]


def device_capacity(backend: Backend) -> tuple[Optional[int], str]:
    """(bytes, label) of the memory a device of `backend` has (Backend.device_memory): a TPU
    generation's HBM, the memory of this machine on the CPU (None when the system does not say)."""
    memory = backend.device_memory()
    return memory.bytes, memory.label


def function_memories(module: Module, backend: Backend, entry: str,
                      liveness: Optional[Liveness] = None) -> dict[str, FunctionMemory]:
    """The memory of `entry` and of every function it calls (callees first), on one backend."""
    liveness = liveness or liveness_of(module)
    done: dict[str, FunctionMemory] = {}
    functions = module.functions  # once: Module.function builds the table on every call

    def called(op: Operation) -> Optional[Function]:
        attribute = callee_attribute(op.name)
        if attribute is None or attribute not in op.attributes:
            return None
        name = symbol_name(op.attributes[attribute])
        try:
            function = functions.get(name) or module.function(name)
        except KeyError:
            raise ExecutionError(f"{op.name}: no function @{name} in the module", op.pos) from None
        if function.is_declaration:
            raise ExecutionError(f"{op.name}: @{name} is only declared; its memory cannot be counted", op.pos)
        return function

    def callee_of(op: Operation) -> Optional[FunctionMemory]:
        function = called(op)
        return None if function is None else done[function.sym_name]

    from .interpreter import entry_function

    def callees(function: Function) -> Iterator[Function]:
        for op in liveness.function(function).ops:
            callee = called(op)
            if callee is not None:
                yield callee

    def recursive(path: list[Function], function: Function) -> None:
        names = [f.sym_name for f in path]
        chain = " -> ".join("@" + n for n in (*names[names.index(function.sym_name):], function.sym_name))
        raise ExecutionError(f"@{function.sym_name} calls itself ({chain}): a recursive program's memory has no "
                             "static bound", function.pos)

    # Callees before their callers, each profiled once (the entry last, as the top of the run).
    top_function = entry_function(module, entry)
    for function in callees_first(top_function, callees, lambda f: f.sym_name, recursive):
        if function is not top_function:
            done[function.sym_name] = FunctionMemory(liveness.function(function), backend, False, callee_of)
    top = FunctionMemory(liveness.function(top_function), backend, True, callee_of)
    return {**done, entry: top}


def _check_meshes(module: Module, devices: int) -> None:
    """The error a run would stop with when a manual computation's mesh is not the grid: the local
    tiles the types give are those of that mesh, so a profile on another grid would be wrong."""
    from ..ir.errors import ExecutionError
    from ..ops.spmd import resolve_mesh

    for op in module.walk():
        if op.name != "sdy.manual_computation":
            continue
        for attribute in ("in_shardings", "out_shardings"):
            for sharding in getattr(op.attributes.get(attribute), "shardings", ()):
                try:
                    mesh = resolve_mesh(sharding.mesh, module)
                except ValueError:
                    continue  # the run names that error where it happens
                if mesh.size != devices:
                    raise ExecutionError(f"{op.name}: mesh {mesh.name} spans {mesh.size} devices but this grid has "
                                         f"{devices}; use --replicas/--partitions to make {mesh.size} devices, or "
                                         "the module's mhlo.num_replicas and mhlo.num_partitions", op.pos)


class MemoryAnalysis:
    """The memory profile of a run of `entry` on every device of a grid.

    Every device runs the same module with its own backend instance (`backend.for_device`), so
    every device gets its own profile. Sizes come from the types: inside `sdy.manual_computation`
    bodies and after GSPMD's @SPMDFullToShardShape they are the device's local tiles; elsewhere a
    sharded (global) program's values are whole on every device, as hlodbg runs them
    (`global_program`), where XLA's SPMD partitioner would keep only each device's shard.
    """

    def __init__(self, module: Module, backend: Backend, entry: str = "main", replicas: Optional[int] = None,
                 partitions: Optional[int] = None):
        from ..machine.process import ProcessId
        from .grid import grid_shape
        from .interpreter import entry_function
        from .spmd import is_global_program

        self.module = module
        self.entry = entry_function(module, entry).sym_name  # `main` stands for an HLO module's `main.68`
        self.target = backend.describe()
        self.replicas, self.partitions = grid_shape(module, replicas, partitions)
        _check_meshes(module, self.replicas * self.partitions)
        self.global_program = is_global_program(module)
        self.liveness = liveness_of(module)
        self.devices: list[DeviceMemory] = []
        shared: Optional[dict[str, FunctionMemory]] = None
        for replica in range(self.replicas):
            for partition in range(self.partitions):
                process = ProcessId(replica, partition)
                device_backend = backend.for_device(process)
                if device_backend is backend and shared is not None:
                    functions = shared  # a stateless backend (the CPU's) gives every device the same profile
                else:
                    device_backend.prepare(module)
                    functions = function_memories(module, device_backend, self.entry, self.liveness)
                    if device_backend is backend:
                        shared = functions
                self.devices.append(DeviceMemory(len(self.devices), process, device_backend, functions[self.entry],
                                                 functions))

    def device(self, which: Any) -> DeviceMemory:
        """A device's profile by device id (`replica * partitions + partition`) or ProcessId."""
        if isinstance(which, int):
            if not 0 <= which < len(self.devices):
                raise ValueError(f"no device {which}: the grid has devices 0-{len(self.devices) - 1}")
            return self.devices[which]
        for device in self.devices:
            if device.process == which:
                return device
        raise ValueError(f"no device {which} on the {self.replicas}x{self.partitions} grid")

    @property
    def peak_bytes(self) -> int:
        return max(d.peak_bytes for d in self.devices)

    @property
    def fits(self) -> Optional[bool]:
        verdicts = [d.fits for d in self.devices]
        return None if None in verdicts else all(verdicts)

    def __repr__(self) -> str:
        from ..machine.memory import format_bytes

        count = len(self.devices)
        fits = {True: ", fits", False: ", does not fit", None: ""}[self.fits]
        return (f"<MemoryAnalysis of @{self.entry} on {self.target}: {count} device{'s' if count != 1 else ''} "
                f"({self.replicas}x{self.partitions}), peak {format_bytes(self.peak_bytes)}{fits}>")

    def groups(self) -> list[list[DeviceMemory]]:
        """Devices with identical profiles (peak, peak op, buffers at the peak), in device order."""
        found: dict[tuple, list[DeviceMemory]] = {}
        for device in self.devices:
            site = device.peak_site()
            key = (device.peak_bytes, device.capacity_bytes, tuple((id(m.function), p) for m, p in site.frames),
                   tuple((id(b.value), b.physical_bytes, b.layout) for b in site.buffers()))
            found.setdefault(key, []).append(device)
        return list(found.values())


__all__ = ["ARGUMENTS", "Buffer", "KINDS", "OUTPUTS", "TEMPORARIES", "DeviceMemory", "FunctionMemory", "MemoryAnalysis", "Site", "device_capacity",
           "function_memories"]
