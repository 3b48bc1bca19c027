#!/usr/bin/env python3
"""End-to-end peers: one Adam training step of three jetpde examples, in PyTorch and in JAX.

What `make bench` sets beside jetpde's own step (`jetpde run examples/NAME.yaml`, timed from its
history.csv): the same problems written as a good PyTorch user and a good JAX user would write
them, doing per step what jetpde does per Adam step of that example (io/config.cpp's defaults,
solvers/problem.cpp, solvers/objective.cpp, solvers/trainer.cpp, nn/network.cpp, nn/adam.cpp,
nn/schedule.cpp):

  draw the points again when the step is due (step k > 0, k % resample_every == 0), evaluate the
  fields with the hard constraints built in, the PDE residuals (input derivatives included) and
  the boundary residuals, the weighted sum of the terms' mean squares, its gradient with respect to
  every parameter, and one Adam update (beta1 0.9, beta2 0.999, epsilon 1e-8, bias-corrected) at
  the rate of the example's schedule, exponential as jetpde defines it: lr * 0.9^(k / decay_steps),
  smooth (not staircase; decay_rate's default 0.9). float32 throughout (fp32 is the examples'
  precision, also jetpde's default). Weights Glorot normal, biases zero (jetpde's kind of
  initialization, not its numbers).

The networks (nn/network.h): inputs are normalized to [-1, 1] over the domain's bounding box
(`network.normalize`, default true: x -> x * s - (lo * s + 1), s = 2 / (hi - lo)), except a periodic
coordinate, which becomes cos(2 pi x / period), sin(2 pi x / period) (one harmonic) of the raw
coordinate. Activation tanh (the default). The modified MLP is jetpde's: U = tanh(y U_W + U_b),
V = tanh(y V_W + V_b), H = tanh(y W0 + b0), then per further hidden layer Z = tanh(H W_l + b_l),
H = U + Z (V - U), output H W_L + b_L (hidden [64]*4: three gated layers).

  burgers     u_t + u u_x - nu u_xx, nu = 0.01/pi, on x in [-1, 1], t in [0, 1]. u = -sin(pi x)
              + D N with D = t (x + 1)(1 - x) (hard constraint `on: initial, spatial`: the initial
              face's (t - 0)/1 times the spatial slab (x + 1)(1 - x)/1^2). MLP 2 -> 20 x 8 -> 1
              (3021 parameters), inputs (x, 2t - 1). 10000 interior points drawn every 500 steps
              (jetpde: Sobol; here uniform random). Loss: mean(r^2). lr 1e-3 * 0.9^(k/200).
  allen_cahn  u_t - 1e-4 u_xx + 5 u^3 - 5 u, periodic in x over [-1, 1], t in [0, 1].
              u = x^2 cos(pi x) + t N (`on: initial`). Modified MLP [cos(pi x), sin(pi x), 2t - 1]
              -> 64 x 4 -> 1 (13313 parameters). 4096 interior points (uniform random, as jetpde's
              `method: random`) sorted by t into 32 chunks of 128, drawn every 200 steps. Causal
              weighting as jetpde's trainer computes it (Trainer::slot_weights): chunk i's weight is
              exp(-1.0 * sum_{j<i} L_j) / 32 with L_j the chunk losses of the previous evaluation
              (the previous step's; all 0 before the first, so 1/32 each), given to the step as
              numbers, so no gradient flows through them (jetpde binds them as inputs). Also the
              periodic condition of the config (u and u_x on 256 pairs of points at x = -1 and
              x = 1): jetpde keeps it in the step with weight 0 (the network is periodic by
              construction, Problem::by_construction), so it is computed here too, weight 0 given at
              run time (the loss, and the backward pass through it, are paid as in jetpde).
              Loss: sum_i w_i mean_chunk_i(r^2) + 0 * mean([du, dux]^2). lr 1e-3 * 0.9^(k/3000).
  ldc         Lid-driven cavity, Re 100, on [0, 1]^2: u = su + N_u, v = sv + N_v, p = sp + N_p
              (hard constraints with distance "1"; su, sv, sp the corner singular solutions of the
              config's `definitions`, evaluated, and differentiated, in the step as jetpde does).
              Modified MLP (2x - 1, 2y - 1) -> 64 x 4 -> 3 (13251 parameters). Terms: momentum_x,
              momentum_y (times the `corners` factor) and continuity on 4000 interior points, and
              four Dirichlet terms with weight 10: lid_u (u - 1) and lid_v (v) on 400 points each
              of y = 1, wall_u and wall_v (u, v) on 600 points each of x = 0, x = 1 and y = 0 (each
              term its own draw, as jetpde draws each condition's points), all drawn every 1000
              steps (jetpde: Sobol; here uniform random, the walls by length). Loss: the sum of the
              weighted mean squares. lr 1e-3 * 0.9^(k/1000).

What differs from jetpde's step, all small in cost:
  - Sobol points (burgers, ldc) are uniform random draws here; the draw's cost is part of the
    step in both.
  - jetpde's Adam update runs on a flat float64 vector on the host (the step itself in fp32); here
    it is the framework's own float32 update.
  - ldc: the four boundary point sets go through the network in one call (2000 points) instead of
    four (jetpde's graph has them as separate sets): the same arithmetic in fewer, larger GEMMs.
  - jetpde's total is a weighted sum with the weights as runtime inputs; so is it here.

PyTorch: plain eager mode (no torch.compile), input derivatives by nested reverse-mode autograd
(torch.autograd.grad(..., create_graph=True)), as DeepXDE and PaddleScience users write it;
torch.optim.Adam with a LambdaLR schedule. JAX: the whole step (resampling aside, a jitted draw of
its own) is one jax.jit of value_and_grad plus a hand-written Adam update (optax is not in the
benchmark venv); input derivatives either by nested forward mode per point under vmap
(jax.jvp of jax.jvp: value, first and second derivative along one axis) or by Taylor mode on the
batched network (jax.experimental.jet), whichever measured faster for the problem
(JAX_DERIVATIVES below; --jax-derivatives overrides).

Threads: --threads N (default 2). Both frameworks are pinned to N CPUs with
bench/peers/jax_pinn.py's pin_threads (os.sched_setaffinity and, for XLA, XLA_FLAGS, before either
is imported); PyTorch also gets torch.set_num_threads(N) and set_num_interop_threads(1).

Timing: --warmup steps first (JAX: they include tracing and compilation; their total time is
reported apart), then --steps timed steps in blocks of 10, synchronized at each block's end
(block_until_ready in JAX; the loss value in PyTorch, which on the CPU has finished by then);
seconds_per_step is the median over the blocks of block_seconds / 10 (jetpde's side is measured
the same way from its history.csv, which logs every 10 steps). Steps count from 0 at the first
warm-up step, for the schedule and the resampling alike.

Usage: python3 bench/e2e/peers.py --framework {torch,jax} [--problems burgers allen_cahn ldc]
           [--steps 300] [--warmup 20] [--threads 2] [--json FILE]
           [--jax-derivatives auto|nested|jet] [--seed 0]
Prints one line per problem:
  name  seconds_per_step  steps/s  loss_first loss_last  params=N  warm-up=Xs
(loss_first, loss_last: the loss of the first and last timed steps; a warning line when the loss
did not go down.) --json FILE writes {"framework", "versions", "threads", "problems": {name:
{"seconds_per_step", "blocks", "loss_first", "loss_last", "parameters", "points", "warmup_seconds",
...}}}, rewritten after every problem.
"""
import argparse
import math
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from compare import write_json  # noqa: E402
from jax_pinn import pin_threads  # noqa: E402  (stdlib only at import; jax is imported later)

