//! Modules and libraries (one object here: a `CUlibrary` is a module, a
//! `CUkernel` is the `CUfunction` of its module, so either is accepted where
//! the other is), the linker (several PTX inputs are linked by
//! `warpsim_host::link_ptx`; the "cubin" it completes is the linked PTX, which
//! the loaders recognise), function attributes, launches and occupancy.
//!
//! Images are read lazily: only the PTX entry for the device is decompressed,
//! and a kernel is lowered when first launched or queried. A version-2 fatbin
//! wrapper (`nvcc -rdc`) lists one relocatable fatbin per translation unit:
//! their PTX units are linked at load.

use crate::errors::*;
use crate::ffi::*;
use crate::state::{create, with, Driver, Linker, ModuleState, Unit};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void};
use warpsim_fatbin::{Fatbin, ImageKind};
use warpsim_host::{Dims, Module};

/// Separates the linked PTX units in a blob [`cuLinkComplete`] hands out (a blob holding one
/// is linked already: loading it links nothing again).
const LINKED_SEPARATOR: &str = "\n// --- warpsim: next linked PTX unit ---\n";

/// Reads `n` bytes at `p`.
///
/// # Safety
/// `p` is valid for `n` bytes.
unsafe fn mem<'a>(p: u64, n: usize) -> Result<&'a [u8], CUresult> {
    // SAFETY: forwarded.
    unsafe { bytes(p as *const c_void, n) }
}

fn image_error(e: warpsim_fatbin::FatbinError) -> CUresult {
    eprintln!("warpsim: {e}");
    match e {
        warpsim_fatbin::FatbinError::NoPtx { .. } | warpsim_fatbin::FatbinError::NoPtxForDevice { .. } => CUDA_ERROR_NO_BINARY_FOR_GPU,
        _ => CUDA_ERROR_INVALID_IMAGE,
    }
}

/// The PTX of the fatbin at `p` for device `sm`; `Ok(None)` when it has none but other fatbins may.
///
/// # Safety
/// `p` points at a fatbin.
unsafe fn fatbin_ptx(p: u64, sm: u32) -> Result<String, warpsim_fatbin::FatbinError> {
    // SAFETY: a fatbin header is 16 bytes; then the whole fatbin as its header says.
    let header = unsafe { mem(p, warpsim_fatbin::FATBIN_HEADER_LEN) }.map_err(|_| warpsim_fatbin::FatbinError::Truncated {
        what: "the fatbin",
        need: 16,
        have: 0,
    })?;
    let len = warpsim_fatbin::fatbin_len(header)?;
    // SAFETY: as above.
    let all = unsafe { mem(p, len as usize) }.unwrap_or(&[]);
    Fatbin::parse(all)?.ptx_for(sm)
}

/// The PTX an image holds, before linking: named units, or units already linked.
struct RawImage {
    units: Vec<(String, String)>,
    linked: bool,
}

/// The PTX units of the code image at `image`: a fatbin wrapper (version 2: one fatbin per
/// `-rdc` translation unit), a fatbin, an ELF (SASS only: an error naming the fix) or PTX
/// text (a linked blob of [`cuLinkComplete`]'s, or one unit).
///
/// # Safety
/// `image` points at one of those.
unsafe fn raw_image(image: *const c_void, sm: u32) -> Result<RawImage, CUresult> {
    if image.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let p = image as u64;
    // SAFETY: every image kind is at least 4 bytes long (PTX text is checked below).
    let first = unsafe { mem(p, 1) }?;
    let kind = if first[0] == 0 { ImageKind::Text } else { warpsim_fatbin::image_kind(unsafe { mem(p, 4) }?) };
    let named = |units: Vec<String>| {
        let n = units.len();
        let name = |i: usize| if n == 1 { "the PTX".to_string() } else { format!("PTX unit {} of {n}", i + 1) };
        RawImage { units: units.into_iter().enumerate().map(|(i, u)| (name(i), u)).collect(), linked: false }
    };
    match kind {
        ImageKind::Wrapper => {
            // SAFETY: a wrapper is 24 bytes.
            let w = warpsim_fatbin::parse_wrapper(unsafe { mem(p, warpsim_fatbin::WRAPPER_LEN) }?).map_err(image_error)?;
            let mut units = Vec::new();
            let mut first_err = None;
            let mut fatbins = vec![w.data];
            let mut at = w.prelinked;
            while at != 0 {
                // SAFETY: a NULL-terminated array of fatbin pointers.
                let next = u64::from_le_bytes(unsafe { mem(at, 8) }?.try_into().expect("8 bytes"));
                if next == 0 {
                    break;
                }
                fatbins.push(next);
                at += 8;
            }
            // A version-2 wrapper's own fatbin is the device-linked code (nvlink's): each
            // translation unit's PTX is in its prelinked fatbins, and only there.
            let prelinked = fatbins.len() > 1;
            for f in fatbins.into_iter().skip(prelinked as usize).filter(|&f| f != 0) {
                // SAFETY: the wrapper's fatbins.
                match unsafe { fatbin_ptx(f, sm) } {
                    Ok(u) => units.push(u),
                    Err(e) if prelinked => return Err(image_error(e)),
                    Err(e) => first_err = first_err.or(Some(e)),
                }
            }
            match (units.is_empty(), first_err) {
                (true, Some(e)) => Err(image_error(e)),
                (true, None) => Err(CUDA_ERROR_INVALID_IMAGE),
                (false, _) => Ok(named(units)),
            }
        }
        // SAFETY: a fatbin at `p`.
        ImageKind::Fatbin => Ok(named(vec![unsafe { fatbin_ptx(p, sm) }.map_err(image_error)?])),
        ImageKind::Elf => {
            eprintln!(
                "warpsim: {}\n  (Numba hands the driver cubins when it links with nvJitLink: give @cuda.jit lto=False, \
                 or run it where cuda-bindings finds no libnvJitLink)",
                warpsim_fatbin::FatbinError::NoPtx { sass: "an ELF (cubin) image".into() }
            );
            Err(CUDA_ERROR_NO_BINARY_FOR_GPU)
        }
        ImageKind::Text => {
            // SAFETY: PTX text is NUL-terminated.
            let s = unsafe { cstr(image as *const c_char) }?;
            let linked = s.contains(LINKED_SEPARATOR);
            Ok(RawImage { linked, ..named(s.split(LINKED_SEPARATOR).map(str::to_string).collect()) })
        }
    }
}

