"""Numba's @cuda.jit kernels on warpsim in-process, after `import warpsim.numba`
(in a child process: the driver is chosen once per process)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    if not hasattr(np, "row_stack"):  # numba-cuda 0.30 still registers np.row_stack, gone in NumPy 2.5
        np.row_stack = np.vstack
    import warpsim, warpsim.numba
    warpsim.numba.configure(mode=sys.argv[1])
    from numba import cuda

    @cuda.jit
    def vadd(a, b, c):
        i = cuda.grid(1)
        if i < c.size:
            c[i] = a[i] + b[i]

    @cuda.jit
    def lane_sum(x, out):
        v = x[cuda.grid(1)]
        for o in (16, 8, 4, 2, 1):
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, o)
        if cuda.laneid == 0:
            out[cuda.grid(1) // 32] = v

    n = 4096
    a = np.arange(n, dtype=np.float32); b = np.ones(n, np.float32)
    dc = cuda.device_array(n, dtype=np.float32)
    vadd[n // 256, 256](cuda.to_device(a), cuda.to_device(b), dc)
    c = dc.copy_to_host()
    first = warpsim.last_launch()
    # The same kernel's results as Module.launch gives them, for the comparison below.
    probe = warpsim.Module(ptx=open(sys.argv[2]).read()).launch("warp_probe", 1, 33,
        [np.zeros(33, np.uint64), np.zeros(33, np.uint32), np.zeros(33, np.uint32)], mode=sys.argv[1])
    res = {"metric_names": sorted(first.metrics), "module_metric_names": sorted(probe.metrics),
           "ld_ratio": first.metrics.get("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio"),
           "rows": first.per_line, "summary": first.summary(), "cycles_attr": first.cycles,
           "is_result": isinstance(first, warpsim.LaunchResult), "line": first.line}
    x = np.arange(256, dtype=np.int32); dout = cuda.device_array(8, dtype=np.int32)
    lane_sum[1, 256](cuda.to_device(x), dout)
    out = dout.copy_to_host()
    second = warpsim.last_launch()
    # NumPy arrays straight to the kernel: Numba copies them in and out through the
    # device's memory pool (stream-ordered allocation).
    h = np.zeros(n, dtype=np.float32)
    vadd[n // 256, 256](a, b, h)
    print(json.dumps({"ok": bool((c == a + b).all()) and bool((h == a + b).all()), "sums": out.tolist(), "want": x.reshape(8, 32).sum(1).tolist(),
                      "first": first, "second": second, "res": res, "last": warpsim.last_launch(), "n": len(warpsim.launches()),
                      "device": cuda.get_current_device().name.decode() if isinstance(cuda.get_current_device().name, bytes) else cuda.get_current_device().name}))
    """
)


def numba_missing():
    """Why Numba cannot run here (None: it can). CI sets WARPSIM_REQUIRE_NUMBA=1: then it must."""
    probe = "import numpy as np\nnp.row_stack = getattr(np, 'row_stack', np.vstack)\nimport warpsim.numba, numba.cuda, cuda.bindings"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    if out.returncode == 0:
        return None
    why = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "import failed"
    if os.environ.get("WARPSIM_REQUIRE_NUMBA") == "1":
        pytest.fail(f"numba-cuda cannot be imported: {why}")
    return why


@pytest.fixture(scope="module", autouse=True)
def numba_here():
    why = numba_missing()
    if why:
        pytest.skip(f"numba-cuda is not usable ({why}); pip install 'warpsim[numba]'")


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_numba_kernels_run_on_warpsim_in_process(tmp_path, mode):
    p = tmp_path / "numba_on_warpsim.py"
    p.write_text(SCRIPT)
    demo = os.path.join(os.path.dirname(__file__), "..", "..", "demo", "kernels.ptx")
    out = subprocess.run([sys.executable, str(p), mode, demo], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr
    j = json.loads(out.stdout.strip().splitlines()[-1])
    assert j["ok"] and j["sums"] == j["want"]
    assert "vadd" in j["first"]["kernel"] and "lane_sum" in j["second"]["kernel"] and "vadd" in j["last"]["kernel"]
    assert j["n"] == 3
    # vadd: full warps, one load of each input and one store each: 4 sectors per request.
    assert j["first"]["threads_per_instruction"] == 32.0
    assert j["first"]["global_sectors"] == 4 * j["first"]["global_requests"]
    assert j["first"]["grid"] == [16, 1, 1] and j["first"]["block"] == [256, 1, 1]
    if mode == "timing":
        assert j["first"]["cycles"] > 0
    else:
        assert j["first"]["cycles"] is None
    assert "H200" in j["device"].upper()


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_last_launch_is_a_launch_result_with_ncu_metrics_rows_and_summary(tmp_path, mode):
    p = tmp_path / "numba_on_warpsim.py"
    p.write_text(SCRIPT)
    demo = os.path.join(os.path.dirname(__file__), "..", "..", "demo", "kernels.ptx")
    out = subprocess.run([sys.executable, str(p), mode, demo], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr
    j = json.loads(out.stdout.strip().splitlines()[-1])
    r = j["res"]
    assert r["is_result"]
    # The same Nsight Compute names as Module.launch's metrics in the same mode.
    assert r["metric_names"] and r["metric_names"] == r["module_metric_names"]
    assert "smsp__inst_executed.sum" in r["metric_names"] or any(n.startswith("smsp__") for n in r["metric_names"])
    if mode == "functional":
        # vadd's loads are fully coalesced floats: 4 sectors per request.
        assert r["ld_ratio"] == 4
    assert r["rows"] and all("line" in row or "ptx_line" in row for row in r["rows"]), r["rows"][:2]
    assert "vadd" in r["summary"] and "warp instructions" in r["summary"]
    assert r["line"]["kernel"] == j["first"]["kernel"]
    assert r["cycles_attr"] == j["first"]["cycles"]
