//! What a launch from Python does that needs no Python: reading NumPy's
//! array interface, naming element types, laying out arguments over copies of
//! the arrays' bytes, the launch's options, which exception an error becomes,
//! and whether a read-only array was written. Kept free of pyo3 types so that
//! its tests link without an interpreter (see Cargo.toml).

use std::sync::Arc;
use warpsim_engine::LaunchError as EngineError;
use warpsim_host::{prepare, BoundBuffer, Context, HostError, Kernel, Prepared, TimingMode};
use warpsim_launch::{BufferSpec, Dtype, Init, NamedInit, ParamSpec, Role, ScalarParam};

/// Why an array cannot go to the GPU as it is.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadArray {
    #[error("the array must be C-contiguous")]
    Strided,
    #[error("unknown element type")]
    UnknownType,
    #[error("big-endian arrays are not supported (the GPU is little-endian): pass arr.astype(arr.dtype.newbyteorder('<'))")]
    BigEndian,
    #[error("too large")]
    TooLarge,
    #[error("the array has no memory")]
    NoMemory,
}

/// The byte length of a C-contiguous array from its `__array_interface__`:
/// `typestr` (`<f4`, `|u1`, ...), `shape`, whether it has `strides`, its data pointer.
pub fn array_bytes(typestr: &str, shape: &[usize], strided: bool, ptr: usize) -> Result<usize, BadArray> {
    if strided {
        return Err(BadArray::Strided);
    }
    let item: usize = typestr.get(2..).and_then(|n| n.parse().ok()).ok_or(BadArray::UnknownType)?;
    if typestr.starts_with('>') && item > 1 {
        return Err(BadArray::BigEndian);
    }
    let len = shape.iter().try_fold(item, |a, &d| a.checked_mul(d)).ok_or(BadArray::TooLarge)?;
    if ptr == 0 && len > 0 {
        return Err(BadArray::NoMemory);
    }
    Ok(len)
}

/// The element type and count of a buffer of `bytes` bytes said to hold
/// `dtype`; element types warpsim has no name for (or that do not divide the
/// length) travel as bytes.
pub fn element_layout(dtype: &str, bytes: u64) -> (Dtype, u64) {
    match Dtype::parse(dtype) {
        Some(d) if bytes.is_multiple_of(d.size_bytes() as u64) => (d, bytes / d.size_bytes() as u64),
        _ => (Dtype::U8, bytes),
    }
}

/// The scalar type `dtype` names, if it names one.
pub fn scalar_type(dtype: &str) -> Option<Dtype> {
    Dtype::parse(dtype).filter(|d| d.is_scalar_type())
}

/// One argument: an array's bytes (read-only or not), or a scalar.
pub enum Input<'a> {
    Buffer { name: String, dtype: Dtype, count: u64, bytes: &'a [u8], readonly: bool },
    Scalar(ScalarParam),
}

