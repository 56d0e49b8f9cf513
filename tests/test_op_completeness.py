"""Every op definition (engine/ir/opset) is complete: the tables derived from it or registered
against it have its entry. An op needs an evaluator (unless the interpreter never runs it as a
step: a terminator hands its operands on, a symbol definition is no step), a verifier rule or the
explicit "none", plain words in every language, an HLO mapping decision that the opcode table
agrees with, and, as a float element-wise op, its numerics (transcendental or exact)."""
from __future__ import annotations

import pytest

import hlodbg.engine.run.interpreter  # noqa: F401  (registers interpreter.run_parallel)
import hlodbg.engine.verify  # noqa: F401  (registers every verifier rule)
from hlodbg.engine.debug.explain.words import ops_with_words
from hlodbg.engine.ir.opset import ELEMENT_TYPES, NO_HLO, NO_TYPE_RULE, OPS, OWN_TYPE_RULE, is_terminator
from hlodbg.engine.ir.phrases import LANGUAGES
from hlodbg.engine.ops import load_families
from hlodbg.engine.ops.registry import EVALUATORS
from hlodbg.engine.syntax.hlo.opcodes import TABLE
from hlodbg.engine.syntax.mlir.op_syntax import FORMATS
from hlodbg.engine.verify import CHECKS
from hlodbg.engine.verify.elementwise import ELEMENT_KINDS


def _runs_as_a_step(name: str) -> bool:
    opdef = OPS[name]
    return not is_terminator(name) and "sym_name" not in opdef.attrs


def test_every_op_that_runs_as_a_step_has_an_evaluator():
    load_families()
    assert [name for name in OPS if _runs_as_a_step(name) and name not in EVALUATORS] == []


def test_every_op_has_a_verifier_rule_or_says_it_has_none():
    missing = [name for name, d in OPS.items() if d.types == OWN_TYPE_RULE and name not in CHECKS]
    assert missing == [], "types='own' but no rule registered in engine/verify"
    stray = [name for name, d in OPS.items() if d.types == NO_TYPE_RULE and name in CHECKS]
    assert stray == [], "types='none' but a rule is registered: say types='own'"
    assert set(ELEMENT_KINDS) == set(ELEMENT_TYPES)
    shared = [name for name, d in OPS.items() if d.types in ELEMENT_TYPES]
    assert len(shared) >= 35 and all(name in CHECKS for name in shared)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_op_has_words_in_every_language(lang):
    assert sorted(set(OPS) - ops_with_words(lang)) == []


def test_every_op_decides_its_hlo_opcode_and_the_table_agrees():
    assert [name for name, d in OPS.items() if d.hlo is None] == []
    for name, opdef in OPS.items():
        if opdef.hlo != NO_HLO:
            assert opdef.hlo in TABLE and TABLE[opdef.hlo].op == name, name
    # The other way: an opcode's own row (not a marked sugar form) lowers to the op that names it.
    for opcode, entry in TABLE.items():
        if entry.marker is None and entry.op in OPS:
            assert OPS[entry.op].hlo == opcode, (opcode, entry.op)


def test_every_float_elementwise_op_says_how_exact_it_is():
    undecided = [name for name, d in OPS.items()
                 if d.family == "elementwise" and d.float_math and not (d.transcendental or d.exact)]
    assert undecided == []
    assert OPS["chlo.square"].exact and OPS["chlo.erf"].transcendental and OPS["stablehlo.add"].exact


def test_the_pretty_format_of_a_definition_is_the_one_registered():
    for name, opdef in OPS.items():
        if opdef.syntax:
            assert FORMATS[name].text == opdef.syntax, name


def test_family_and_colour_are_apart():
    # A CHLO function is drawn in CHLO's colour but is element-wise: it fuses and explains as one.
    erf = OPS["chlo.erf"]
    assert (erf.dialect, erf.family, erf.colour) == ("chlo", "elementwise", "chlo")
    assert (OPS["chlo.ragged_dot"].family, OPS["stablehlo.add"].colour) == ("contraction", "elementwise")


@pytest.mark.parametrize("facts, message", [
    (dict(family="elementwis"), "unknown family 'elementwis'"),
    (dict(types="floats"), "types is one of any, "),
    (dict(family="data_movement", types="int"), "a shared element type rule \\(int\\) is for element-wise ops"),
    (dict(float_math=True, transcendental=True, exact=True), "an op is transcendental or exact, not both"),
    (dict(exact=True), "transcendental and exact describe float math"),
])
def test_a_definition_whose_facts_disagree_is_refused_where_it_is_written(facts, message):
    from hlodbg.engine.ir.opdefs import define

    with pytest.raises(ValueError, match=f"op stablehlo.toy: {message}"):
        define("stablehlo.toy", "operand", hlo=NO_HLO, **facts)
    assert "stablehlo.toy" not in OPS
