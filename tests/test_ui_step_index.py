"""Per-step lookups of the debugger UI are index lookups, not scans of a function's ops: the
place of an op in its block (controller), the nodes of an op (graph)."""
from __future__ import annotations

from pathlib import Path

from hlodbg.layouts.graph import build_graph
from hlodbg.program import load
from hlodbg.ui.controller import SessionController

SAMPLE = Path(__file__).resolve().parents[1] / "sample_programs" / "tiny_model.mlir"


def _controller(program) -> SessionController:
    return SessionController(lambda: program.debug(None, seed=0, persist=False))


def test_place_in_block_is_the_ops_index_and_is_built_once_per_block():
    program = load(SAMPLE)
    controller = _controller(program)
    try:
        block = program.module.entry.body
        for k, op in enumerate(block.operations):
            assert controller.place_in_block(op) == k
        places = controller._places[id(block)][1]
        controller.place_in_block(block.operations[-1])
        assert controller._places[id(block)][1] is places
    finally:
        controller.close()


def test_results_before_are_the_previous_ops_results_after_steps():
    program = load(SAMPLE)
    controller = _controller(program)
    try:
        controller.move("step")
        controller.move("step")
        trace, position = controller.session.trace, controller.session.position
        op = trace.ops[position]
        earlier = [o for o in op.parent.operations[:op.parent.operations.index(op)] if o.results]
        names = [view.label for view in controller.results_before(position)]
        assert earlier and names == [r.name for r in earlier[-1].results]
    finally:
        controller.close()


def test_nodes_of_every_op_come_from_one_index():
    module = load(SAMPLE).module
    graph = build_graph(module)
    for op in module.walk():
        if op.name == "func.func":
            continue
        nodes = graph.nodes_of(op)
        assert all(graph.graph.nodes[n]["op"] is op or op in graph.graph.nodes[n].get("folded", ()) for n in nodes)


def test_a_state_summarises_a_bounded_number_of_elements_before_it_is_shown():
    """A training step's return hands back hundreds of weight matrices: a state summarises the
    first EAGER_SUMMARY_ELEMENTS elements' worth of them and leaves the rest to the inspector
    (which summarises a value when it is shown), so a step there stays quick."""
    from hlodbg.ui import controller as controller_module

    count, size = 12, 1 << 18  # 3M elements in all, against a 1M budget
    results = ", ".join(f"tensor<{size}xf32>" for _ in range(count))
    body = "\n".join(f"  %r{i} = stablehlo.add %x, %x : tensor<{size}xf32>" for i in range(count))
    text = (f"func.func @main(%x: tensor<{size}xf32>) -> ({results}) {{\n{body}\n"
            f"  return {', '.join(f'%r{i}' for i in range(count))} : {results}\n}}")
    controller = _controller(load(text))
    try:
        controller.submit(lambda: controller.move("continue_")).result()
        state = controller.submit(lambda: controller.move("back")).result()  # at the return: 12 operands
        summarised = [view.summary is not None for view in state.operands]
        assert len(summarised) == count
        budget = controller_module.EAGER_SUMMARY_ELEMENTS
        assert summarised == [i < budget // size for i in range(count)]
    finally:
        controller.close()
