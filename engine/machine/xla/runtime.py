"""XLA through JAX's runtime (PJRT): the one module of the product that talks to jaxlib.

JAX is an optional extra (`pip install 'hlodbg[xla]'`); without it every entry point here raises
XlaUnavailable with that command. The XLA backend (backend.py), real collectives (collectives.py)
and captures (engine/run/capture/) all reach XLA through this module, so what hlodbg asks of
jaxlib is written once:

- `runtime(platform)`: the devices of one platform (`cpu`, `gpu`, `tpu`), cached per process; with
  `jax.distributed` initialised, `devices` are every host's and `local_devices` this host's.
- `Runtime.compile(text, devices, ...)`: StableHLO text (what hlodbg's printer writes, JAX's own
  lowering prints) compiled for a list of devices, as one program per device (`replicas`) or one
  SPMD program partitioned over them (`partitions`, Shardy or GSPMD shardings in the module).
- `Executable.run(args)` on one device, `Executable.run_spmd(per_device_args)` on all of its
  devices at once; values stay device arrays (`jax.Array`) until `to_host` brings one back.

jaxlib's compile/execute entry points are private (`jax._src.lib.xla_client`); they are used here
and nowhere else, so a jaxlib that moves them breaks one file, with a message naming the version.
64-bit types are switched on (`jax_enable_x64`): hlodbg's programs use f64/i64 and JAX would
otherwise narrow them silently when values are put on a device.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from ...ir.errors import ExecutionError, HlodbgError

PLATFORMS = ("cpu", "gpu", "tpu")
INSTALL = "pip install 'hlodbg[xla]'"


class XlaUnavailable(HlodbgError):
    """JAX/jaxlib is missing, too old, or has no devices of the asked platform."""


class XlaError(ExecutionError):
    """XLA refused to compile or failed to run something hlodbg gave it."""


_lock = threading.Lock()
_runtimes: dict[str, "Runtime"] = {}


def jax_modules() -> tuple[Any, Any]:
    """(jax, xla_client), imported on first use; XlaUnavailable when JAX is not installed."""
    try:
        import jax
        from jax._src.lib import xla_client
    except ImportError as error:
        raise XlaUnavailable(f"the XLA targets need JAX, which is not installed ({error}); install it with: {INSTALL}") from None
    if not getattr(jax.config, "jax_enable_x64", False):
        jax.config.update("jax_enable_x64", True)
    return jax, xla_client


def available() -> bool:
    """Whether JAX can be imported (the XLA targets can be offered)."""
    try:
        jax_modules()
    except XlaUnavailable:
        return False
    return True


def initialize_distributed(coordinator: Optional[str] = None, num_processes: Optional[int] = None,
                           process_id: Optional[int] = None) -> None:
    """Join a many-host run (`jax.distributed.initialize`): every host calls this with the same
    coordinator (HOST:PORT of process 0) and process count, before anything else uses XLA; then
    `runtime(platform).devices` are every host's devices and `local_devices` this host's. Without
    arguments JAX finds them in the cluster's environment (Cloud TPU pod slices, SLURM, Open MPI)."""
    jax, _ = jax_modules()
    if _runtimes:
        raise XlaError("jax.distributed must be initialised before the first XLA run of this process")
    given = {"coordinator_address": coordinator, "num_processes": num_processes, "process_id": process_id}
    try:
        jax.distributed.initialize(**{k: v for k, v in given.items() if v is not None})
    except Exception as error:  # noqa: BLE001 - RuntimeError, XlaRuntimeError, ValueError
        who = (f"the run of {num_processes} processes at {coordinator} as process {process_id}" if coordinator
               else "the cluster's run (JAX found no coordinator in the environment: give --coordinator, "
                    "--num-processes and --process-id)")
        raise XlaError(f"cannot join {who}: {_first_line(error)}") from None


def runtime(platform: str = "cpu") -> "Runtime":
    """The runtime of `platform`, made once per process (devices are enumerated once)."""
    platform = platform.lower()
    if platform not in PLATFORMS:
        raise XlaUnavailable(f"unknown XLA platform {platform!r}; choose one of: {', '.join(PLATFORMS)}")
    with _lock:
        found = _runtimes.get(platform)
        if found is None:
            found = _runtimes[platform] = Runtime._open(platform)
        return found