BLOCK = 10  # steps per timed block (jetpde's history.csv logs every 10 steps)

# The examples as jetpde reads them (io/config.cpp fills the defaults).
PROBLEMS = {
    "burgers": {
        "architecture": "mlp",
        "hidden": [20] * 8,
        "outputs": 1,
        "lower": [-1.0, 0.0],  # x, t: the bounding box normalization maps to [-1, 1]
        "upper": [1.0, 1.0],
        "periodic": {},  # column -> period
        "learning_rate": 1e-3,
        "decay_rate": 0.9,
        "decay_steps": 200,
        "resample_every": 500,
        "points": {"pde": 10000},
        "weights": {"pde": 1.0},
    },
    "allen_cahn": {
        "architecture": "modified_mlp",
        "hidden": [64] * 4,
        "outputs": 1,
        "lower": [-1.0, 0.0],
        "upper": [1.0, 1.0],
        "periodic": {0: 2.0},
        "learning_rate": 1e-3,
        "decay_rate": 0.9,  # the default
        "decay_steps": 3000,
        "resample_every": 200,
        "points": {"allen_cahn": 4096, "periodic_u": 256},  # periodic: pairs
        "weights": {"allen_cahn": 1.0, "periodic_u": 0.0},  # periodic by construction: weight 0
        "time_chunks": 32,
        "causal_epsilon": 1.0,
    },
    "ldc": {
        "architecture": "modified_mlp",
        "hidden": [64] * 4,
        "outputs": 3,
        "lower": [0.0, 0.0],
        "upper": [1.0, 1.0],
        "periodic": {},
        "learning_rate": 1e-3,
        "decay_rate": 0.9,
        "decay_steps": 1000,
        "resample_every": 1000,
        "points": {"momentum_x": 4000, "momentum_y": 4000, "continuity": 4000,
                   "lid_u": 400, "lid_v": 400, "wall_u": 600, "wall_v": 600},
        "weights": {"momentum_x": 1.0, "momentum_y": 1.0, "continuity": 1.0,
                    "lid_u": 10.0, "lid_v": 10.0, "wall_u": 10.0, "wall_v": 10.0},
    },
}
LDC_BOUNDARY = ("lid_u", "lid_v", "wall_u", "wall_v")  # in the order they are concatenated

