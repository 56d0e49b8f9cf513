"""Small annotated StableHLO programs; tiny_model.mlir is the one `hlodbg` opens by default."""
