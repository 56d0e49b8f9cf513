"""HloSharding strings decode into tile assignments (which device holds which tile)."""
from __future__ import annotations

import numpy as np
import pytest

from hlodbg.engine.ir.sharding import ShardingSyntaxError, parse_hlo_sharding, tile_bounds


@pytest.mark.parametrize(
    "text,kind,assignment,last",
    [
        ("{replicated}", "replicated", None, ()),
        ("{manual}", "manual", None, ()),
        ("{devices=[2,2]0,1,2,3}", "tiled", [[0, 1], [2, 3]], ()),
        ("{devices=[2,1,2]<=[4] last_tile_dim_replicate}", "tiled", [[[0, 1]], [[2, 3]]], ("replicated",)),
        ("{devices=[2,2]<=[2,2]T(1,0)}", "tiled", [[0, 2], [1, 3]], ()),
        ("{devices=[1,2,2]<=[4] last_tile_dims={manual, replicated}}", "tiled", [[[0, 1], [2, 3]]], ("manual", "replicated")),
        ("{devices=[2]1,0 metadata={op_name=\"x\"}}", "tiled", [1, 0], ()),
    ],
)
def test_hlo_sharding_strings(text, kind, assignment, last):
    sharding = parse_hlo_sharding(text)
    assert sharding.kind == kind
    assert sharding.last_tile_dims == last
    if assignment is None:
        assert sharding.tile_assignment is None
    else:
        np.testing.assert_array_equal(sharding.tile_assignment, np.array(assignment))


def test_maximal_and_tuple():
    assert parse_hlo_sharding("{maximal device=3}").device == 3
    t = parse_hlo_sharding("{{replicated}, {devices=[2]0,1}}")
    assert t.kind == "tuple" and [e.kind for e in t.elements] == ["replicated", "tiled"]
    assert parse_hlo_sharding("{devices=[2,1,2]<=[4] last_tile_dim_replicate}").tiled_dims == (2, 1)


@pytest.mark.parametrize("text", ["{devices=[2,2]0,1,2}", "{bogus}", "{devices=[2]", "{replicated"])
def test_bad_sharding_strings(text):
    with pytest.raises(ShardingSyntaxError):
        parse_hlo_sharding(text)


def test_tile_bounds_use_ceil_division():
    assert [tile_bounds(10, 4, i) for i in range(4)] == [(0, 3), (3, 6), (6, 9), (9, 10)]
    assert tile_bounds(2, 4, 3) == (2, 2)