# JAX's input derivatives per problem: the faster of the two. Measured with jax 0.10.2, 2 threads
# on a 2-core AMD EPYC (50 timed steps, seconds per step, jet / nested): burgers 0.038 / 0.041,
# allen_cahn 0.041 / 0.059, ldc 0.046 / 0.060. Both give the same losses (to rounding).
JAX_DERIVATIVES = {"burgers": "jet", "allen_cahn": "jet", "ldc": "jet"}

NU_BURGERS = 0.01 / math.pi
EPS_ALLEN_CAHN = 1e-4
# examples/ldc.yaml's constants
NU_LDC = 0.01
A_LDC = 1.681476932117883
C_LDC = -1.0704614617662258
D_LDC = -0.6814769321178831


def embedded_width(spec):
    return len(spec["lower"]) + len(spec["periodic"])  # a periodic column: cos and sin


def parameter_count(spec):
    """As jetpde's Network holds them: the body's dense layers, and the modified MLP's gates."""
    width, h = embedded_width(spec), spec["hidden"]
    sizes = [width] + h + [spec["outputs"]]
    n = sum((a + 1) * b for a, b in zip(sizes[:-1], sizes[1:]))
    if spec["architecture"] == "modified_mlp":
        n += 2 * (width + 1) * h[0]  # U and V
    return n


def learning_rate(spec, k):
    """nn/schedule.cpp, exponential: lr * gamma^(k / decay_steps), k = the steps taken before."""
    return spec["decay_rate"] ** (k / spec["decay_steps"])  # a factor of the base rate


def embed(X, spec, xp, cat):
    """jetpde's input embedding of X [n, inputs] (nn/network.cpp, Network::embed)."""
    columns = []
    for c in range(len(spec["lower"])):
        xc = X[:, c:c + 1]
        period = spec["periodic"].get(c)
        if period is not None:
            angle = xc * (2.0 * math.pi / period)
            columns += [xp.cos(angle), xp.sin(angle)]
            continue
        lo, hi = spec["lower"][c], spec["upper"][c]
        s = 2.0 / (hi - lo)
        columns.append(xc * s - (lo * s + 1.0))
    return cat(columns)


def ldc_singular(x, y, xp):
    """examples/ldc.yaml's definitions: su, sv, sp and the corners factor, as written there."""
    A, C, D, nu = A_LDC, C_LDC, D_LDC, NU_LDC
    eta = 1.0 - y + 1e-5
    rl2 = x * x + eta * eta
    rr2 = (1.0 - x) * (1.0 - x) + eta * eta
    tl = math.pi / 2 - xp.arctan(x / eta)
    tr = math.pi / 2 - xp.arctan((1.0 - x) / eta)
    su = (2 * A + C * (tl + tr) + (D * x * x + C * x * eta) / rl2
          + (D * (1.0 - x) * (1.0 - x) + C * (1.0 - x) * eta) / rr2)
    sv = (D * (tl - tr) - (C * eta * eta + D * x * eta) / rl2
          + (C * eta * eta + D * (1.0 - x) * eta) / rr2)
    sp = 2 * nu * ((D * x + C * eta) / rl2 - (D * (1.0 - x) + C * eta) / rr2)
    corners = rl2 / (rl2 + 0.0025) * rr2 / (rr2 + 0.0025)
    return su, sv, sp, corners


