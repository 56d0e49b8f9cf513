"""Depth-first walks over a program's own graphs (calls between functions or computations) that
keep their own stack: a chain of calls is as deep as the program makes it, never bounded by
Python's recursion limit."""
from __future__ import annotations

from typing import Callable, Hashable, Iterable, Iterator, TypeVar

Node = TypeVar("Node")


def callees_first(root: Node, children: Callable[[Node], Iterable[Node]], key: Callable[[Node], Hashable],
                  on_cycle: Callable[[list[Node], Node], None], done: set | None = None) -> Iterator[Node]:
    """Every node reachable from `root` (itself included), each after all the nodes it reaches
    (post-order), each once; nodes whose key is in `done` are skipped, and every node yielded is
    added to it (share one set between walks from several roots). A node met again while the walk
    is still inside it closes a cycle: `on_cycle(path, node)` is called with the nodes from `root`
    down to the one that reaches `node` again, and must raise."""
    done = set() if done is None else done
    if key(root) in done:
        return
    path, on_path, cursors = [root], {key(root)}, [iter(children(root))]
    while cursors:
        child = next(cursors[-1], None)
        if child is None:
            cursors.pop()
            node = path.pop()
            on_path.discard(key(node))
            done.add(key(node))
            yield node
            continue
        name = key(child)
        if name in done:
            continue
        if name in on_path:
            on_cycle(path, child)
        path.append(child)
        on_path.add(name)
        cursors.append(iter(children(child)))


__all__ = ["callees_first"]
