"""`hlodbg export` and the layout machinery behind it: formats, Graphviz discovery, the cache."""
from __future__ import annotations

import json
import os
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from hlodbg.cli import main
from hlodbg.layouts import graphviz as graphviz_module
from hlodbg.layouts.export import export_graph, graph_view
from hlodbg.layouts.graph import GraphError
from hlodbg.layouts.graphviz import GraphvizError, find_graphviz
from hlodbg.layouts.layout import clear_memory_cache, compute_layout
from hlodbg.program import load

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "programs"
NAN_PROGRAM = ROOT / "tests" / "data" / "nan_in_loop.mlir"
SAMPLE = ROOT / "sample_programs" / "tiny_model.mlir"
SVG = "{http://www.w3.org/2000/svg}"


pytestmark = pytest.mark.usefixtures("private_layout_cache")


def graphviz_pure() -> str:
    found = shutil.which("graphviz-pure") or str(Path(sys.executable).parent / "graphviz-pure")
    if not os.access(found, os.X_OK):
        pytest.skip("graphviz-pure is not installed")
    return found


def _classes(element) -> set[str]:
    return set((element.get("class") or "").split())


def shared_programs():
    return sorted(SHARED.glob("*.mlir")) if SHARED.is_dir() else []


@pytest.mark.parametrize("path", shared_programs() or [pytest.param(None, marks=pytest.mark.skip(reason="../shared/programs absent"))], ids=lambda p: p.stem if p else "none")
def test_every_shared_program_exports_a_valid_svg(path, tmp_path, capsys):
    out = tmp_path / "graph.svg"
    assert main(["export", str(path), "-o", str(out)]) == 0
    root = ET.parse(out).getroot()
    module = load(path).module
    groups = list(root.iter(f"{SVG}g"))
    ops = [g for g in groups if {"node-op", "node-return"} & _classes(g)]
    assert len(ops) == module.op_count
    uses = sum(len(op.operands) for op in module.walk() if op.name != "func.func")
    calls = sum(1 for op in module.walk() if op.name == "func.call")
    edges = [g for g in groups if "edge" in _classes(g)]
    assert len([g for g in edges if "edge-data" in _classes(g)]) == uses
    assert len([g for g in edges if "edge-call" in _classes(g)]) == calls
    clusters = {g.get("data-cluster") for g in groups if "cluster" in _classes(g)}
    assert {f"fn:{name}" for name in module.functions} <= clusters
    assert "wrote" in capsys.readouterr().err