def _load_lapack() -> None:
    """Give jaxlib's LAPACK custom calls (lapack_spotrf_ffi, ...) their routines. JAX does this when
    it lowers a linear-algebra op; a program hlodbg reads was lowered elsewhere, and XLA on the CPU
    runs such a call through null function pointers (a segmentation fault) until it is done."""
    try:
        from jax._src.lib import lapack
        lapack._lapack.initialize()
    except (ImportError, AttributeError):  # a jaxlib without LAPACK calls: nothing to load
        pass


@dataclass
class Runtime:
    """The devices of one XLA platform and the client that compiles for them."""

    platform: str
    devices: list  # every device of the platform (all hosts under jax.distributed), by id
    local_devices: list  # this host's
    jax: Any = field(repr=False)
    xc: Any = field(repr=False)

    @classmethod
    def _open(cls, platform: str) -> "Runtime":
        jax, xc = jax_modules()
        try:
            devices = jax.devices(platform)
            local = jax.local_devices(backend=platform)
        except RuntimeError as error:
            raise XlaUnavailable(f"no {platform} devices: {_first_line(error)}") from None
        if platform == "cpu":
            _load_lapack()
        return cls(platform, sorted(devices, key=lambda d: d.id), sorted(local, key=lambda d: d.id), jax, xc)

    # -- facts ----------------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        return self.local_devices[0].client

    @property
    def process_index(self) -> int:
        return int(self.jax.process_index())

    @property
    def process_count(self) -> int:
        return int(self.jax.process_count())

    def device(self, index: int) -> Any:
        """The `index`-th device (of all hosts), or XlaUnavailable saying how many there are."""
        if not 0 <= index < len(self.devices):
            raise XlaUnavailable(self._too_few(index + 1))
        return self.devices[index]

    def require(self, count: int) -> list:
        """The first `count` devices; XlaUnavailable (with how to get more on the CPU) when fewer."""
        if count > len(self.devices):
            raise XlaUnavailable(self._too_few(count))
        return self.devices[:count]

    def _too_few(self, count: int) -> str:
        have = len(self.devices)
        hint = ""
        if self.platform == "cpu":
            hint = (f"; on the CPU start with XLA_FLAGS=--xla_force_host_platform_device_count={count} "
                    f"(set before anything imports JAX)")
        return f"the run needs {count} {self.platform} device(s) but there are {have}{hint}"

    def device_kind(self, device: Any) -> str:
        return str(getattr(device, "device_kind", self.platform))

    def describe(self) -> str:
        kinds = sorted({self.device_kind(d) for d in self.devices})
        return f"{len(self.devices)} {self.platform} device(s) ({', '.join(kinds)}), jax {self.jax.__version__}"

    # -- values ---------------------------------------------------------------------------------
    def put(self, array: Any, device: Any) -> Any:
        """`array` (numpy, any hlodbg element type) as a device array on `device`."""
        try:
            return self.jax.device_put(np.asarray(array), device)
        except Exception as error:  # noqa: BLE001 - jaxlib raises several kinds
            raise XlaError(f"cannot put a {np.asarray(array).dtype}{list(np.shape(array))} value on {device}: {_first_line(error)}") from None

    @staticmethod
    def to_host(value: Any) -> np.ndarray:
        """A device array's value as a numpy array (copied to the host once)."""
        return np.asarray(value)

    def local_shards(self, array: Any) -> list[tuple[Any, tuple, Any]]:
        """(device, index, shard) of each piece of a (global) device array held on this host: the
        index is a tuple of slices into the global array; a shard stays on its device until
        `to_host` brings it over."""
        return [(shard.device, tuple(shard.index), shard.data) for shard in array.addressable_shards]

    def barrier(self, name: str) -> None:
        """Wait until every process of a many-host run has reached the barrier `name`."""
        if self.process_count <= 1:
            return
        from jax.experimental import multihost_utils

        try:
            multihost_utils.sync_global_devices(name)
        except Exception as error:  # noqa: BLE001
            raise XlaError(f"the processes did not all reach {name!r}: {_first_line(error)}") from None

    def assemble(self, shape: Sequence[int], sharding: Any, shards: Sequence[Any]) -> Any:
        """One global array of `shape` from its per-device shards (in the sharding's device order)."""
        return self.jax.make_array_from_single_device_arrays(tuple(shape), sharding, list(shards))

    def shard_indices(self, op_sharding: Any, shape: Sequence[int], count: int) -> list[tuple]:
        """The numpy index (a tuple of slices) of each of `count` devices' shard of a value of
        `shape` laid out by `op_sharding` (an OpSharding proto from an executable)."""
        from jax._src import op_shardings

        hlo = self.xc.HloSharding.from_proto(op_sharding)
        return list(op_shardings.op_sharding_to_indices(hlo, tuple(shape), count))

    def sharding(self, op_sharding: Any, devices: Sequence[Any]) -> Any:
        """A jax Sharding placing a value over `devices` as `op_sharding` says."""
        from jax._src.sharding_impls import GSPMDSharding

        return GSPMDSharding(tuple(devices), op_sharding)

    # -- programs -------------------------------------------------------------------------------
    def compile(self, text: str, devices: Sequence[Any], replicas: int = 1, partitions: int = 1,
                what: str = "the program") -> "Executable":
        """Compile StableHLO `text` for `devices` (replicas x partitions of them, in that order:
        device i is replica i // partitions, partition i % partitions). A module with partitions > 1
        is SPMD-partitioned by XLA from its shardings (Shardy's `sdy` or `mhlo.sharding`)."""
        xc = self.xc
        if replicas * partitions != len(devices):
            raise XlaError(f"{what}: {replicas} replica(s) x {partitions} partition(s) need "
                           f"{replicas * partitions} devices, {len(devices)} given")
        options = xc.CompileOptions()
        build = options.executable_build_options
        build.num_replicas = replicas
        build.num_partitions = partitions
        if partitions > 1:
            build.use_spmd_partitioning = True
            build.use_shardy_partitioner = True  # JAX's default partitioner; GSPMD is deprecated
        ids = np.array([d.id for d in devices]).reshape(replicas, partitions)
        build.device_assignment = xc.DeviceAssignment.create(ids)
        try:
            loaded = self.client.compile_and_load(text, xc.DeviceList(tuple(devices)), options)
        except Exception as error:  # noqa: BLE001 - XlaRuntimeError and friends
            raise XlaError(f"XLA ({self.platform}) cannot compile {what}: {_first_line(error)}") from None
        return Executable(self, loaded, list(devices), what)


