"""The TPU emulation: one emulated chip per device of the grid.

generations.py  what each TPU generation contributes (HBM, MXU width, tiling factors)
default_layouts.py  the layout XLA's TPU compiler gives a value nobody chose one for
assignment.py   which layout each value of a program gets: given, by option, or default
numerics.py     how a TPU computes: bf16 MXU passes, flushed subnormals, no f64
backend.py      TpuBackend: storage as physical tiled buffers + the numerics above
"""
