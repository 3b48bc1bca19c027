"""The PyTorch peer on a CUDA GPU: ../shared/bench/torch_pinn.py's workloads and loss functions
(imported from that file, unchanged), with the network and points moved to the GPU and each timed
step closed by torch.cuda.synchronize(), since CUDA launches return before the work is done.

Usage: python3 torch_pinn_cuda.py [--script PATH] [--reps 5] [--only NAME...] [--points N]
                                  [--json FILE]
Prints one line per workload: name, median seconds per step, points/s, loss.
"""
import argparse
import importlib.util
import json
import os
import statistics
import time


def load_peer(path):
    spec = importlib.util.spec_from_file_location("torch_pinn", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(peer, torch, name, reps, points):
    fn, din, width, depth, dout, n = peer.WORKLOADS[name]
    n = points or n
    layers = [(W.detach().cuda().requires_grad_(), b.detach().cuda().requires_grad_())
              for W, b in peer.mlp(din, width, depth, dout)]
    params = [p for layer in layers for p in layer]
    X = torch.rand(n, din, generator=torch.Generator().manual_seed(1)).cuda().requires_grad_()
    times = []
    for i in range(reps + 1):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = fn(layers, X)
        torch.autograd.grad(loss, params, allow_unused=True)
        torch.cuda.synchronize()
        if i:
            times.append(time.perf_counter() - t0)
    median = statistics.median(times)
    print(f"{name:12s} {median:.5f} s/step  {n / median:,.0f} points/s  loss={loss.item():.4e}",
          flush=True)
    return median


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_script = os.path.join(here, "..", "..", "..", "shared", "bench", "torch_pinn.py")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--script", default=default_script, help="the peer script (torch_pinn.py)")
    ap.add_argument("--reps", type=int, default=5, help="timed steps after one warm-up")
    ap.add_argument("--only", nargs="*", help="workloads (default: all)")
    ap.add_argument("--points", type=int, default=0, help="points per workload (default: its own)")
    ap.add_argument("--json", metavar="FILE", help="write {name: median seconds per step}")
    a = ap.parse_args()
    if not os.path.isfile(a.script):
        ap.error(f"no peer script at {a.script} (pass --script PATH)")
    import torch

    if not torch.cuda.is_available():
        ap.exit(2, "torch_pinn_cuda.py: PyTorch sees no CUDA device\n")
    peer = load_peer(a.script)
    for name in a.only or []:
        if name not in peer.WORKLOADS:
            ap.error(f"unknown workload '{name}' (names: {', '.join(peer.WORKLOADS)})")
    print(f"torch {torch.__version__} device={torch.cuda.get_device_name()} "
          f"tf32={torch.backends.cuda.matmul.allow_tf32}", flush=True)
    results = {name: run(peer, torch, name, a.reps, a.points) for name in a.only or peer.WORKLOADS}
    if a.json:
        with open(a.json, "w") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
