"""A layered layout that knows the graph is a program: linear in its size, for any size.

Graphviz's dot spends time and memory far beyond linear on big graphs (a 24,000-node graph took it
past 21 GB). This layout uses what a program graph already is:
- every cluster (function, group, op, region, a folded node's box) is a block laid out on its own
  and placed whole inside its parent, so boxes of different clusters never overlap and each
  cluster costs a layout of what is directly inside it;
- program order is a topological order of the dataflow (an SSA value is defined before its uses),
  so layers come from one pass in that order: an item sits one layer below its lowest producer;
- arguments, constants and what only they feed then sink to just above their first use, instead
  of filling the top row;
- a value used further down runs through one lane (a dummy slot per layer crossed) that all of its
  uses branch from, entering and leaving clusters through ports on their top and bottom sides;
- crossings are reduced by two barycentre sweeps, and x positions by three passes that pull each
  item towards its neighbours, the order kept with the smallest total move (isotonic regression
  by pool-adjacent-violators, linear per layer).
Every data edge then runs down: vertical inside a layer's band (in its own slot, where nothing
else is) and across the free channel between two bands. Edges this cannot draw downward (a call
edge, an edge against program order between folded groups, a self-loop) are drawn directly.
The geometry and the edge routes are in layered_routes.py.
"""
from __future__ import annotations

import gc
import heapq

from .geometry import Layout
from .graph import DataflowGraph
from .layered_model import ENTRY, LONG_SPAN, SVG_SPACING, TERMINAL_SPACING, Block, Chain, Problem, Spacing
from .layered_routes import assemble


def layered_layout(view: DataflowGraph, terminal: bool = False) -> Layout:
    """Positions and edge routes for the view (see the module's docstring), in the Layout Graphviz
    layouts come in: points, origin top-left, y down; boxes sized as Graphviz sizes them."""
    # Millions of small objects come and go and none forms a cycle: without the collector's
    # passes over everything else alive (the program, the graph) the layout takes half the time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        problem = Problem(view, TERMINAL_SPACING if terminal else SVG_SPACING)
        blocks: dict[int, Block] = {}
        containers = sorted((c for c in problem.contents if c != Problem.ROOT), key=lambda c: -problem.depth[c])
        for container in [*containers, Problem.ROOT]:
            blocks[container] = lay_out_container(problem, container, blocks)
        return assemble(problem, blocks)
    finally:
        if collecting:
            gc.enable()


# --- one container --------------------------------------------------------------------------
def lay_out_container(problem: Problem, container: int, blocks: dict[int, Block]) -> Block:
    spacing = problem.spacing
    items = sorted(problem.contents[container], key=problem.key.__getitem__)
    chains = problem.chains[container]
    block = Block(chains=chains)
    layer = _layers(items, chains, block.sources)
    last = max(layer.values(), default=-1) + 1  # the exit layer
    # Bands: 0 the entry ports, 1..last the layers, last+1 the exit ports.
    slots = _Slots(last + 2)
    slot_of: dict[int, int] = {}
    for item in items:
        width, height = problem.size[item]
        slot_of[item] = slots.add(layer[item] + 1, width, height, problem.key[item], item >= len(problem.names))
    for value, chain in chains.items():
        _thread_chain(problem, blocks, slots, slot_of, layer, last, value, chain)
    slots.order()
    slots.place(spacing)
    left, right = slots.extent()
    right = _side_lanes(chains, right, spacing)
    label_width = spacing.cluster_label_width(problem.label_of(container)) if container != Problem.ROOT else 0.0
    content = right - left
    inner = max(content, label_width - 2 * spacing.pad_x)
    shift = spacing.pad_x - left + (inner - content) / 2
    if spacing.integral:
        shift = round(shift)
    block.width = inner + 2 * spacing.pad_x
    block.exit_band = last + 1
    for item in items:
        block.band_of[item] = layer[item] + 1
        block.x_of[item] = slots.x[slot_of[item]] + shift
    for chain in chains.values():
        chain.xs = [slots.x[s] + shift + offset for s, offset in chain.xs]
        if chain.source == ENTRY:
            chain.entry_x = slots.x[chain.entry_slot] + shift
        if chain.exits:
            chain.exit_x = slots.x[chain.exit_slot] + shift
        if chain.side_x is not None:
            chain.side_x += shift
    _arrow_tips(problem, block, items)
    _assign_tracks(problem, blocks, block)
    top = spacing.pad_top if container != Problem.ROOT else spacing.pad_bottom
    _bands(slots, block, spacing, top)
    if container != Problem.ROOT:
        problem.size[container] = (block.width, block.height)
    return block


