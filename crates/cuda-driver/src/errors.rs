//! `CUresult` codes, their names and strings (`cuGetErrorName`, `cuGetErrorString`).
//! Generated from the `CUresult` enum of cuda.h; the strings are the driver's words.

pub type CUresult = u32;

pub const CUDA_SUCCESS: CUresult = 0;
pub const CUDA_ERROR_INVALID_VALUE: CUresult = 1;
pub const CUDA_ERROR_OUT_OF_MEMORY: CUresult = 2;
pub const CUDA_ERROR_NOT_INITIALIZED: CUresult = 3;
pub const CUDA_ERROR_DEINITIALIZED: CUresult = 4;
pub const CUDA_ERROR_PROFILER_DISABLED: CUresult = 5;
pub const CUDA_ERROR_PROFILER_NOT_INITIALIZED: CUresult = 6;
pub const CUDA_ERROR_PROFILER_ALREADY_STARTED: CUresult = 7;
pub const CUDA_ERROR_PROFILER_ALREADY_STOPPED: CUresult = 8;
pub const CUDA_ERROR_STUB_LIBRARY: CUresult = 34;
pub const CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER: CUresult = 36;
pub const CUDA_ERROR_DEVICE_UNAVAILABLE: CUresult = 46;
pub const CUDA_ERROR_MULTICAST_RESOURCE_FULL: CUresult = 47;
pub const CUDA_ERROR_NO_DEVICE: CUresult = 100;
pub const CUDA_ERROR_INVALID_DEVICE: CUresult = 101;
pub const CUDA_ERROR_DEVICE_NOT_LICENSED: CUresult = 102;
pub const CUDA_ERROR_INVALID_IMAGE: CUresult = 200;
pub const CUDA_ERROR_INVALID_CONTEXT: CUresult = 201;
pub const CUDA_ERROR_CONTEXT_ALREADY_CURRENT: CUresult = 202;
pub const CUDA_ERROR_MAP_FAILED: CUresult = 205;
pub const CUDA_ERROR_UNMAP_FAILED: CUresult = 206;
pub const CUDA_ERROR_ARRAY_IS_MAPPED: CUresult = 207;
pub const CUDA_ERROR_ALREADY_MAPPED: CUresult = 208;
pub const CUDA_ERROR_NO_BINARY_FOR_GPU: CUresult = 209;
pub const CUDA_ERROR_ALREADY_ACQUIRED: CUresult = 210;
pub const CUDA_ERROR_NOT_MAPPED: CUresult = 211;
pub const CUDA_ERROR_NOT_MAPPED_AS_ARRAY: CUresult = 212;
pub const CUDA_ERROR_NOT_MAPPED_AS_POINTER: CUresult = 213;
pub const CUDA_ERROR_ECC_UNCORRECTABLE: CUresult = 214;
pub const CUDA_ERROR_UNSUPPORTED_LIMIT: CUresult = 215;
pub const CUDA_ERROR_CONTEXT_ALREADY_IN_USE: CUresult = 216;
pub const CUDA_ERROR_PEER_ACCESS_UNSUPPORTED: CUresult = 217;
pub const CUDA_ERROR_INVALID_PTX: CUresult = 218;
pub const CUDA_ERROR_INVALID_GRAPHICS_CONTEXT: CUresult = 219;
pub const CUDA_ERROR_NVLINK_UNCORRECTABLE: CUresult = 220;
pub const CUDA_ERROR_JIT_COMPILER_NOT_FOUND: CUresult = 221;
pub const CUDA_ERROR_UNSUPPORTED_PTX_VERSION: CUresult = 222;
pub const CUDA_ERROR_JIT_COMPILATION_DISABLED: CUresult = 223;
pub const CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY: CUresult = 224;
pub const CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC: CUresult = 225;
pub const CUDA_ERROR_CONTAINED: CUresult = 226;
pub const CUDA_ERROR_INSUFFICIENT_LOADER_VERSION: CUresult = 227;
pub const CUDA_ERROR_INVALID_SOURCE: CUresult = 300;
pub const CUDA_ERROR_FILE_NOT_FOUND: CUresult = 301;
pub const CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND: CUresult = 302;
pub const CUDA_ERROR_SHARED_OBJECT_INIT_FAILED: CUresult = 303;
pub const CUDA_ERROR_OPERATING_SYSTEM: CUresult = 304;
pub const CUDA_ERROR_INVALID_HANDLE: CUresult = 400;
pub const CUDA_ERROR_ILLEGAL_STATE: CUresult = 401;
pub const CUDA_ERROR_LOSSY_QUERY: CUresult = 402;
pub const CUDA_ERROR_NOT_FOUND: CUresult = 500;
pub const CUDA_ERROR_NOT_READY: CUresult = 600;
pub const CUDA_ERROR_ILLEGAL_ADDRESS: CUresult = 700;
pub const CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: CUresult = 701;
pub const CUDA_ERROR_LAUNCH_TIMEOUT: CUresult = 702;
pub const CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING: CUresult = 703;
pub const CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED: CUresult = 704;
pub const CUDA_ERROR_PEER_ACCESS_NOT_ENABLED: CUresult = 705;
pub const CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE: CUresult = 708;
pub const CUDA_ERROR_CONTEXT_IS_DESTROYED: CUresult = 709;
pub const CUDA_ERROR_ASSERT: CUresult = 710;
pub const CUDA_ERROR_TOO_MANY_PEERS: CUresult = 711;
pub const CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: CUresult = 712;
pub const CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: CUresult = 713;
pub const CUDA_ERROR_HARDWARE_STACK_ERROR: CUresult = 714;
pub const CUDA_ERROR_ILLEGAL_INSTRUCTION: CUresult = 715;
pub const CUDA_ERROR_MISALIGNED_ADDRESS: CUresult = 716;
pub const CUDA_ERROR_INVALID_ADDRESS_SPACE: CUresult = 717;
pub const CUDA_ERROR_INVALID_PC: CUresult = 718;
pub const CUDA_ERROR_LAUNCH_FAILED: CUresult = 719;
pub const CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: CUresult = 720;
pub const CUDA_ERROR_TENSOR_MEMORY_LEAK: CUresult = 721;
pub const CUDA_ERROR_NOT_PERMITTED: CUresult = 800;
pub const CUDA_ERROR_NOT_SUPPORTED: CUresult = 801;
pub const CUDA_ERROR_SYSTEM_NOT_READY: CUresult = 802;
pub const CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: CUresult = 803;
pub const CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: CUresult = 804;
pub const CUDA_ERROR_MPS_CONNECTION_FAILED: CUresult = 805;
pub const CUDA_ERROR_MPS_RPC_FAILURE: CUresult = 806;
pub const CUDA_ERROR_MPS_SERVER_NOT_READY: CUresult = 807;
pub const CUDA_ERROR_MPS_MAX_CLIENTS_REACHED: CUresult = 808;
pub const CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED: CUresult = 809;
pub const CUDA_ERROR_MPS_CLIENT_TERMINATED: CUresult = 810;
pub const CUDA_ERROR_CDP_NOT_SUPPORTED: CUresult = 811;
pub const CUDA_ERROR_CDP_VERSION_MISMATCH: CUresult = 812;
pub const CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: CUresult = 900;
pub const CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: CUresult = 901;
pub const CUDA_ERROR_STREAM_CAPTURE_MERGE: CUresult = 902;
pub const CUDA_ERROR_STREAM_CAPTURE_UNMATCHED: CUresult = 903;
pub const CUDA_ERROR_STREAM_CAPTURE_UNJOINED: CUresult = 904;
pub const CUDA_ERROR_STREAM_CAPTURE_ISOLATION: CUresult = 905;
pub const CUDA_ERROR_STREAM_CAPTURE_IMPLICIT: CUresult = 906;
pub const CUDA_ERROR_CAPTURED_EVENT: CUresult = 907;
pub const CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD: CUresult = 908;
pub const CUDA_ERROR_TIMEOUT: CUresult = 909;
pub const CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE: CUresult = 910;
pub const CUDA_ERROR_EXTERNAL_DEVICE: CUresult = 911;
pub const CUDA_ERROR_INVALID_CLUSTER_SIZE: CUresult = 912;
pub const CUDA_ERROR_FUNCTION_NOT_LOADED: CUresult = 913;
pub const CUDA_ERROR_INVALID_RESOURCE_TYPE: CUresult = 914;
pub const CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION: CUresult = 915;
pub const CUDA_ERROR_KEY_ROTATION: CUresult = 916;
pub const CUDA_ERROR_STREAM_DETACHED: CUresult = 917;
pub const CUDA_ERROR_GRAPH_RECAPTURE_FAILURE: CUresult = 918;
pub const CUDA_ERROR_FABRIC_NOT_READY: CUresult = 919;
pub const CUDA_ERROR_UNKNOWN: CUresult = 999;

