"""The layered layout's data: its spacing, the graph as integers, one value's lane through one
cluster (Chain), and a cluster laid out (Block). The algorithm is in layered.py, the placement of
blocks and the edge routes in layered_routes.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .geometry import CELL_HEIGHT, CELL_WIDTH, CLUSTER_FONT_SIZE
from .graph import DataflowGraph
from .node_sizes import node_size, text_width

ENTRY = -1  # the source of a value that comes into a cluster from outside
# A value whose uses lie more layers below it than this runs down a side lane at the right of its
# container, where nothing else is, rather than through a lane slot in every layer it passes: the
# number of lane slots stays linear in the number of edges (a weight used by layers 1 and 500
# would otherwise cost 500 slots).
LONG_SPAN = 8
LABEL_DEPTH = 11.0  # points below a band that an edge's type label takes (a line of EDGE_FONT_SIZE)


@dataclass(frozen=True)
class Spacing:
    """Distances in the layout's own units: points for SVG, character cells for terminals."""

    node_gap: float  # between two boxes of one layer
    lane_gap: float  # between a lane (a value passing a layer) and anything beside it
    lane_width: float
    rank_gap: float  # the channel between two layers, where edges change lanes
    pad_x: float  # inside a cluster's border
    pad_top: float  # room for the cluster's label
    pad_bottom: float
    arrow: float  # the arrowhead's length
    track_pitch: float  # between two horizontal runs in one channel
    scale_x: float  # units to points
    scale_y: float
    integral: bool  # positions on whole units (character cells)

    def cluster_label_width(self, label: str) -> float:
        if self.integral:
            return len(label) + 6  # drawn on the border after two cells, with a space each side
        return text_width(label, CLUSTER_FONT_SIZE) + 8

    def channel_height(self, tracks: int) -> float:
        """The channel below a band that holds `tracks` horizontal runs. In cells a run takes a
        row of its own and the row above the next band stays free for the arrowheads."""
        if self.integral:
            return max(self.rank_gap, tracks + 1)
        return max(self.rank_gap, LABEL_DEPTH + (tracks + 1) * self.track_pitch + self.arrow)

    def track_offset(self, track: int) -> float:
        """A run's distance below the band bottom (a cell's middle row in terminals; in points
        below the type labels written right under the band, LABEL_DEPTH)."""
        if self.integral:
            return track + 0.5
        return LABEL_DEPTH + self.track_pitch / 2 + track * self.track_pitch


SVG_SPACING = Spacing(node_gap=0.22 * 72, lane_gap=7.0, lane_width=0.0, rank_gap=0.32 * 72, pad_x=8.0, pad_top=22.0, pad_bottom=8.0, arrow=6.0, track_pitch=4.0, scale_x=1.0, scale_y=1.0, integral=False)
TERMINAL_SPACING = Spacing(node_gap=2, lane_gap=1, lane_width=1, rank_gap=2, pad_x=2, pad_top=2, pad_bottom=2, arrow=0.5, track_pitch=1, scale_x=CELL_WIDTH, scale_y=CELL_HEIGHT, integral=True)


@dataclass
class Chain:
    """One value's path through one container: from its source (an item, or ENTRY) down to the
    items that use it and, when it is used outside too, to the container's exit."""

    source: int
    targets: set = field(default_factory=set)
    exits: bool = False
    first_band: int = 0  # the source's band
    xs: list = field(default_factory=list)  # the lane's x in each band from first_band on
    entry_x: float = 0.0  # the entry port's x (source ENTRY) and the exit port's (exits)
    exit_x: float = 0.0
    entry_slot: int = -1
    exit_slot: int = -1
    side_x: Optional[float] = None  # the side lane's x, for a value that takes one
    back: set = field(default_factory=set)  # targets at or above the source (a cycle between clusters)
    last_band: int = 0  # the deepest band it reaches (its last use, or the exit)


@dataclass
class Block:
    """A container laid out: positions relative to its top-left corner."""

    width: float = 0.0
    height: float = 0.0
    band_top: list = field(default_factory=list)  # band 0 holds entry ports, the last exit ports
    band_height: list = field(default_factory=list)
    band_of: dict = field(default_factory=dict)  # item -> band
    x_of: dict = field(default_factory=dict)  # item -> centre x
    chains: dict = field(default_factory=dict)  # value (producer node index) -> Chain
    sources: set = field(default_factory=set)  # items fed by nothing in the container: they sit at their band's bottom, right above their first use
    exit_band: int = 0
    tips: dict = field(default_factory=dict)  # edge -> x of its arrow's tip on a node of the container
    track: dict = field(default_factory=dict)  # (band, value) -> the run's track in the channel below the band
    tracks: dict = field(default_factory=dict)  # band -> runs in the channel below it
    call_track: dict = field(default_factory=dict)  # band -> the track call edges leave along, below the runs

    def band_bottom(self, band: int) -> float:
        return self.band_top[band] + self.band_height[band]

    def call_y(self, band: int, spacing: Spacing) -> float:
        """Where call edges from the band's boxes run sideways, on a track no value uses."""
        return self.band_bottom(band) + spacing.track_offset(self.call_track.get(band, 0))

    def channel_y(self, band: int, value: int, spacing: Spacing) -> float:
        """Where `value` runs sideways in the channel below `band`."""
        return self.band_bottom(band) + spacing.track_offset(self.track.get((band, value), 0))


