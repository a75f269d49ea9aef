//! A launch made ready from manifest-style parameters: a fresh context with
//! the kernel's globals and every buffer allocated (lazily initialised), and
//! the parameter block pointing at them.

use crate::{launch, Args, Context, DevicePtr, Dims, HostError, Kernel, LaunchOptions, LaunchSummary};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use warpsim_launch::{BufferSpec, ParamSpec, Role};
use warpsim_metrics::LaunchMetrics;

/// One buffer parameter as allocated.
#[derive(Clone, Debug)]
pub struct BoundBuffer {
    pub spec: BufferSpec,
    pub ptr: DevicePtr,
    pub len: u64,
}

/// A kernel, its own context and its arguments, ready to launch.
pub struct Prepared {
    pub kernel: Kernel,
    pub ctx: Context,
    pub args: Args,
    /// The buffer parameters, in parameter order.
    pub buffers: Vec<BoundBuffer>,
}

/// Lays out memory and parameters of `kernel` for `params`: module globals
/// first, then each buffer in parameter order (the addresses a kernel sees
/// follow from that order).
pub fn prepare(kernel: &Kernel, params: &[ParamSpec]) -> Result<Prepared, HostError> {
    let k = kernel.ir();
    if k.params.len() != params.len() {
        return Err(HostError::ParamCount { kernel: kernel.name().to_string(), expected: k.params.len(), given: params.len() });
    }
    let mut ctx = Context::new();
    ctx.load(kernel);
    let mut args = Args::new(kernel);
    let mut buffers = Vec::new();
    for (i, spec) in params.iter().enumerate() {
        match spec {
            ParamSpec::Scalar(s) => {
                let p = &k.params[i];
                let bytes = crate::params::scalar_bytes(p.ty, p.size, s).map_err(|why| HostError::ParamType {
                    index: i,
                    name: p.name.clone(),
                    param: p.ty.name(),
                    given: s.ty.name(),
                    why,
                })?;
                args.set_scalar(i, &bytes)?
            }
            ParamSpec::Struct(st) => {
                let p = &k.params[i];
                let (bytes, _) = st.layout();
                if bytes.len() != p.size as usize {
                    return Err(HostError::StructSize { index: i, name: p.name.clone(), size: p.size, given: bytes.len() });
                }
                args.set_scalar(i, &bytes)?
            }
            ParamSpec::Buffer(b) => {
                if let Some(why) = warpsim_launch::bad_buffer_name(&b.name) {
                    return Err(HostError::BufferName { name: b.name.clone(), why });
                }
                if let Some(first) = params[..i].iter().position(|p| matches!(p, ParamSpec::Buffer(o) if o.name == b.name)) {
                    return Err(HostError::DuplicateBuffer { name: b.name.clone(), first, second: i });
                }
                if k.params[i].size != 8 {
                    return Err(HostError::NotAnAddress { index: i, name: k.params[i].name.clone(), size: k.params[i].size });
                }
                let (ptr, len) = ctx.alloc_buffer(b)?;
                args.set_ptr(i, ptr)?;
                buffers.push(BoundBuffer { spec: b.clone(), ptr, len });
            }
        }
    }
    Ok(Prepared { kernel: kernel.clone(), ctx, args, buffers })
}

impl Prepared {
    /// Launches with the observers `opts` switches on.
    pub fn launch(&mut self, dims: &Dims, opts: &LaunchOptions) -> Result<LaunchSummary, HostError> {
        launch(&mut self.ctx, &self.kernel, dims, self.args.bytes(), opts)
    }

    /// [`Prepared::launch`], with the metrics of the part that ran when it faults.
    pub fn launch_keeping_partial(
        &mut self,
        dims: &Dims,
        opts: &LaunchOptions,
    ) -> (Result<LaunchSummary, HostError>, Option<LaunchMetrics>) {
        crate::launch::launch_keeping_partial(&mut self.ctx, &self.kernel, dims, self.args.bytes(), opts)
    }

