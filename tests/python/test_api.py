"""The API on real kernels, compared with what `warpsim run --json` says of the same launch."""

import os
from pathlib import Path

import numpy as np
import pytest

import warpsim
from conftest import REPO, needs_compiler, needs_nvcc, nvcc, run_json

DEMO = REPO / "demo/kernels.ptx"
N_IN, N_OUT = 264 * 256 * 4, 264 * 256


def tour_inputs():
    rng = np.random.default_rng(7)
    return rng.random(N_IN, dtype=np.float32), np.zeros(N_OUT, np.float32)


def tour_cli(tmp_path, x, *extra):
    np.save(tmp_path / "in.npy", x)
    return run_json(
        "run", str(DEMO), "--kernel", "tour", "--grid", "264", "--block", "256",
        "--param", f"in:f32[{N_IN}]=file:in.npy:in", "--param", f"out:f32[{N_OUT}]=zeros:out", "--param", "i32=4",
        "--out", "outs", *extra, cwd=tmp_path,
    )


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_a_launch_gives_the_numbers_and_outputs_warpsim_run_gives(tmp_path, mode):
    x, out = tour_inputs()
    cli = tour_cli(tmp_path, x, "--mode", mode)
    m = warpsim.Module(DEMO)
    r = m.launch("tour", 264, 256, [x, out, np.int32(4)], mode=mode)
    assert r.metrics == cli["metrics"]
    d = r.to_dict()
    for k in ("kernel", "grid", "block", "blocks", "warps", "warp_instructions", "thread_instructions", "threads_per_instruction"):
        assert d[k] == cli[k], k
    assert r.cycles == cli.get("cycles")
    if mode == "functional":
        assert r.occupancy == cli["occupancy"]
        assert r.cycles is None
    else:
        assert r.cycles > 0 and r.timing == cli["timing"]
    np.testing.assert_array_equal(out, np.load(tmp_path / "outs/out.npy"))
    assert out.any()


def test_summary_per_line_and_html_report(tmp_path):
    x, out = tour_inputs()
    r = warpsim.Module(DEMO).launch("tour", 264, 256, [x, out, np.int32(4)], report=True)
    s = r.summary()
    assert "kernel tour: grid [264, 1, 1] x block [256, 1, 1]" in s
    assert "threads per warp instruction" in s and "bank conflicts" in s
    rows = r.per_line
    assert rows and {"place", "warp_insts", "global_sectors"} <= set(rows[0])
    assert any(row["place"].startswith("kernels.cu:") for row in rows), rows[0]
    html = r._repr_html_()
    assert html.startswith("<!") and "warpsim report: tour" in html and "<svg" in html
    # report=True records the timing model's timeline, as `warpsim run --report` does.
    assert "No timeline" not in html


def test_outputs_are_written_back_into_non_contiguous_arrays():
    src = DEMO.read_text()
    m = warpsim.Module(ptx=src, name="kernels.ptx")
    x, _ = tour_inputs()
    big = np.zeros((N_OUT, 2), np.float32)
    view = big[:, 1]  # strided: travels through a contiguous copy
    want = np.zeros(N_OUT, np.float32)
    m.launch("tour", 264, 256, [x, want, np.int32(4)])
    m.launch("tour", 264, 256, [x, view, np.int32(4)])
    np.testing.assert_array_equal(big[:, 1], want)
    assert not big[:, 0].any()


def test_occupancy_is_warpsim_occupancys(tmp_path):
    cli = run_json("occupancy", "--gpu", "t4", "--block", "96", "--regs", "40", "--shared", "4096", cwd=tmp_path)
    py = warpsim.occupancy(96, 40, gpu="t4", shared_mem=4096)
    assert py == cli
    assert py["blocks_per_sm"] > 0


def test_presets_are_listed():
    assert {"t4", "a100", "h100", "h200", "mi300x"} <= set(warpsim.presets())


