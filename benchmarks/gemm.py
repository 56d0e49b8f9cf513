"""Which GEMM a Python program can call fastest here (issue 36, part 1): the candidates on the
matrix products of real models, against XLA's own matmul.

Candidates, each where it is installed:
  openblas   numpy's np.matmul (the OpenBLAS numpy ships): what backend.matmul calls
  blis       the `blis` package's gemm (BLIS, built for this CPU's kernels)
  mkl        Intel MKL's cblas_sgemm/dgemm through ctypes (`pip install mkl`; libmkl_rt)
  xla        jax.jit(jnp.matmul) on the CPU (Eigen or oneDNN, as this jaxlib chooses)
Shapes: the products of a GPT-2-small training step (256 tokens, D=768, MLP 3072, vocabulary
8192; forward, the weight gradients with a transposed operand, batched attention) and of the
12-layer D=256 transformer; f32, and bf16 operands (converted to f32 first, as backend.matmul
does for them). Two columns per candidate:
  1 thread   GF/s from the thread's CPU time with the library held to one thread, which a busy
             shared machine disturbs little;
  all        GF/s from wall time with the library's own threads (every core): meaningful only on
             an otherwise quiet machine (the load average is printed).
XLA's single-thread figure is not measured (its pool is fixed when JAX starts). The winner per
shape is printed, and the verdict: the candidate with the best geometric mean of its 1-thread
rates over the shapes.
Run: python benchmarks/gemm.py [--repeats N] [--quick]
"""
from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import os
import sys
import time
from math import prod
from pathlib import Path
from typing import Callable, Optional

import numpy as np

# (label, lhs shape, rhs shape, lhs transposed in memory)
SHAPES = [
    ("qkv/out proj 256x768x768", (256, 768), (768, 768), False),
    ("mlp up 256x768x3072", (256, 768), (768, 3072), False),
    ("mlp down 256x3072x768", (256, 3072), (3072, 768), False),
    ("logits 256x768x8192", (256, 768), (768, 8192), False),
    ("dW up (768x256)^T.256x3072", (768, 256), (256, 3072), True),
    ("dW down (3072x256)^T.256x768", (3072, 256), (256, 768), True),
    ("attention 12x256x64x256", (12, 256, 64), (12, 64, 256), False),
    ("transformer 64x256x1024", (64, 256), (256, 1024), False),
]


def mkl_library() -> Optional[ctypes.CDLL]:
    """MKL's runtime library if one is installed (the `mkl` wheel puts it in sys.prefix/lib; or a
    directory on LD_LIBRARY_PATH)."""
    folders = [Path(sys.prefix) / "lib", *(Path(p) for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p)]
    candidates = [ctypes.util.find_library("mkl_rt"), *(str(p) for folder in folders for p in sorted(folder.glob("libmkl_rt.so*")))]
    for name in candidates:
        if name:
            try:
                return ctypes.CDLL(name)
            except OSError:
                continue
    return None


class MklGemm:
    """C = A @ B for f32/f64 matrices (each operand C-contiguous or the transpose of one) through
    cblas_?gemm, batched by a loop over the leading dim."""

    ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112

    def __init__(self, lib: ctypes.CDLL):
        self.lib = lib
        self.functions = {np.dtype(np.float32): (lib.cblas_sgemm, ctypes.c_float),
                          np.dtype(np.float64): (lib.cblas_dgemm, ctypes.c_double)}
        for function, scalar in self.functions.values():
            function.restype = None
            function.argtypes = [ctypes.c_int] * 6 + [scalar, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                                                      scalar, ctypes.c_void_p, ctypes.c_int]

    def threads(self, count: Optional[int]) -> None:
        self.lib.MKL_Set_Num_Threads(count or os.cpu_count())

    def _operand(self, x: np.ndarray) -> tuple[int, int]:
        if x.flags.c_contiguous:
            return self.NO_TRANS, x.shape[1]
        if x.T.flags.c_contiguous:
            return self.TRANS, x.shape[0]
        raise ValueError("operand is neither C-contiguous nor a transposed C-contiguous array")

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.ndim == 3:
            return np.stack([self(x, y) for x, y in zip(a, b)])
        function, _ = self.functions[a.dtype]
        out = np.empty((a.shape[0], b.shape[1]), a.dtype)
        ta, lda = self._operand(a)
        tb, ldb = self._operand(b)
        function(self.ROW_MAJOR, ta, tb, a.shape[0], b.shape[1], a.shape[1], 1.0, a.ctypes.data, lda,
                 b.ctypes.data, ldb, 0.0, out.ctypes.data, out.shape[1])
        return out


