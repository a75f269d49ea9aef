//! Device memory of one context: allocations with lazy initialisers, the
//! module globals of the programs loaded into it, reads and writes.

use crate::{HostError, Kernel};
use std::collections::HashMap;
use std::sync::Arc;
use warpsim_engine::{alloc_module_globals, Filler, GlobalMemory};
use warpsim_ir::Program;
use warpsim_launch::{BufferInit, BufferSpec, Init, NamedInit};

/// A device address (what a kernel receives for a buffer parameter).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DevicePtr(pub u64);

/// One simulated device's memory and what lives in it.
#[derive(Default)]
pub struct Context {
    mem: GlobalMemory,
    /// Module globals per loaded program (keyed by the program's address).
    globals: Vec<(Arc<Program>, HashMap<String, u64>)>,
    /// Live allocations made through [`Context::alloc`]: base -> (name, bytes).
    buffers: HashMap<u64, (String, u64)>,
}

impl Context {
    pub fn new() -> Context {
        Context::default()
    }

    /// A context whose allocations start at `base` (an address range the caller reserved).
    pub fn with_base(base: u64) -> Context {
        Context { mem: GlobalMemory::with_base(base), ..Context::default() }
    }

    /// Makes `globals` the module variables of `kernel`'s program: kernels of
    /// one module, compiled one at a time, share one set of variables.
    pub fn bind_globals(&mut self, kernel: &Kernel, globals: HashMap<String, u64>) {
        let p = kernel.program();
        self.globals.retain(|(q, _)| !Arc::ptr_eq(p, q));
        self.globals.push((p.clone(), globals));
    }

    /// Allocates the `.global` and `.const` variables of `kernel`'s program
    /// (once per program) and returns their addresses by name.
    pub fn load(&mut self, kernel: &Kernel) -> &HashMap<String, u64> {
        let p = kernel.program();
        let i = match self.globals.iter().position(|(q, _)| Arc::ptr_eq(p, q)) {
            Some(i) => i,
            None => {
                let g = alloc_module_globals(p, &mut self.mem);
                self.globals.push((p.clone(), g));
                self.globals.len() - 1
            }
        };
        &self.globals[i].1
    }

    /// The module globals of `kernel`'s program, if it was loaded.
    pub fn globals(&self, kernel: &Kernel) -> Option<&HashMap<String, u64>> {
        self.globals.iter().find(|(q, _)| Arc::ptr_eq(kernel.program(), q)).map(|(_, g)| g)
    }

    /// Allocates `len` bytes; `filler` gives the bytes not yet written (zeros without one).
    pub fn alloc(&mut self, name: &str, len: u64, filler: Option<Arc<dyn Filler>>) -> DevicePtr {
        let base = self.mem.alloc(name, len, filler);
        self.buffers.insert(base, (name.to_string(), len));
        DevicePtr(base)
    }

    /// Allocates a buffer as a manifest describes it, filled lazily by its initialiser.
    pub fn alloc_buffer(&mut self, spec: &BufferSpec) -> Result<(DevicePtr, u64), HostError> {
        let init = BufferInit::from_spec(spec)?;
        let len = init.byte_len();
        // Zero-filled allocations need no filler: untouched bytes read as zero.
        let filler = if spec.init == Init::Named(NamedInit::Zeros) { None } else { Some(init.into_filler()) };
        Ok((self.alloc(&spec.name, len, filler), len))
    }

    /// Releases an allocation made by [`Context::alloc`]. Its addresses are
    /// not handed out again, so addresses stay unique.
    pub fn free(&mut self, ptr: DevicePtr) -> Result<(), HostError> {
        self.buffers.remove(&ptr.0).ok_or_else(|| HostError::NoBuffer(format!("at 0x{:x}", ptr.0)))?;
        self.mem.free(ptr.0);
        Ok(())
    }

    /// The byte length of the allocation at `ptr`.
    pub fn len_of(&self, ptr: DevicePtr) -> Option<u64> {
        self.buffers.get(&ptr.0).map(|b| b.1)
    }

    pub fn write(&self, ptr: DevicePtr, data: &[u8]) -> Result<(), HostError> {
        self.mem.write(ptr.0, data).map_err(|fault| HostError::Memory { what: format!("writing 0x{:x}", ptr.0), fault })
    }

    /// Reads `out.len()` bytes at `ptr`; `what` names them in the error.
    pub fn read(&self, ptr: DevicePtr, out: &mut [u8], what: &str) -> Result<(), HostError> {
        self.mem.read(ptr.0, out).map_err(|fault| HostError::Memory { what: format!("reading {what}"), fault })
    }

    /// `len` bytes at `ptr`.
    pub fn read_vec(&self, ptr: DevicePtr, len: u64, what: &str) -> Result<Vec<u8>, HostError> {
        let mut v = vec![0u8; len as usize];
        self.read(ptr, &mut v, what)?;
        Ok(v)
    }

    /// Streams `len` bytes at `ptr` into `f`, a MiB at a time (outputs too large to hold).
    pub fn read_chunks<E: From<HostError>>(&self, ptr: DevicePtr, len: u64, mut f: impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), E> {
        let mut buf = vec![0u8; (1usize << 20).min(len as usize)];
        let mut off = 0u64;
        while off < len {
            let n = (len - off).min(buf.len() as u64) as usize;
            self.read(DevicePtr(ptr.0 + off), &mut buf[..n], "an output")?;
            f(&buf[..n])?;
            off += n as u64;
        }
        Ok(())
    }

    /// Bytes of device memory actually held (pages touched or filled).
    pub fn resident_bytes(&self) -> u64 {
        self.mem.resident_bytes()
    }

    /// The engine's memory, for launches.
    pub fn memory(&self) -> &GlobalMemory {
        &self.mem
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_written_read_and_freed() {
        let mut ctx = Context::new();
        let p = ctx.alloc("buf", 16, None);
        assert_eq!(ctx.len_of(p), Some(16));
        ctx.write(DevicePtr(p.0 + 4), &[1, 2, 3]).unwrap();
        assert_eq!(ctx.read_vec(p, 8, "buf").unwrap(), [0, 0, 0, 0, 1, 2, 3, 0]);
        assert!(matches!(ctx.read_vec(p, 17, "buf"), Err(HostError::Memory { .. })));
        ctx.free(p).unwrap();
        assert!(matches!(ctx.free(p), Err(HostError::NoBuffer(_))));
    }

    #[test]
    fn manifest_buffers_fill_lazily() {
        let spec = warpsim_launch::parse_param_arg("x:u32[4]=iota").unwrap();
        let (p, len) = Context::new().alloc_buffer(spec.as_buffer().unwrap()).unwrap();
        assert_eq!(len, 16);
        let mut ctx = Context::new();
        let (q, _) = ctx.alloc_buffer(spec.as_buffer().unwrap()).unwrap();
        assert_eq!(p, q, "a fresh context hands out the same first address");
        let words: Vec<u32> = ctx.read_vec(q, 16, "x").unwrap().chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(words, [0, 1, 2, 3]);
    }
}
