"""Layer 2, the machine: processes and grid geometry, the backend that stores values and owns
numerics, and the allocator tweaks a run uses.

Imports only ir/.
"""
