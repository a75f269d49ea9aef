"""What the Python API costs over `warpsim run` on the same launch.

Runs the README's `tour` launch (scaled up by --scale) both ways, best of
--repeat: `warpsim run --json` as a process (its wall time, and the launch
time it reports, `sim_seconds`), and `Module.launch` in this process (wall
time of the call: arguments converted, arrays copied in and back, the
result's dict built). Prints one JSON object.

    python python/bench/overhead.py [--bin target/release/warpsim] [--scale 8] [--mode functional] [--named-init]
"""

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import warpsim

REPO = Path(__file__).resolve().parents[2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(REPO / "target/release/warpsim"))
    ap.add_argument("--scale", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--mode", default="functional")
    ap.add_argument(
        "--named-init", action="store_true",
        help="the CLI fills its input with unit_f32 instead of reading in.npy (other values, the same work)",
    )
    a = ap.parse_args()
    grid, block = 264 * a.scale, 256
    n_in, n_out = grid * block * 4, grid * block
    x = np.random.default_rng(0).random(n_in, dtype=np.float32)
    tmp = Path(tempfile.mkdtemp(prefix="warpsim-bench-"))
    np.save(tmp / "in.npy", x)
    cmd = [a.bin, "run", str(REPO / "demo/kernels.ptx"), "--kernel", "tour", "--grid", str(grid), "--block", str(block),
           "--param", f"in:f32[{n_in}]=" + ("unit_f32:in" if a.named_init else "file:in.npy:in"), "--param", f"out:f32[{n_out}]=zeros:out", "--param", "i32=4",
           "--mode", a.mode, "--json"]
    m = warpsim.Module(REPO / "demo/kernels.ptx")
    cli_wall, cli_launch, api_wall, api_launch = [], [], [], []
    # Interleaved, so that both see the same machine (other work on it comes and goes).
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        out = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, check=True)
        cli_wall.append(time.perf_counter() - t0)
        cli_launch.append(json.loads(out.stdout)["sim_seconds"])
        y = np.zeros(n_out, np.float32)
        t0 = time.perf_counter()
        r = m.launch("tour", grid, block, [x, y, np.int32(4)], mode=a.mode, progress=False)
        api_wall.append(time.perf_counter() - t0)
        api_launch.append(r.to_dict()["sim_seconds"])
    if not a.named_init:
        np.testing.assert_array_equal(y, np.load(tmp / "warpsim-out/out.npy"))
    best = {k: min(v) for k, v in dict(cli_wall=cli_wall, cli_launch=cli_launch, api_wall=api_wall, api_launch=api_launch).items()}
    best["api_over_cli_process_pct"] = 100 * (best["api_wall"] / best["cli_wall"] - 1)
    best["api_over_cli_launch_pct"] = 100 * (best["api_wall"] / best["cli_launch"] - 1)
    best["api_outside_launch_s"] = min(w - s for w, s in zip(api_wall, api_launch))
    best["cli_outside_launch_s"] = min(w - s for w, s in zip(cli_wall, cli_launch))
    best.update(named_init=a.named_init, grid=grid, block=block, mode=a.mode, threads=os.cpu_count(), repeat=a.repeat)
    print(json.dumps(best, indent=2))


if __name__ == "__main__":
    main()