@dataclass
class Executable:
    """A compiled program loaded on its devices."""

    runtime: Runtime
    loaded: Any = field(repr=False)
    devices: list
    what: str

    def run(self, args: Sequence[Any]) -> list:
        """Run on a single device: `args` are device arrays (or numpy arrays, put on the device
        first); the results are device arrays on the same device."""
        device = self.devices[0]
        inputs = [a if _on_device(a, device) else self.runtime.put(a, device) for a in args]
        try:
            return list(self.loaded.execute(inputs))
        except Exception as error:  # noqa: BLE001
            raise XlaError(f"XLA ({self.runtime.platform}) failed running {self.what}: {_first_line(error)}") from None

    def run_spmd(self, per_device_args: Sequence[Sequence[Any]]) -> list[list]:
        """Run on all devices at once: `per_device_args[d][i]` is argument i on device d (device
        arrays, or numpy put there first); returns `results[d][j]`, result j of device d."""
        devices = self.devices
        if len(per_device_args) != len(devices):
            raise XlaError(f"{self.what} runs on {len(devices)} devices; arguments for {len(per_device_args)} given")
        count = len(per_device_args[0]) if per_device_args else 0
        jax = self.runtime.jax
        arguments = []
        for i in range(count):
            shards = [a[i] if _on_device(a[i], d) else self.runtime.put(a[i], d) for a, d in zip(per_device_args, devices)]
            arguments.append(_stacked(jax, shards, devices))
        try:
            results = self.loaded.execute_sharded(arguments)
            per_output = results.disassemble_into_single_device_arrays()
        except Exception as error:  # noqa: BLE001
            raise XlaError(f"XLA ({self.runtime.platform}) failed running {self.what}: {_first_line(error)}") from None
        return [[per_output[j][d] for j in range(len(per_output))] for d in range(len(devices))]

    def run_global(self, arguments: Sequence[Any], shapes: Optional[Sequence[Sequence[int]]] = None) -> list:
        """Run on all devices with global jax Arrays already laid out as the parameters' shardings
        say (`put_global`); returns global arrays, one per result. `shapes` are the results'
        global shapes (the module's result types); without them each is worked out from a shard
        and its tiling, which is exact when the dimensions divide evenly."""
        try:
            per_output = self.loaded.execute_sharded(list(arguments)).disassemble_into_single_device_arrays()
        except Exception as error:  # noqa: BLE001
            raise XlaError(f"XLA ({self.runtime.platform}) failed running {self.what}: {_first_line(error)}") from None
        results = []
        for j, (shards, op_sharding) in enumerate(zip(per_output, self.output_shardings)):
            shape = tuple(shapes[j]) if shapes is not None else _global_shape(self.runtime, op_sharding, shards)
            results.append(self.runtime.assemble(shape, self.runtime.sharding(op_sharding, self.devices), shards))
        return results

    def put_global(self, arrays: Sequence[np.ndarray]) -> list:
        """Host arrays as global jax Arrays laid out as the parameters' shardings say; on many
        hosts each host puts only its own devices' shards (jax.make_array_from_callback)."""
        jax = self.runtime.jax
        out = []
        for array, op_sharding in zip(arrays, self.parameter_shardings):
            array = np.asarray(array)
            sharding = self.runtime.sharding(op_sharding, self.devices)
            out.append(jax.make_array_from_callback(array.shape, sharding, lambda index, a=array: a[index]))
        return out

    @property
    def parameter_shardings(self) -> list:
        """OpSharding protos of the parameters (after SPMD partitioning), one per argument."""
        return list(self.loaded.get_parameter_shardings() or [])

    @property
    def output_shardings(self) -> list:
        return list(self.loaded.get_output_shardings() or [])

    def memory(self) -> Any:
        """XLA's compiled memory statistics (argument, output, temp sizes in bytes)."""
        return self.loaded.get_compiled_memory_stats()

    def hlo_text(self) -> str:
        """The optimised HLO XLA runs (fusions included)."""
        return "\n".join(m.to_string() for m in self.loaded.hlo_modules())