class Problem:
    """The graph as integers: items 0..N-1 are nodes in program order, N.. the clusters; a
    container is a cluster item or ROOT (= -2)."""

    ROOT = -2

    def __init__(self, view: DataflowGraph, spacing: Spacing):
        self.view = view
        self.spacing = spacing
        self.names = list(view.graph.nodes)
        self.node_index = {name: i for i, name in enumerate(self.names)}
        n = len(self.names)
        self.cluster_ids = list(view.clusters)
        self.cluster_item = {cid: n + k for k, cid in enumerate(self.cluster_ids)}
        self.size: list[tuple[float, float]] = []
        self.kind: list[str] = []
        self.home: list[int] = []  # each item's container
        for _, data in view.graph.nodes(data=True):
            width, height = node_size(data["label"], data["kind"], spacing.integral)
            self.size.append((width / spacing.scale_x, height / spacing.scale_y))
            self.kind.append(data["kind"])
            self.home.append(self.cluster_item.get(data.get("cluster"), self.ROOT))
        for cid in self.cluster_ids:
            self.size.append((0.0, 0.0))  # set when the cluster is laid out
            self.kind.append("cluster")
            self.home.append(self.cluster_item.get(view.clusters[cid].parent, self.ROOT))
        self.contents: dict[int, list[int]] = {self.ROOT: []}
        for cid in self.cluster_ids:
            self.contents[self.cluster_item[cid]] = []
        for item, container in enumerate(self.home):
            self.contents[container].append(item)
        self.depth = [0] * len(self.home)
        for item in range(n, len(self.home)):
            parent = self.home[item]
            while parent != self.ROOT:
                self.depth[item] += 1
                parent = self.home[parent]
        # A cluster's key is its first node in program order: keys order a container's items so
        # that every forward edge between them goes from a smaller key to a larger one.
        self.key = list(range(n)) + [n + len(self.cluster_ids) + k for k in range(len(self.cluster_ids))]
        for item in range(n):
            container = self.home[item]
            while container != self.ROOT and self.key[container] > item:
                self.key[container] = item
                container = self.home[container]
        self.chains: dict[int, dict[int, Chain]] = {container: {} for container in self.contents}
        self.routed: list = []  # (edge, path up, lca, path down) of edges drawn through lanes
        self.incoming: dict[int, list] = {}  # node -> its routed edges (operand, edge, producer), in operand order
        self.direct: list = []  # edges drawn straight
        self.callers: set = set()  # nodes with a call edge: it leaves along a track of its own below their layer
        self._classify_edges()

    def container_depth(self, container: int) -> int:
        return -1 if container == self.ROOT else self.depth[container]

    def _classify_edges(self) -> None:
        index, home = self.node_index, self.home
        for u_name, v_name, edge_key, data in self.view.graph.edges(keys=True, data=True):
            edge = (u_name, v_name, edge_key)
            u, v = index[u_name], index[v_name]
            if data["kind"] != "data" or u == v:
                self.direct.append(edge)
                if data["kind"] == "call":
                    self.callers.add(u)
                continue
            up, down = [], []
            a, b = home[u], home[v]
            while a != b:
                if self.container_depth(a) >= self.container_depth(b):
                    up.append(a)
                    a = home[a]
                else:
                    down.append(b)
                    b = home[b]
            down.reverse()
            head_item = down[0] if down else v
            source = u
            for container in up:
                self._chain(container, u, source).exits = True
                source = container
            self._chain(a, u, source).targets.add(head_item)
            for k, container in enumerate(down):
                self._chain(container, u, ENTRY).targets.add(down[k + 1] if k + 1 < len(down) else v)
            self.routed.append((edge, up, a, down))
            operand = data.get("operand", 0)
            self.incoming.setdefault(v, []).append((operand if isinstance(operand, int) else 0, edge, u))
        for edges in self.incoming.values():
            edges.sort(key=lambda entry: entry[0])

    def _chain(self, container: int, value: int, source: int) -> Chain:
        chains = self.chains[container]
        chain = chains.get(value)
        if chain is None:
            chain = chains[value] = Chain(source)
        return chain

    def lane_legs(self, blocks: dict, block: Block, value: int, target, tip_x: float = 0.0) -> list:
        """`value`'s way through `block` to `target` (an item; None: the exit) as legs (x, first
        band, last band) in the block's coordinates: straight down within a leg, sideways in the
        channel below its last band to the next leg. `tip_x`: the arrow's x on a node target."""
        chain = block.chains[value]
        first = chain.first_band
        if target is None:
            end, end_x = block.exit_band, chain.exit_x
        elif target >= len(self.names):
            end, end_x = block.band_of[target], block.x_of[target] - self.size[target][0] / 2 + blocks[target].chains[value].entry_x
        else:
            end, end_x = block.band_of[target], tip_x
        legs = [(chain.xs[0], first, first)]
        if chain.side_x is not None and end - first > 1:
            legs.append((chain.side_x, first + 1, end - 1))
        else:
            legs += [(chain.xs[k], first + k, first + k) for k in range(1, end - first)]
        legs.append((end_x, end, end))
        return legs

    def label_of(self, container: int) -> str:
        return "" if container == self.ROOT else self.view.clusters[self.cluster_ids[container - len(self.names)]].label


__all__ = ["Block", "Chain", "ENTRY", "LABEL_DEPTH", "LONG_SPAN", "Problem", "SVG_SPACING", "Spacing", "TERMINAL_SPACING"]
