"""The layered layout's blocks placed inside each other, and its edges routed through them.

An edge's route is a list of waypoints: from the bottom of its producer's box, down its lane in
each container it passes (a vertical run inside each layer's band), out of clusters through their
exit ports and into clusters through their entry ports, to the top of its consumer's box.
Between two bands an edge changes lanes in the channel: down to its value's own track there, across
and down again (layered.py gives every value that runs sideways in a channel a track of its own),
so every run is horizontal or vertical and no two values share a stretch of line. The runs become
the cubic-Bézier points a Layout holds (start, then control, control, end per segment), each run a
straight segment.
"""
from __future__ import annotations

from .geometry import EDGE_FONT_SIZE, ClusterBox, EdgeRoute, Layout, NodeBox
from .layered_model import LABEL_DEPTH, Block, Problem
from .node_sizes import text_width

Point = tuple[float, float]
LABEL_GAP = 3.0  # between an edge and its type label (points)


def assemble(problem: Problem, blocks: dict[int, Block]) -> Layout:
    spacing = problem.spacing
    boxes, origins = _place_blocks(problem, blocks)
    sx, sy = spacing.scale_x, spacing.scale_y
    root = blocks[Problem.ROOT]
    layout = Layout(round(root.width * sx, 2), round(root.height * sy, 2), engine="layered")
    n = len(problem.names)
    for item, name in enumerate(problem.names):
        x0, y0, x1, y1 = boxes[item]
        layout.nodes[name] = NodeBox(round((x0 + x1) / 2 * sx, 2), round((y0 + y1) / 2 * sy, 2), round((x1 - x0) * sx, 2), round((y1 - y0) * sy, 2))
    for k, cid in enumerate(problem.cluster_ids):
        x0, y0, x1, y1 = boxes[n + k]
        label_y = y0 + (spacing.pad_top / 2 if not spacing.integral else 0)
        layout.clusters[cid] = ClusterBox(round(x0 * sx, 2), round(y0 * sy, 2), round(x1 * sx, 2), round(y1 * sy, 2), (round((x0 + x1) / 2 * sx, 2), round(label_y * sy, 2)))
    router = _Router(problem, blocks, boxes, origins)
    for route in router.routes():
        layout.edges.append(route)
    return layout


def _place_blocks(problem: Problem, blocks: dict[int, Block]) -> tuple[list, dict]:
    """Every item's box (x0, y0, x1, y1) and every container's top-left corner, in layout units."""
    spacing = problem.spacing
    boxes: list = [None] * len(problem.size)
    origins = {Problem.ROOT: (0.0, 0.0)}
    containers = sorted((c for c in problem.contents if c != Problem.ROOT), key=problem.depth.__getitem__)
    for container in [Problem.ROOT, *containers]:
        ox, oy = origins[container]
        block = blocks[container]
        for item, band in block.band_of.items():
            width, height = problem.size[item]
            slack = block.band_height[band] - height
            if item not in block.sources:
                slack = slack // 2 if spacing.integral else slack / 2
            top = oy + block.band_top[band] + slack
            left = ox + block.x_of[item] - width / 2
            boxes[item] = (left, top, left + width, top + height)
            if item >= len(problem.names):
                origins[item] = (left, top)
    return boxes, origins


