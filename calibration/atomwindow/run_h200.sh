#!/usr/bin/env bash
# On the device machine: build, run under Nsight Compute, keep the raw CSV.
set -euo pipefail
cd "$(dirname "$0")"
nvcc -O3 -arch=sm_90 -o /tmp/atomwindow atomwindow.cu
/tmp/atomwindow > "$OUT/stdout.txt"
ncu --csv --page raw --print-units base --metrics sm__cycles_elapsed.max,lts__t_requests_srcunit_tex_op_atom.sum /tmp/atomwindow > "$OUT/ncu.csv" 2> "$OUT/ncu.err" || true
tail -3 "$OUT/ncu.err" || true
