"""Bad input is a Python exception carrying warpsim's message, never a crash."""

import numpy as np
import pytest

import warpsim
from conftest import REPO, needs_compiler

VADD = r"""
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""

# The same kernel as C++ (a mangled name: its parameter types are known), as PTX so no compiler is needed.
SCALE_PTX = (REPO / "tests" / "python" / "scale.ptx").read_text()


@pytest.fixture
def scale():
    return warpsim.Module(ptx=SCALE_PTX, name="scale.ptx")


def arrays(n=32):
    return np.zeros(n, np.float32), np.arange(n, dtype=np.float32)


def test_the_kernel_runs(scale):
    out, x = arrays()
    scale.launch("scale", 1, 32, [out, x, np.int32(32)])
    np.testing.assert_array_equal(out, 2 * x)


def test_wrong_array_dtype_names_the_cpp_parameter(scale):
    out, x = arrays()
    with pytest.raises(warpsim.ArgumentError, match=r"argument 1 is `float const\*`.*float64.*astype\(numpy.float32\)"):
        scale.launch("scale", 1, 32, [out, x.astype(np.float64), np.int32(32)])


def test_wrong_scalar_dtype_names_the_ptx_type(scale):
    out, x = arrays()
    with pytest.raises(warpsim.ArgumentError, match=r"parameter 2 .* is \.u32 in the PTX, but f64 was given: 1\.5 is not an integer; pass it as numpy\.uint32\(value\)$"):
        scale.launch("scale", 1, 32, [out, x, np.float64(1.5)])
    with pytest.raises(warpsim.ArgumentError, match="out of range"):
        scale.launch("scale", 1, 32, [out, x, np.int64(1 << 40)])


def test_too_few_and_too_many_arguments(scale):
    out, x = arrays()
    with pytest.raises(warpsim.ArgumentError, match="takes 3 parameters, 2 given"):
        scale.launch("scale", 1, 32, [out, x])
    with pytest.raises(warpsim.ArgumentError, match="takes 3 parameters, 4 given"):
        scale.launch("scale", 1, 32, [out, x, np.int32(1), np.int32(2)])


def test_an_array_for_a_scalar_and_a_list_for_an_array(scale):
    out, x = arrays()
    with pytest.raises(warpsim.ArgumentError, match="4-byte .* scalar in the PTX, but an array was given"):
        scale.launch("scale", 1, 32, [out, x, x])
    with pytest.raises(warpsim.ArgumentError, match="pass a NumPy array"):
        scale.launch("scale", 1, 32, [list(out), x, 32])


def test_a_read_only_array_the_kernel_writes_is_refused_and_left_untouched(scale):
    out, x = arrays()
    out.flags.writeable = False
    with pytest.raises(warpsim.ArgumentError, match="`arg0` is a read-only array, but the kernel wrote to it"):
        scale.launch("scale", 1, 32, [out, x, np.int32(32)])
    assert not out.any()
    # Read-only inputs are fine.
    out2 = np.zeros(32, np.float32)
    x.flags.writeable = False
    scale.launch("scale", 1, 32, [out2, x, np.int32(32)])
    np.testing.assert_array_equal(out2, 2 * x)


def test_an_unknown_kernel_lists_the_kernels(scale):
    with pytest.raises(warpsim.PtxError, match=r"no kernel named `nope`.*_Z5scalePfPKfi"):
        scale.launch("nope", 1, 32, [])


def test_a_syntax_error_points_at_its_place_with_a_caret():
    m = warpsim.Module(ptx=".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n  bogus %r1;\n}\n", name="bad.ptx")
    with pytest.raises(warpsim.PtxError) as e:
        m.launch("k", 1, 32, [])
    msg = str(e.value)
    assert msg.startswith("bad.ptx:6:3:"), msg
    assert "bogus %r1;" in msg and "^" in msg


def test_a_fault_is_a_kernel_fault_naming_the_array_and_element(scale):
    out, x = arrays(16)
    with pytest.raises(warpsim.KernelFault) as e:
        scale.launch("scale", 1, 32, [out, x, np.int32(32)], strict_bounds=True)
    msg = str(e.value)
    assert "out-of-bounds global load" in msg and "element 16 of `arg1` (16 elements of f32)" in msg, msg
    assert isinstance(e.value, warpsim.Error)


def test_a_read_just_past_the_end_is_served_with_a_warning(scale):
    out, x = arrays(16)
    # 16 loads past `x` and 16 stores past `out`: the first is named, the rest counted.
    with pytest.warns(warpsim.PastEndWarning, match=r"(?s)out-of-bounds global load.*thread \(16,0,0\).*\n  served \(and 31 more\)"):
        scale.launch("scale", 1, 32, [out, x, np.int32(32)])
    np.testing.assert_array_equal(out, 2 * x)
    with pytest.warns(warpsim.PastEndWarning):
        r = scale.launch("scale", 1, 32, [out, x, np.int32(32)], check=True)
    assert any(d["kind"] == "out_of_bounds" for d in r.diagnostics), r.diagnostics


def test_a_refused_launch_names_the_cuda_error(scale):
    out, x = arrays()
    with pytest.raises(warpsim.LaunchError, match="cudaErrorInvalidValue"):
        scale.launch("scale", 1, 2048, [out, x, np.int32(32)])
    with pytest.raises(warpsim.LaunchError, match="mode"):
        scale.launch("scale", 1, 32, [out, x, np.int32(32)], mode="fast")
    with pytest.raises(warpsim.LaunchError):
        scale.launch("scale", 1, 32, [out, x, np.int32(32)], gpu="gtx480")
    with pytest.raises(warpsim.ArgumentError):
        scale.launch("scale", 0, 32, [out, x, np.int32(32)])


def test_module_arguments_are_checked():
    with pytest.raises(warpsim.ArgumentError):
        warpsim.Module()
    with pytest.raises(warpsim.PtxError, match="no such file"):
        warpsim.Module(REPO / "nope.cu")


@needs_compiler
def test_a_cuda_compile_error_is_a_ptx_error():
    with pytest.raises(warpsim.PtxError, match="kernel.cu"):
        warpsim.Module(cuda="__global__ void k( { }")


@needs_compiler
def test_extern_c_kernels_run_from_cuda_source():
    m = warpsim.Module(cuda=VADD)
    a, b = np.arange(100, dtype=np.float32), np.ones(100, np.float32)
    c = np.zeros(100, np.float32)
    m.launch("vadd", 1, 128, [a, b, c, 100])
    np.testing.assert_array_equal(c, a + b)


@needs_compiler
def test_a_float64_array_for_an_extern_c_float_pointer_is_a_type_error_naming_both_dtypes():
    m = warpsim.Module(cuda=VADD)
    a, b = np.arange(100, dtype=np.float32), np.ones(100, np.float32)
    c = np.zeros(100, np.float32)
    with pytest.raises(TypeError, match=r"argument 1 \(`b`\) is `const float \*`.*holds float64.*float32") as e:
        m.launch("vadd", 1, 128, [a, b.astype(np.float64), c, 100])
    assert isinstance(e.value, warpsim.ArgumentError)
    assert not c.any()
    # The right dtypes still run, and the check survives pickling (sweep workers).
    import pickle

    m2 = pickle.loads(pickle.dumps(m))
    with pytest.raises(warpsim.DtypeError, match=r"argument 2 \(`c`\).*int32"):
        m2.launch("vadd", 1, 128, [a, b, c.astype(np.int32), 100])
    m2.launch("vadd", 1, 128, [a, b, c, 100])
    np.testing.assert_array_equal(c, a + b)


def test_source_signatures_parse_as_the_compiler_reads_them():
    from warpsim._core import _declared_type, _param_name, _source_params

    src = """
    // __global__ void k(double *commented_out)
    #define N 4
    extern "C" __global__ void __launch_bounds__(256) k(const float *__restrict__ x, int n, double out[], unsigned short *h) {}
    extern "C" __global__ void other(int8_t *p) {}
    """
    d = _source_params(src, "k")
    assert [_param_name(x) for x in d] == ["x", "n", "out", "h"]
    assert [_declared_type(x) for x in d] == ["const float *__restrict__", "int", "double *", "unsigned short *"]
    assert _source_params(src, "missing") is None
    # Two declarations that differ: unknowable, so no check.
    assert _source_params("__global__ void k(float *a);\n__global__ void k(int *a) {}", "k") is None