class _Router:
    def __init__(self, problem: Problem, blocks: dict[int, Block], boxes: list, origins: dict):
        self.problem = problem
        self.blocks = blocks
        self.boxes = boxes
        self.origins = origins
        self.arrow = problem.spacing.arrow
        self._functions = None

    def routes(self):
        problem = self.problem
        labelled = set()
        graph = problem.view.graph
        sx, sy = problem.spacing.scale_x, problem.spacing.scale_y
        for edge, up, lca, down in problem.routed:
            u, v = problem.node_index[edge[0]], problem.node_index[edge[1]]
            x0, _, x1, y1 = self.boxes[u]
            points = [((x0 + x1) / 2, y1)]
            for container in up:
                self._walk(points, container, u, None, edge)
            self._walk(points, lca, u, down[0] if down else v, edge)
            for k, container in enumerate(down):
                self._walk(points, container, u, down[k + 1] if k + 1 < len(down) else v, edge)
            tip = points[-1]
            label = None
            data = graph.edges[edge]
            if not problem.spacing.integral and data.get("type") and (edge[0], data.get("result")) not in labelled:
                labelled.add((edge[0], data.get("result")))
                sx0, sy0 = points[1] if len(points) > 1 else points[0]
                # Beside the edge where it leaves its band, on the side it does not turn to.
                turn = next((x for x, _ in points[2:] if abs(x - sx0) > 1e-6), sx0)
                half = LABEL_GAP + text_width(data["type"], EDGE_FONT_SIZE) / 2
                label = (round(sx0 - half if turn > sx0 else sx0 + half, 2), round(sy0 + LABEL_DEPTH / 2, 2))
            yield _edge_route(edge, points, tip, self.arrow, sx, sy, label)
        for edge in problem.direct:
            yield self._direct(edge)

    def _walk(self, points: list, container: int, value: int, target, edge) -> None:
        """Waypoints of `value`'s lane in `container` from its source's band to `target` (an item
        of the container; None: the container's exit): straight down each leg, sideways on the
        value's own track in the channel between two legs."""
        problem, spacing = self.problem, self.problem.spacing
        block = self.blocks[container]
        ox, oy = self.origins[container]
        tip_x = block.tips.get(edge, 0.0) if target is not None and target < len(problem.names) else 0.0
        chain = block.chains[value]
        if target in chain.back:
            band = chain.first_band
            points.append((ox + chain.xs[0], oy + block.band_bottom(band)))
            self._back(points, block, ox, oy, band, target, ox + tip_x, value)
            return
        legs = problem.lane_legs(self.blocks, block, value, target, tip_x)
        points.append((ox + legs[0][0], oy + block.band_bottom(legs[0][1])))
        for k in range(1, len(legs)):
            x, last = legs[k - 1][0], legs[k - 1][2]
            next_x, first, next_last = legs[k]
            if abs(x - next_x) > 1e-6:
                y = oy + block.channel_y(last, value, spacing)
                points += [(ox + x, y), (ox + next_x, y)]
            points.append((ox + next_x, oy + block.band_top[first]))
            if k < len(legs) - 1:
                points.append((ox + next_x, oy + block.band_bottom(next_last)))
        end_x = ox + legs[-1][0]
        points.append((end_x, oy + block.height if target is None else self.boxes[target][1]))

    def _back(self, points: list, block: Block, ox: float, oy: float, band: int, target: int, tip_x, value: int) -> None:
        """Up from the source's band to a target above it: through the channel below the source
        to the container's right margin, where no box is, up it, and into the target from the
        channel above it."""
        spacing = self.problem.spacing
        below = oy + block.band_bottom(band) + spacing.rank_gap / 2
        target_band = block.band_of[target]
        above = oy + block.band_top[target_band] - spacing.rank_gap / 2
        margin = ox + block.width - spacing.pad_x / 2
        x = tip_x if target < len(self.problem.names) else self.origins[target][0] + self.blocks[target].chains[value].entry_x
        points.extend([(points[-1][0], below), (margin, below), (margin, above), (x, above), (x, self.boxes[target][1])])

    def _direct(self, edge) -> EdgeRoute:
        """A route straight from tail to head: call edges, edges against program order, loops."""
        problem = self.problem
        sx, sy = problem.spacing.scale_x, problem.spacing.scale_y
        tx0, ty0, tx1, ty1 = self.boxes[problem.node_index[edge[0]]]
        hx0, hy0, hx1, hy1 = self.boxes[problem.node_index[edge[1]]]
        if edge[0] == edge[1]:  # a loop on the box's right side
            reach = 2.0 * self.arrow
            mid = (ty0 + ty1) / 2
            start, end = (tx1, mid - (ty1 - ty0) / 4), (tx1 + self.arrow, mid + (ty1 - ty0) / 4)
            return _edge_route(edge, [start, (tx1 + reach, start[1]), (tx1 + reach, end[1]), (tx1, end[1])], (tx1, end[1]), self.arrow, sx, sy, None)
        callee = self._callee_box(edge)
        if callee is not None:
            return self._call(edge, (tx0, ty0, tx1, ty1), *callee)
        if hy0 >= ty1:
            start, tip = ((tx0 + tx1) / 2, ty1), ((hx0 + hx1) / 2, hy0)
        elif hy1 <= ty0:  # the head is above: leave from the top, arrive at the bottom
            start, tip = ((tx0 + tx1) / 2, ty0), ((hx0 + hx1) / 2, hy1)
        else:  # side by side (functions in one row): under both, through the channel below
            start, tip = ((tx0 + tx1) / 2, ty1), ((hx0 + hx1) / 2, hy1)
            below = max(ty1, hy1) + self.problem.spacing.rank_gap / 2
            return _edge_route(edge, [start, (start[0], below), (tip[0], below), tip], tip, self.arrow, sx, sy, None)
        return _edge_route(edge, [start, tip], tip, self.arrow, sx, sy, None)

    def _callee_box(self, edge):
        """For a call edge, the box of the function it calls when the caller is outside it, and
        whether that is a folded function's box: the edge ends on that box's border (as
        Graphviz's lhead does), not on an argument inside, so it never runs across the callee's ops."""
        problem = self.problem
        if problem.view.graph.edges[edge]["kind"] != "call":
            return None
        home, n = problem.home, len(problem.names)
        function = home[problem.node_index[edge[1]]]
        while function != problem.ROOT and problem.view.clusters[problem.cluster_ids[function - n]].kind != "function":
            function = home[function]
        container = home[problem.node_index[edge[0]]]
        while container != problem.ROOT and container != function:
            container = home[container]
        if function == problem.ROOT:  # the callee is drawn folded: its box, if it stands apart
            head = problem.node_index[edge[1]]
            inside = home[problem.node_index[edge[0]]] != problem.ROOT
            return (self.boxes[head], True) if inside and home[head] == problem.ROOT else None
        if container == function:
            return None  # a call from inside the function it calls
        return self.boxes[function], False

    def _function_boxes(self) -> list:
        """The boxes of the functions drawn side by side at the top level."""
        if self._functions is None:
            problem, n = self.problem, len(self.problem.names)
            self._functions = [self.boxes[n + k] for k, cid in enumerate(problem.cluster_ids)
                               if problem.home[n + k] == Problem.ROOT and problem.view.clusters[cid].kind == "function"]
        return self._functions

    def _call_y(self, item: int) -> float:
        """Where a call edge from `item` runs sideways: its own track in the channel below the
        band `item` sits in, where no box is and no value runs."""
        container = self.problem.home[item]
        block = self.blocks[container]
        return self.origins[container][1] + block.call_y(block.band_of[item], self.problem.spacing)

    def _top_function_box(self, item: int):
        """The box of the top-level function that draws `item`, if any."""
        problem, n = self.problem, len(self.problem.names)
        container, found = problem.home[item], None
        while container != Problem.ROOT:
            if problem.view.clusters[problem.cluster_ids[container - n]].kind == "function":
                found = container
            container = problem.home[container]
        return None if found is None else self.boxes[found]

    def _call(self, edge, tail_box, callee_box, folded: bool) -> EdgeRoute:
        """From the caller's side facing the callee to the callee's nearest border: sideways
        (leaving and arriving horizontally) when the callee is beside the caller,
        else down or up."""
        sx, sy = self.problem.spacing.scale_x, self.problem.spacing.scale_y
        tx0, ty0, tx1, ty1 = tail_box
        cx0, cy0, cx1, cy1 = callee_box
        inset = min(self.arrow, (cy1 - cy0) / 2)
        y = min(max((ty0 + ty1) / 2, cy0 + inset), cy1 - inset)
        if cx0 >= tx1 or cx1 <= tx0:
            right = cx0 >= tx1
            start = (tx1 if right else tx0, (ty0 + ty1) / 2)
            waypoints = [start]
            low, high = (tx1, cx0) if right else (cx1, tx0)
            between = [box for box in self._function_boxes() if low <= box[0] and box[2] <= high]
            if between:  # over (or under) the functions drawn between caller and callee, not across them
                top, bottom = min(box[1] for box in between) - self.arrow, max(box[3] for box in between) + self.arrow
                fits_below = bottom <= self.blocks[Problem.ROOT].height
                corridor = top if top >= 0 and (abs(start[1] - top) <= abs(start[1] - bottom) or not fits_below) else bottom
                near, far = (min(box[0] for box in between), max(box[2] for box in between)) if right else (max(box[2] for box in between), min(box[0] for box in between))
                step = self.arrow if right else -self.arrow
                waypoints += [(near - step, corridor), (far + step, corridor)]
                y = min(max(corridor, cy0 + inset), cy1 - inset)
            tip = (cx0 if right else cx1, y)
            caller = self._top_function_box(self.problem.node_index[edge[0]])
            if caller is not None and folded:
                # A folded function beside the caller's: along the channel below the call's row
                # out of the caller's box, down beside it below whatever stands between, across
                # under the callee and up into its bottom side.
                spacing = self.problem.spacing
                channel = self._call_y(self.problem.node_index[edge[0]])
                side = start[0] + (self.arrow if right else -self.arrow)
                outside = caller[2] + spacing.node_gap / 2 if right else caller[0] - spacing.node_gap / 2
                x = (cx0 + cx1) / 2
                low, high = min(outside, x), max(outside, x)
                between = [box for box in (self.boxes[item] for item in self.problem.contents[Problem.ROOT])
                           if box is not callee_box and box is not caller and box[0] < high and box[2] > low]
                corridor = max([channel, cy1 + spacing.rank_gap / 2] + [box[3] + spacing.rank_gap / 2 for box in between])
                tip = (x, cy1)
                points = [start, (side, start[1]), (side, channel), (outside, channel), (outside, corridor), (x, corridor), tip]
                return _edge_route(edge, points, tip, self.arrow, sx, sy, None)
            if caller is not None:  # out of the caller's box first, along the channel below the
                # call's row, where no box is (its row may hold other boxes beside it)
                border = caller[2] if right else caller[0]
                ahead = waypoints[1][0] if len(waypoints) > 1 else tip[0]
                channel = self._call_y(self.problem.node_index[edge[0]])
                side = start[0] + (self.arrow if right else -self.arrow)
                waypoints[1:1] = [(side, channel), ((border + ahead) / 2, channel)]
            waypoints.append((tip[0] - self.arrow if right else tip[0] + self.arrow, y))
            corners = [start]
            for (px, py), (qx, qy) in zip(waypoints, waypoints[1:]):  # across, down or up, across
                middle = (px + qx) / 2
                corners += [(middle, py), (middle, qy), (qx, qy)]
            return _edge_route(edge, [*corners, tip], tip, self.arrow, sx, sy, None)
        x = min(max((tx0 + tx1) / 2, cx0 + inset), cx1 - inset)
        if cy0 >= ty1:
            start, tip = ((tx0 + tx1) / 2, ty1), (x, cy0)
        else:
            start, tip = ((tx0 + tx1) / 2, ty0), (x, cy1)
        return _edge_route(edge, [start, tip], tip, self.arrow, sx, sy, None)