    /// A global address in the user's terms, by the nearest buffer:
    /// "element 64 of `in` (64 elements of f32), 0 bytes past its end".
    pub fn describe_address(&self, addr: u64) -> Option<String> {
        let b = self.buffers.iter().min_by_key(|b| {
            let end = b.ptr.0 + b.len;
            if addr < b.ptr.0 {
                b.ptr.0 - addr
            } else {
                addr.saturating_sub(end.saturating_sub(1))
            }
        })?;
        let size = b.spec.dtype.size_bytes() as u64;
        let (name, n, dt) = (&b.spec.name, b.spec.count, b.spec.dtype);
        let what = format!("`{name}` ({n} elements of {dt})");
        Some(if addr < b.ptr.0 {
            format!("{} bytes before the start of {what}", b.ptr.0 - addr)
        } else {
            let off = addr - b.ptr.0;
            let (elem, within) = (off / size, off % size);
            let at = if within == 0 { format!("element {elem}") } else { format!("byte {within} of element {elem}") };
            if off >= b.len {
                format!("{at} of {what}, {} bytes past its end", off - b.len)
            } else {
                format!("{at} of {what}")
            }
        })
    }

    /// The buffer parameter named `name`.
    pub fn buffer(&self, name: &str) -> Result<&BoundBuffer, HostError> {
        self.buffers.iter().find(|b| b.spec.name == name).ok_or_else(|| HostError::NoBuffer(name.to_string()))
    }

    /// The bytes of buffer `name`.
    pub fn read(&self, name: &str) -> Result<Vec<u8>, HostError> {
        let b = self.buffer(name)?;
        self.ctx.read_vec(b.ptr, b.len, name)
    }

    /// Addresses of the module's `.global` and `.const` variables.
    pub fn globals(&self) -> &HashMap<String, u64> {
        self.ctx.globals(&self.kernel).expect("loaded by prepare")
    }

    /// Writes every buffer that is not an input to `dir/NAME.npy`; returns the paths.
    pub fn save_outputs(&self, dir: &Path) -> Result<Vec<PathBuf>, HostError> {
        let mut written = Vec::new();
        for b in self.buffers.iter().filter(|b| b.spec.role != Role::In) {
            std::fs::create_dir_all(dir).map_err(|e| HostError::io(dir, e))?;
            let path = dir.join(format!("{}.npy", b.spec.name));
            let bytes = self.ctx.read_vec(b.ptr, b.len, &b.spec.name)?;
            warpsim_launch::npy::write_npy_file(&path, b.spec.dtype, &bytes)?;
            written.push(path);
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Module;
    use warpsim_launch::parse_param_arg;

    const PTX: &str = ".version 7.0\n.target sm_80\n.address_size 64\n\
        .visible .entry k(.param .u64 a, .param .u64 b)\n{\nret;\n}\n";

    #[test]
    fn two_buffers_may_not_share_a_name() {
        let k = Module::from_ptx("t.ptx", PTX).kernel("k").unwrap();
        let p = |s: &str| parse_param_arg(s).unwrap();
        let e = prepare(&k, &[p("out:u32[4]=zeros:out"), p("out:u32[4]=zeros:out")]).err().unwrap();
        assert!(matches!(e, HostError::DuplicateBuffer { first: 0, second: 1, .. }), "{e}");
        assert!(prepare(&k, &[p("x:u32[4]=zeros:out"), p("y:u32[4]=zeros:out")]).is_ok());
    }

    #[test]
    fn addresses_are_named_by_buffer_and_element() {
        let k = Module::from_ptx("t.ptx", PTX).kernel("k").unwrap();
        let p = |s: &str| parse_param_arg(s).unwrap();
        let prep = prepare(&k, &[p("in:f32[64]=zeros:in"), p("out:f32[64]=zeros:out")]).unwrap();
        let base = prep.buffer("in").unwrap().ptr.0;
        assert_eq!(prep.describe_address(base + 4 * 3).unwrap(), "element 3 of `in` (64 elements of f32)");
        assert_eq!(prep.describe_address(base + 256).unwrap(), "element 64 of `in` (64 elements of f32), 0 bytes past its end");
    }
}
