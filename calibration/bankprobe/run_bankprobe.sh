#!/usr/bin/env bash
# On a machine with an H200, nvcc and ncu: builds bankprobe.cu and profiles each kernel
# twice with Nsight Compute's shared-memory counters (to see whether they repeat).
# Usage: OUT=dir calibration/bankprobe/run_bankprobe.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/bankprobe}
mkdir -p "$out"
cd "$out"
nvcc -arch=sm_90 -O3 -o bankprobe "$here/bankprobe.cu"
nvcc -arch=sm_90 -O3 -ptx -o bankprobe.ptx "$here/bankprobe.cu"
m=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
m=$m,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum
m=$m,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,sm__cycles_elapsed.max
for run in 1 2; do
  ncu --metrics "$m" --csv ./bankprobe > "ncu_run$run.csv" 2> "ncu_run$run.err" || true
done
nvidia-smi --query-gpu=name,driver_version --format=csv > gpu.txt 2>&1 || true
nvcc --version > nvcc.txt 2>&1 || true
