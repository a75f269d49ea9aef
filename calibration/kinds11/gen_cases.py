#!/usr/bin/env python3
"""Writes cases_spec.json: the launches of kernels.cu, in the shared corpus's format
(../../../shared/corpus/README.md). run_kinds11.sh runs them on the H200 and collect.py joins
the outputs and Nsight Compute's counts into cases.json."""
import json, os

HERE = os.path.dirname(os.path.abspath(__file__))


def buf(name, dtype, count, init, role):
    return {"kind": "buffer", "name": name, "dtype": dtype, "count": count, "init": init, "role": role}


def sc(t, v):
    return {"kind": "scalar", "type": t, "value": v}


def case(name, kernel, grid, block, params):
    return {"name": name, "ptx": "kernels.ptx", "kernel": kernel, "grid": [grid, 1, 1], "block": [block, 1, 1],
            "dynamic_shared_bytes": 0, "params": params}


n = 16000  # not a multiple of 32: the last warp is partial
cases = [
    case("tile_reduce", "k_tile_reduce", 63, 256,
         [buf("in", "f32", n, "unit_f32", "in"), buf("sums8", "f32", 2000, "zeros", "out"),
          buf("ballots16", "u32", 1000, "zeros", "out"), sc("i32", n)]),
    case("labeled_reduce", "k_labeled_reduce", 63, 256,
         [buf("keys", "u32", n, "hash_u32", "in"), buf("vals", "i32", n, "iota", "in"),
          buf("sums", "i32", 2000, "zeros", "out"), buf("maxs", "i32", 2000, "zeros", "out"), sc("i32", n)]),
    case("coalesced_count", "k_coalesced_count", 63, 256,
         [buf("keys", "u32", n, "hash_u32", "in"), buf("counts", "u32", 2, "zeros", "out"),
          buf("slot_of", "u32", n, "zeros", "out"), sc("i32", n)]),
    case("ieee_div_sqrt", "k_ieee_div_sqrt", 63, 256,
         [buf("x", "f32", n, "unit_f32", "in"), buf("y", "f32", n, "iota", "in"),
          buf("q", "f32", n, "zeros", "out"), buf("r", "f32", n, "zeros", "out"), buf("inv", "f32", n, "zeros", "out"),
          buf("qd", "f64", n, "zeros", "out"), buf("rd", "f64", n, "zeros", "out"), sc("i32", n)]),
    case("vector_axpy", "k_vector_axpy", 16, 256,
         [buf("x", "f32", 4 * 4000, "unit_f32", "in"), buf("y", "f32", 4 * 4000, "iota", "in"),
          buf("out4", "f32", 4 * 4000, "zeros", "out"), buf("out2", "f32", 2 * 4000, "zeros", "out"),
          sc("f32", 1.5), sc("i32", 4000)]),
    case("conv_const", "k_conv_const", 63, 256,
         [buf("in", "f32", n, "unit_f32", "in"), buf("out", "f32", n, "zeros", "out"), sc("i32", n)]),
    case("const_lookup", "k_const_lookup", 63, 256,
         [buf("keys", "u32", n, "hash_u32", "in"), buf("out", "u32", n, "zeros", "out"), sc("i32", n)]),
    case("cg_block_sum", "k_cg_block_sum", 63, 256,
         [buf("in", "f32", n, "unit_f32", "in"), buf("partial", "f32", 63, "zeros", "out"), sc("i32", n)]),
]
spec = {"note": "Kernels of the kinds issue 11 names (cooperative-groups tiles, partial-mask collectives, IEEE "
                "division and square root, vector and constant-memory loads), written for warpsim, run on a real "
                "H200 from exactly this PTX and these inputs. Format: ../../../shared/corpus/README.md.",
        "gpu": "NVIDIA H200 (sm_90, 132 SMs), driver 580, CUDA 13.0", "cases": cases}
json.dump(spec, open(os.path.join(HERE, "cases_spec.json"), "w"), indent=1)
print(len(cases), "cases")