/// `kernel` laid out for `inputs`: `prepare` checks the arguments and lays out
/// the parameters over zero-filled buffers (which cost nothing until touched);
/// the launch's own context holds the same allocations, in the same order,
/// served lazily from a copy of each array, as `warpsim run` serves `file:`
/// inputs (writing them in costs more than the copy).
pub fn lay_out(kernel: &Kernel, inputs: &[Input<'_>]) -> Result<Prepared, HostError> {
    let specs: Vec<ParamSpec> = inputs
        .iter()
        .map(|a| match a {
            Input::Buffer { name, dtype, count, readonly, .. } => ParamSpec::Buffer(BufferSpec {
                name: name.clone(),
                dtype: *dtype,
                count: *count,
                init: Init::Named(NamedInit::Zeros),
                role: if *readonly { Role::In } else { Role::Inout },
            }),
            Input::Scalar(s) => ParamSpec::Scalar(s.clone()),
        })
        .collect();
    let laid_out = prepare(kernel, &specs)?;
    let arrays = inputs.iter().filter_map(|a| if let Input::Buffer { bytes, .. } = a { Some(*bytes) } else { None });
    let mut ctx = Context::new();
    ctx.load(kernel);
    let mut args = laid_out.args.clone();
    let mut buffers = Vec::with_capacity(laid_out.buffers.len());
    for (b, bytes) in laid_out.buffers.iter().zip(arrays) {
        let filler: Arc<dyn warpsim_engine::Filler> = Arc::new(warpsim_engine::memory::BytesFiller(bytes.to_vec()));
        let ptr = ctx.alloc(&b.spec.name, b.len, Some(filler));
        if ptr != b.ptr {
            let index = specs.iter().position(|s| matches!(s, ParamSpec::Buffer(x) if x.name == b.spec.name)).unwrap_or(0);
            args.set_ptr(index, ptr)?;
        }
        buffers.push(BoundBuffer { spec: b.spec.clone(), ptr, len: b.len });
    }
    Ok(Prepared { kernel: kernel.clone(), ctx, args, buffers })
}

/// The name of the first read-only input whose bytes the launch changed
/// (its new contents would be lost), if any.
pub fn written_read_only(prepared: &Prepared, inputs: &[Input<'_>]) -> Result<Option<String>, HostError> {
    let arrays = inputs.iter().filter_map(|a| if let Input::Buffer { bytes, readonly, .. } = a { Some((*bytes, *readonly)) } else { None });
    for (b, (bytes, _)) in prepared.buffers.iter().zip(arrays).filter(|(_, (_, ro))| *ro) {
        if prepared.ctx.read_vec(b.ptr, b.len, &b.spec.name)? != bytes {
            return Ok(Some(b.spec.name.clone()));
        }
    }
    Ok(None)
}

/// The options of one launch.
pub struct Options {
    pub timing: Option<TimingMode>,
    pub limits: Arc<warpsim_gpu::GpuPreset>,
}

/// A `gpu` or `mode` that names nothing.
#[derive(Debug, thiserror::Error)]
pub enum BadOption {
    #[error(transparent)]
    Gpu(#[from] warpsim_gpu::PresetError),
    #[error("mode {0:?}: use \"functional\" or \"timing\"")]
    Mode(String),
}

/// The timing model and driver limits of `gpu` for `mode`; `report` records the timeline.
pub fn options(gpu: &str, mode: &str, report: bool) -> Result<Options, BadOption> {
    let tgpu = warpsim_timing::TimingGpu::resolve(gpu)?;
    let limits = Arc::new(tgpu.preset.clone());
    let timing = match mode {
        "timing" => Some(TimingMode { gpu: Arc::new(tgpu), timeline: report }),
        // As `warpsim run --report`: the report's run is on the timing model, with its timeline.
        "functional" if report => Some(TimingMode { gpu: Arc::new(tgpu), timeline: true }),
        "functional" => None,
        other => return Err(BadOption::Mode(other.to_string())),
    };
    Ok(Options { timing, limits })
}

/// Which `warpsim` exception an error becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Raise {
    Ptx,
    Argument,
    Fault,
    Launch,
    Other,
}

/// The exception for a host-library error.
pub fn raise_for(e: &HostError) -> Raise {
    match e {
        HostError::Parse(_) | HostError::Compile(_) | HostError::NoKernel(_) => Raise::Ptx,
        HostError::ParamCount { .. }
        | HostError::ParamType { .. }
        | HostError::NotAnAddress { .. }
        | HostError::StructSize { .. }
        | HostError::BufferName { .. }
        | HostError::DuplicateBuffer { .. }
        | HostError::NoParam { .. } => Raise::Argument,
        HostError::Engine(EngineError::Fault(_)) | HostError::CheckedFault { error: EngineError::Fault(_), .. } => Raise::Fault,
        HostError::Refused(_) | HostError::Engine(_) | HostError::CheckedFault { .. } | HostError::Preset(_) => Raise::Launch,
        _ => Raise::Other,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use warpsim_host::{Dims, LaunchOptions};

    /// `_Z5scalePfPKfi`: out[i] = 2 * in[i] for the first n threads (the file tests/python/test_errors.py loads).
    pub(crate) const SCALE_PTX: &str = include_str!("../../../tests/python/scale.ptx");

    pub(crate) fn scale_kernel() -> Kernel {
        warpsim_host::Module::from_ptx("scale.ptx", SCALE_PTX).kernel("scale").unwrap()
    }

    pub(crate) fn f32_bytes(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn buffer<'a>(name: &str, bytes: &'a [u8], readonly: bool) -> Input<'a> {
        let (dtype, count) = element_layout("f32", bytes.len() as u64);
        Input::Buffer { name: name.into(), dtype, count, bytes, readonly }
    }

    pub(crate) fn n(v: u32) -> Input<'static> {
        Input::Scalar(ScalarParam { name: Some("n".into()), ty: scalar_type("u32").unwrap(), bits: v as u64 })
    }

    #[test]
    fn array_interfaces_give_byte_lengths_or_say_why_not() {
        assert_eq!(array_bytes("<f4", &[2, 3], false, 8), Ok(24));
        assert_eq!(array_bytes("|u1", &[5], false, 8), Ok(5));
        assert_eq!(array_bytes(">i1", &[5], false, 8), Ok(5), "one-byte elements have no byte order");
        assert_eq!(array_bytes("<f4", &[0], false, 0), Ok(0), "an empty array may have no memory");
        assert_eq!(array_bytes(">f8", &[2], false, 8), Err(BadArray::BigEndian));
        assert_eq!(array_bytes("<f4", &[2], true, 8), Err(BadArray::Strided));
        assert_eq!(array_bytes("<U", &[2], false, 8), Err(BadArray::UnknownType));
        assert_eq!(array_bytes("<f8", &[usize::MAX / 4, 2], false, 8), Err(BadArray::TooLarge));
        assert_eq!(array_bytes("<f4", &[2], false, 0), Err(BadArray::NoMemory));
    }

    #[test]
    fn element_types_without_a_name_or_that_do_not_divide_travel_as_bytes() {
        assert_eq!(element_layout("f32", 12), (Dtype::F32, 3));
        assert_eq!(element_layout("u64", 12), (Dtype::U8, 12));
        assert_eq!(element_layout("bytes", 5), (Dtype::U8, 5));
        assert_eq!(scalar_type("f64"), Some(Dtype::F64));
        assert_eq!(scalar_type("bytes"), None);
    }

    #[test]
    fn a_laid_out_launch_reads_the_arrays_and_finds_a_written_read_only_one() {
        let k = scale_kernel();
        let x: Vec<f32> = (0..32).map(|i| i as f32).collect();
        let (xb, zeros) = (f32_bytes(&x), vec![0u8; 128]);
        for out_readonly in [false, true] {
            let inputs = [buffer("out", &zeros, out_readonly), buffer("x", &xb, true), n(32)];
            let mut p = lay_out(&k, &inputs).unwrap();
            p.launch(&Dims::new([1, 1, 1], [32, 1, 1], 0), &LaunchOptions::default()).unwrap();
            let out = p.ctx.read_vec(p.buffers[0].ptr, 128, "out").unwrap();
            assert_eq!(out, f32_bytes(&x.iter().map(|v| 2.0 * v).collect::<Vec<_>>()));
            let written = written_read_only(&p, &inputs).unwrap();
            assert_eq!(written, out_readonly.then(|| "out".to_string()));
        }
    }

    #[test]
    fn errors_become_the_exception_of_their_kind() {
        let k = scale_kernel();
        let (zeros, short) = (vec![0u8; 128], vec![0u8; 64]);
        let few = lay_out(&k, &[buffer("out", &zeros, false)]).err().unwrap();
        assert_eq!(raise_for(&few), Raise::Argument, "{few}");
        let buffer_for_scalar =
            lay_out(&k, &[buffer("out", &zeros, false), buffer("x", &zeros, true), buffer("n", &short, true)]).err().unwrap();
        assert_eq!(raise_for(&buffer_for_scalar), Raise::Argument, "{buffer_for_scalar}");
        let mut p = lay_out(&k, &[buffer("out", &zeros, false), buffer("x", &short, true), n(32)]).unwrap();
        // Reads past `x`'s exact end: a fault with exact bounds (served by default, as a GPU does).
        let strict = LaunchOptions { serve_past_end: false, ..Default::default() };
        let fault = p.launch(&Dims::new([1, 1, 1], [32, 1, 1], 0), &strict).err().unwrap();
        assert_eq!(raise_for(&fault), Raise::Fault, "{fault}");
        let refused = p.launch(&Dims::new([1, 1, 1], [2048, 1, 1], 0), &LaunchOptions::default()).err().unwrap();
        assert_eq!(raise_for(&refused), Raise::Launch, "{refused}");
        let missing = warpsim_host::Module::from_ptx("scale.ptx", SCALE_PTX).kernel("nope").err().unwrap();
        assert_eq!(raise_for(&missing), Raise::Ptx, "{missing}");
        assert_eq!(raise_for(&HostError::Engine(EngineError::Stopped)), Raise::Launch);
    }

    #[test]
    fn modes_and_gpus_are_checked() {
        assert!(options("h200", "functional", false).unwrap().timing.is_none());
        assert!(options("t4", "functional", true).unwrap().timing.is_some_and(|t| t.timeline), "a report runs on the timing model");
        let t = options("t4", "timing", false).unwrap();
        assert!(t.timing.is_some_and(|t| !t.timeline));
        assert_eq!(t.limits.key, "t4");
        assert!(matches!(options("h200", "fast", false), Err(BadOption::Mode(m)) if m == "fast"));
        assert!(matches!(options("gtx480", "functional", false), Err(BadOption::Gpu(_))));
    }
}
