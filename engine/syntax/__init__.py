"""Layer 2, syntax: the input languages (frontends). `mlir/` reads and prints StableHLO/MLIR text.

Imports only ir/.
"""