/// Links named PTX units (one is returned as it is unless `always`: then its `.extern`s are
/// checked, as the driver's linker does); a link error is printed and is
/// `CUDA_ERROR_INVALID_PTX` (what the driver returns when its JIT fails), its text also
/// given to `log`.
fn link_units(units: Vec<(String, String)>, always: bool, log: impl FnOnce(&str)) -> Result<Vec<String>, CUresult> {
    if units.len() < 2 && !always {
        return Ok(units.into_iter().map(|u| u.1).collect());
    }
    let inputs: Vec<warpsim_host::LinkInput<'_>> = units.iter().map(|(name, ptx)| warpsim_host::LinkInput { name, ptx }).collect();
    warpsim_host::link_ptx(&inputs).map_err(|e| {
        let msg = format!("linking the device code: {e}");
        eprintln!("warpsim: {msg}");
        log(&msg);
        CUDA_ERROR_INVALID_PTX
    })
}

/// The PTX units of the code image at `image`, linked (see [`raw_image`]).
///
/// # Safety
/// `image` as for [`raw_image`].
pub unsafe fn image_units(image: *const c_void, sm: u32) -> Result<Vec<String>, CUresult> {
    // SAFETY: forwarded.
    let raw = unsafe { raw_image(image, sm) }?;
    if raw.linked {
        return Ok(raw.units.into_iter().map(|u| u.1).collect());
    }
    link_units(raw.units, false, |_| {})
}

/// Whether PTX `src` defines `.entry name`.
fn declares_entry(src: &str, name: &str) -> bool {
    src.match_indices(name).any(|(i, _)| {
        let before = src[..i].trim_end();
        let after = src[i + name.len()..].trim_start();
        before.ends_with(".entry") && (after.starts_with('(') || after.starts_with('{') || after.starts_with('.'))
    })
}

impl Driver {
    fn sm(&self) -> u32 {
        let (a, b) = crate::attrs::compute_capability(&self.preset);
        (a * 10 + b) as u32
    }

    fn add_module(&mut self, units: Vec<String>) -> usize {
        let m = self.handle();
        let n = self.modules.len();
        let units =
            units.into_iter().enumerate().map(|(i, src)| Unit { host: Module::from_ptx(format!("module{n}.unit{i}.ptx"), src) }).collect();
        self.modules.insert(m, ModuleState { units, functions: HashMap::new(), globals: HashMap::new() });
        m
    }

    /// The function of kernel `name` in module `m`; `CUDA_ERROR_NOT_FOUND` if it has none.
    fn get_function(&mut self, m: usize, name: &str) -> Result<usize, CUresult> {
        let module = self.modules.get(&m).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        if let Some(&f) = module.functions.get(name) {
            return Ok(f);
        }
        let unit = module.units.iter().position(|u| declares_entry(u.host.source(), name)).ok_or(CUDA_ERROR_NOT_FOUND)?;
        Ok(self.function(m, unit, name))
    }

