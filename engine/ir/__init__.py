"""Layer 1, the IR: modules, functions, ops and values; types, attributes and element dtypes;
source positions and locations; errors; op definitions and their traits; sharding descriptions.

Imports nothing else of the engine. Every other layer builds on it.
"""