def test_formats_dot_json_png(tmp_path):
    view = graph_view(load(NAN_PROGRAM).module)
    dot = tmp_path / "g.dot"
    export_graph(view, str(dot))
    text = dot.read_text()
    assert text.startswith("digraph hlodbg {") and "subgraph cluster_legend" in text and 'fillcolor="#dcefdc"' in text
    data = tmp_path / "g.json"
    export_graph(view, str(data))
    graph = json.loads(data.read_text())
    assert graph["format"] == "hlodbg.graph" and len(graph["nodes"]) == view.node_count
    assert all({"x", "y", "width", "height"} <= set(n) for n in graph["nodes"])
    sqrt = next(n for n in graph["nodes"] if n["op"] == "stablehlo.sqrt")
    assert sqrt["types"] == ["4xf32"] and sqrt["label"] == ["%s = sqrt"] and sqrt["line"] == 25
    assert {e["type"] for e in graph["edges"] if e["kind"] == "data"} >= {"4xf32", "i32"}
    assert graph["call_graph"] == [{"caller": "main", "callee": "update", "count": 1}]
    png = tmp_path / "g.png"
    export_graph(view, str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_collapse_modes_and_focus(tmp_path):
    module = load(NAN_PROGRAM).module
    calls = graph_view(module, collapse="calls")
    regions = graph_view(module, collapse="regions")
    expanded = graph_view(module, collapse="none")
    assert len(regions.clusters) < len(calls.clusters)
    assert not any(c.kind == "region" for c in regions.clusters.values())
    assert any(c.kind == "call" for c in expanded.clusters.values())
    focused = graph_view(module, focus="@update:%s", radius=1)
    assert sorted(d["name"] for _, d in focused.graph.nodes(data=True)) == ["", "%d", "%s"]
    with pytest.raises(GraphError, match="--collapse must be one of"):
        graph_view(module, collapse="everything")


def test_nan_overlay_marks_the_first_bad_op(tmp_path, capsys):
    values = tmp_path / "x.npz"
    np.savez(values, arg0=np.full(4, 100, np.float32))
    out = tmp_path / "nan.json"
    assert main(["export", str(NAN_PROGRAM), "-o", str(out), "--values", str(values), "--overlay", "nan"]) == 0
    nodes = {n["name"]: n for n in json.loads(out.read_text())["nodes"] if n["function"] == "update"}
    assert nodes["%s"]["badge"] == "first NaN 4/4"
    assert nodes["%s"]["tooltip"][-3].startswith("first non-finite value")
    assert nodes["%d"]["badge"] == "NaN 4/4"
    assert "badge" not in nodes["%f"]
    overlay = json.loads(out.read_text())["overlay"]
    assert overlay["title"] == "NaN / Inf" and overlay["legend"][0]["label"] == "first NaN/Inf"


def test_range_and_divergence_overlays(tmp_path):
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    np.savez(a, arg0=np.full(4, 1e11, np.float32))  # large enough to stay finite
    np.savez(b, arg0=np.full(4, 2e11, np.float32))
    out = tmp_path / "range.svg"
    assert main(["export", str(NAN_PROGRAM), "-o", str(out), "--values", str(a), "--overlay", "range"]) == 0
    text = out.read_text()
    assert "max |value| (last run)" in text and "|x|≤" in text
    out = tmp_path / "div.json"
    assert main(["export", str(NAN_PROGRAM), "-o", str(out), "--values", str(a), "--overlay", "divergence", "--against", str(b)]) == 0
    nodes = {(n["function"], n["name"]): n for n in json.loads(out.read_text())["nodes"]}
    assert "badge" not in nodes[("main", "%c0")]  # same constant in both runs
    assert nodes[("update", "%f")]["fill"] == "#dcefdc"  # the loop counter does not depend on x
    assert nodes[("main", "%sum")]["badge"].startswith("Δ")


def test_export_errors_are_clear(tmp_path, capsys):
    assert main(["export", str(NAN_PROGRAM), "-o", str(tmp_path / "g.pdf")]) == 2
    assert "use a name ending in .svg, .png, .dot or .json" in capsys.readouterr().err
    assert main(["export", str(NAN_PROGRAM), "-o", str(tmp_path / "g.svg"), "--focus", "%nope"]) == 2
    assert "no op or argument named %nope" in capsys.readouterr().err
    assert main(["export", str(NAN_PROGRAM), "-o", str(tmp_path / "g.svg"), "--overlay", "divergence"]) == 2
    assert "--against REF.npz" in capsys.readouterr().err
    assert main(["export", str(NAN_PROGRAM), "-o", "-"]) == 2
    assert "--format" in capsys.readouterr().err


def test_standard_output_with_format(capsys):
    assert main(["export", str(NAN_PROGRAM), "-o", "-", "--format", "dot"]) == 0
    assert capsys.readouterr().out.startswith("digraph hlodbg {")


def test_works_with_only_graphviz_pure_on_path(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "graphviz-pure").symlink_to(graphviz_pure())
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("HLODBG_DOT", raising=False)
    assert shutil.which("dot") is None
    assert find_graphviz() == str(bin_dir / "graphviz-pure")
    out = tmp_path / "g.svg"
    assert main(["export", str(SAMPLE), "-o", str(out)]) == 0
    ET.parse(out)


def test_system_dot_is_preferred(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    marker = tmp_path / "dot-was-run"
    fake = bin_dir / "dot"
    fake.write_text(f"#!/bin/sh\n: > {marker}\nexec {graphviz_pure()} \"$@\"\n")
    fake.chmod(0o755)
    (bin_dir / "graphviz-pure").symlink_to(graphviz_pure())
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("HLODBG_DOT", raising=False)
    assert find_graphviz() == str(fake)
    compute_layout(graph_view(load(NAN_PROGRAM).module), use_cache=False, engine="graphviz")
    assert marker.exists()


def test_missing_graphviz_is_a_clear_message(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("HLODBG_DOT", raising=False)
    monkeypatch.setattr(graphviz_module.sys, "executable", str(tmp_path / "python"))
    with pytest.raises(GraphvizError, match="neither `dot` nor `graphviz-pure` was found"):
        find_graphviz()
    assert main(["export", str(NAN_PROGRAM), "-o", str(tmp_path / "g.svg"), "--engine", "graphviz"]) == 2
    err = capsys.readouterr().err
    assert "pip install graphviz-pure" in err and "Traceback" not in err
    # The layered layout (the default) and DOT need no Graphviz at all.
    assert main(["export", str(NAN_PROGRAM), "-o", str(tmp_path / "g.svg")]) == 0
    assert main(["export", str(NAN_PROGRAM), "-o", str(tmp_path / "g.dot")]) == 0


def test_layout_cache_reuses_and_survives_corruption(tmp_path):
    view = graph_view(load(SAMPLE).module)
    first = compute_layout(view)
    assert not first.cached
    files = list((tmp_path / "cache" / "layouts").glob("*.json"))
    assert len(files) == 1
    clear_memory_cache()
    second = compute_layout(view)
    assert second.cached and second.to_json() == first.to_json()
    files[0].write_text("{ not json")
    clear_memory_cache()
    third = compute_layout(view)
    assert not third.cached and third.to_json() == first.to_json()
    # Colours and overlays are not part of the key; structure is.
    assert compute_layout(view.collapse_kind("op")).cached is False


def test_focus_inside_collapsed_regions_and_unwritable_output(tmp_path, capsys):
    module = load(NAN_PROGRAM).module
    # %y lives in the while body; with regions folded the focus lands on the while op itself.
    view = graph_view(module, collapse="regions", focus="%y", radius=1)
    assert view.graph.nodes["collapsed:op:main#1"]["name"] == "%r:2"
    # One hop: its operands and its consumers, all in @main: the call inside it does not lead
    # the focus into @update.
    assert sorted(d["name"] for _, d in view.graph.nodes(data=True)) == ["", "%c0", "%r:2", "%sum", "%x"]
    assert set(view.clusters) == {"fn:main"} and view.clusters["fn:main"].children == []
    assert compute_layout(view).nodes.keys() == set(view.graph.nodes)
    assert main(["export", str(NAN_PROGRAM), "-o", str(tmp_path / "missing" / "g.svg")]) == 2
    assert "cannot write" in capsys.readouterr().err


@pytest.mark.parametrize("damage", [
    b"null", b"[]", b"5", b'{"version": 2}', b"\xff\xfe not text",
    b"[" * 100_000 + b"]" * 100_000,  # nested past what json.loads may recurse
    json.dumps({"version": 2, "width": 1, "height": 1, "nodes": {"n0": "abcd"}, "edges": [], "clusters": {}}).encode(),
    json.dumps({"version": 2, "width": "wide", "height": 1, "nodes": {}, "edges": [], "clusters": {}}).encode(),
    json.dumps({"version": 2, "width": 1, "height": 1, "nodes": {}, "edges": [[1, 2]], "clusters": {}}).encode(),
    json.dumps({"version": 2, "width": 1, "height": 1, "nodes": {}, "edges": [], "clusters": {}}).encode(),
    json.dumps({"version": 2, "width": 1, "height": 1, "nodes": {}, "edges": [], "clusters": {"c": [1, 2, 3, 4, [1]]}}).encode(),
], ids=["null", "list", "number", "fields-missing", "not-utf8", "nested", "node-not-numbers", "width-text", "edge-short",
        "no-nodes", "cluster-label-short"])
def test_a_damaged_layout_cache_entry_is_a_miss_and_is_rewritten(damage, tmp_path, capsys):
    out = str(tmp_path / "g.svg")
    assert main(["export", str(NAN_PROGRAM), "--engine", "layered", "-o", out]) == 0
    (entry,) = (tmp_path / "cache" / "layouts").glob("*.json")
    good = entry.read_bytes()
    entry.write_bytes(damage)
    clear_memory_cache()
    for _ in range(2):  # every later export works, not only the first one after the damage
        assert main(["export", str(NAN_PROGRAM), "--engine", "layered", "-o", out]) == 0
        clear_memory_cache()
    assert "internal error" not in capsys.readouterr().err
    assert json.loads(entry.read_bytes()) == json.loads(good)  # rewritten with the layout


def test_a_layout_cache_entry_that_is_not_a_file_is_a_miss(tmp_path):
    out = str(tmp_path / "g.svg")
    assert main(["export", str(NAN_PROGRAM), "--engine", "layered", "-o", out]) == 0
    (entry,) = (tmp_path / "cache" / "layouts").glob("*.json")
    entry.unlink()
    os.mkfifo(entry)  # read, it would block the export for ever
    clear_memory_cache()
    assert main(["export", str(NAN_PROGRAM), "--engine", "layered", "-o", out]) == 0
