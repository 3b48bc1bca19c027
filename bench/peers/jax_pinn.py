"""Peer anchor: PINN training-step cost in JAX, written the way a JAX user writes it.

The workloads of shared/bench/WORKLOADS.md (burgers, ns2d, ks4, order1..order6, poisson32d), with
the command line and output of shared/bench/torch_pinn.py, plus --json and --points.

One 'step' = forward + PDE residual (needs input derivatives) + loss + gradient of the loss w.r.t.
every network parameter: jax.jit(jax.value_and_grad(loss)), float32.  Two variants per workload:

  NAME        nested transforms on a per-point function, vmapped over the points: jax.grad for
              first derivatives and, nested, for higher ones along one input (u_xx, u_xxxx,
              d^k u/dx^k), jax.jacrev for the Jacobian of a vector output, jax.hessian for
              Laplacians (ns2d, poisson32d).  This mirrors torch_pinn.py's nested reverse mode.
  NAME/jet    Taylor mode with jax.experimental.jet on the batched network: one jet of order k
              along the input direction the residual differentiates in (x, or each of the 32
              axes for poisson32d, vmapped), jax.jvp for a lone first derivative (u_t).

Threads: --threads N (default 2) pins this process to N of the CPUs it may run on
(os.sched_setaffinity, as taskset would; XLA sizes its CPU thread pool from that mask) and sets
XLA_FLAGS="--xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads=N", both before jax is
imported.

Usage: python3 jax_pinn.py [--threads 2] [--reps 5] [--only NAME ...] [--variant all|nested|jet]
                           [--points N] [--json FILE]
  --only NAME runs both variants of NAME; --only NAME/jet (or NAME/nested) runs one.
Prints one line per workload: name  median_seconds_per_step  points/s  loss  warm-up
(the warm-up step includes tracing and XLA compilation).  --json writes {name: seconds_per_step}.
"""
import argparse
import math
import os
import statistics
import sys
import time

from compare import write_json  # stdlib only, as this file before jax is imported

# name: (din, width, depth, dout, npoints), as in WORKLOADS.md and torch_pinn.py
WORKLOADS = {
    "burgers": (2, 64, 4, 1, 8192),
    "ns2d": (2, 64, 4, 3, 8192),
    "ks4": (2, 64, 4, 1, 8192),
    **{f"order{k}": (1, 64, 4, 1, 8192) for k in range(1, 7)},
    "poisson32d": (32, 128, 4, 1, 1024),
}
VARIANTS = ("nested", "jet")