def _key(key):
    return key if isinstance(key, (int, str)) else str(key)


def _edge_route(edge, points: list, tip: Point, arrow: float, sx: float, sy: float, label) -> EdgeRoute:
    """The route through `points` (ending at the arrow's tip) drawn with horizontal and vertical
    runs only: two waypoints apart in both x and y are joined down, across at half height and
    down again. Each run is a straight cubic segment (the form a Layout holds), the arrow the
    last `arrow` of the last run."""
    square = [points[0]]
    for px, py in points[1:]:
        qx, qy = square[-1]
        if abs(px - qx) > 1e-6 and abs(py - qy) > 1e-6:
            middle = (py + qy) / 2
            square += [(qx, middle), (px, middle)]
        square.append((px, py))
    corners = _corners(square)
    (ax, ay), (bx, by) = corners[-2], corners[-1]
    length = abs(bx - ax) + abs(by - ay)
    reach = min(arrow, length)
    if length > 0:
        corners[-1] = (bx - (bx - ax) / length * reach, by - (by - ay) / length * reach)
    curve = [corners[0]]
    for (px, py), (qx, qy) in zip(corners, corners[1:]):
        curve += [(px + (qx - px) / 3, py + (qy - py) / 3), (px + 2 * (qx - px) / 3, py + 2 * (qy - py) / 3), (qx, qy)]
    return EdgeRoute(edge[0], edge[1], _key(edge[2]), [(round(x * sx, 2), round(y * sy, 2)) for x, y in curve], (round(tip[0] * sx, 2), round(tip[1] * sy, 2)), label)


def _corners(points: list) -> list:
    """The waypoints without repeats and without the middle of three on one line."""
    out: list = []
    for x, y in points:
        if out:
            px, py = out[-1]
            if abs(px - x) < 1e-6 and abs(py - y) < 1e-6:
                continue
            if len(out) >= 2:
                qx, qy = out[-2]
                if (abs(qx - x) < 1e-6 and abs(px - x) < 1e-6) or (abs(qy - y) < 1e-6 and abs(py - y) < 1e-6):
                    out[-1] = (x, y)
                    continue
        out.append((x, y))
    if len(out) == 1:
        out.append(out[0])
    return out


__all__ = ["assemble"]