def _stacked(jax: Any, shards: Sequence[Any], devices: Sequence[Any]) -> Any:
    """Per-device values of one argument as the single jax Array execute_sharded takes.

    The array is declared replicated over `devices` (each holds a value of the full shape) while
    the devices' values differ: an executable reads only its device's buffer, so for a program
    that runs per device (replicas, or a manual SPMD body) that is exactly the input it needs."""
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(list(devices)), ("devices",))
    return jax.make_array_from_single_device_arrays(tuple(shards[0].shape), NamedSharding(mesh, PartitionSpec()), list(shards))


def _on_device(value: Any, device: Any) -> bool:
    devices = getattr(value, "devices", None)
    if devices is None:
        return False
    try:
        found = devices()
    except TypeError:
        return False
    return len(found) == 1 and next(iter(found)) == device


def _global_shape(runtime: Runtime, op_sharding: Any, shards: Sequence[Any]) -> tuple:
    """The global shape of an output from one shard: each dimension times its tile count."""
    hlo = runtime.xc.HloSharding.from_proto(op_sharding)
    shape = list(shards[0].shape)
    if hlo.is_replicated() or hlo.is_maximal() or not shape:
        return tuple(shape)
    tiles = list(hlo.tile_assignment_dimensions())[:len(shape)]
    return tuple(d * t for d, t in zip(shape, tiles))


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


__all__ = ["Executable", "INSTALL", "PLATFORMS", "Runtime", "XlaError", "XlaUnavailable", "available",
           "initialize_distributed", "jax_modules", "runtime"]
