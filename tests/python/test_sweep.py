"""Sweeps: one row per configuration, the same rows from every backend."""

import numpy as np
import pytest

import warpsim
from conftest import REPO

DEMO = REPO / "demo/kernels.ptx"


def tour_args(cfg):
    # Sized by the configuration (called in the sweeping process).
    grid, block = cfg["grid"], cfg["block"]
    rng = np.random.default_rng(1)
    return [rng.random(grid * block * 4, dtype=np.float32), np.zeros(grid * block, np.float32), np.int32(cfg["stride"])]


def configs():
    return [
        {"grid": 16, "block": 256, "gpu": gpu, "mode": mode, "stride": stride, "args": tour_args}
        for gpu in ("t4", "h200")
        for mode in ("functional", "timing")
        for stride in (1, 4)
    ]


@pytest.fixture(scope="module")
def module():
    return warpsim.Module(DEMO)


@pytest.fixture(scope="module")
def serial(module):
    return warpsim.sweep(module, "tour", configs(), backend="serial", as_frame=False)


def test_rows_carry_the_configuration_and_the_launchs_numbers(module, serial):
    assert len(serial) == 8
    row = serial[0]
    assert (row["gpu"], row["mode"], row["stride"], row["grid"], row["block"]) == ("t4", "functional", 1, 16, 256)
    assert row["cycles"] is None and row["occupancy"] > 0
    assert row["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] > 0
    timed = [r for r in serial if r["mode"] == "timing"]
    assert all(r["cycles"] > 0 for r in timed)
    # A larger stride costs more sectors per request, on every GPU.
    for gpu in ("t4", "h200"):
        f = {r["stride"]: r for r in serial if r["gpu"] == gpu and r["mode"] == "functional"}
        key = "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio"
        assert f[4][key] > f[1][key]
    # One launch by hand gives the row's numbers.
    cfg = configs()[3]
    r = module.launch("tour", cfg["grid"], cfg["block"], tour_args(cfg), gpu=cfg["gpu"], mode=cfg["mode"])
    assert serial[3]["cycles"] == r.cycles and all(serial[3][k] == v for k, v in r.metrics.items())


def test_a_process_pool_gives_the_same_rows(module, serial):
    assert warpsim.sweep(module, "tour", configs(), backend="process", workers=2, as_frame=False) == serial


def test_rows_are_a_dataframe_with_pandas(module, serial):
    pd = pytest.importorskip("pandas")
    df = warpsim.sweep(module, "tour", configs()[:2], backend="serial")
    assert isinstance(df, pd.DataFrame) and len(df) == 2 and "cycles" in df.columns


def test_ray_gives_the_same_rows(module, serial):
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        assert warpsim.sweep(module, "tour", configs(), backend="ray", as_frame=False) == serial
    finally:
        ray.shutdown()


def test_an_unknown_backend_is_refused(module):
    with pytest.raises(ValueError, match="backend"):
        warpsim.sweep(module, "tour", configs()[:1], backend="dask")


class Ref:
    """An object ref: hashable, holding the task's value."""

    def __init__(self, value):
        self.value = value


class FakeRay:
    """Ray's API as the sweep uses it, run in this process: records that it was used."""

    def __init__(self):
        self.inits, self.tasks, self.up = [], 0, False

    def is_initialized(self):
        return self.up

    def init(self, address=None, **kw):
        self.inits.append(address)
        self.up = True

    def put(self, v):
        return ("obj", v)

    def remote(self, f):
        fake = self

        class Remote:
            def remote(self, *a):
                fake.tasks += 1
                a = [x[1] if isinstance(x, tuple) and x[:1] == ("obj",) else x for x in a]
                return Ref(f(*a))

        return Remote()

    def wait(self, pending, num_returns=1):
        return pending[:num_returns], pending[num_returns:]

    def get(self, ref):
        return ref.value


@pytest.fixture
def fake_ray(monkeypatch):
    import importlib
    import sys

    import types

    fake = FakeRay()
    mod = types.ModuleType("ray")
    for name in ("is_initialized", "init", "put", "remote", "wait", "get"):
        setattr(mod, name, getattr(fake, name))
    mod.__spec__ = importlib.machinery.ModuleSpec("ray", None)
    monkeypatch.setitem(sys.modules, "ray", mod)
    return fake


def test_ray_is_the_default_when_importable_and_address_implies_it(module, serial, fake_ray):
    rows = warpsim.sweep(module, "tour", configs(), as_frame=False)
    assert fake_ray.tasks == len(serial) and fake_ray.inits == [None]
    assert rows == serial
    fake_ray.up = False
    rows = warpsim.sweep(module, "tour", configs()[:2], address="ray://head:10001", as_frame=False)
    assert fake_ray.inits == [None, "ray://head:10001"] and rows == serial[:2]


def test_without_ray_the_default_is_the_process_pool_and_address_is_an_error(module, serial, monkeypatch):
    import importlib
    import sys

    sw = importlib.import_module("warpsim.sweep")
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails, find_spec raises
    monkeypatch.setattr(sw, "_ray_importable", lambda: False)
    assert sw._backend(None, None) == "process"
    with pytest.raises(ImportError, match=r"address='ray://head:10001'.*pip install 'warpsim\[ray\]'"):
        warpsim.sweep(module, "tour", configs()[:1], address="ray://head:10001")
    with pytest.raises(ImportError, match="Ray is not installed"):
        warpsim.sweep(module, "tour", configs()[:1], backend="ray")
    with pytest.raises(ValueError, match="address"):
        warpsim.sweep(module, "tour", configs()[:1], backend="process", address="ray://head:10001")
