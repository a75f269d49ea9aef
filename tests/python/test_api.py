"""The API on real kernels, compared with what `warpsim run --json` says of the same launch."""

import os

import numpy as np
import pytest

import warpsim
from conftest import REPO, needs_compiler, run_json

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


def test_exec_from_the_package_runs_python_programs_and_warns_about_others(tmp_path):
    import shutil
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "warpsim", "exec"]
    env = {k: v for k, v in os.environ.items() if k != "WARPSIM_LIB_DIR"}
    py = subprocess.run(cmd + ["--", sys.executable, "-c", "print('hi')"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert py.returncode == 0 and py.stdout == "hi\n", py.stderr
    assert "not a Python program" not in py.stderr
    true = shutil.which("true")
    other = subprocess.run(cmd + ["--gpu", "t4", true], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert other.returncode == 0, other.stderr
    assert f"{true} is not a Python program" in other.stderr and "cargo build --release --workspace" in other.stderr


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
