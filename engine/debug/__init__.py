"""Layer 5, debugging: the trace of a recorded run, the value store, breakpoints and expressions,
the timeline of stepping moves, sessions on one process or a grid, value summaries.

May import every other engine layer; nothing in the engine imports it.
"""
