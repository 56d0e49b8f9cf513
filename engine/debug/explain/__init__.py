"""Explaining one op to a student: what it does, its attributes, its result shape, its provenance."""