def _layers(items: list[int], chains: dict[int, Chain], sources: set) -> dict[int, int]:
    """Each item's layer: one below its lowest producer, then arguments, constants and what only
    they feed moved down to just above their first use.

    Items come in program order, which is a topological order of the dataflow between boxes; a
    cluster that interleaves with its neighbours (a name-stack group with ops of its parent in
    between) can break that, so the order is made topological here (Kahn's, earliest first), and
    only a true cycle between clusters (a group both feeding and fed by an op between its ops)
    leaves edges against it: those are drawn back up around the side (layered_routes.py)."""
    position = {item: i for i, item in enumerate(items)}
    successors: dict[int, set] = {item: set() for item in items}
    consumers: dict[int, set] = {item: set() for item in items}
    for chain in chains.values():
        if chain.source == ENTRY:
            continue
        successors[chain.source].update(chain.targets)
        consumers[chain.source].update(chain.targets)
        if chain.exits:
            consumers[chain.source].add(ENTRY)  # stands for the exit
    waiting = {item: 0 for item in items}
    for item in items:
        for target in successors[item]:
            waiting[target] += 1
    ready = [position[item] for item in items if waiting[item] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    placed: set = set()
    earliest = 0
    while len(order) < len(items):
        if not ready:  # a cycle: take the earliest item left in program order
            while items[earliest] in placed:
                earliest += 1
            heapq.heappush(ready, earliest)
        item = items[heapq.heappop(ready)]
        if item in placed:
            continue
        placed.add(item)
        order.append(item)
        for target in successors[item]:
            waiting[target] -= 1
            if waiting[target] == 0 and target not in placed:
                heapq.heappush(ready, position[target])
    rank = {item: i for i, item in enumerate(order)}
    producers: dict[int, list[int]] = {item: [] for item in items}
    for item in items:
        for target in successors[item]:
            if rank[item] < rank[target]:
                producers[target].append(item)
    layer: dict[int, int] = {}
    floating: dict[int, bool] = {}
    for item in order:
        feeds = producers[item]
        layer[item] = max((layer[p] + 1 for p in feeds), default=0)
        floating[item] = all(floating[p] and len(consumers[p]) == 1 for p in feeds)
        if not feeds and consumers[item]:
            sources.add(item)
    last = max(layer.values(), default=-1) + 1
    for item in reversed(order):
        if floating[item] and consumers[item]:
            below = min(last if target == ENTRY else layer[target] if rank[target] > rank[item] else last for target in consumers[item])
            layer[item] = max(layer[item], below - 1)
    used = sorted(set(layer.values()))  # layers the moves emptied go
    if len(used) != last:
        renumber = {old: new for new, old in enumerate(used)}
        layer = {item: renumber[old] for item, old in layer.items()}
    return layer


def _thread_chain(problem: Problem, blocks: dict[int, Block], slots: "_Slots", slot_of: dict, layer: dict, last: int, value: int, chain: Chain) -> None:
    """Add the value's lane slots (one per band it passes) and the adjacencies the sweeps use;
    chain.xs becomes (slot, x offset) per band from the source's on (made x by the caller)."""
    spacing = problem.spacing
    if chain.source == ENTRY:
        first, source_slot, source_offset = 0, slots.add(0, spacing.lane_width, 0.0, value, False), 0.0
        chain.entry_slot = source_slot
    else:
        first, source_slot = layer[chain.source] + 1, slot_of[chain.source]
        source_offset = _port_offset(problem, blocks, chain.source, value, exit_port=True)
    targets_by_band: dict[int, list[int]] = {}
    for target in chain.targets:
        if layer[target] + 1 <= first:
            chain.back.add(target)  # a cycle between clusters: drawn back up around the side
        else:
            targets_by_band.setdefault(layer[target] + 1, []).append(target)
    deepest = max(targets_by_band, default=first)
    if chain.exits:
        deepest = max(deepest, last + 1)
    chain.first_band, chain.last_band = first, deepest
    xs = [(source_slot, source_offset)]
    previous = source_slot
    if deepest - first > LONG_SPAN:
        chain.side_x = 0.0  # placed with the other side lanes (_side_lanes)
        deepest = first + 1  # lanes for none of the bands; uses right below it still link
    for band in range(first + 1, deepest + 1):
        for target in targets_by_band.get(band, ()):
            slots.link(previous, slot_of[target])
        if band == deepest:
            break
        lane = slots.add(band, spacing.lane_width, 0.0, problem.key[value] + 0.5, False)
        slots.link(previous, lane)
        xs.append((lane, 0.0))
        previous = lane
    if chain.exits:
        exit_slot = slots.add(last + 1, spacing.lane_width, 0.0, problem.key[value], False)
        if chain.side_x is None:
            slots.link(previous, exit_slot)
        chain.exit_slot = exit_slot
    chain.xs = xs


def _side_lanes(chains: dict[int, Chain], right: float, spacing: Spacing) -> float:
    """Give each long value a side lane right of everything (right: the rightmost edge), one lane
    shared by values whose runs do not overlap; the new rightmost edge."""
    long = sorted((c for c in chains.values() if c.side_x is not None), key=lambda c: c.first_band)
    free: list[tuple[int, int]] = []  # (last band used, lane) of lanes in use
    lanes = 0
    for chain in long:
        if free and free[0][0] < chain.first_band:
            _, lane = heapq.heappop(free)
        else:
            lane, lanes = lanes, lanes + 1
        heapq.heappush(free, (chain.last_band, lane))
        chain.side_x = right + spacing.lane_gap + lane * (spacing.lane_width + spacing.lane_gap) + spacing.lane_width / 2
    return right + lanes * (spacing.lane_width + spacing.lane_gap)


def _port_offset(problem: Problem, blocks: dict[int, Block], item: int, value: int, exit_port: bool) -> float:
    """Where on its top (entry) or bottom (exit) side a cluster item takes `value`, from its centre."""
    if item < len(problem.names):
        return 0.0
    inner = blocks[item].chains[value]
    return (inner.exit_x if exit_port else inner.entry_x) - problem.size[item][0] / 2


def _bands(slots: "_Slots", block: Block, spacing: Spacing, top: float) -> None:
    """Band tops and heights: a layer is as tall as its tallest item, a channel between two
    bands as tall as its horizontal runs need; the port bands have no height, and no channel
    when they have no ports."""
    y, placed = top, None
    for b, band in enumerate(slots.bands):
        height = max((slots.height[s] for s in band), default=0.0)
        if band:
            if placed is not None:
                y += spacing.channel_height(block.tracks.get(placed, 0))
            placed = b
        block.band_top.append(y)
        block.band_height.append(height)
        y += height
    block.height = y + spacing.pad_bottom


def _arrow_tips(problem: Problem, block: Block, items: list[int]) -> None:
    """x of each edge's arrow tip on a node of the block: spread along the node's top side in
    operand order (on an argument's ellipse, all at the top of the curve)."""
    integral = problem.spacing.integral
    for item in items:
        edges = problem.incoming.get(item)
        if not edges:
            continue
        width = problem.size[item][0]
        x0 = block.x_of[item] - width / 2
        spread = problem.kind[item] != "argument"
        for k, (_, edge, _) in enumerate(edges):
            x = x0 + width * (k + 1) / (len(edges) + 1) if spread else x0 + width / 2
            block.tips[edge] = (int(x) + 0.5) if integral else x


def _assign_tracks(problem: Problem, blocks: dict[int, Block], block: Block) -> None:
    """A track in each channel for every value that runs sideways there: one horizontal run per
    value and channel (its branches to several uses share it), and runs that overlap on
    different tracks, so that no two values ever share a stretch of line. Greedy by left end,
    which uses as few tracks as the channel's densest point needs."""
    spacing = problem.spacing
    spans: dict[tuple[int, int], list[float]] = {}

    def add(band: int, value: int, a: float, b: float) -> None:
        span = spans.setdefault((band, value), [a, a])
        span[0], span[1] = min(span[0], a, b), max(span[1], a, b)

    for value, chain in block.chains.items():
        ends = [(target, block.tips[edge]) for target in chain.targets - chain.back if target < len(problem.names)
                for _, edge, producer in problem.incoming[target] if producer == value]
        ends += [(target, 0.0) for target in chain.targets - chain.back if target >= len(problem.names)]
        if chain.exits:
            ends.append((None, 0.0))
        for target, tip in ends:
            legs = problem.lane_legs(blocks, block, value, target, tip)
            for (x, _, last), (next_x, _, _) in zip(legs, legs[1:]):
                add(last, value, x, next_x)
    separation = 2.0 if spacing.integral else spacing.lane_gap
    by_band: dict[int, list] = {}
    for (band, value), (low, high) in spans.items():
        if high - low > 1e-6:
            by_band.setdefault(band, []).append((low, high, value))
    for band, runs in by_band.items():
        track_ends: list[float] = []  # each track's rightmost end so far
        for low, high, value in sorted(runs):
            track = next((t for t, end in enumerate(track_ends) if end + separation <= low), len(track_ends))
            if track == len(track_ends):
                track_ends.append(high)
            else:
                track_ends[track] = high
            block.track[(band, value)] = track
        block.tracks[band] = len(track_ends)
    for item in block.band_of.keys() & problem.callers:
        band = block.band_of[item]
        if band not in block.call_track:
            block.call_track[band] = block.tracks.get(band, 0)
            block.tracks[band] = block.call_track[band] + 1


class _Slots:
    """The container's boxes and lanes by band, their order and x positions."""

    def __init__(self, bands: int) -> None:
        self.band: list[int] = []
        self.width: list[float] = []
        self.height: list[float] = []
        self.sort_key: list[float] = []
        self.is_box: list[bool] = []
        self.is_block: list[bool] = []
        self.up: list[list] = []  # linked slots in the band above
        self.down: list[list] = []
        self.bands: list[list[int]] = [[] for _ in range(bands)]
        self.x: list[float] = []

    def add(self, band: int, width: float, height: float, sort_key: float, is_block: bool) -> int:
        slot = len(self.band)
        self.band.append(band)
        self.width.append(width)
        self.height.append(height)
        self.sort_key.append(sort_key)
        self.is_box.append(height > 0)
        self.is_block.append(is_block)
        self.up.append([])
        self.down.append([])
        self.bands[band].append(slot)
        return slot

    def link(self, upper: int, lower: int) -> None:
        self.up[lower].append(upper)
        self.down[upper].append(lower)

    def order(self) -> None:
        """Program order in each band, then a barycentre sweep down and one up."""
        for band in self.bands:
            band.sort(key=self.sort_key.__getitem__)
        position = [0.0] * len(self.band)
        for band in self.bands:
            for i, slot in enumerate(band):
                position[slot] = (i + 0.5) / len(band)
        for sweep in (range(1, len(self.bands)), range(len(self.bands) - 2, -1, -1)):
            neighbours = self.up if sweep.step == 1 else self.down
            for b in sweep:
                band = self.bands[b]
                centre = {}
                for slot in band:
                    near = neighbours[slot]
                    centre[slot] = sum(position[other] for other in near) / len(near) if near else position[slot]
                band.sort(key=centre.__getitem__)
                for i, slot in enumerate(band):
                    position[slot] = (i + 0.5) / len(band)

    def gap(self, left: int, right: int, spacing: Spacing) -> float:
        return spacing.node_gap if self.is_box[left] and self.is_box[right] else spacing.lane_gap

    def place(self, spacing: Spacing) -> None:
        """x of every slot: packed, then pulled towards its neighbours down, up and down again."""
        self.x = [0.0] * len(self.band)
        for band in self.bands:
            x = 0.0
            for i, slot in enumerate(band):
                if i:
                    x += self.gap(band[i - 1], slot, spacing)
                self.x[slot] = x + self.width[slot] / 2
                x += self.width[slot]
        # How much each slot resists moving off where it wants to be: boxes by their size, lanes
        # little, arguments and results that end somewhere (nothing above or below) hardly.
        weight = [(1.0 + self.width[s] if self.is_box[s] else 0.1) if self.up[s] and self.down[s] else 0.01 for s in range(len(self.band))]
        for direction in (1, -1, 1):
            neighbours = self.up if direction == 1 else self.down
            bands = self.bands if direction == 1 else self.bands[::-1]
            for band in bands:
                wanted = []
                for slot in band:
                    # Neighbours with nothing beyond them (an argument above, a value only
                    # returned below) follow their items rather than lead them: pulled by them,
                    # items would walk sideways layer after layer into a staircase.
                    near = [o for o in neighbours[slot] if neighbours[o]] or neighbours[slot]
                    wanted.append(sum(self.x[o] for o in near) / len(near) if near else self.x[slot])
                self._fit(band, wanted, weight, spacing)

    def _fit(self, band: list[int], wanted: list[float], weight: list[float], spacing: Spacing) -> None:
        """Left edges in band order, at least the gap apart, as near the wanted centres as can
        be (least squares): pool adjacent violators on the positions minus their least offsets."""
        if len(band) < 2:
            if band:
                x = wanted[0] - self.width[band[0]] / 2
                self.x[band[0]] = (round(x) if spacing.integral else x) + self.width[band[0]] / 2
            return
        offsets = [0.0]
        for i in range(1, len(band)):
            offsets.append(offsets[-1] + self.width[band[i - 1]] + self.gap(band[i - 1], band[i], spacing))
        pools: list[list[float]] = []  # [sum, count, first index]
        for i, slot in enumerate(band):
            w = weight[slot]
            pools.append([(wanted[i] - self.width[slot] / 2 - offsets[i]) * w, w, i])
            while len(pools) > 1 and pools[-2][0] / pools[-2][1] > pools[-1][0] / pools[-1][1]:
                total, count, _ = pools.pop()
                pools[-1][0] += total
                pools[-1][1] += count
        for k, (total, count, first) in enumerate(pools):
            end = pools[k + 1][2] if k + 1 < len(pools) else len(band)
            level = total / count
            if spacing.integral:
                level = round(level)
            for i in range(first, end):
                self.x[band[i]] = level + offsets[i] + self.width[band[i]] / 2

    def extent(self) -> tuple[float, float]:
        if not self.band:
            return 0.0, 0.0
        return min(self.x[s] - self.width[s] / 2 for s in range(len(self.band))), max(self.x[s] + self.width[s] / 2 for s in range(len(self.band)))


__all__ = ["LONG_SPAN", "SVG_SPACING", "TERMINAL_SPACING", "Spacing", "layered_layout"]
