"""Design-space sweeps: one launch per configuration, results as rows.

A configuration is a dict: `grid`, `block`, `args` (a list, or a callable
taking the configuration and returning the list, called in this process, so
that a function defined in a notebook will do), and any of
`gpu`, `mode`, `shared_mem`, `check`, `opt_in`; other keys are the user's
parameters, carried into the row untouched. Each row holds the
configuration's scalar keys, then the launch's numbers: kernel, cycles,
warp instructions, threads per instruction, occupancy (functional mode) or
achieved occupancy (timing mode), and every Nsight Compute metric by name.
Wall-clock time is left out, so every backend gives the same rows.
"""

import os
import sys

import numpy as np

_LAUNCH_KEYS = ("grid", "block", "gpu", "mode", "shared_mem", "check", "opt_in", "max_instructions")


def _row(module, kernel, config):
    cfg = dict(config)
    # Arrays that arrive read-only (Ray's zero-copy object store) get a writable copy here.
    args = [a.copy() if isinstance(a, np.ndarray) and not a.flags.writeable else a for a in cfg.pop("args", ())]
    kw = {k: cfg[k] for k in _LAUNCH_KEYS if k in cfg}
    kw.setdefault("mode", "functional")
    r = module.launch(kernel, args=args, progress=False, **kw)
    d = r.to_dict()
    row = {}
    for k, v in config.items():
        if k == "args":
            continue
        row[k] = list(v) if isinstance(v, tuple) else v
    row.setdefault("gpu", "h200")
    row.setdefault("mode", kw["mode"])
    row["kernel"] = d["kernel"]
    row["cycles"] = r.cycles
    row["warp_instructions"] = d["warp_instructions"]
    row["threads_per_instruction"] = d["threads_per_instruction"]
    occ = d.get("occupancy")
    if occ:
        row["occupancy"] = occ.get("occupancy")
        row["blocks_per_sm"] = occ.get("blocks_per_sm")
    metrics = d.get("metrics") or {}
    if r.cycles is not None:
        # Nsight Compute's achieved occupancy, in percent of the SM's warp slots.
        row["achieved_occupancy"] = metrics.get("sm__warps_active.avg.pct_of_peak_sustained_active")
        row["theoretical_occupancy"] = metrics.get("sm__maximum_warps_per_active_cycle_pct")
    row.update(metrics)
    return row


def _resolved(config):
    config = dict(config)
    args = config.get("args", ())
    if callable(args):
        config["args"] = args({k: v for k, v in config.items() if k != "args"})
    return config


def _worker_init(threads):
    # Each worker's launches use a share of the cores (rayon reads this once, at first use).
    os.environ.setdefault("RAYON_NUM_THREADS", str(threads))


def _bar(total, progress):
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="warpsim sweep", unit="launch")


def _ray_importable():
    import importlib.util

    try:
        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):
        return False


def _backend(backend, address):
    """The backend a sweep runs on: Ray when asked for, when `address` is given, or
    (by default) when Ray is installed; else a local process pool."""
    if backend is None:
        if address is not None:
            backend = "ray"
        else:
            backend = "ray" if _ray_importable() else "process"
    if backend not in ("process", "serial", "ray"):
        raise ValueError(f"backend {backend!r}: use 'process', 'serial' or 'ray'")
    if address is not None and backend != "ray":
        raise ValueError(f"address={address!r} is a Ray cluster's address, but backend={backend!r}; leave backend out (or 'ray')")
    if backend == "ray" and not _ray_importable():
        why = f"address={address!r} names a Ray cluster" if address is not None else "backend='ray'"
        raise ImportError(f"{why}, but Ray is not installed: pip install 'warpsim[ray]'")
    return backend


def sweep(module, kernel, configs, *, backend=None, address=None, workers=None, progress=None, as_frame=None):
    """Runs `kernel` of `module` once per configuration and returns one row per configuration, in order.

    backend: "ray" (Ray: the running instance, else `ray.init(address=address)`,
    a local instance when `address` is None), "process" (a local process pool
    of `workers` processes) or "serial" (this process). The default is Ray when
    Ray is importable (`pip install 'warpsim[ray]'`), else the process pool;
    giving `address=` means Ray (an ImportError says so when Ray is missing).
    Every backend gives the same rows. Rows are a pandas DataFrame
    when pandas is installed (`as_frame=False` for a list of dicts).
    A tqdm progress bar shows on a terminal (`progress=` to force it on or off).
    """
    backend = _backend(backend, address)
    configs = [_resolved(c) for c in configs]
    bar = _bar(len(configs), progress)
    try:
        if backend == "serial" or not configs:
            rows = []
            for c in configs:
                rows.append(_row(module, kernel, c))
                if bar:
                    bar.update(1)
        elif backend == "process":
            rows = _process(module, kernel, configs, workers, bar)
        elif backend == "ray":
            rows = _ray(module, kernel, configs, address, bar)
    finally:
        if bar:
            bar.close()
    if as_frame is False:
        return rows
    try:
        import pandas as pd
    except ImportError:
        if as_frame:
            raise
        return rows
    return pd.DataFrame(rows)


def _process(module, kernel, configs, workers, bar):
    import concurrent.futures as cf
    import multiprocessing as mp

    cores = os.cpu_count() or 1
    workers = max(1, min(workers or cores, len(configs)))
    # spawn: a forked child would inherit this process's rayon pool without its threads.
    ctx = mp.get_context("spawn")
    rows = [None] * len(configs)
    with cf.ProcessPoolExecutor(workers, mp_context=ctx, initializer=_worker_init, initargs=(max(1, cores // workers),)) as ex:
        futs = {ex.submit(_row, module, kernel, c): i for i, c in enumerate(configs)}
        for f in cf.as_completed(futs):
            rows[futs[f]] = f.result()
            if bar:
                bar.update(1)
    return rows


def _ray(module, kernel, configs, address, bar):
    try:
        import ray
    except ImportError as e:
        raise ImportError("backend='ray' needs Ray: pip install 'warpsim[ray]'") from e
    if not ray.is_initialized():
        ray.init(address=address)
    remote = ray.remote(_row)
    mod = ray.put(module)
    refs = [remote.remote(mod, kernel, c) for c in configs]
    index = {r: i for i, r in enumerate(refs)}
    rows = [None] * len(configs)
    pending = list(refs)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for r in done:
            rows[index[r]] = ray.get(r)
            if bar:
                bar.update(1)
    return rows
