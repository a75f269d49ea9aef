#!/bin/bash
# One device call: build everything with the machine's nvcc for sm_90, run it, write results under $OUT.
# Run from the repository root with the sources copied to .devwork/ (see calibration/README.md).
#   STAGES: which stages to run (default: all): tools build programs numerics micro_time validation ncu_micro ncu_validation
#   NCU_GROUPS1 (before the validation ncu run), NCU_GROUPS2 (after): micro groups to profile, in order;
#   BUDGET_S: start no ncu run after this many seconds; HARD_S: kill the running one at this
set -u
D=$PWD/.devwork
R=$OUT/r
mkdir -p $R /tmp/b
exec > >(tee $R/log.txt) 2>&1
STAGES=${STAGES:-"tools build programs numerics micro_time validation ncu_micro ncu_validation"}
NCU_GROUPS1=${NCU_GROUPS1:-"atom bw issue bar"}
NCU_GROUPS2=${NCU_GROUPS2:-"local call smem mma mem11 lat"}
BUDGET_S=${BUDGET_S:-400}   # start no ncu group after this
HARD_S=${HARD_S:-520}       # kill whatever runs at this
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
has() { [[ " $STAGES " == *" $1 "* ]]; }
NCU="ncu --clock-control none --csv --page raw --print-units base"

if has tools; then
  echo "== tools $(date -u)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,persistence_mode --format=csv
  nvcc --version | tail -2
  ncu --version | tail -1
  python3 -c "import cupy, numba, numpy; print('cupy', cupy.__version__, 'numba', numba.__version__, 'numpy', numpy.__version__)"
  python3 -c "import numba.cuda as c; import importlib.metadata as m; print('numba-cuda', m.version('numba-cuda'))" 2>&1 | tail -1
  uname -r
fi

if has build; then
  echo "== build $(date -u) t=$(el)"
  (nvcc -O3 -arch=sm_90 -lineinfo -Xptxas -v $D/micro/micro.cu -o /tmp/b/micro > $R/micro_build.txt 2>&1 && cuobjdump --dump-sass /tmp/b/micro | gzip > $R/micro.sass.gz; echo "micro build rc=$?") & P1=$!
  (cd $D/validation && nvcc -ptx -lineinfo -O3 -arch=sm_90 kernels.cu -o kernels.ptx && cp kernels.ptx $R/ && ptxas -arch=sm_90 -v kernels.ptx -o /tmp/b/kernels.cubin > $R/kernels_ptxas.txt 2>&1; echo "validation ptx rc=$?") & P2=$!
  (nvcc -O3 -arch=sm_90 $D/numerics/numerics.cu -o /tmp/b/numerics && nvcc -O3 -arch=sm_90 -ptx $D/numerics/numerics.cu -o $R/numerics.ptx; echo "numerics build rc=$?") & P3=$!
  (for p in vector_add seed001_warps runtime_features oob; do nvcc -arch=sm_90 -cudart shared $D/programs/$p.cu -o /tmp/b/$p || echo "build $p failed"; done
   nvcc -arch=sm_90 $D/programs/vector_add.cu -o /tmp/b/vector_add_static; echo "programs build done") & P4=$!
  wait $P1 $P2 $P3 $P4   # (a bare wait would also wait for the tee of the log)
  echo "built t=$(el)"; ls /tmp/b
  echo "== ncu smoke test"
  $NCU --metrics sm__cycles_elapsed.max,smsp__inst_executed.sum,gpu__time_duration.sum /tmp/b/vector_add 2>&1 | tail -4
fi

