#!/usr/bin/env bash
# Regenerates demo/kernels.ptx from demo/kernels.cu with clang (19 or newer),
# exactly as `warpsim run kernel.cu` compiles a kernel: the device API comes
# from the header warpsim ships (crates/cli/cuda/warpsim_cuda.h), and
# -gline-tables-only keeps the .loc line info the per-line reports use.
# Run it after editing kernels.cu and commit both files. An argument writes the
# PTX elsewhere (the tests use that to check kernels.ptx is up to date).
set -euo pipefail
OUT=$(realpath -m "${1:-$(dirname "$0")/kernels.ptx}")
cd "$(dirname "$0")"
CLANG=${CLANG:-}
if [ -z "$CLANG" ]; then
  for c in clang-22 clang-21 clang-20 clang-19 clang; do
    if command -v "$c" >/dev/null 2>&1; then CLANG=$c; break; fi
  done
fi
if [ -z "$CLANG" ]; then
  echo "error: clang 19 or newer is needed (Debian/Ubuntu: apt-get install clang-19)" >&2
  exit 1
fi
"$CLANG" --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 --cuda-feature=+ptx70 \
  -O2 -ffp-contract=off -gline-tables-only -fdebug-compilation-dir=. -S \
  -I ../crates/cli/cuda -include warpsim_cuda.h \
  -o "$OUT" kernels.cu
echo "wrote $OUT with $("$CLANG" --version | head -1)"
