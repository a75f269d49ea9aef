#!/usr/bin/env bash
# On a machine with an H200, nvcc, ncu and CuPy: builds kernels.cu to PTX, runs every case of
# cases_spec.json (outputs, sha256, attributes, times) and profiles each launch once with
# Nsight Compute over metrics.txt (the shared corpus's names plus constant-cache counters;
# names this ncu rejects are dropped first). Usage: OUT=dir calibration/kinds11/run_kinds11.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/kinds11}
work=$(mktemp -d)
mkdir -p "$out"
cp "$here"/kernels.cu "$here"/cases_spec.json "$work"/
cd "$work"
nvcc -ptx -lineinfo -O3 -arch=sm_90 kernels.cu -o kernels.ptx && cp kernels.ptx "$out"/
ptxas -arch=sm_90 -v kernels.ptx -o kernels.cubin > "$out"/ptxas.txt 2>&1
python3 "$here"/../validation/run_cases.py cases_spec.json "$out"/val > "$out"/run.log 2>&1; echo "run rc=$?"
prof() {  # prof METRICS CSV: one profile of every case
  ncu --csv --page raw --print-units base --cache-control all --clock-control none --metrics "$1" -k 'regex:^k_' python3 "$here"/../validation/run_cases.py cases_spec.json "$work"/ncu --ncu > "$2" 2> "$2.err"
}
all=$(paste -sd, "$here"/metrics.txt)
if prof "$all" "$out"/ncu.csv; then
  echo "$all" > "$out"/metrics_accepted.txt
else
  # Some name is unknown to this ncu: the corpus's 40, then each extra one alone.
  corpus=$(head -40 "$here"/metrics.txt | paste -sd,)
  prof "$corpus" "$out"/ncu.csv; echo "ncu corpus rc=$?"
  echo "$corpus" > "$out"/metrics_accepted.txt
  for m in $(tail -n +41 "$here"/metrics.txt); do
    prof "$m" "$out/ncu_$m.csv" && echo "$m" >> "$out"/metrics_accepted.txt || echo "rejected $m"
  done
fi
echo "ncu rows=$(grep -c '^"[0-9]' "$out"/ncu.csv)"
(cd "$out" && tar czf val.tgz val && rm -rf val)
