//! Modules and kernels: PTX text, compiled one kernel at a time on first use.

use crate::HostError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use warpsim_ir::Program;
use warpsim_metrics::KernelModel;
use warpsim_timing::DecodeCache;

/// A PTX module: its text and the kernels compiled from it so far.
pub struct Module {
    name: String,
    source: Arc<str>,
    kernels: HashMap<String, Kernel>,
}

impl Module {
    /// A module from PTX text; `name` is what messages call it (a file name).
    pub fn from_ptx(name: impl Into<String>, source: impl Into<Arc<str>>) -> Module {
        Module { name: name.into(), source: source.into(), kernels: HashMap::new() }
    }

    /// A module read from a `.ptx` file.
    pub fn from_file(path: &Path) -> Result<Module, HostError> {
        let src = std::fs::read_to_string(path).map_err(|e| HostError::io(path, e))?;
        Ok(Module::from_ptx(path.display().to_string(), src))
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// The names of the module's `.entry` kernels, in source order.
    pub fn entries(&self) -> Result<Vec<String>, HostError> {
        let m = warpsim_ptx::parse_module(&self.name, &self.source)?;
        Ok(m.entries().map(|f| f.name.clone()).collect())
    }

    /// Kernel `name` (its mangled name or its C++ name: `map_reduce<float>`, a unique
    /// prefix), compiled on first use.
    pub fn kernel(&mut self, name: &str) -> Result<Kernel, HostError> {
        if let Some(k) = self.kernels.get(name) {
            return Ok(k.clone());
        }
        let (program, mangled) = warpsim_ir::compile_kernel_resolved(&self.name, &self.source, name)?;
        let k = Kernel {
            program: Arc::new(program),
            name: mangled,
            source: Some(self.source.clone()),
            regs_per_thread: None,
            derived: Default::default(),
        };
        self.kernels.insert(name.to_string(), k.clone());
        Ok(k)
    }
}

/// One compiled kernel: the program it lives in and its name; cheap to clone.
#[derive(Clone)]
pub struct Kernel {
    program: Arc<Program>,
    name: String,
    /// The PTX text, which the timing model's compiler model reads for pragmas.
    source: Option<Arc<str>>,
    /// Registers per thread as ptxas allocated them, where known.
    regs_per_thread: Option<u32>,
    /// What launches derive from the code, shared by this kernel's clones.
    derived: Arc<Derived>,
}

/// What launches of one kernel derive from its code, each worked out at the
/// first launch that needs it.
#[derive(Default)]
struct Derived {
    /// What metrics need of the code.
    metrics_model: OnceLock<KernelModel>,
    /// The register estimate from the PTX.
    estimated_regs: OnceLock<u32>,
    /// The timing model's decode for the GPU parameters of the last timed launch.
    timing_decode: DecodeCache,
}

impl Kernel {
    /// Kernel `name` of an already compiled program.
    pub fn from_program(program: Arc<Program>, name: &str) -> Result<Kernel, HostError> {
        program.kernel(name).ok_or_else(|| HostError::NoKernel(name.to_string()))?;
        Ok(Kernel { program, name: name.to_string(), source: None, regs_per_thread: None, derived: Default::default() })
    }

    /// The same kernel with the PTX text it was compiled from attached.
    pub fn with_source(mut self, source: impl Into<Arc<str>>) -> Kernel {
        self.source = Some(source.into());
        self
    }

    /// The same kernel with ptxas' register count (for the timing model's occupancy).
    pub fn with_regs_per_thread(mut self, regs: Option<u32>) -> Kernel {
        self.regs_per_thread = regs;
        self
    }

    pub fn program(&self) -> &Arc<Program> {
        &self.program
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }

    pub fn regs_per_thread(&self) -> Option<u32> {
        self.regs_per_thread
    }

    /// Registers per thread: ptxas' figure where known, else the estimate
    /// from the PTX ([`warpsim_ir::regs`], worked out once).
    pub fn regs_or_estimate(&self) -> u32 {
        self.regs_per_thread
            .unwrap_or_else(|| *self.derived.estimated_regs.get_or_init(|| warpsim_ir::regs::estimate_registers(self.ir()).regs_per_thread))
    }

    /// What a launch's metrics need of the code (worked out once).
    pub fn metrics_model(&self) -> &KernelModel {
        self.derived.metrics_model.get_or_init(|| KernelModel::of(self.ir()))
    }

    /// The timing model's decode, kept between timed launches (shared by clones).
    pub fn timing_decode(&self) -> &DecodeCache {
        &self.derived.timing_decode
    }

    /// The decoded kernel.
    pub fn ir(&self) -> &warpsim_ir::Kernel {
        self.program.kernel(&self.name).expect("checked when the kernel was made")
    }
}

/// PTX files read once and their kernels compiled once (a manifest names the
/// same file for many cases).
#[derive(Default)]
pub struct ProgramCache {
    modules: HashMap<PathBuf, Module>,
}

impl ProgramCache {
    /// Kernel `kernel` of the PTX file at `path`.
    pub fn get(&mut self, path: &Path, kernel: &str) -> Result<Kernel, HostError> {
        if !self.modules.contains_key(path) {
            self.modules.insert(path.to_path_buf(), Module::from_file(path)?);
        }
        self.modules.get_mut(path).expect("inserted above").kernel(kernel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `template <class T> __global__ void fill(T*)` at float, as nvcc names it.
    const PTX: &str = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry _Z4fillIfEvPT_(.param .u64 p)\n{\n  ret;\n}\n";

    #[test]
    fn a_template_kernel_is_found_by_its_cpp_name() {
        let mut m = Module::from_ptx("t.ptx", PTX);
        let k = m.kernel("fill<float>").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(k.name(), "_Z4fillIfEvPT_");
        assert!(k.program().kernel(k.name()).is_some());
        let e = m.kernel("fill<double>").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("_Z4fillIfEvPT_ (fill<float>(float*))"), "{e}");
    }

    #[test]
    fn what_launches_derive_from_the_code_is_worked_out_once_per_kernel() {
        let mut m = Module::from_ptx("t.ptx", PTX);
        let k = m.kernel("fill<float>").unwrap_or_else(|e| panic!("{e}"));
        let again = m.kernel("_Z4fillIfEvPT_").unwrap_or_else(|e| panic!("{e}"));
        assert!(std::ptr::eq(k.metrics_model(), k.clone().metrics_model()));
        assert!(std::ptr::eq(k.metrics_model(), k.clone().with_regs_per_thread(Some(40)).metrics_model()));
        assert!(std::ptr::eq(k.timing_decode(), k.clone().with_regs_per_thread(Some(40)).timing_decode()));
        assert_eq!(k.regs_or_estimate(), warpsim_ir::regs::estimate_registers(k.ir()).regs_per_thread);
        assert_eq!(again.with_regs_per_thread(Some(40)).regs_or_estimate(), 40);
    }
}