def pin_threads(threads):
    """Restricts this process to `threads` CPUs and tells XLA so; must run before importing jax."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) > threads:
        os.sched_setaffinity(0, cpus[:threads])
    flags = os.environ.get("XLA_FLAGS", "")
    os.environ["XLA_FLAGS"] = (
        f"{flags} --xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads={threads}"
    ).strip()
    return sorted(os.sched_getaffinity(0))


def build(jax, jnp, jet):
    """Returns {name: {variant: loss(params, X)}} for every workload."""

    def mlp(key, din, width, depth, dout):
        sizes = [din] + [width] * depth + [dout]
        params = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            key, sub = jax.random.split(key)
            std = math.sqrt(2.0 / (a + b))  # Glorot normal
            params.append((jax.random.normal(sub, (a, b), jnp.float32) * std,
                           jnp.zeros((b,), jnp.float32)))
        return params

    def net(params, x):  # x: (din,) for one point or (n, din) for a batch
        h = x
        for W, b in params[:-1]:
            h = jnp.tanh(h @ W + b)
        W, b = params[-1]
        return h @ W + b

    def d(f, i):
        """x -> d f(x) / d x_i for a scalar f of one point (reverse mode)."""
        return lambda x: jax.grad(f)(x)[i]

    def mean_sq(r):
        return jnp.mean(r * r)

    nu_burgers = 0.01 / math.pi
    nu_ns = 0.01

    # ---- nested: per-point functions, vmapped ----
    def burgers(params, X):
        u = lambda x: net(params, x)[0]

        def r(x):
            u0, (ux, ut) = jax.value_and_grad(u)(x)
            uxx = d(d(u, 0), 0)(x)
            return ut + u0 * ux - nu_burgers * uxx

        return mean_sq(jax.vmap(r)(X))

    def ns2d(params, X):
        f = lambda x: net(params, x)  # (u, v, p)

        def r(x):
            u, v, _ = f(x)
            J = jax.jacrev(f)(x)  # 3 x 2
            H = jax.hessian(lambda x: f(x)[:2])(x)  # 2 x 2 x 2: u and v
            (ux, uy), (vx, vy), (px, py) = J
            lap_u = H[0, 0, 0] + H[0, 1, 1]
            lap_v = H[1, 0, 0] + H[1, 1, 1]
            r1 = ux + vy
            r2 = u * ux + v * uy + px - nu_ns * lap_u
            r3 = u * vx + v * vy + py - nu_ns * lap_v
            return r1, r2, r3

        r1, r2, r3 = jax.vmap(r)(X)
        return mean_sq(r1) + mean_sq(r2) + mean_sq(r3)

    def ks4(params, X):
        u = lambda x: net(params, x)[0]

        def r(x):
            u0, (ux, ut) = jax.value_and_grad(u)(x)
            uxx = d(d(u, 0), 0)
            uxxxx = d(d(uxx, 0), 0)
            return ut + u0 * ux + uxx(x) + uxxxx(x)

        return mean_sq(jax.vmap(r)(X))

    def order_k(k):
        def loss(params, X):
            f = lambda s: net(params, s[None])[0]  # scalar -> scalar
            for _ in range(k):
                f = jax.grad(f)
            return mean_sq(jax.vmap(f)(X[:, 0]))

        return loss

    def poisson(params, X):
        u = lambda x: net(params, x)[0]
        r = lambda x: jnp.trace(jax.hessian(u)(x)) + 1.0
        return mean_sq(jax.vmap(r)(X))

    # ---- jet: Taylor mode on the batched network ----
    def along(X, axis):
        return jnp.zeros_like(X).at[:, axis].set(1.0)

    def taylor(f, X, V, order):
        """f(X) and its derivatives 1..order along V (jet's series are derivatives, not k!-scaled)."""
        return jet(f, (X,), ([V] + [jnp.zeros_like(X)] * (order - 1),))

    def burgers_jet(params, X):
        f = lambda X: net(params, X)[:, 0]
        u, (ux, uxx) = taylor(f, X, along(X, 0), 2)
        _, ut = jax.jvp(f, (X,), (along(X, 1),))
        return mean_sq(ut + u * ux - nu_burgers * uxx)

    def ns2d_jet(params, X):
        f = lambda X: net(params, X)
        out, (dx, dxx) = taylor(f, X, along(X, 0), 2)
        _, (dy, dyy) = taylor(f, X, along(X, 1), 2)
        u, v = out[:, 0], out[:, 1]
        ux, vx, px = dx[:, 0], dx[:, 1], dx[:, 2]
        uy, vy, py = dy[:, 0], dy[:, 1], dy[:, 2]
        r1 = ux + vy
        r2 = u * ux + v * uy + px - nu_ns * (dxx[:, 0] + dyy[:, 0])
        r3 = u * vx + v * vy + py - nu_ns * (dxx[:, 1] + dyy[:, 1])
        return mean_sq(r1) + mean_sq(r2) + mean_sq(r3)

    def ks4_jet(params, X):
        f = lambda X: net(params, X)[:, 0]
        u, (ux, uxx, _, uxxxx) = taylor(f, X, along(X, 0), 4)
        _, ut = jax.jvp(f, (X,), (along(X, 1),))
        return mean_sq(ut + u * ux + uxx + uxxxx)

    def order_k_jet(k):
        def loss(params, X):
            f = lambda X: net(params, X)[:, 0]
            _, ys = taylor(f, X, jnp.ones_like(X), k)
            return mean_sq(ys[k - 1])

        return loss

    def poisson_jet(params, X):
        f = lambda X: net(params, X)[:, 0]
        second = lambda e: taylor(f, X, jnp.broadcast_to(e, X.shape), 2)[1][1]
        lap = jnp.sum(jax.vmap(second)(jnp.eye(X.shape[1], dtype=X.dtype)), axis=0)
        return mean_sq(lap + 1.0)

    fns = {
        "burgers": {"nested": burgers, "jet": burgers_jet},
        "ns2d": {"nested": ns2d, "jet": ns2d_jet},
        "ks4": {"nested": ks4, "jet": ks4_jet},
        **{f"order{k}": {"nested": order_k(k), "jet": order_k_jet(k)} for k in range(1, 7)},
        "poisson32d": {"nested": poisson, "jet": poisson_jet},
    }
    return mlp, fns


def row_name(name, variant):
    return name if variant == "nested" else f"{name}/{variant}"


def selected(only, variant):
    """(workload, variant) pairs in WORKLOADS.md order, variants together."""
    variants = VARIANTS if variant == "all" else (variant,)
    wanted = []
    for item in only or WORKLOADS:
        name, _, v = item.partition("/")
        if name not in WORKLOADS or (v and v not in VARIANTS):
            sys.exit(f"jax_pinn.py: unknown workload '{item}' (names: {', '.join(WORKLOADS)}; "
                     f"suffixes: /nested, /jet)")
        for vv in ([v] if v else variants):
            if (name, vv) not in wanted:
                wanted.append((name, vv))
    return wanted


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5, help="timed steps after one warm-up")
    ap.add_argument("--only", nargs="*", help="workloads (NAME, NAME/jet or NAME/nested)")
    ap.add_argument("--variant", choices=("all",) + VARIANTS, default="all")
    ap.add_argument("--points", type=int, default=0, help="points per workload (default: its own)")
    ap.add_argument("--json", metavar="FILE", help="write {name: median seconds per step}")
    a = ap.parse_args()
    if a.threads < 1 or a.reps < 1 or a.points < 0:
        ap.error("--threads and --reps want positive integers, --points a non-negative one")
    work = selected(a.only, a.variant)
    cpus = pin_threads(a.threads)

    import jax
    import jax.numpy as jnp
    from jax.experimental.jet import jet

    jax.config.update("jax_enable_x64", False)  # float32, JAX's default, said out loud
    import jaxlib

    print(f"jax {jax.__version__} jaxlib {jaxlib.__version__} threads={a.threads} "
          f"cpus={','.join(map(str, cpus))} backend={jax.default_backend()} "
          f"XLA_FLAGS='{os.environ['XLA_FLAGS']}'", flush=True)

    mlp, fns = build(jax, jnp, jet)
    results = {}
    for name, variant in work:
        din, width, depth, dout, n = WORKLOADS[name]
        n = a.points or n
        params = mlp(jax.random.PRNGKey(0), din, width, depth, dout)
        X = jax.random.uniform(jax.random.PRNGKey(1), (n, din), jnp.float32)
        step = jax.jit(jax.value_and_grad(fns[name][variant]))
        times = []
        for i in range(a.reps + 1):
            t0 = time.perf_counter()
            loss, grads = step(params, X)
            jax.block_until_ready((loss, grads))
            dt = time.perf_counter() - t0
            if i:
                times.append(dt)
            else:
                warm = dt
        med = statistics.median(times)
        label = row_name(name, variant)
        results[label] = med
        print(f"{label:12s} {med:.5f} s/step  {n/med:,.0f} points/s  loss={float(loss):.4e}  "
              f"warm-up={warm:.2f}s", flush=True)
        if a.json:  # rewritten after every workload, so an interrupted run keeps what it measured
            write_json(a.json, results)


if __name__ == "__main__":
    main()
