"""A capture on many hosts: two local processes (4 CPU devices each) joined by jax.distributed
capture sharded_mlp_4x2 (8 devices over 2 hosts); each writes its own devices' values, host 0
merges, and the merged capture holds every device's rows, equal to a one-process capture's."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("jax")

from hlodbg.cli import main  # noqa: E402
from hlodbg.engine.run.capture_format import Capture  # noqa: E402

from .helpers import PROGRAMS, REPO, require_shared  # noqa: E402

TIMEOUT = 300  # seconds for both processes (two cores shared: compiling and gloo set-up take a while)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def host_command(out, port: int, process: int) -> list[str]:
    return [sys.executable, "-m", "hlodbg", "capture", str(PROGRAMS / "sharded_mlp_4x2.mlir"),
            "--args", str(PROGRAMS / "sharded_mlp_4x2.inputs.npz"), "--target", "xla:cpu", "-o", str(out),
            "--coordinator", f"127.0.0.1:{port}", "--num-processes", "2", "--process-id", str(process)]


def run_hosts(*outs) -> list[subprocess.CompletedProcess]:
    """Two hosts writing into outs[0] (one directory: a shared file system) or outs[k] each."""
    port = free_port()
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu"}
    hosts = [subprocess.Popen(host_command(outs[k % len(outs)], port, k), cwd=REPO, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for k in range(2)]
    done = []
    try:
        for host in hosts:
            stdout, stderr = host.communicate(timeout=TIMEOUT)
            done.append(subprocess.CompletedProcess(host.args, host.returncode, stdout, stderr))
    finally:
        for host in hosts:
            if host.poll() is None:
                host.kill()
                host.wait()
    return done


def test_two_host_capture_merges_into_the_one_host_capture(tmp_path, capsys):
    require_shared()
    many = tmp_path / "two_hosts.hlocap"
    results = run_hosts(many)
    for k, result in enumerate(results):
        assert result.returncode == 0, f"host {k}: {result.stderr[-2000:]}"
        assert "on 2 hosts" in result.stdout
    merged = Capture.open(many)
    assert merged.manifest["hosts"] == 2
    assert {d["host"] for d in merged.devices if d["id"] < 4} == {0} and {d["host"] for d in merged.devices if d["id"] >= 4} == {1}
    files = {row.file.split("/")[1].split("-")[0] for row in merged}
    assert files == {"h0", "h1"}  # each host wrote its own devices' arrays
    assert all(row.file.startswith("values/h1-") == (row.device >= 4) for row in merged)

    one = tmp_path / "one_host.hlocap"
    assert main(["capture", str(PROGRAMS / "sharded_mlp_4x2.mlir"), "--args", str(PROGRAMS / "sharded_mlp_4x2.inputs.npz"),
                 "-o", str(one)]) == 0
    single = Capture.open(one)
    assert {row.key for row in merged} == {row.key for row in single}
    assert {row.device for row in merged} == set(range(8))
    for row in single:
        np.testing.assert_array_equal(merged.array(*row.key), single.load(row))

    # Merging again by hand (files copied from many machines) gives the same index.
    (many / "index.csv").unlink()
    assert main(["capture", "--merge", str(many)]) == 0
    assert {row.key for row in Capture.open(many)} == {row.key for row in single}
    assert "merged" in capsys.readouterr().out


def test_hosts_without_a_shared_disk_merge_by_hand(tmp_path, capsys):
    require_shared()
    first, second = tmp_path / "host0.hlocap", tmp_path / "host1.hlocap"
    results = run_hosts(first, second)
    for k, result in enumerate(results):
        assert result.returncode == 0, f"host {k}: {result.stderr[-2000:]}"
    assert "Not merged yet" in results[0].stdout and f"hlodbg capture --merge {first}" in results[0].stdout
    assert not (second / "capture.json").exists()  # only host 0 writes the manifest, program and inputs
    for path in second.rglob("*"):
        if path.is_file():
            target = first / path.relative_to(second)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    assert main(["capture", "--merge", str(first)]) == 0
    merged = Capture.open(first)
    assert {row.device for row in merged} == set(range(8))
    assert len(merged.rows) == len({row.key for row in merged.rows})


def test_distributed_without_a_cluster_says_what_to_give(tmp_path):
    """`--distributed` lets JAX find the hosts in the environment; where there is no cluster the
    user is told which flags to give instead (in a fresh process: joining is once per process)."""
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    for key in ("SLURM_JOB_ID", "OMPI_COMM_WORLD_SIZE", "TPU_WORKER_HOSTNAMES", "JAX_COORDINATOR_ADDRESS"):
        env.pop(key, None)
    done = subprocess.run([sys.executable, "-m", "hlodbg", "capture", str(REPO / "sample_programs" / "tiny_model.mlir"),
                           "--distributed", "-o", str(tmp_path / "run.hlocap")],
                          capture_output=True, text=True, env=env, timeout=TIMEOUT)
    assert done.returncode == 2, done.stderr
    assert "give --coordinator, --num-processes and --process-id" in done.stderr
    assert "Traceback" not in done.stderr


def test_distributed_and_a_coordinator_are_one_or_the_other(tmp_path, capsys):
    code = main(["capture", str(REPO / "sample_programs" / "tiny_model.mlir"), "--distributed",
                 "--coordinator", "127.0.0.1:1", "-o", str(tmp_path / "run.hlocap")])
    assert code == 2
    assert "either it or --coordinator" in capsys.readouterr().err
