"""The example notebook runs headless end to end and shows its plots."""

import pytest

from conftest import REPO, needs_compiler


@needs_compiler
def test_the_sweep_notebook_runs_and_plots(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("matplotlib")
    pytest.importorskip("pandas")
    nb = nbformat.read(REPO / "examples/sweep_reduction.ipynb", as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    # Run from a folder with nothing in it: the notebook must not need examples/ as its cwd.
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    pngs = [o for o in outputs if "image/png" in o.get("data", {})]
    assert pngs, "the notebook drew no plot"
    html = [o for o in outputs if "text/html" in o.get("data", {})]
    assert any("warpsim report: reduce_sum" in o["data"]["text/html"] for o in html)
    table = next(o for o in outputs if "text/html" in o.get("data", {}) and "achieved_occupancy" in o["data"]["text/html"])
    assert table


def test_the_notebooks_kernel_is_examples_reduction_cu():
    import json
    import re

    nb = json.loads((REPO / "examples/sweep_reduction.ipynb").read_text())
    code = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    m = re.search(r'REDUCTION_CU = r"""\n(.*?)"""', code, re.S)
    assert m, "the notebook embeds the kernel's source"
    assert m.group(1) == (REPO / "examples/reduction.cu").read_text()