    fn func_attribute(&mut self, f: usize, attrib: c_int) -> Result<c_int, CUresult> {
        let k = self.kernel(f)?;
        let ir = k.ir();
        let func = &self.funcs[&f];
        let regs = k.regs_or_estimate();
        let threads = |d: Option<[u32; 3]>| d.map(|d| d.iter().product::<u32>());
        Ok(match attrib {
            0 => threads(ir.tuning.reqntid).or(threads(ir.tuning.maxntid)).unwrap_or(self.preset.max_threads_per_block) as c_int,
            1 => ir.shared_static_bytes as c_int,
            2 => 0,
            3 => ir.local_bytes as c_int,
            4 => regs as c_int,
            5 | 6 => self.sm() as c_int,
            8 => {
                if func.max_dynamic_shared > 0 {
                    func.max_dynamic_shared
                } else {
                    self.preset.shared_per_block_default.saturating_sub(ir.shared_static_bytes) as c_int
                }
            }
            9 => -1,
            7 | 10..=17 => 0,
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        })
    }

    fn occupancy_blocks(&mut self, f: usize, block: c_int, dynamic: usize) -> Result<c_int, CUresult> {
        let k = self.kernel(f)?;
        let ir = k.ir();
        let regs = k.regs_or_estimate();
        let opt_in = self.funcs[&f].max_dynamic_shared as u32 > self.preset.shared_per_block_default;
        let input =
            warpsim_gpu::OccupancyInput::new(block.max(1) as u32, regs).shared(ir.shared_static_bytes, dynamic as u32).opt_in(opt_in);
        Ok(warpsim_gpu::occupancy(&self.preset, &input).map(|o| o.blocks_per_sm as c_int).unwrap_or(0))
    }
}

/// Loads an image into a new module handle.
///
/// # Safety
/// `image` as for [`image_units`].
unsafe fn load(out: *mut Handle, image: *const c_void) -> Result<(), CUresult> {
    let sm = with(|d| {
        d.healthy()?;
        Ok(d.sm())
    })?;
    // SAFETY: forwarded.
    let units = unsafe { image_units(image, sm) }?;
    let m = with(|d| Ok(d.add_module(units)))?;
    // SAFETY: out-pointer from the caller.
    unsafe { put(out, to_handle(m)) }
}

/// Loads a file (PTX text, a fatbin or a cubin) into a new module handle.
///
/// # Safety
/// `path` is a C string.
unsafe fn load_file(out: *mut Handle, path: *const c_char) -> Result<(), CUresult> {
    // SAFETY: forwarded.
    let path = unsafe { cstr(path) }?;
    let mut data = std::fs::read(path).map_err(|_| CUDA_ERROR_FILE_NOT_FOUND)?;
    data.push(0);
    // SAFETY: `data` lives across the call and is NUL-terminated.
    unsafe { load(out, data.as_ptr() as *const c_void) }
}

fn unload(m: Handle) -> Result<(), CUresult> {
    with(|d| {
        let state = d.modules.remove(&h(m)).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        for f in state.functions.values() {
            d.funcs.remove(f);
        }
        // Module variables stay allocated: kernels still running elsewhere never see them freed.
        Ok(())
    })
}

fn function_of(m: Handle, name: *const c_char) -> Result<usize, CUresult> {
    // SAFETY: a C string from the caller.
    let name = unsafe { cstr(name) }?;
    with(|d| d.get_function(h(m), name))
}

fn global_of(dptr: *mut u64, bytes: *mut usize, m: Handle, name: *const c_char) -> Result<(), CUresult> {
    // SAFETY: a C string from the caller.
    let name = unsafe { cstr(name) }?;
    let (a, n) = with(|d| d.global(h(m), name))?;
    // SAFETY: optional out-pointers from the caller.
    unsafe {
        put_opt(dptr, a);
        put_opt(bytes, n as usize);
    }
    Ok(())
}

