#!/bin/bash
# One device call (issue 13's per-line stall comparison): every validation case launched once
# under Nsight Compute with source-level warp-state sampling at its finest interval, exported
# per CUDA line. Run from the repository root; results under $OUT.
#   FUZZ="parse_lower:8 manifest_params:6" also runs fuzz targets with that many jobs on the CPU
#   cores meanwhile (fuzz/target/stripped and fuzz/corpus carried from the build machine; see
#   fuzz/README.md); INTERVAL: ncu's --warp-sampling-interval (2^(5+INTERVAL) cycles).
set -u
R=$OUT/r; mkdir -p $R
exec > >(tee $R/log.txt) 2>&1
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
V=calibration/validation
FUZZ_S=${FUZZ_S:-480}
PIDS=""
# FUZZ="TARGET:JOBS ...": each target's jobs run FUZZ_S seconds; per-job stats land in fuzz_TARGET.txt.
for tj in ${FUZZ:-}; do
  t=${tj%%:*}; j=${tj#*:}; top=$PWD
  mkdir -p /tmp/fuzz_$t $R/fuzz_$t fuzz/corpus/$t
  extra=""; [ $t = parse_lower ] && extra="-dict=$top/fuzz/ptx.dict"
  (cd /tmp/fuzz_$t && timeout $((FUZZ_S + 60)) $top/fuzz/target/stripped/$t $top/fuzz/corpus/$t $extra \
     -jobs=$j -workers=$j -max_total_time=$FUZZ_S -timeout=10 -print_final_stats=1 \
     -artifact_prefix=$R/fuzz_$t/ > /tmp/fuzz_$t/main.log 2>&1
   grep -H "^stat::\|^Done\|ERROR\|panicked" /tmp/fuzz_$t/*.log > $R/fuzz_$t.txt) &
  PIDS="$PIDS $!"
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
ncu --version | tail -1
echo "== source-level profile t=$(el)"
PYTHONUNBUFFERED=1 timeout ${NCU_S:-420} ncu --clock-control none --warp-sampling-interval ${INTERVAL:-0} \
  --section SourceCounters --section WarpStateStats --section LaunchStats --import-source no \
  -k 'regex:^v_' -o $R/stalls python3 $V/run_cases.py $V/cases_spec.json /tmp/valsrc --ncu > $R/stalls_profile.log 2>&1
echo "profile rc=$? t=$(el)"; ls -la $R/stalls.ncu-rep
timeout 120 ncu -i $R/stalls.ncu-rep --page source --csv --print-source cuda,sass > $R/stalls_cuda_sass.csv 2> $R/stalls_export.err
echo "export rc=$? lines=$(wc -l < $R/stalls_cuda_sass.csv)"
timeout 60 ncu -i $R/stalls.ncu-rep --page details --csv > $R/stalls_details.csv 2>&1; echo "details rc=$?"
gzip $R/stalls_*.csv
[ -n "$PIDS" ] && wait $PIDS   # (a bare wait would also wait for the tee of the log)
echo "== done t=$(el)"
cd $OUT && tar czf results.tgz r && rm -rf r && ls -la $OUT