# ------------------------------------------------------------------------------------------------
# PyTorch
# ------------------------------------------------------------------------------------------------
def torch_runner(name, spec, seed):
    import torch

    f32 = torch.float32
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed + 1)
    cat = lambda cols: torch.cat(cols, dim=1)  # noqa: E731

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            width, h = embedded_width(spec), spec["hidden"]
            sizes = [width] + h + [spec["outputs"]]
            self.layers = torch.nn.ModuleList(
                torch.nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
            self.gated = spec["architecture"] == "modified_mlp"
            if self.gated:
                self.U = torch.nn.Linear(width, h[0])
                self.V = torch.nn.Linear(width, h[0])
            for m in self.modules():
                if isinstance(m, torch.nn.Linear):
                    torch.nn.init.xavier_normal_(m.weight)  # Glorot normal
                    torch.nn.init.zeros_(m.bias)

        def forward(self, X):
            y = embed(X, spec, torch, cat)
            if not self.gated:
                h = y
                for layer in self.layers[:-1]:
                    h = torch.tanh(layer(h))
                return self.layers[-1](h)
            U = torch.tanh(self.U(y))
            V = torch.tanh(self.V(y))
            h = torch.tanh(self.layers[0](y))
            for layer in self.layers[1:-1]:
                z = torch.tanh(layer(h))
                h = U + z * (V - U)
            return self.layers[-1](h)

    net = Net().to(f32)
    opt = torch.optim.Adam(net.parameters(), lr=spec["learning_rate"], betas=(0.9, 0.999), eps=1e-8)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: learning_rate(spec, k))

    def rand(n, d):
        return torch.rand(n, d, generator=gen, dtype=f32)

    def box(n, lo, hi):
        lo_t, hi_t = torch.tensor(lo, dtype=f32), torch.tensor(hi, dtype=f32)
        return lo_t + rand(n, len(lo)) * (hi_t - lo_t)

    def grad(y, x):
        return torch.autograd.grad(y, x, torch.ones_like(y), create_graph=True)[0]

    P = spec["points"]
    if name == "burgers":
        w_pde = torch.tensor(spec["weights"]["pde"], dtype=f32)

        def sample():
            return {"pde": box(P["pde"], spec["lower"], spec["upper"]).requires_grad_(True)}

        def loss_fn(pts, extra):
            X = pts["pde"]
            x, t = X[:, 0:1], X[:, 1:2]
            u = -torch.sin(math.pi * x) + t * ((x + 1.0) * (1.0 - x)) * net(X)
            du = grad(u, X)
            u_x, u_t = du[:, 0:1], du[:, 1:2]
            u_xx = grad(u_x, X)[:, 0:1]
            r = u_t + u * u_x - NU_BURGERS * u_xx
            return w_pde * torch.mean(r * r), None

    elif name == "allen_cahn":
        M, n = spec["time_chunks"], P["allen_cahn"]
        eps_c = spec["causal_epsilon"]
        w_periodic = torch.tensor(spec["weights"]["periodic_u"], dtype=f32)

        def field(X):
            x, t = X[:, 0:1], X[:, 1:2]
            return x * x * torch.cos(math.pi * x) + t * net(X)

        def sample():
            X = box(n, spec["lower"], spec["upper"])
            X = X[torch.argsort(X[:, 1])]  # ordered by time: chunk c is rows c*n/M ...
            t = rand(P["periodic_u"], 1)
            lo = torch.cat([torch.full_like(t, -1.0), t], dim=1)
            hi = torch.cat([torch.full_like(t, 1.0), t], dim=1)
            return {"interior": X.requires_grad_(True),
                    "periodic": torch.cat([lo, hi]).requires_grad_(True)}

        def loss_fn(pts, prev_chunks):
            X = pts["interior"]
            u = field(X)
            du = grad(u, X)
            u_x, u_t = du[:, 0:1], du[:, 1:2]
            u_xx = grad(u_x, X)[:, 0:1]
            r = u_t - EPS_ALLEN_CAHN * u_xx + 5.0 * u ** 3 - 5.0 * u
            chunks = torch.mean((r * r).view(M, n // M), dim=1)
            # Trainer::slot_weights: the previous evaluation's chunk losses, constants here.
            w = torch.exp(-eps_c * (torch.cumsum(prev_chunks, 0) - prev_chunks)) / M
            Xp = pts["periodic"]
            up = field(Xp)
            up_x = grad(up, Xp)[:, 0:1]
            m = P["periodic_u"]
            res = torch.cat([up[:m] - up[m:], up_x[:m] - up_x[m:]], dim=1)
            loss = torch.sum(w * chunks) + w_periodic * torch.mean(res * res)
            return loss, chunks.detach()

    elif name == "ldc":
        W = {k: torch.tensor(v, dtype=f32) for k, v in spec["weights"].items()}

        def wall(n):
            r = rand(n, 2)
            side, s = torch.floor(r[:, 0] * 3.0), r[:, 1]
            x = torch.where(side == 0, 0.0, torch.where(side == 1, 1.0, s))
            y = torch.where(side == 2, 0.0, s)
            return torch.stack([x, y], dim=1)

        def lid(n):
            return torch.cat([rand(n, 1), torch.ones(n, 1, dtype=f32)], dim=1)

        def sample():
            return {"interior": rand(P["momentum_x"], 2).requires_grad_(True),
                    "boundary": torch.cat([lid(P["lid_u"]), lid(P["lid_v"]),
                                           wall(P["wall_u"]), wall(P["wall_v"])])}

        def loss_fn(pts, extra):
            X = pts["interior"]
            x, y = X[:, 0:1], X[:, 1:2]
            su, sv, sp, corners = ldc_singular(x, y, torch)
            out = net(X)
            u, v, p = su + out[:, 0:1], sv + out[:, 1:2], sp + out[:, 2:3]
            du, dv, dp = grad(u, X), grad(v, X), grad(p, X)
            u_x, u_y, v_x, v_y = du[:, 0:1], du[:, 1:2], dv[:, 0:1], dv[:, 1:2]
            lap_u = grad(u_x, X)[:, 0:1] + grad(u_y, X)[:, 1:2]
            lap_v = grad(v_x, X)[:, 0:1] + grad(v_y, X)[:, 1:2]
            r_mx = (u * u_x + v * u_y + dp[:, 0:1] - NU_LDC * lap_u) * corners
            r_my = (u * v_x + v * v_y + dp[:, 1:2] - NU_LDC * lap_v) * corners
            r_c = u_x + v_y
            Xb = pts["boundary"]
            sbu, sbv, _, _ = ldc_singular(Xb[:, 0:1], Xb[:, 1:2], torch)
            ob = net(Xb)
            ub, vb = sbu + ob[:, 0:1], sbv + ob[:, 1:2]
            a, b, c = P["lid_u"], P["lid_u"] + P["lid_v"], P["lid_u"] + P["lid_v"] + P["wall_u"]
            ms = lambda r: torch.mean(r * r)  # noqa: E731
            loss = (W["momentum_x"] * ms(r_mx) + W["momentum_y"] * ms(r_my)
                    + W["continuity"] * ms(r_c) + W["lid_u"] * ms(ub[:a] - 1.0)
                    + W["lid_v"] * ms(vb[a:b]) + W["wall_u"] * ms(ub[b:c])
                    + W["wall_v"] * ms(vb[c:]))
            return loss, None

    state = {"pts": sample(), "prev": torch.zeros(spec.get("time_chunks", 1), dtype=f32)}
    every = spec["resample_every"]

    def step(k):
        if k > 0 and every > 0 and k % every == 0:
            state["pts"] = sample()
        opt.zero_grad(set_to_none=True)
        loss, chunks = loss_fn(state["pts"], state["prev"])
        loss.backward()
        opt.step()
        sched.step()
        if chunks is not None:
            state["prev"] = chunks
        return loss.detach()

    def sync(loss):
        return float(loss.item())

    count = sum(p.numel() for p in net.parameters())
    return step, sync, count, "nested reverse mode (torch.autograd.grad, create_graph=True), eager"


# ------------------------------------------------------------------------------------------------
# JAX
# ------------------------------------------------------------------------------------------------
def jax_runner(name, spec, seed, derivatives):
    import jax
    import jax.numpy as jnp
    from jax.experimental.jet import jet

    f32 = jnp.float32
    cat = lambda cols: jnp.concatenate(cols, axis=1)  # noqa: E731
    key = jax.random.PRNGKey(seed)

    # ---- network ----
    def init(key):
        width, h = embedded_width(spec), spec["hidden"]
        sizes = [width] + h + [spec["outputs"]]

        def dense(key, a, b):
            std = math.sqrt(2.0 / (a + b))  # Glorot normal
            return (jax.random.normal(key, (a, b), f32) * std, jnp.zeros((b,), f32))

        keys = jax.random.split(key, len(sizes) + 1)
        params = {"layers": [dense(k, a, b) for k, a, b in zip(keys, sizes[:-1], sizes[1:])]}
        if spec["architecture"] == "modified_mlp":
            params["U"] = dense(keys[-2], width, h[0])
            params["V"] = dense(keys[-1], width, h[0])
        return params

    def net(params, X):  # [n, inputs] -> [n, outputs]
        y = embed(X, spec, jnp, cat)
        layers = params["layers"]
        if spec["architecture"] == "mlp":
            h = y
            for W, b in layers[:-1]:
                h = jnp.tanh(h @ W + b)
        else:
            U = jnp.tanh(y @ params["U"][0] + params["U"][1])
            V = jnp.tanh(y @ params["V"][0] + params["V"][1])
            h = jnp.tanh(y @ layers[0][0] + layers[0][1])
            for W, b in layers[1:-1]:
                z = jnp.tanh(h @ W + b)
                h = U + z * (V - U)
        W, b = layers[-1]
        return h @ W + b

    E0, E1 = jnp.array([1.0, 0.0], f32), jnp.array([0.0, 1.0], f32)

    def along2(f, x, e):
        """f(x), and its first and second derivatives along e (forward over forward mode)."""
        (v, d1), (_, d2) = jax.jvp(lambda y: jax.jvp(f, (y,), (e,)), (x,), (e,))
        return v, d1, d2

    def along_batch(X, axis):
        return jnp.zeros_like(X).at[:, axis].set(1.0)

    def taylor2(f, X, V):
        """f(X), and its first and second derivatives along V, by jet (Taylor mode)."""
        out, (d1, d2) = jet(f, (X,), ((V, jnp.zeros_like(X)),))
        return out, d1, d2

    def ms(r):
        return jnp.mean(r * r)

    def space_time(field, X):
        """u, u_x, u_xx and u_t of a one-field field(X) [n, 1] on points X = (x, t)."""
        if derivatives == "jet":
            f = lambda X: field(X)[:, 0]  # noqa: E731
            u, u_x, u_xx = taylor2(f, X, along_batch(X, 0))
            _, u_t = jax.jvp(f, (X,), (along_batch(X, 1),))
            return u, u_x, u_xx, u_t
        f = lambda x: field(x[None])[0, 0]  # noqa: E731

        def point(x):
            u, u_x, u_xx = along2(f, x, E0)
            _, u_t = jax.jvp(f, (x,), (E1,))
            return u, u_x, u_xx, u_t

        return jax.vmap(point)(X)

    P = spec["points"]

    def box(key, n, lo, hi):
        lo, hi = jnp.array(lo, f32), jnp.array(hi, f32)
        return lo + jax.random.uniform(key, (n, len(lo)), f32) * (hi - lo)

    # ---- problems: sample(key) -> points; loss(params, points, extra) -> (loss, aux) ----
    if name == "burgers":
        def field(params, X):
            x, t = X[:, 0:1], X[:, 1:2]
            return -jnp.sin(math.pi * x) + t * ((x + 1.0) * (1.0 - x)) * net(params, X)

        def sample(key):
            return {"pde": box(key, P["pde"], spec["lower"], spec["upper"])}

        def loss(params, pts, extra):
            u, u_x, u_xx, u_t = space_time(lambda X: field(params, X), pts["pde"])
            r = u_t + u * u_x - NU_BURGERS * u_xx
            return extra["weights"]["pde"] * ms(r), jnp.zeros((1,), f32)

    elif name == "allen_cahn":
        M, n, m = spec["time_chunks"], P["allen_cahn"], P["periodic_u"]
        eps_c = spec["causal_epsilon"]

        def field(params, X):
            x, t = X[:, 0:1], X[:, 1:2]
            return x * x * jnp.cos(math.pi * x) + t * net(params, X)

        def sample(key):
            k1, k2 = jax.random.split(key)
            X = box(k1, n, spec["lower"], spec["upper"])
            X = X[jnp.argsort(X[:, 1])]  # ordered by time: chunk c is rows c*n/M ...
            t = jax.random.uniform(k2, (m, 1), f32)
            lo = jnp.concatenate([jnp.full_like(t, -1.0), t], axis=1)
            hi = jnp.concatenate([jnp.full_like(t, 1.0), t], axis=1)
            return {"interior": X, "periodic": jnp.concatenate([lo, hi])}

        def loss(params, pts, extra):
            X, Xp = pts["interior"], pts["periodic"]
            Wt, prev_chunks = extra["weights"], extra["prev"]
            u, u_x, u_xx, u_t = space_time(lambda X: field(params, X), X)
            if derivatives == "jet":
                f = lambda X: field(params, X)[:, 0]  # noqa: E731
                up, up_x = jax.jvp(f, (Xp,), (along_batch(Xp, 0),))
            else:
                f = lambda x: field(params, x[None])[0, 0]  # noqa: E731
                up, up_x = jax.vmap(lambda x: jax.jvp(f, (x,), (E0,)))(Xp)
            r = u_t - EPS_ALLEN_CAHN * u_xx + 5.0 * u ** 3 - 5.0 * u
            chunks = jnp.mean((r * r).reshape(M, n // M), axis=1)
            # Trainer::slot_weights: the previous evaluation's chunk losses, given as numbers.
            w = jnp.exp(-eps_c * (jnp.cumsum(prev_chunks) - prev_chunks)) / M
            res = jnp.stack([up[:m] - up[m:], up_x[:m] - up_x[m:]], axis=1)
            return jnp.sum(w * chunks) + Wt["periodic_u"] * ms(res), chunks

    elif name == "ldc":
        def wall(key, n):
            r = jax.random.uniform(key, (n, 2), f32)
            side, s = jnp.floor(r[:, 0] * 3.0), r[:, 1]
            x = jnp.where(side == 0, 0.0, jnp.where(side == 1, 1.0, s))
            y = jnp.where(side == 2, 0.0, s)
            return jnp.stack([x, y], axis=1)

        def lid(key, n):
            return jnp.concatenate([jax.random.uniform(key, (n, 1), f32), jnp.ones((n, 1), f32)], 1)

        def sample(key):
            k = jax.random.split(key, 5)
            return {"interior": jax.random.uniform(k[0], (P["momentum_x"], 2), f32),
                    "boundary": jnp.concatenate([lid(k[1], P["lid_u"]), lid(k[2], P["lid_v"]),
                                                 wall(k[3], P["wall_u"]), wall(k[4], P["wall_v"])])}

        def singular(x):  # one point [2] -> (su, sv, sp), corners
            su, sv, sp, corners = ldc_singular(x[0], x[1], jnp)
            return jnp.stack([su, sv, sp]), corners

        def loss(params, pts, extra):
            X, Wt = pts["interior"], extra["weights"]
            corners = jax.vmap(lambda x: singular(x)[1])(X)
            if derivatives == "jet":
                # The fields are s + N: the network's derivatives by jet on the batch, the
                # singular part's (elementwise in the point) by forward mode per point.
                f = lambda X: net(params, X)  # noqa: E731
                F, Fx, Fxx = taylor2(f, X, along_batch(X, 0))
                _, Fy, Fyy = taylor2(f, X, along_batch(X, 1))
                s = lambda x: singular(x)[0]  # noqa: E731

                def point(x):
                    S, Sx, Sxx = along2(s, x, E0)
                    _, Sy, Syy = along2(s, x, E1)
                    return S, Sx, Sxx, Sy, Syy

                S, Sx, Sxx, Sy, Syy = jax.vmap(point)(X)
                F, Fx, Fxx, Fy, Fyy = F + S, Fx + Sx, Fxx + Sxx, Fy + Sy, Fyy + Syy
            else:
                def g(x):  # one point -> (u, v, p)
                    return singular(x)[0] + net(params, x[None])[0]

                def point(x):
                    F, Fx, Fxx = along2(g, x, E0)
                    _, Fy, Fyy = along2(g, x, E1)
                    return F, Fx, Fxx, Fy, Fyy

                F, Fx, Fxx, Fy, Fyy = jax.vmap(point)(X)
            u, v = F[:, 0], F[:, 1]
            u_x, v_x, p_x = Fx[:, 0], Fx[:, 1], Fx[:, 2]
            u_y, v_y, p_y = Fy[:, 0], Fy[:, 1], Fy[:, 2]
            r_mx = (u * u_x + v * u_y + p_x - NU_LDC * (Fxx[:, 0] + Fyy[:, 0])) * corners
            r_my = (u * v_x + v * v_y + p_y - NU_LDC * (Fxx[:, 1] + Fyy[:, 1])) * corners
            r_c = u_x + v_y
            Xb = pts["boundary"]
            sb = jax.vmap(lambda x: singular(x)[0])(Xb)
            ob = sb + net(params, Xb)
            ub, vb = ob[:, 0], ob[:, 1]
            a, b, c = P["lid_u"], P["lid_u"] + P["lid_v"], P["lid_u"] + P["lid_v"] + P["wall_u"]
            total = (Wt["momentum_x"] * ms(r_mx) + Wt["momentum_y"] * ms(r_my)
                     + Wt["continuity"] * ms(r_c) + Wt["lid_u"] * ms(ub[:a] - 1.0)
                     + Wt["lid_v"] * ms(vb[a:b]) + Wt["wall_u"] * ms(ub[b:c])
                     + Wt["wall_v"] * ms(vb[c:]))
            return total, jnp.zeros((1,), f32)

    lr0 = spec["learning_rate"]
    b1, b2, eps = 0.9, 0.999, 1e-8

    @jax.jit
    def step(params, m, v, k, pts, extra):
        (value, aux), g = jax.value_and_grad(loss, has_aux=True)(params, pts, extra)
        lr = lr0 * spec["decay_rate"] ** (k / spec["decay_steps"])
        t = k + 1.0
        c1, c2 = 1.0 - b1 ** t, 1.0 - b2 ** t
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        params = jax.tree_util.tree_map(
            lambda p, m, v: p - lr * (m / c1) / (jnp.sqrt(v / c2) + eps), params, m, v)
        return params, m, v, k + 1.0, value, aux

    sample_jit = jax.jit(sample)
    key, k_init, k_pts = jax.random.split(key, 3)
    params = init(k_init)
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    state = {"params": params, "m": zeros, "v": zeros, "k": jnp.zeros((), f32),
             "pts": jax.block_until_ready(sample_jit(k_pts)), "key": key,
             # The loss weights are inputs of the step, as in jetpde (never constants XLA could
             # fold: the periodic term's weight 0 included), and so are the causal weights'
             # chunk losses of the previous step.
             "extra": {"weights": {k: jnp.asarray(v, f32) for k, v in spec["weights"].items()},
                       "prev": jnp.zeros((spec.get("time_chunks", 1),), f32)}}
    every = spec["resample_every"]

    def run_step(k):
        if k > 0 and every > 0 and k % every == 0:
            state["key"], sub = jax.random.split(state["key"])
            state["pts"] = sample_jit(sub)
        (state["params"], state["m"], state["v"], state["k"], value, aux) = step(
            state["params"], state["m"], state["v"], state["k"], state["pts"], state["extra"])
        if "time_chunks" in spec:
            state["extra"] = {"weights": state["extra"]["weights"], "prev": aux}
        return value

    def sync(value):
        jax.block_until_ready((value, state["params"]))
        return float(value)

    count = sum(int(x.size) for x in jax.tree_util.tree_leaves(params))
    how = {"jet": "jax.experimental.jet (Taylor mode) on the batched network",
           "nested": "nested forward mode (jax.jvp of jax.jvp) per point under jax.vmap",
           }[derivatives]
    return run_step, sync, count, how + "; jax.jit of the whole step, hand-written Adam"


# ------------------------------------------------------------------------------------------------
def measure(step, sync, warmup, steps):
    """(warm-up seconds, per-block seconds per step, first and last timed losses)."""
    k = 0
    t0 = time.perf_counter()
    loss = None
    for _ in range(warmup):
        loss = step(k)
        k += 1
    if loss is not None:
        sync(loss)
    warm = time.perf_counter() - t0
    blocks, first, last = [], None, None
    for _ in range(steps // BLOCK):
        losses = []
        t0 = time.perf_counter()
        for _ in range(BLOCK):
            losses.append(step(k))
            k += 1
        last = sync(losses[-1])
        blocks.append((time.perf_counter() - t0) / BLOCK)
        if first is None:
            first = sync(losses[0])
    return warm, blocks, first, last


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--framework", choices=("torch", "jax"), required=True)
    ap.add_argument("--problems", nargs="+", choices=tuple(PROBLEMS), default=list(PROBLEMS))
    ap.add_argument("--steps", type=int, default=300, help="timed steps (a multiple of 10)")
    ap.add_argument("--warmup", type=int, default=20, help="untimed steps first")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jax-derivatives", choices=("auto", "nested", "jet"), default="auto",
                    help="JAX input derivatives (auto: the faster per problem, JAX_DERIVATIVES)")
    a = ap.parse_args()
    if a.steps < BLOCK or a.steps % BLOCK or a.warmup < 0 or a.threads < 1:
        ap.error(f"--steps wants a positive multiple of {BLOCK}, --warmup a non-negative integer "
                 "and --threads a positive one")
    cpus = pin_threads(a.threads)  # before torch or jax is imported

    versions = {"python": platform.python_version()}
    if a.framework == "torch":
        import torch

        torch.set_num_threads(a.threads)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:  # only allowed before any inter-op work
            pass
        versions["torch"] = torch.__version__
        header = (f"torch {torch.__version__} eager, threads={torch.get_num_threads()} "
                  f"interop={torch.get_num_interop_threads()}")
    else:
        import jax
        import jaxlib

        jax.config.update("jax_enable_x64", False)  # float32, said out loud
        versions.update(jax=jax.__version__, jaxlib=jaxlib.__version__)
        header = (f"jax {jax.__version__} jaxlib {jaxlib.__version__} "
                  f"backend={jax.default_backend()} XLA_FLAGS='{os.environ.get('XLA_FLAGS', '')}'")
    import numpy

    versions["numpy"] = numpy.__version__
    print(f"{header} cpus={','.join(map(str, cpus))} steps={a.steps} warmup={a.warmup}", flush=True)

    out = {"framework": a.framework, "versions": versions, "threads": a.threads, "problems": {}}
    for name in a.problems:
        spec = PROBLEMS[name]
        if a.framework == "torch":
            step, sync, count, how = torch_runner(name, spec, a.seed)
        else:
            d = JAX_DERIVATIVES[name] if a.jax_derivatives == "auto" else a.jax_derivatives
            step, sync, count, how = jax_runner(name, spec, a.seed, d)
        if count != parameter_count(spec):
            sys.exit(f"peers.py: {name}: {count} parameters, jetpde's network has "
                     f"{parameter_count(spec)}")
        warm, blocks, first, last = measure(step, sync, a.warmup, a.steps)
        sps = statistics.median(blocks)
        print(f"{name:11s} {sps:.5f} s/step  {1 / sps:8.2f} steps/s  loss {first:.4e} {last:.4e}  "
              f"params={count}  warm-up={warm:.2f}s", flush=True)
        if not last < first:
            print(f"warning: {name}: the loss did not go down over the timed steps "
                  f"({first:.4e} -> {last:.4e})", flush=True)
        points = dict(spec["points"])
        out["problems"][name] = {
            "seconds_per_step": sps,
            "blocks": blocks,
            "loss_first": first,
            "loss_last": last,
            "parameters": count,
            "points": points,
            "warmup_seconds": warm,
            "warmup_steps": a.warmup,
            "timed_steps": a.steps,
            "derivatives": how,
        }
        if a.json:  # rewritten after every problem, so an interrupted run keeps what it measured
            write_json(a.json, out)


if __name__ == "__main__":
    main()