/// `(code, name, string)` for every `CUresult` of cuda.h (NUL-terminated for C).
pub static ERRORS: &[(CUresult, &str, &str)] = &[
    (0, "CUDA_SUCCESS\0", "no error\0"),
    (1, "CUDA_ERROR_INVALID_VALUE\0", "invalid argument\0"),
    (2, "CUDA_ERROR_OUT_OF_MEMORY\0", "out of memory\0"),
    (3, "CUDA_ERROR_NOT_INITIALIZED\0", "initialization error\0"),
    (4, "CUDA_ERROR_DEINITIALIZED\0", "driver shutting down\0"),
    (5, "CUDA_ERROR_PROFILER_DISABLED\0", "profiler disabled\0"),
    (6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED\0", "profiler not initialized\0"),
    (7, "CUDA_ERROR_PROFILER_ALREADY_STARTED\0", "profiler already started\0"),
    (8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED\0", "profiler already stopped\0"),
    (34, "CUDA_ERROR_STUB_LIBRARY\0", "CUDA driver is a stub library\0"),
    (36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER\0", "CUDA driver version is insufficient for CUDA runtime version\0"),
    (46, "CUDA_ERROR_DEVICE_UNAVAILABLE\0", "device unavailable\0"),
    (47, "CUDA_ERROR_MULTICAST_RESOURCE_FULL\0", "multicast resource full\0"),
    (100, "CUDA_ERROR_NO_DEVICE\0", "no CUDA-capable device is detected\0"),
    (101, "CUDA_ERROR_INVALID_DEVICE\0", "invalid device ordinal\0"),
    (102, "CUDA_ERROR_DEVICE_NOT_LICENSED\0", "device not licensed\0"),
    (200, "CUDA_ERROR_INVALID_IMAGE\0", "device kernel image is invalid\0"),
    (201, "CUDA_ERROR_INVALID_CONTEXT\0", "invalid device context\0"),
    (202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT\0", "context already current\0"),
    (205, "CUDA_ERROR_MAP_FAILED\0", "map failed\0"),
    (206, "CUDA_ERROR_UNMAP_FAILED\0", "unmap failed\0"),
    (207, "CUDA_ERROR_ARRAY_IS_MAPPED\0", "array is mapped\0"),
    (208, "CUDA_ERROR_ALREADY_MAPPED\0", "already mapped\0"),
    (209, "CUDA_ERROR_NO_BINARY_FOR_GPU\0", "no kernel image is available for execution on the device\0"),
    (210, "CUDA_ERROR_ALREADY_ACQUIRED\0", "already acquired\0"),
    (211, "CUDA_ERROR_NOT_MAPPED\0", "resource not mapped\0"),
    (212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY\0", "not mapped as array\0"),
    (213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER\0", "not mapped as pointer\0"),
    (214, "CUDA_ERROR_ECC_UNCORRECTABLE\0", "ecc uncorrectable\0"),
    (215, "CUDA_ERROR_UNSUPPORTED_LIMIT\0", "unsupported limit\0"),
    (216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE\0", "context already in use\0"),
    (217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED\0", "peer access unsupported\0"),
    (218, "CUDA_ERROR_INVALID_PTX\0", "a PTX JIT compilation failed\0"),
    (219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT\0", "invalid graphics context\0"),
    (220, "CUDA_ERROR_NVLINK_UNCORRECTABLE\0", "nvlink uncorrectable\0"),
    (221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND\0", "PTX JIT compiler library not found\0"),
    (222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION\0", "the provided PTX was compiled with an unsupported toolchain.\0"),
    (223, "CUDA_ERROR_JIT_COMPILATION_DISABLED\0", "jit compilation disabled\0"),
    (224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY\0", "unsupported exec affinity\0"),
    (225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC\0", "unsupported devside sync\0"),
    (226, "CUDA_ERROR_CONTAINED\0", "contained\0"),
    (227, "CUDA_ERROR_INSUFFICIENT_LOADER_VERSION\0", "insufficient loader version\0"),
    (300, "CUDA_ERROR_INVALID_SOURCE\0", "device kernel image is invalid\0"),
    (301, "CUDA_ERROR_FILE_NOT_FOUND\0", "file not found\0"),
    (302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND\0", "shared object symbol not found\0"),
    (303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED\0", "shared object init failed\0"),
    (304, "CUDA_ERROR_OPERATING_SYSTEM\0", "operating system\0"),
    (400, "CUDA_ERROR_INVALID_HANDLE\0", "invalid resource handle\0"),
    (401, "CUDA_ERROR_ILLEGAL_STATE\0", "the operation cannot be performed in the present state\0"),
    (402, "CUDA_ERROR_LOSSY_QUERY\0", "lossy query\0"),
    (500, "CUDA_ERROR_NOT_FOUND\0", "named symbol not found\0"),
    (600, "CUDA_ERROR_NOT_READY\0", "device not ready\0"),
    (700, "CUDA_ERROR_ILLEGAL_ADDRESS\0", "an illegal memory access was encountered\0"),
    (701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES\0", "too many resources requested for launch\0"),
    (702, "CUDA_ERROR_LAUNCH_TIMEOUT\0", "the launch timed out and was terminated\0"),
    (703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING\0", "launch incompatible texturing\0"),
    (704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED\0", "peer access already enabled\0"),
    (705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED\0", "peer access not enabled\0"),
    (708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE\0", "primary context active\0"),
    (709, "CUDA_ERROR_CONTEXT_IS_DESTROYED\0", "context is destroyed\0"),
    (710, "CUDA_ERROR_ASSERT\0", "device-side assert triggered\0"),
    (711, "CUDA_ERROR_TOO_MANY_PEERS\0", "too many peers\0"),
    (712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED\0", "part or all of the requested memory range is already mapped\0"),
    (713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED\0", "pointer does not correspond to a registered memory region\0"),
    (714, "CUDA_ERROR_HARDWARE_STACK_ERROR\0", "hardware stack error\0"),
    (715, "CUDA_ERROR_ILLEGAL_INSTRUCTION\0", "an illegal instruction was encountered\0"),
    (716, "CUDA_ERROR_MISALIGNED_ADDRESS\0", "misaligned address\0"),
    (717, "CUDA_ERROR_INVALID_ADDRESS_SPACE\0", "operation not supported on global/shared address space\0"),
    (718, "CUDA_ERROR_INVALID_PC\0", "invalid program counter\0"),
    (719, "CUDA_ERROR_LAUNCH_FAILED\0", "unspecified launch failure\0"),
    (720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE\0", "too many blocks in cooperative launch\0"),
    (721, "CUDA_ERROR_TENSOR_MEMORY_LEAK\0", "tensor memory leak\0"),
    (800, "CUDA_ERROR_NOT_PERMITTED\0", "operation not permitted\0"),
    (801, "CUDA_ERROR_NOT_SUPPORTED\0", "operation not supported\0"),
    (802, "CUDA_ERROR_SYSTEM_NOT_READY\0", "system not ready\0"),
    (803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH\0", "system driver mismatch\0"),
    (804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE\0", "compat not supported on device\0"),
    (805, "CUDA_ERROR_MPS_CONNECTION_FAILED\0", "mps connection failed\0"),
    (806, "CUDA_ERROR_MPS_RPC_FAILURE\0", "mps rpc failure\0"),
    (807, "CUDA_ERROR_MPS_SERVER_NOT_READY\0", "mps server not ready\0"),
    (808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED\0", "mps max clients reached\0"),
    (809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED\0", "mps max connections reached\0"),
    (810, "CUDA_ERROR_MPS_CLIENT_TERMINATED\0", "mps client terminated\0"),
    (811, "CUDA_ERROR_CDP_NOT_SUPPORTED\0", "cdp not supported\0"),
    (812, "CUDA_ERROR_CDP_VERSION_MISMATCH\0", "cdp version mismatch\0"),
    (900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED\0", "stream capture unsupported\0"),
    (901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED\0", "stream capture invalidated\0"),
    (902, "CUDA_ERROR_STREAM_CAPTURE_MERGE\0", "stream capture merge\0"),
    (903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED\0", "stream capture unmatched\0"),
    (904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED\0", "stream capture unjoined\0"),
    (905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION\0", "stream capture isolation\0"),
    (906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT\0", "stream capture implicit\0"),
    (907, "CUDA_ERROR_CAPTURED_EVENT\0", "captured event\0"),
    (908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD\0", "stream capture wrong thread\0"),
    (909, "CUDA_ERROR_TIMEOUT\0", "timeout expired\0"),
    (910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE\0", "graph exec update failure\0"),
    (911, "CUDA_ERROR_EXTERNAL_DEVICE\0", "external device\0"),
    (912, "CUDA_ERROR_INVALID_CLUSTER_SIZE\0", "invalid cluster size\0"),
    (913, "CUDA_ERROR_FUNCTION_NOT_LOADED\0", "function not loaded\0"),
    (914, "CUDA_ERROR_INVALID_RESOURCE_TYPE\0", "invalid resource type\0"),
    (915, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION\0", "invalid resource configuration\0"),
    (916, "CUDA_ERROR_KEY_ROTATION\0", "key rotation\0"),
    (917, "CUDA_ERROR_STREAM_DETACHED\0", "stream detached\0"),
    (918, "CUDA_ERROR_GRAPH_RECAPTURE_FAILURE\0", "graph recapture failure\0"),
    (919, "CUDA_ERROR_FABRIC_NOT_READY\0", "fabric not ready\0"),
    (999, "CUDA_ERROR_UNKNOWN\0", "unknown error\0"),
];