@needs_compiler
def test_checked_launch_reports_the_race_with_its_place():
    m = warpsim.Module(REPO / "tests/cuda/check/buggy.cu")
    inp = np.arange(64, dtype=np.int32)
    out = np.zeros(2, np.int32)
    r = m.launch("race_warp_reduce", 2, 32, [inp, out], check=True)
    kinds = {d["kind"] for d in r.diagnostics}
    assert kinds, r.summary()
    d = r.diagnostics[0]
    assert {"kind", "message", "ptx_line", "source_line", "block", "thread", "warp", "lane"} <= set(d)
    assert "buggy.cu" in (d["source_line"] or "")


@needs_compiler
def test_diagnostics_carry_place_and_threads_as_warpsim_check_prints_them(tmp_path):
    import subprocess
    import sys

    src = REPO / "tests/cuda/check/buggy.cu"
    m = warpsim.Module(src)
    r = m.launch("race_warp_reduce", 2, 32, [np.arange(64, dtype=np.int32), np.zeros(2, np.int32)], check=True)
    assert r.diagnostics
    cli = subprocess.run(
        [sys.executable, "-m", "warpsim", "check", str(src), "--kernel", "race_warp_reduce", "--grid", "2", "--block", "32",
         "--param", "in:i32[64]=iota:in", "--param", "out:i32[2]=zeros:out", "--verbose"],
        cwd=tmp_path, capture_output=True, text=True,
    )
    text = cli.stdout + cli.stderr
    assert "data race" in text, text
    for d in r.diagnostics:
        assert {"kind", "place", "threads", "message"} <= set(d), d
        assert d["source_line"] in d["place"] and f"PTX line {d['ptx_line']}" in d["place"]
        assert f"at {d['place']}" in text, (d["place"], text)
        first = d["threads"][0]
        assert first["block"] == d["block"] and first["thread"] == d["thread"] and first["lane"] == d["lane"]
        assert f"by {first['text']}" in text, (first, text)
        if "other" in d:
            assert len(d["threads"]) == 2 and d["threads"][1]["block"] == d["other"]["block"]
            assert f"and {d['threads'][1]['text']} at" in text