/// Parameter bytes of a launch from `kernelParams` (one pointer per parameter) or `extra`.
///
/// # Safety
/// As `cuLaunchKernel` documents `kernelParams` and `extra`.
unsafe fn param_bytes(k: &warpsim_host::Kernel, params: *mut *mut c_void, extra: *mut *mut c_void) -> Result<Vec<u8>, CUresult> {
    let ir = k.ir();
    let mut out = vec![0u8; ir.param_bytes as usize];
    if !params.is_null() {
        for (i, p) in ir.params.iter().enumerate() {
            // SAFETY: `kernelParams[i]` points at parameter i, of the size the PTX declares.
            let src = unsafe { *params.add(i) };
            let v = unsafe { bytes(src, p.size as usize) }?;
            out[p.offset as usize..(p.offset + p.size) as usize].copy_from_slice(v);
        }
        return Ok(out);
    }
    if extra.is_null() {
        return if ir.params.is_empty() { Ok(out) } else { Err(CUDA_ERROR_INVALID_VALUE) };
    }
    let (mut buf, mut size) = (std::ptr::null_mut::<c_void>(), 0usize);
    let mut i = 0;
    loop {
        // SAFETY: `extra` is a list of (key, value) pointers ending with CU_LAUNCH_PARAM_END.
        let key = unsafe { *extra.add(i) } as usize;
        match key {
            0 => break,
            1 => buf = unsafe { *extra.add(i + 1) },
            // SAFETY: the value of CU_LAUNCH_PARAM_BUFFER_SIZE points at a size_t.
            2 => size = unsafe { *(*extra.add(i + 1) as *const usize) },
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        }
        i += 2;
    }
    // SAFETY: the buffer holds `size` bytes.
    let v = unsafe { bytes(buf, size.min(out.len())) }?;
    out[..v.len()].copy_from_slice(v);
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn launch(
    f: Handle,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: c_uint,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Result<(), CUresult> {
    let dims = Dims::new(grid, block, shared);
    let stack = crate::callsite::capture();
    // SAFETY: the caller's parameter pointers, read while the launch is set up.
    with(|d| d.launch(h(f), dims, stack.as_ref(), |k| unsafe { param_bytes(k, params, extra) }))
}

/// `CUlaunchConfig` of cuda.h.
#[repr(C)]
pub struct CUlaunchConfig {
    pub grid: [c_uint; 3],
    pub block: [c_uint; 3],
    pub shared: c_uint,
    pub stream: Handle,
    pub attrs: *mut c_void,
    pub num_attrs: c_uint,
}

/// The `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION` of a launch configuration, if it has one.
///
/// # Safety
/// `c.attrs` holds `c.num_attrs` `CUlaunchAttribute`s (8-byte id and padding, 64-byte value).
unsafe fn cluster_dims(c: &CUlaunchConfig) -> Option<[c_uint; 3]> {
    const CLUSTER_DIMENSION: c_uint = 4;
    const STRIDE: usize = 72;
    if c.attrs.is_null() {
        return None;
    }
    (0..c.num_attrs as usize).find_map(|i| {
        // SAFETY: inside the caller's attribute array (see above).
        let at = unsafe { (c.attrs as *const u8).add(i * STRIDE) };
        // SAFETY: as above; the id and the value's first three words.
        let id = unsafe { std::ptr::read_unaligned(at as *const c_uint) };
        (id == CLUSTER_DIMENSION).then(|| unsafe { std::ptr::read_unaligned(at.add(8) as *const [c_uint; 3]) })
    })
}

api! {
    fn cuModuleLoadData(module: *mut Handle, image: *const c_void) {
        // SAFETY: the caller's image.
        unsafe { load(module, image) }
    }
    fn cuModuleLoadDataEx(module: *mut Handle, image: *const c_void, _n: c_uint, _options: *mut c_int, _values: *mut *mut c_void) {
        // SAFETY: the caller's image.
        unsafe { load(module, image) }
    }
    fn cuModuleLoadFatBinary(module: *mut Handle, fat: *const c_void) {
        // SAFETY: the caller's image.
        unsafe { load(module, fat) }
    }
    fn cuModuleLoad(module: *mut Handle, fname: *const c_char) {
        // SAFETY: the caller's file name.
        unsafe { load_file(module, fname) }
    }
    fn cuModuleUnload(module: Handle) { unload(module) }
    fn cuModuleGetFunction(func: *mut Handle, module: Handle, name: *const c_char) {
        let f = function_of(module, name)?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(func, to_handle(f)) }
    }
    fn cuModuleGetGlobal_v2(dptr: *mut u64, bytes: *mut usize, module: Handle, name: *const c_char) { global_of(dptr, bytes, module, name) }
    fn cuModuleGetLoadingMode(mode: *mut c_int) {
        // SAFETY: out-pointer from the caller (CU_MODULE_LAZY_LOADING).
        unsafe { put(mode, 2) }
    }
    fn cuModuleGetFunctionCount(count: *mut c_uint, module: Handle) {
        let n = with(|d| {
            let m = d.modules.get(&h(module)).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            Ok(m.units.iter().map(|u| u.host.entries().map(|e| e.len()).unwrap_or(0)).sum::<usize>())
        })?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(count, n as c_uint) }
    }
    fn cuLibraryLoadData(
        library: *mut Handle, code: *const c_void, _jit_options: *mut c_int, _jit_values: *mut *mut c_void, _n_jit: c_uint,
        _lib_options: *mut c_int, _lib_values: *mut *mut c_void, _n_lib: c_uint,
    ) {
        // SAFETY: the caller's image.
        unsafe { load(library, code) }
    }
    fn cuLibraryLoadFromFile(
        library: *mut Handle, fname: *const c_char, _jit_options: *mut c_int, _jit_values: *mut *mut c_void, _n_jit: c_uint,
        _lib_options: *mut c_int, _lib_values: *mut *mut c_void, _n_lib: c_uint,
    ) {
        // SAFETY: the caller's file name.
        unsafe { load_file(library, fname) }
    }
    fn cuLibraryUnload(library: Handle) { unload(library) }
    fn cuLibraryGetKernel(kernel: *mut Handle, library: Handle, name: *const c_char) {
        let f = function_of(library, name)?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(kernel, to_handle(f)) }
    }
    fn cuLibraryGetModule(module: *mut Handle, library: Handle) {
        with(|d| d.modules.get(&h(library)).map(|_| ()).ok_or(CUDA_ERROR_INVALID_HANDLE))?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(module, library) }
    }
    fn cuLibraryGetGlobal(dptr: *mut u64, bytes: *mut usize, library: Handle, name: *const c_char) { global_of(dptr, bytes, library, name) }
    fn cuLibraryGetKernelCount(count: *mut c_uint, library: Handle) {
        // SAFETY: as for cuModuleGetFunctionCount.
        match unsafe { cuModuleGetFunctionCount(count, library) } { 0 => Ok(()), e => Err(e) }
    }
    fn cuKernelGetFunction(func: *mut Handle, kernel: Handle) {
        with(|d| d.funcs.get(&h(kernel)).map(|_| ()).ok_or(CUDA_ERROR_INVALID_HANDLE))?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(func, kernel) }
    }
    fn cuKernelGetName(name: *mut *const c_char, kernel: Handle) {
        let p = with(|d| {
            let f = d.funcs.get_mut(&h(kernel)).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            if !f.name.ends_with('\0') {
                f.name.push('\0');
            }
            Ok(f.name.as_ptr())
        })?;
        // SAFETY: out-pointer from the caller; the name lives as long as the function.
        unsafe { put(name, p as *const c_char) }
    }
    fn cuFuncGetName(name: *mut *const c_char, func: Handle) {
        // SAFETY: as for cuKernelGetName.
        match unsafe { cuKernelGetName(name, func) } { 0 => Ok(()), e => Err(e) }
    }
    fn cuFuncGetModule(module: *mut Handle, func: Handle) {
        let m = with(|d| d.funcs.get(&h(func)).map(|f| f.module).ok_or(CUDA_ERROR_INVALID_HANDLE))?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(module, to_handle(m)) }
    }
    fn cuFuncLoad(func: Handle) { with(|d| d.kernel(h(func)).map(|_| ())) }
    fn cuFuncIsLoaded(state: *mut c_int, func: Handle) {
        with(|d| d.funcs.get(&h(func)).map(|_| ()).ok_or(CUDA_ERROR_INVALID_HANDLE))?;
        // SAFETY: out-pointer from the caller (CU_FUNCTION_LOADING_STATE_LOADED).
        unsafe { put(state, 1) }
    }
    /// Parameter `index`'s offset and size in the kernel's parameter buffer (from its PTX);
    /// `CUDA_ERROR_INVALID_VALUE` past the last.
    fn cuFuncGetParamInfo(func: Handle, index: usize, offset: *mut usize, size: *mut usize) {
        let (o, n) = with(|d| {
            let k = d.kernel(h(func))?;
            let p = k.ir().params.get(index).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            Ok((p.offset as usize, p.size as usize))
        })?;
        // SAFETY: optional out-pointers from the caller.
        unsafe {
            put_opt(offset, o);
            put_opt(size, n);
        }
        Ok(())
    }
    fn cuKernelGetParamInfo(kernel: Handle, index: usize, offset: *mut usize, size: *mut usize) {
        // SAFETY: as for cuFuncGetParamInfo (a kernel is its function here).
        match unsafe { cuFuncGetParamInfo(kernel, index, offset, size) } { 0 => Ok(()), e => Err(e) }
    }
    fn cuFuncGetAttribute(pi: *mut c_int, attrib: c_int, func: Handle) {
        let v = with(|d| d.func_attribute(h(func), attrib))?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(pi, v) }
    }
    fn cuKernelGetAttribute(pi: *mut c_int, attrib: c_int, kernel: Handle, _dev: c_int) {
        let v = with(|d| d.func_attribute(h(kernel), attrib))?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(pi, v) }
    }
    fn cuFuncSetAttribute(func: Handle, attrib: c_int, value: c_int) {
        with(|d| {
            let optin = d.preset.shared_per_block_optin as c_int;
            let f = d.funcs.get_mut(&h(func)).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            if attrib == 8 {
                if value < 0 || value > optin {
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
                f.max_dynamic_shared = value;
            }
            Ok(())
        })
    }
    fn cuKernelSetAttribute(attrib: c_int, value: c_int, kernel: Handle, _dev: c_int) {
        // SAFETY: as for cuFuncSetAttribute.
        match unsafe { cuFuncSetAttribute(kernel, attrib, value) } { 0 => Ok(()), e => Err(e) }
    }
    fn cuFuncSetCacheConfig(func: Handle, _config: c_int) {
        with(|d| d.funcs.get(&h(func)).map(|_| ()).ok_or(CUDA_ERROR_INVALID_HANDLE))
    }
    fn cuKernelSetCacheConfig(kernel: Handle, _config: c_int, _dev: c_int) {
        with(|d| d.funcs.get(&h(kernel)).map(|_| ()).ok_or(CUDA_ERROR_INVALID_HANDLE))
    }
    fn cuFuncSetSharedMemConfig(func: Handle, _config: c_int) {
        with(|d| d.funcs.get(&h(func)).map(|_| ()).ok_or(CUDA_ERROR_INVALID_HANDLE))
    }
    fn cuLaunchKernel(
        f: Handle, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint, bz: c_uint, shared: c_uint, _stream: Handle,
        params: *mut *mut c_void, extra: *mut *mut c_void,
    ) {
        launch(f, [gx, gy, gz], [bx, by, bz], shared, params, extra)
    }
    fn cuLaunchCooperativeKernel(
        f: Handle, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint, bz: c_uint, shared: c_uint, _stream: Handle,
        params: *mut *mut c_void,
    ) {
        launch(f, [gx, gy, gz], [bx, by, bz], shared, params, std::ptr::null_mut())
    }
    fn cuLaunchKernelEx(config: *const CUlaunchConfig, f: Handle, params: *mut *mut c_void, extra: *mut *mut c_void) {
        if config.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the caller's launch configuration.
        let c = unsafe { &*config };
        // SAFETY: `num_attrs` attributes of cuda.h's layout at `attrs`.
        if let Some(dims) = unsafe { cluster_dims(c) }.filter(|d| d.iter().map(|&n| n as u64).product::<u64>() > 1) {
            eprintln!("warpsim: cuLaunchKernelEx: a cluster of {}x{}x{} blocks: clusters of more than one block are not supported (warpsim runs clusters of one block)", dims[0], dims[1], dims[2]);
            return Err(CUDA_ERROR_NOT_SUPPORTED);
        }
        launch(f, c.grid, c.block, c.shared, params, extra)
    }
    fn cuOccupancyMaxActiveBlocksPerMultiprocessor(n: *mut c_int, func: Handle, block: c_int, dynamic: usize) {
        let v = with(|d| d.occupancy_blocks(h(func), block, dynamic))?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(n, v) }
    }
    fn cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n: *mut c_int, func: Handle, block: c_int, dynamic: usize, _flags: c_uint) {
        let v = with(|d| d.occupancy_blocks(h(func), block, dynamic))?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(n, v) }
    }
    /// The block size with the most resident warps (ties: the larger block), and the grid that fills the GPU.
    fn cuOccupancyMaxPotentialBlockSize(
        min_grid: *mut c_int, block: *mut c_int, func: Handle, to_dynamic: Option<unsafe extern "C" fn(c_int) -> usize>, dynamic: usize,
        limit: c_int,
    ) {
        let (g, b) = with(|d| {
            let max = d.func_attribute(h(func), 0)?;
            let max = if limit > 0 { max.min(limit) } else { max };
            let (mut best, mut best_b) = (0, 32);
            let mut b = 32;
            while b <= max {
                // SAFETY: the caller's callback, as cuda.h documents it.
                let dynamic = match to_dynamic { Some(f) => unsafe { f(b) }, None => dynamic };
                let blocks = d.occupancy_blocks(h(func), b, dynamic)?;
                if blocks * b >= best {
                    (best, best_b) = (blocks * b, b);
                }
                b += 32;
            }
            Ok(((best / best_b.max(1)) * d.preset.sm_count as c_int, best_b))
        })?;
        // SAFETY: out-pointers from the caller.
        unsafe {
            put(min_grid, g)?;
            put(block, b)
        }
    }
    fn cuOccupancyAvailableDynamicSMemPerBlock(size: *mut usize, func: Handle, blocks: c_int, _block: c_int) {
        let v = with(|d| {
            let k = d.kernel(h(func))?;
            let per_sm = d.preset.shared_per_sm_max as usize / blocks.max(1) as usize;
            let cap = d.preset.shared_per_block_optin as usize;
            Ok(per_sm.min(cap).saturating_sub(k.ir().shared_static_bytes as usize + d.preset.shared_reserved_per_block as usize))
        })?;
        // SAFETY: out-pointer from the caller.
        unsafe { put(size, v) }
    }
    /// Options kept: the error log buffer and its size (`CU_JIT_ERROR_LOG_BUFFER`,
    /// `CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES`), where a link error's message is written.
    fn cuLinkCreate_v2(n: c_uint, options: *mut c_int, values: *mut *mut c_void, state: *mut Handle) {
        let (mut log, mut log_size) = (0usize, 0usize);
        if !options.is_null() && !values.is_null() {
            for i in 0..n as usize {
                // SAFETY: `n` options and as many values, as cuda.h documents them.
                let (o, v) = unsafe { (*options.add(i), *values.add(i)) };
                match o {
                    5 => log = v as usize,
                    6 => log_size = v as usize,
                    _ => {}
                }
            }
        }
        // SAFETY: out-pointer from the caller.
        unsafe { create(state, |d, l| {
            d.linkers.insert(l, Linker { error_log: (log, log_size), ..Linker::default() });
        }) }
    }
    /// PTX input is kept; a fatbin's PTX is taken; other inputs (cubins,
    /// libraries of device code) cannot be linked by warpsim.
    fn cuLinkAddData_v2(
        state: Handle, kind: c_int, data: *mut c_void, size: usize, name: *const c_char, _n: c_uint, _options: *mut c_int,
        _values: *mut *mut c_void,
    ) {
        // SAFETY: the caller's input of `size` bytes.
        let input = unsafe { bytes(data, size) }?;
        let sm = with(|d| Ok(d.sm()))?;
        // SAFETY: an optional C string.
        let given = if name.is_null() { None } else { unsafe { cstr(name) }.ok().filter(|n| !n.is_empty()).map(str::to_string) };
        let units = match kind {
            // CU_JIT_INPUT_PTX
            1 => vec![(String::new(), String::from_utf8_lossy(input.split(|&b| b == 0).next().unwrap_or(&[])).into_owned())],
            // CU_JIT_INPUT_FATBINARY
            2 => unsafe { raw_image(data, sm) }?.units,
            _ => {
                let n = given.unwrap_or_else(|| "input".to_string());
                eprintln!("warpsim: cuLinkAddData: `{n}` is not PTX (input type {kind}); warpsim links PTX only");
                return Err(CUDA_ERROR_NOT_SUPPORTED);
            }
        };
        with(|d| {
            let l = d.linkers.get_mut(&h(state)).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            let count = units.len();
            for (i, (_, text)) in units.into_iter().enumerate() {
                let k = l.ptx.len() + 1;
                let label = match (&given, count) {
                    (Some(g), 1) => g.clone(),
                    (Some(g), _) => format!("{g}, PTX unit {} of {count}", i + 1),
                    (None, _) => format!("input {k}"),
                };
                l.ptx.push((label, text));
            }
            Ok(())
        })
    }
    fn cuLinkAddFile_v2(state: Handle, kind: c_int, path: *const c_char, n: c_uint, options: *mut c_int, values: *mut *mut c_void) {
        // SAFETY: a C string from the caller.
        let p = unsafe { cstr(path) }?;
        let mut data = std::fs::read(p).map_err(|_| CUDA_ERROR_FILE_NOT_FOUND)?;
        data.push(0);
        // SAFETY: `data` is live for the call.
        match unsafe { cuLinkAddData_v2(state, kind, data.as_mut_ptr() as *mut c_void, data.len() - 1, path, n, options, values) } {
            0 => Ok(()),
            e => Err(e),
        }
    }
    /// Links the inputs; the blob is the linked PTX, which the loaders recognise. A link
    /// error goes to the error log buffer too.
    fn cuLinkComplete(state: Handle, cubin: *mut *mut c_void, size: *mut usize) {
        let (p, n) = with(|d| {
            let l = d.linkers.get_mut(&h(state)).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            if l.ptx.is_empty() {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let (log, log_size) = l.error_log;
            let units = link_units(l.ptx.clone(), true, |msg| {
                if log != 0 && log_size > 0 {
                    let n = msg.len().min(log_size - 1);
                    // SAFETY: the caller gave a buffer of `log_size` bytes for the error log.
                    unsafe {
                        std::ptr::copy_nonoverlapping(msg.as_ptr(), log as *mut u8, n);
                        *(log as *mut u8).add(n) = 0;
                    }
                }
            })?;
            l.blob = units.join(LINKED_SEPARATOR).into_bytes();
            l.blob.push(0);
            Ok((l.blob.as_mut_ptr(), l.blob.len()))
        })?;
        // SAFETY: out-pointers from the caller; the blob lives until cuLinkDestroy.
        unsafe {
            put(cubin, p as *mut c_void)?;
            put_opt(size, n);
        }
        Ok(())
    }
    fn cuLinkDestroy(state: Handle) {
        with(|d| d.linkers.remove(&h(state)).map(|_| ()).ok_or(CUDA_ERROR_INVALID_HANDLE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_found_by_their_declaration() {
        let src = ".visible .entry _Z3addPf(\n.param .u64 p)\n{ ret; }\n.func foo()\n";
        assert!(declares_entry(src, "_Z3addPf"));
        assert!(!declares_entry(src, "_Z3add"));
        assert!(!declares_entry(src, "foo"));
    }

    /// A fatbin of one uncompressed entry (`kind` 1: PTX, 2: ELF) for sm_90.
    fn fatbin(kind: u16, payload: &[u8]) -> Vec<u8> {
        let padded = payload.len().div_ceil(8) * 8 + 8;
        let mut e = vec![0u8; 64];
        e[0..2].copy_from_slice(&kind.to_le_bytes());
        e[2..4].copy_from_slice(&0x101u16.to_le_bytes());
        e[4..8].copy_from_slice(&64u32.to_le_bytes());
        e[8..16].copy_from_slice(&(padded as u64).to_le_bytes());
        e[28..32].copy_from_slice(&90u32.to_le_bytes());
        e[40..48].copy_from_slice(&0x11u64.to_le_bytes());
        e.extend_from_slice(payload);
        e.resize(64 + padded, 0);
        let mut f = warpsim_fatbin::FATBIN_MAGIC.to_le_bytes().to_vec();
        f.extend_from_slice(&1u16.to_le_bytes());
        f.extend_from_slice(&16u16.to_le_bytes());
        f.extend_from_slice(&(e.len() as u64).to_le_bytes());
        f.extend(e);
        f
    }

    fn wrapper(version: u32, data: &[u8], prelinked: &[u64]) -> Vec<u8> {
        let mut w = warpsim_fatbin::WRAPPER_MAGIC.to_le_bytes().to_vec();
        w.extend_from_slice(&version.to_le_bytes());
        w.extend_from_slice(&(data.as_ptr() as u64).to_le_bytes());
        w.extend_from_slice(&(prelinked.as_ptr() as u64).to_le_bytes());
        w
    }

    const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

    /// nvcc's `-rdc` image: a version-2 wrapper whose own fatbin is the device-linked SASS and
    /// whose prelinked fatbins hold each unit's PTX, which are linked.
    #[test]
    fn a_version_2_wrapper_links_the_ptx_of_its_prelinked_fatbins() {
        let a = format!(
            "{HEAD}.extern .func (.param .b32 r) f();\n.visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r<2>;\n\
             {{\n.param .b32 r;\ncall.uni (r), f, ();\nld.param.b32 %r1, [r];\n}}\nret;\n}}\n"
        );
        let b =
            format!("{HEAD}.visible .func (.param .b32 r) f()\n{{\n.reg .b32 %r<2>;\nmov.u32 %r1, 42;\nst.param.b32 [r], %r1;\nret;\n}}\n");
        let sass = fatbin(2, b"\x7fELF\x02\x01\x01");
        let (fa, fb) = (fatbin(1, a.as_bytes()), fatbin(1, b.as_bytes()));
        let list = [fa.as_ptr() as u64, fb.as_ptr() as u64, 0];
        let w = wrapper(2, &sass, &list);
        // SAFETY: a wrapper whose pointers point at live fatbins and a NULL-terminated list.
        let units = unsafe { image_units(w.as_ptr().cast(), 90) }.unwrap();
        assert_eq!(units.len(), 2);
        assert!(units[0].contains(".entry k") && units[0].contains("mov.u32 %r1, 42;"), "{}", units[0]);
        assert!(!units[1].contains(".entry k"), "{}", units[1]);
        // The blob cuLinkComplete makes of them loads as it is, linked once.
        let mut blob = units.join(LINKED_SEPARATOR).into_bytes();
        blob.push(0);
        // SAFETY: NUL-terminated text.
        assert_eq!(unsafe { image_units(blob.as_ptr().cast(), 90) }.unwrap(), units);
        // A prelinked fatbin without PTX is an error (the fix is in the message).
        let list = [fa.as_ptr() as u64, sass.as_ptr() as u64, 0];
        let w = wrapper(2, &sass, &list);
        // SAFETY: as above.
        assert_eq!(unsafe { image_units(w.as_ptr().cast(), 90) }, Err(CUDA_ERROR_NO_BINARY_FOR_GPU));
        // A unit twice: its kernel is defined twice.
        let list = [fa.as_ptr() as u64, fa.as_ptr() as u64, 0];
        let w = wrapper(2, &sass, &list);
        // SAFETY: as above.
        assert_eq!(unsafe { image_units(w.as_ptr().cast(), 90) }, Err(CUDA_ERROR_INVALID_PTX));
    }
}
