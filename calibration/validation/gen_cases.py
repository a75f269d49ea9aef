#!/usr/bin/env python3
"""Writes cases.json (without the h200 and expect fields) and the CSR input files.

The H200 run (run_cases.py, on the device) fills in `expect` and `h200`; merge.py then joins
Nsight Compute's CSV into `h200.ncu`. Pure Python: no numpy needed here.
"""
import json, struct, os

HERE = os.path.dirname(os.path.abspath(__file__))


def fmix32(x):
    x &= 0xFFFFFFFF
    x ^= x >> 16
    x = (x * 0x85EBCA6B) & 0xFFFFFFFF
    x ^= x >> 13
    x = (x * 0xC2B2AE35) & 0xFFFFFFFF
    x ^= x >> 16
    return x


def hash_u32(i):
    return fmix32((i * 0x9E3779B1) & 0xFFFFFFFF)


def buf(name, dtype, count, init, role):
    return {"kind": "buffer", "name": name, "dtype": dtype, "count": count, "init": init, "role": role}


def sc(t, v):
    return {"kind": "scalar", "type": t, "value": v}


def case(name, kernel, grid, block, params, dyn=0, note=None):
    c = {"name": name, "ptx": "kernels.ptx", "kernel": kernel, "grid": grid, "block": block,
         "dynamic_shared_bytes": dyn, "params": params}
    if note:
        c["note"] = note
    return c


# CSR matrix for the SpMV cases: row r has 1 + hash_u32(r) % 48 entries, columns spread by hash
ROWS = 8192
rowptr = [0]
cols = []
for r in range(ROWS):
    nnz = 1 + hash_u32(r) % 48
    for k in range(nnz):
        cols.append(hash_u32(r * 64 + k + 0x1000000) % ROWS)
    rowptr.append(len(cols))
NNZ = len(cols)
os.makedirs(os.path.join(HERE, "inputs"), exist_ok=True)
with open(os.path.join(HERE, "inputs", "csr_rowptr.bin"), "wb") as f:
    f.write(struct.pack("<%di" % len(rowptr), *rowptr))
with open(os.path.join(HERE, "inputs", "csr_cols.bin"), "wb") as f:
    f.write(struct.pack("<%di" % len(cols), *cols))

