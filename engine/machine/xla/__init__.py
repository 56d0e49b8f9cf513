"""The XLA backend: real devices (CPU, GPU, TPU) through JAX's runtime, an optional extra."""