@needs_compiler
def test_cuda_source_compiles_and_runs():
    m = warpsim.Module(cuda=(REPO / "examples/reduction.cu").read_text(), name="reduction")
    n = 1 << 12
    x = np.arange(n, dtype=np.float32) % 7
    out = np.zeros(n // 256, np.float32)
    r = m.launch("reduce_sum", n // 256, 128, [x, out, np.uint32(n)], shared_mem=128 * 4)
    np.testing.assert_allclose(out.sum(), x.sum())
    assert r.metrics["warpsim__inst_executed_op_shfl.sum"] > 0


def test_the_warpsim_command_runs_from_the_package(tmp_path):
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "warpsim", "run", str(DEMO), "--kernel", "warp_probe", "--grid", "1", "--block", "33",
         "--param", "clk:u64[33]=zeros:out", "--param", "lane:u32[33]=zeros:out", "--param", "warp:u32[33]=zeros:out", "--json"],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stderr
    assert '"warps": 2' in out.stdout
    bad = subprocess.run([sys.executable, "-m", "warpsim", "run", "nope.ptx"], cwd=tmp_path, capture_output=True, text=True)
    assert bad.returncode == 1 and "nope.ptx" in bad.stderr


# A whole program with the CUDA runtime API, warp shuffles and device printf.
EXEC_PROGRAM = r"""
#include <cstdio>
#include <cuda_runtime.h>
__global__ void warp_sums(const int *in, int *out) {
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffff, v, d);
    if (threadIdx.x % 32 == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
    if (blockIdx.x == 1 && threadIdx.x == 32) printf("device: warp 1 of block 1 sums to %d\n", v);
}
int main() {
    const int n = 256, warps = n / 32;
    int h[n], sums[warps], *d_in, *d_out;
    for (int i = 0; i < n; i++) h[i] = i;
    cudaMalloc(&d_in, sizeof h);
    cudaMalloc(&d_out, sizeof sums);
    cudaMemcpy(d_in, h, sizeof h, cudaMemcpyHostToDevice);
    warp_sums<<<2, 128>>>(d_in, d_out);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaMemcpy(sums, d_out, sizeof sums, cudaMemcpyDeviceToHost);
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    printf("%s on %s:", cudaGetErrorString(e), p.name);
    for (int w = 0; w < warps; w++) printf(" %d", sums[w]);
    printf("\n");
    return e == cudaSuccess ? 0 : 1;
}
"""


@needs_nvcc
def test_exec_from_the_package_runs_nvcc_programs_on_its_own_libraries(tmp_path):
    """`nvcc -cudart shared` links the wheel's runtime (as `libcudart.so`, the name the linker
    looks for); the package's `warpsim exec` runs the program on the wheel's driver and runtime."""
    import subprocess
    import sys

    lib = Path(warpsim.__file__).parent / "lib"
    link = tmp_path / "link"
    link.mkdir()
    (link / "libcudart.so").symlink_to(lib / "libwarpsim_cudart.so")
    (tmp_path / "warp_sums.cu").write_text(EXEC_PROGRAM)
    built = subprocess.run(
        [nvcc(), "-arch=sm_90", "-cudart", "shared", "-L", str(link), "warp_sums.cu", "-o", "warp_sums"],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert built.returncode == 0, built.stderr
    # Neither the Rust build's libraries nor NVIDIA's runtime: only the package's.
    env = {k: v for k, v in os.environ.items() if k not in ("WARPSIM_LIB_DIR", "LD_LIBRARY_PATH")}
    cmd = [sys.executable, "-m", "warpsim", "exec"]
    out = subprocess.run(cmd + ["--gpu", "h100", "--", "./warp_sums"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    sums = " ".join(str(sum(range(32 * w, 32 * w + 32))) for w in range(8))
    assert out.stdout.splitlines() == [f"device: warp 1 of block 1 sums to {sum(range(160, 192))}", f"no error on NVIDIA H100 SXM5: {sums}"], out.stdout
    assert "warp_sums" in out.stderr  # exec's per-kernel table
    # Python programs still run, on the same driver.
    py = subprocess.run(cmd + ["--", sys.executable, "-c", "print('hi')"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert py.returncode == 0 and py.stdout == "hi\n", py.stderr


@needs_compiler
def test_compiling_cuda_says_nothing_even_on_a_terminal_unless_verbose(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "two_modules.py"
    script.write_text(
        "import sys, warpsim\n"
        f"src = open({str(REPO / 'examples/reduction.cu')!r}).read()\n"
        "a = warpsim.Module(cuda=src, name='reduction')\n"
        "b = warpsim.Module(cuda=src, name='reduction')\n"
        "assert a.compiler and a.compiler == b.compiler, (a.compiler, b.compiler)\n"
        "warpsim.Module(cuda=src, name='reduction', verbose=True)\n"
        "sys.stderr.write('done\\n')\n"
    )
    # stderr a terminal, as in a notebook's server or a shell (the CLI says it there).
    master, slave = os.openpty()
    try:
        p = subprocess.run([sys.executable, str(script)], stderr=slave, stdout=subprocess.PIPE, cwd=tmp_path, timeout=300)
        os.close(slave)
        chunks = []
        while True:
            try:
                c = os.read(master, 4096)
            except OSError:
                break
            if not c:
                break
            chunks.append(c)
    finally:
        os.close(master)
    err = b"".join(chunks).decode(errors="replace")
    assert p.returncode == 0, err
    assert "done" in err
    # Only the verbose Module says which compiler it used, once.
    assert err.count("compiled") == 1, err
    assert "warpsim: compiled" in err
