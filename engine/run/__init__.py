"""Layer 4, running programs: the interpreter, the grid scheduler, SPMD runs and self-checks.

Imports ir/, syntax/, verify/, machine/ and ops/.
"""