N20 = 1 << 20
cases = [
    case("reduce_tree_1M", "v_reduce_tree", [N20 // 512, 1, 1], [256, 1, 1],
         [buf("in", "f32", N20, "unit_f32", "in"), buf("partial", "f32", N20 // 512, "zeros", "out"), sc("i32", N20)]),
    case("reduce_shfl_4M", "v_reduce_shfl", [264, 1, 1], [256, 1, 1],
         [buf("in", "f32", 4 * N20, "unit_f32", "in"), buf("partial", "f32", 264, "zeros", "out"), sc("i32", 4 * N20)]),
    case("scan_block_1M", "v_scan_block", [N20 // 512, 1, 1], [512, 1, 1],
         [buf("in", "i32", N20, "hash_u32", "in"), buf("out", "i32", N20, "zeros", "out"), sc("i32", N20)]),
    case("sgemm_tiled_512", "v_sgemm_tiled", [32, 32, 1], [16, 16, 1],
         [buf("A", "f32", 512 * 512, "unit_f32", "in"), buf("B", "f32", 512 * 512, "unit_f32", "in"),
          buf("C", "f32", 512 * 512, "zeros", "out"), sc("i32", 512), sc("i32", 512), sc("i32", 512)],
         note="A and B share one initialiser, so B = A"),
    case("sgemm_reg4x4_512", "v_sgemm_reg4x4", [8, 8, 1], [256, 1, 1],
         [buf("A", "f32", 512 * 512, "unit_f32", "in"), buf("B", "f32", 512 * 512, "unit_f32", "in"),
          buf("C", "f32", 512 * 512, "zeros", "out"), sc("i32", 512), sc("i32", 512), sc("i32", 512)]),
    case("stencil5_1024", "v_stencil5", [32, 128, 1], [32, 8, 1],
         [buf("in", "f32", N20, "unit_f32", "in"), buf("out", "f32", N20, "zeros", "out"), sc("i32", 1024), sc("i32", 1024)]),
    case("bitonic_smem_64x1024", "v_bitonic_smem", [64, 1, 1], [512, 1, 1],
         [buf("in", "u32", 65536, "hash_u32", "in"), buf("out", "u32", 65536, "zeros", "out")]),
    case("transpose_naive_1024", "v_transpose_naive", [32, 32, 1], [32, 8, 1],
         [buf("in", "f32", N20, "unit_f32", "in"), buf("out", "f32", N20, "zeros", "out"), sc("i32", 1024), sc("i32", 1024)]),
    case("transpose_tiled_1024", "v_transpose_tiled", [32, 32, 1], [32, 8, 1],
         [buf("in", "f32", N20, "unit_f32", "in"), buf("out", "f32", N20, "zeros", "out"), sc("i32", 1024), sc("i32", 1024)]),
    case("softmax_rows_256x512", "v_softmax_rows", [256, 1, 1], [256, 1, 1],
         [buf("in", "f32", 256 * 512, "unit_f32", "in"), buf("out", "f32", 256 * 512, "zeros", "out"), sc("i32", 512)]),
    case("layernorm_rows_512x256", "v_layernorm_rows", [64, 1, 1], [256, 1, 1],
         [buf("x", "f32", 512 * 256, "unit_f32", "in"), buf("gamma", "f32", 256, "unit_f32", "in"),
          buf("beta", "f32", 256, "iota", "in"), buf("y", "f32", 512 * 256, "zeros", "out"), sc("i32", 512), sc("i32", 256)]),
    case("attention_small_16h", "v_attention_small", [16, 1, 1], [128, 1, 1],
         [buf("QKV", "f16", 3 * 16 * 64 * 64, "sym_f16", "in"), buf("O", "f32", 16 * 64 * 64, "zeros", "out"), sc("i32", 16)]),
    case("histogram_smem_1M", "v_histogram_smem", [264, 1, 1], [256, 1, 1],
         [buf("data", "u32", N20, "hash_u32", "in"), buf("bins", "u32", 256, "zeros", "inout"), sc("i32", N20)]),
    case("spmv_csr_scalar_8192", "v_spmv_csr_scalar", [64, 1, 1], [128, 1, 1],
         [buf("rowptr", "i32", ROWS + 1, {"file": "inputs/csr_rowptr.bin"}, "in"),
          buf("cols", "i32", NNZ, {"file": "inputs/csr_cols.bin"}, "in"),
          buf("vals", "f32", NNZ, "unit_f32", "in"), buf("x", "f32", ROWS, "unit_f32", "in"),
          buf("y", "f32", ROWS, "zeros", "out"), sc("i32", ROWS)]),
    case("spmv_csr_vector_8192", "v_spmv_csr_vector", [2048, 1, 1], [128, 1, 1],
         [buf("rowptr", "i32", ROWS + 1, {"file": "inputs/csr_rowptr.bin"}, "in"),
          buf("cols", "i32", NNZ, {"file": "inputs/csr_cols.bin"}, "in"),
          buf("vals", "f32", NNZ, "unit_f32", "in"), buf("x", "f32", ROWS, "unit_f32", "in"),
          buf("y", "f32", ROWS, "zeros", "out"), sc("i32", ROWS)]),
    case("dot_f64_1M", "v_dot_f64", [264, 1, 1], [256, 1, 1],
         [buf("a", "f64", N20, "unit_f64", "in"), buf("b", "f64", N20, "unit_f64", "in"),
          buf("partial", "f64", 264, "zeros", "out"), sc("i32", N20)],
         note="a and b share one initialiser: a sum of squares"),
    case("nw_tile16_512", "v_nw_tile16", [512, 1, 1], [16, 1, 1],
         [buf("seqa", "i32", 512 * 16, "hash_u32", "in"), buf("seqb", "i32", 512 * 16, "iota", "in"),
          buf("score", "i32", 512 * 256, "zeros", "out")]),
]

# Larger launches of the same kernels (outputs by sha256 only), so that the fixed launch cost
# (about 3500 cycles) is a small part of each kernel's cycles.
N24 = 1 << 24
cases += [
    case("reduce_tree_16M", "v_reduce_tree", [N24 // 512, 1, 1], [256, 1, 1],
         [buf("in", "f32", N24, "unit_f32", "in"), buf("partial", "f32", N24 // 512, "zeros", "out"), sc("i32", N24)]),
    case("reduce_shfl_64M", "v_reduce_shfl", [264, 1, 1], [256, 1, 1],
         [buf("in", "f32", 4 * N24, "unit_f32", "in"), buf("partial", "f32", 264, "zeros", "out"), sc("i32", 4 * N24)]),
    case("scan_block_16M", "v_scan_block", [N24 // 512, 1, 1], [512, 1, 1],
         [buf("in", "i32", N24, "hash_u32", "in"), buf("out", "i32", N24, "zeros", "out"), sc("i32", N24)]),
    case("sgemm_tiled_2048", "v_sgemm_tiled", [128, 128, 1], [16, 16, 1],
         [buf("A", "f32", 2048 * 2048, "unit_f32", "in"), buf("B", "f32", 2048 * 2048, "unit_f32", "in"),
          buf("C", "f32", 2048 * 2048, "zeros", "out"), sc("i32", 2048), sc("i32", 2048), sc("i32", 2048)]),
    case("sgemm_reg4x4_2048", "v_sgemm_reg4x4", [32, 32, 1], [256, 1, 1],
         [buf("A", "f32", 2048 * 2048, "unit_f32", "in"), buf("B", "f32", 2048 * 2048, "unit_f32", "in"),
          buf("C", "f32", 2048 * 2048, "zeros", "out"), sc("i32", 2048), sc("i32", 2048), sc("i32", 2048)]),
    case("stencil5_4096", "v_stencil5", [128, 512, 1], [32, 8, 1],
         [buf("in", "f32", N24, "unit_f32", "in"), buf("out", "f32", N24, "zeros", "out"), sc("i32", 4096), sc("i32", 4096)]),
    case("bitonic_smem_2048x1024", "v_bitonic_smem", [2048, 1, 1], [512, 1, 1],
         [buf("in", "u32", 2048 * 1024, "hash_u32", "in"), buf("out", "u32", 2048 * 1024, "zeros", "out")]),
    case("transpose_naive_4096", "v_transpose_naive", [128, 128, 1], [32, 8, 1],
         [buf("in", "f32", N24, "unit_f32", "in"), buf("out", "f32", N24, "zeros", "out"), sc("i32", 4096), sc("i32", 4096)]),
    case("transpose_tiled_4096", "v_transpose_tiled", [128, 128, 1], [32, 8, 1],
         [buf("in", "f32", N24, "unit_f32", "in"), buf("out", "f32", N24, "zeros", "out"), sc("i32", 4096), sc("i32", 4096)]),
    case("softmax_rows_8192x1024", "v_softmax_rows", [8192, 1, 1], [256, 1, 1],
         [buf("in", "f32", 8192 * 1024, "unit_f32", "in"), buf("out", "f32", 8192 * 1024, "zeros", "out"), sc("i32", 1024)]),
    case("layernorm_rows_16384x1024", "v_layernorm_rows", [2048, 1, 1], [256, 1, 1],
         [buf("x", "f32", 16384 * 1024, "unit_f32", "in"), buf("gamma", "f32", 1024, "unit_f32", "in"),
          buf("beta", "f32", 1024, "iota", "in"), buf("y", "f32", 16384 * 1024, "zeros", "out"), sc("i32", 16384), sc("i32", 1024)]),
    case("attention_small_528h", "v_attention_small", [528, 1, 1], [128, 1, 1],
         [buf("QKV", "f16", 3 * 528 * 64 * 64, "sym_f16", "in"), buf("O", "f32", 528 * 64 * 64, "zeros", "out"), sc("i32", 528)]),
    case("histogram_smem_16M", "v_histogram_smem", [528, 1, 1], [256, 1, 1],
         [buf("data", "u32", N24, "hash_u32", "in"), buf("bins", "u32", 256, "zeros", "inout"), sc("i32", N24)]),
    case("dot_f64_16M", "v_dot_f64", [528, 1, 1], [256, 1, 1],
         [buf("a", "f64", N24, "unit_f64", "in"), buf("b", "f64", N24, "unit_f64", "in"),
          buf("partial", "f64", 528, "zeros", "out"), sc("i32", N24)]),
    case("nw_tile16_16384", "v_nw_tile16", [16384, 1, 1], [16, 1, 1],
         [buf("seqa", "i32", 16384 * 16, "hash_u32", "in"), buf("seqb", "i32", 16384 * 16, "iota", "in"),
          buf("score", "i32", 16384 * 256, "zeros", "out")]),
]

doc = {
    "note": "Validation set for the timing model (issue 13): realistic kernels written for warpsim, run on a real H200 "
            "from exactly this PTX and these inputs. Never used for fitting. Format: ../../../shared/corpus/README.md.",
    "gpu": "NVIDIA H200 (sm_90, 132 SMs), driver 580, CUDA 13.0",
    "cases": cases,
}
with open(os.path.join(HERE, "cases_spec.json"), "w") as f:
    json.dump(doc, f, indent=1)
print(len(cases), "cases; nnz", NNZ)
