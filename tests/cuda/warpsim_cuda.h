// The test kernels use the CUDA device API that warpsim ships
// (crates/cli/cuda/warpsim_cuda.h, built into the binary for
// `warpsim run kernel.cu`); this file keeps their `#include "warpsim_cuda.h"`.
#include "../../crates/cli/cuda/warpsim_cuda.h"
