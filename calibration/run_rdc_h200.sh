#!/bin/bash
# On a machine with an H200 and nvcc 13.x: builds the -rdc programs of tests/programs/ exactly
# as crates/cli/tests/exec_programs.rs builds them (with the machine's own libcudart.so and
# libcuda.so), and the self-checking programs of crates/cli/tests/cu/ that the same file runs
# (with -cudart shared); runs each and writes NAME.stdout, NAME.stderr and NAME.exit_code to
# programs/ in one file, $OUT/programs.tar.gz (with the build log and tool versions). Their
# place in the repository is tests/programs/h200/ (the rdc tests compare with a recording there).
#
#   OUT=/tmp/out calibration/run_rdc_h200.sh        # from anywhere; writes only under $OUT and a temporary folder
#
# (A dry run without a GPU: CUDA_LIB=a folder with libcudart.so, libcudart.so.13, libcuda.so and
# libcuda.so.1 linked to warpsim's two libraries, and nvcc on PATH; the programs then run on warpsim.)
set -u
OUT=${OUT:?set OUT to the folder for the results}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
S=$ROOT/tests/programs
C=$ROOT/crates/cli/tests/cu
export PATH=$PATH:/usr/local/cuda/bin
NVCC=$(command -v nvcc) || { echo "no nvcc on PATH or in /usr/local/cuda/bin" >&2; exit 1; }
# The toolkit's libraries (libcudart.so; libcuda.so comes with the driver): beside nvcc, or $CUDA_LIB.
if [ -z "${CUDA_LIB:-}" ]; then
  CUDA_LIB=$(dirname "$NVCC")/../lib64
  [ -d "$CUDA_LIB" ] || CUDA_LIB=$(dirname "$NVCC")/../lib
fi
export LIBRARY_PATH=$CUDA_LIB${LIBRARY_PATH:+:$LIBRARY_PATH}
export LD_LIBRARY_PATH=$CUDA_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
W=$(mktemp -d)
P=$W/programs
mkdir -p "$P" "$OUT"
cd "$W" || exit 1
LOG=$P/build_log.txt

{
  date -u
  nvidia-smi --query-gpu=name,driver_version --format=csv
  "$NVCC" --version | tail -2
  g++ --version | head -1
} > "$P/tools.txt" 2>&1

build() {
  echo "+ $*" >> "$LOG"
  "$@" >> "$LOG" 2>&1 || echo "build failed: $*" | tee -a "$LOG"
}
rec() {
  local name=$1
  shift
  timeout 60 "$@" > "$P/$name.stdout" 2> "$P/$name.stderr"
  echo $? > "$P/$name.exit_code"
  echo "$name: exit $(cat "$P/$name.exit_code")"
}

# The -rdc programs, as the exec tests build them.
build nvcc -arch=sm_90 -rdc=true -cudart shared "$S/rdc_a.cu" "$S/rdc_b.cu" -o rdc
build nvcc -arch=sm_90 -lineinfo -dc "$S/rdc_a.cu" -o rdc_a.o
build nvcc -arch=sm_90 -lineinfo -dc "$S/rdc_b.cu" -o rdc_b.o
build nvcc -arch=sm_90 -cudart shared rdc_a.o rdc_b.o -o rdc_two_step
build nvcc -arch=sm_90 -dlink rdc_a.o rdc_b.o -o rdc_dlink.o
build g++ rdc_a.o rdc_b.o rdc_dlink.o -L"$CUDA_LIB" -lcudart -o rdc_dlink
build nvcc -arch=sm_90 -lib rdc_b.o -o librdc_b.a
build nvcc -arch=sm_90 -cudart shared rdc_a.o -L. -lrdc_b -o rdc_lib
build nvcc -arch=sm_90 -lineinfo -rdc=true -cudart shared "$S/rdc_fault_a.cu" "$S/rdc_fault_b.cu" -o rdc_fault
build nvcc -arch=sm_90 -rdc=true -ptx "$S/rdc_a.cu" "$S/rdc_b.cu"
build nvcc -arch=sm_90 "$S/rdc_driver_link.cu" -lcuda -o rdc_driver_link

# The self-checking programs exec_programs.rs runs, as it builds them.
for p in runtime_api managed_vars pitched graph; do
  build nvcc -arch=sm_90 -cudart shared "$C/$p.cu" -o $p
done
build nvcc -arch=sm_90 -cudart shared --default-stream per-thread "$C/per_thread.cu" -o per_thread
build nvcc -arch=sm_90 -cudart shared -g "$C/check_site.cu" -o check_site_g
build nvcc -arch=sm_90 -cudart shared "$C/check_site.cu" -o check_site

rec rdc ./rdc
rec rdc_two_step ./rdc_two_step
rec rdc_dlink ./rdc_dlink
rec rdc_lib ./rdc_lib
rec rdc_fault ./rdc_fault
rec rdc_driver_link ./rdc_driver_link rdc_a.ptx rdc_b.ptx
for p in runtime_api managed_vars pitched graph per_thread check_site check_site_g; do
  rec $p ./$p
done

tar czf "$OUT/programs.tar.gz" -C "$W" programs
for f in "$P"/*.stdout; do echo "--- $(basename "$f")"; tail -3 "$f"; done
echo "wrote $OUT/programs.tar.gz"