def operands(lhs_shape, rhs_shape, transposed: bool, dtype, rng) -> tuple[np.ndarray, np.ndarray]:
    if transposed:  # the lhs is the transpose of a C-contiguous array (a weight gradient's x^T): a view
        a = rng.standard_normal(lhs_shape[::-1], dtype=np.float32).astype(dtype).T
    else:
        a = rng.standard_normal(lhs_shape, dtype=np.float32).astype(dtype)
    return a, rng.standard_normal(rhs_shape, dtype=np.float32).astype(dtype)


def best(run: Callable[[], object], clock: Callable[[], float], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = clock()
        run()
        times.append(clock() - start)
    return min(times)


def candidates() -> dict[str, tuple[Callable, Callable[[Optional[int]], object]]]:
    """{name: (gemm(a, b), set_threads(n or None for all))} of what is installed."""
    from threadpoolctl import ThreadpoolController

    blas = ThreadpoolController().select(user_api="blas")
    found = {"openblas": (np.matmul, lambda n: blas.limit(limits=n) if n else blas.limit(limits=os.cpu_count()))}
    try:
        import blis.py

        def blis_gemm(a, b):
            if a.ndim == 3:
                return np.stack([blis_gemm(x, y) for x, y in zip(a, b)])
            # blis wants C-contiguous operands and says which is transposed.
            ta, tb = not a.flags.c_contiguous, not b.flags.c_contiguous
            return blis.py.gemm(a.T if ta else a, b.T if tb else b, trans1=ta, trans2=tb, beta=0.0)

        found["blis"] = (blis_gemm, lambda n: os.environ.__setitem__("BLIS_NUM_THREADS", str(n or os.cpu_count())))
    except ImportError:
        pass
    lib = mkl_library()
    if lib is not None:
        mkl = MklGemm(lib)
        found["mkl"] = (mkl, mkl.threads)
    return found


def xla_gemm():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    product = jax.jit(jnp.matmul)
    return lambda a, b: product(a, b).block_until_ready()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="two shapes, f32 only")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    found = candidates()
    xla = xla_gemm()
    shapes = SHAPES[:2] if args.quick else SHAPES
    dtypes = [np.float32] if args.quick else [np.float32, "bfloat16"]
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; candidates: {', '.join(found)}"
          f"{', xla' if xla else ''}")
    header = f"{'product':32s}{'dtype':>9s}" + "".join(f"{name + ' 1t':>12s}{name + ' all':>12s}" for name in found)
    print(header + (f"{'xla all':>10s}" if xla else "") + "   (GF/s)")
    single: dict[str, list[float]] = {name: [] for name in found}
    for label, lhs_shape, rhs_shape, transposed in shapes:
        for dtype in dtypes:
            if dtype == "bfloat16":
                import ml_dtypes

                dtype = ml_dtypes.bfloat16
            a, b = operands(lhs_shape, rhs_shape, transposed, dtype, rng)
            flops = 2 * prod(a.shape[:-1]) * a.shape[-1] * b.shape[-1]
            row = f"{label:32s}{np.dtype(dtype).name:>9s}"
            rates = {}
            for name, (gemm, threads) in found.items():
                # backend.matmul's path: narrow floats to f32 first (counted), then the product.
                run = (lambda g=gemm, a=a, b=b: g(a, b)) if dtype == np.float32 else \
                    (lambda g=gemm, a=a, b=b: g(a.astype(np.float32), b.astype(np.float32)))
                threads(1)
                one = flops / best(run, time.thread_time, args.repeats) / 1e9
                threads(None)
                every = flops / best(run, time.perf_counter, args.repeats) / 1e9
                rates[name] = one
                single[name].append(one)
                row += f"{one:12.1f}{every:12.1f}"
            if xla:
                run = lambda a=a, b=b: xla(a, b)  # noqa: E731
                run()
                row += f"{flops / best(run, time.perf_counter, args.repeats) / 1e9:10.1f}"
            print(row + f"   best 1t: {max(rates, key=rates.get)}")
    means = {name: float(np.exp(np.mean(np.log(v)))) for name, v in single.items()}
    winner = max(means, key=means.get)
    print("geometric mean, 1 thread: " + ", ".join(f"{name} {m:.1f} GF/s" for name, m in means.items()))
    print(f"winner (1 thread): {winner}" + (f", {means[winner] / means['openblas']:.2f}x numpy's OpenBLAS" if winner != "openblas" else ""))


if __name__ == "__main__":
    main()
