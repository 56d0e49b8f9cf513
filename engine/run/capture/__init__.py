"""Capture of a compiled run: the program instrumented with extra outputs (transform.py), compiled
and run by XLA (engine/machine/xla/runtime.py), its values written in the capture layout
(engine/run/capture_format.py) by run.py."""