if has programs; then
  echo "== programs t=$(el)"
  P=$R/programs; mkdir -p $P
  rec() { local name=$1; shift; timeout 60 "$@" > $P/$name.stdout 2> $P/$name.stderr; echo $? > $P/$name.exit_code; echo "$name rc=$(cat $P/$name.exit_code)"; }
  rec vector_add /tmp/b/vector_add
  rec vector_add_static /tmp/b/vector_add_static
  rec seed001_warps /tmp/b/seed001_warps
  rec runtime_features /tmp/b/runtime_features
  rec runtime_features_assert /tmp/b/runtime_features --assert
  rec oob /tmp/b/oob
  rec numba_kernels python3 $D/programs/numba_kernels.py
  NUMBA_CUDA_ENABLE_PYNVJITLINK=0 rec numba_kernels_nolto env NUMBA_CUDA_ENABLE_PYNVJITLINK=0 python3 $D/programs/numba_kernels.py
  rec oob_memcheck compute-sanitizer --tool memcheck /tmp/b/oob
  for f in $P/*.stdout; do echo "--- $f"; head -12 $f; done
fi

if has numerics; then
  echo "== numerics t=$(el)"
  mkdir -p $R/numerics && /tmp/b/numerics $R/numerics && echo "numerics ok"
fi

if has micro_time; then
  echo "== micro timing t=$(el)"
  timeout 120 /tmp/b/micro time all $R/micro_time.jsonl; echo "micro time rc=$? lines=$(wc -l < $R/micro_time.jsonl)"
fi

if has validation; then
  echo "== validation t=$(el)"
  mkdir -p $R/val
  PYTHONUNBUFFERED=1 timeout 150 python3 $D/validation/run_cases.py $D/validation/cases_spec.json $R/val; echo "validation rc=$?"
fi

ncu_groups() {
  KRE='regex:^(empty_k|stream_dot|store_only|atom_|local_|spill_|call_k|bw_|chase($|<)|barrier_k|fma_|mufu_|smem_|mma_|gvec_|svec_|const_|wagg_|naive_)'
  for g in "$@"; do
    left=$(( HARD_S - $(el) ))
    if [ $(el) -gt $BUDGET_S ] || [ $left -lt 30 ]; then echo "budget: skipping ncu group $g"; continue; fi
    echo "-- ncu $g t=$(el)"
    timeout $left $NCU --metrics $(cat /tmp/b/micro_metrics.txt) -k "$KRE" /tmp/b/micro ncu $g $R/ncu_manifest_$g.jsonl > $R/ncu_micro_$g.csv 2> $R/ncu_micro_$g.err
    echo "ncu $g rc=$? rows=$(grep -c '^\"[0-9]' $R/ncu_micro_$g.csv) t=$(el)"
  done
}
if has ncu_micro; then
  echo "== metric check t=$(el)"
  python3 $D/check_metrics.py $D/micro/metrics_micro.txt /tmp/b/vector_add > /tmp/b/micro_metrics.txt
  cp /tmp/b/micro_metrics.txt $R/micro_metrics_accepted.txt
  ncu_groups $NCU_GROUPS1
fi

if has ncu_validation; then
  echo "== ncu validation t=$(el)"
  python3 $D/check_metrics.py $D/validation/metrics_corpus.txt /tmp/b/vector_add > /tmp/b/corpus_metrics.txt
  cp /tmp/b/corpus_metrics.txt $R/corpus_metrics_accepted.txt
  left=$(( HARD_S - $(el) ))
  PYTHONUNBUFFERED=1 timeout $left $NCU --metrics $(cat /tmp/b/corpus_metrics.txt) -k 'regex:^v_' python3 $D/validation/run_cases.py $D/validation/cases_spec.json /tmp/valncu --ncu > $R/ncu_validation.csv 2> $R/ncu_validation.err
  echo "ncu validation rc=$? rows=$(grep -c '^\"[0-9]' $R/ncu_validation.csv) t=$(el)"
fi

if has ncu_micro; then
  ncu_groups $NCU_GROUPS2
fi

if has ncu_source; then
  echo "== ncu source-level (small validation cases) t=$(el)"
  python3 -c "
import json; d=json.load(open('$D/validation/cases_spec.json')); d['cases']=d['cases'][:17]
json.dump(d, open('$D/validation/cases_small.json','w'))"
  PYTHONUNBUFFERED=1 timeout $(( HARD_S - $(el) )) ncu --clock-control none --section SourceCounters --section WarpStateStats --section LaunchStats \
    --import-source yes -k 'regex:^v_' -o $R/val_source python3 $D/validation/run_cases.py $D/validation/cases_small.json /tmp/valsrc --ncu > $R/val_source.log 2>&1
  echo "source profile rc=$? t=$(el)"; ls -la $R/val_source.ncu-rep
  for ps in cuda sass cuda,sass; do
    timeout 60 ncu -i $R/val_source.ncu-rep --page source --csv --print-source $ps > $R/val_source_${ps/,/_}.csv 2> $R/val_source_${ps/,/_}.err
    echo "export $ps rc=$? lines=$(wc -l < $R/val_source_${ps/,/_}.csv)"; head -c 300 $R/val_source_${ps/,/_}.err
  done
  timeout 60 ncu -i $R/val_source.ncu-rep --page details --csv > $R/val_source_details.csv 2>&1; echo "details rc=$?"
  gzip $R/val_source_*.csv
fi

echo "== done t=$(el)"
cd $OUT && tar czf results.tgz r && rm -rf r && ls -la $OUT
