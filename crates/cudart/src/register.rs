//! What nvcc's host code registers before `main`: each translation unit's fatbin
//! (`__cudaRegisterFatBinary`), its kernels by host stub (`__cudaRegisterFunction`) and its
//! `__device__` / `__constant__` variables by host shadow (`__cudaRegisterVar`). Nothing is
//! loaded then: the first launch or symbol copy that needs an image hands its fatbin to the
//! driver (`cuModuleLoadData`) in the current context, so a program pays only for what it uses.
//!
//! `-rdc` programs register once for the whole program: nvcc's device-link stub
//! (`crt/link.stub`) collects each translation unit's `__cudaRegisterLinkedBinary_ID` call,
//! then registers a version-2 wrapper (`fatbinary_section.h`: `FATBINC_LINK_VERSION`) whose
//! fatbin is nvlink's device-linked code and whose `filename_or_fatbins` is the
//! NULL-terminated array of the units' relocatable fatbins (`__nv_relfatbin`), then runs each
//! unit's registration callback with that one handle. The runtime links those fatbins with the
//! driver's JIT linker (`cuLinkCreate`, `cuLinkAddData(CU_JIT_INPUT_FATBINARY)`,
//! `cuLinkComplete`) and loads the result.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::{Mutex, MutexGuard};

use crate::context;
use crate::driver::{cu, CUdeviceptr, Handle};
use crate::error::{entry_points, Error, INVALID_DEVICE_FUNCTION, INVALID_RESOURCE_HANDLE, INVALID_SYMBOL, INVALID_VALUE};

/// `__fatBinC_Wrapper_t`'s magic: `{u32 magic, u32 version, const void* data, void* filename_or_fatbins}`.
const WRAPPER_MAGIC: u32 = 0x466243B1;
/// `FATBINC_LINK_VERSION`: `filename_or_fatbins` is the array of prelinked fatbins.
const WRAPPER_LINK_VERSION: u32 = 2;
/// `CU_JIT_INPUT_FATBINARY`.
const JIT_INPUT_FATBINARY: c_int = 2;

struct Image {
    /// The image given to the driver: the wrapper's fatbin, or what was registered if it is no wrapper.
    data: usize,
    /// A version-2 wrapper's prelinked fatbins (one per `-rdc` translation unit), linked at load.
    prelinked: Vec<usize>,
    /// Loaded modules by (device, generation).
    modules: Vec<((i32, u64), usize)>,
}

struct Function {
    image: usize,
    name: CString,
}

struct Variable {
    image: usize,
    name: CString,
    /// For a `__managed__` variable: where the host code keeps its address.
    managed_slot: Option<usize>,
}

#[derive(Default)]
struct Registry {
    images: Vec<Option<Image>>,
    functions: HashMap<usize, Function>,
    variables: HashMap<usize, Variable>,
    /// CUfunction by (host stub, device, generation).
    loaded: HashMap<(usize, i32, u64), usize>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn registry() -> MutexGuard<'static, Option<Registry>> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

fn with<T>(f: impl FnOnce(&mut Registry) -> T) -> T {
    f(registry().get_or_insert_with(Registry::default))
}

/// Runs `f` on the registry in the current context (made current first), with the context's
/// (device, generation), the key its loaded modules and functions go by.
fn in_context<T>(f: impl FnOnce(&mut Registry, (i32, u64)) -> Result<T, Error>) -> Result<T, Error> {
    let key = (context::ensure()?, context::generation());
    with(|r| f(r, key))
}

/// The image index a fatbin handle stands for.
///
/// # Safety
/// `handle` is null or what [`__warpsim___cudaRegisterFatBinary`] returned.
unsafe fn image_of(handle: *mut *mut c_void) -> Option<usize> {
    // SAFETY: a handle points at the leaked index written when it was made.
    (!handle.is_null()).then(|| unsafe { *(handle as *const usize) })
}

/// The image and device-side name a kernel or variable registration names (`None` for a null
/// handle or name, which registers nothing).
///
/// # Safety
/// `handle` is null or a fatbin handle; `device_name` is null or NUL-terminated.
unsafe fn registered_name(handle: *mut *mut c_void, device_name: *const c_char) -> Option<(usize, CString)> {
    // SAFETY: as the caller promises.
    let image = unsafe { image_of(handle) }?;
    // SAFETY: NUL-terminated, as the caller promises.
    (!device_name.is_null()).then(|| (image, unsafe { CStr::from_ptr(device_name) }.to_owned()))
}

/// # Safety
/// `fat_cubin` is what nvcc's host code passes: a fatbin wrapper in the program's data.
#[no_mangle]
pub unsafe extern "C" fn __warpsim___cudaRegisterFatBinary(fat_cubin: *mut c_void) -> *mut *mut c_void {
    let r = std::panic::catch_unwind(|| {
        let mut data = fat_cubin as usize;
        let mut prelinked = Vec::new();
        if !fat_cubin.is_null() {
            // SAFETY: a wrapper starts with its u32 magic and version; its data pointer and
            // (version 2) the NULL-terminated fatbin array follow, as fatbinary_section.h lays
            // them out.
            unsafe {
                let w = fat_cubin as *const u32;
                if w.read_unaligned() == WRAPPER_MAGIC {
                    data = (fat_cubin as *const u8).add(8).cast::<usize>().read_unaligned();
                    if w.add(1).read_unaligned() == WRAPPER_LINK_VERSION {
                        let mut at = (fat_cubin as *const u8).add(16).cast::<*const usize>().read_unaligned();
                        while !at.is_null() && at.read_unaligned() != 0 {
                            prelinked.push(at.read_unaligned());
                            at = at.add(1);
                        }
                    }
                }
            }
        }
        let index = with(|r| {
            r.images.push(Some(Image { data, prelinked, modules: Vec::new() }));
            r.images.len() - 1
        });
        Box::into_raw(Box::new(index)) as *mut *mut c_void
    });
    r.unwrap_or(std::ptr::null_mut())
}

/// # Safety
/// `handle` is what `__cudaRegisterFatBinary` returned.
#[no_mangle]
pub unsafe extern "C" fn __warpsim___cudaRegisterFatBinaryEnd(_handle: *mut *mut c_void) {}

/// Forgets an image at exit. Its modules go with the context; the driver may be shutting down,
/// so nothing is asked of it.
///
/// # Safety
/// `handle` is what `__cudaRegisterFatBinary` returned.
#[no_mangle]
pub unsafe extern "C" fn __warpsim___cudaUnregisterFatBinary(handle: *mut *mut c_void) {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: as the caller promises.
        let Some(i) = (unsafe { image_of(handle) }) else { return };
        with(|r| {
            if let Some(slot) = r.images.get_mut(i) {
                *slot = None;
            }
            r.functions.retain(|_, f| f.image != i);
            r.variables.retain(|_, v| v.image != i);
            r.loaded.clear();
        });
    });
}

/// # Safety
/// `device_name` is a NUL-terminated string; the other pointers are nvcc's and unused.
#[no_mangle]
pub unsafe extern "C" fn __warpsim___cudaRegisterFunction(
    handle: *mut *mut c_void,
    host_fun: *const c_char,
    _device_fun: *mut c_char,
    device_name: *const c_char,
    _thread_limit: c_int,
    _tid: *mut c_void,
    _bid: *mut c_void,
    _block_dim: *mut c_void,
    _grid_dim: *mut c_void,
    _warp_size: *mut c_int,
) {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: as the caller promises.
        let Some((image, name)) = (unsafe { registered_name(handle, device_name) }) else { return };
        with(|r| r.functions.insert(host_fun as usize, Function { image, name }));
    });
}

/// `__cudaRegisterVar` and `__cudaRegisterManagedVar`, which share one C signature but for
/// the type of the host-side pointer: `(handle, host, device address, device name, ext, size,
/// constant, global)`. `$body` sees `$handle`, `$host` and `$name`; the rest are unused.
macro_rules! register_var_entry {
    ($(#[$attr:meta])* fn $f:ident($handle:ident, $host:ident: $host_ty:ty, $name:ident) $body:block) => {
        $(#[$attr])*
        #[no_mangle]
        pub unsafe extern "C" fn $f(
            $handle: *mut *mut c_void,
            $host: $host_ty,
            _device_address: *mut c_char,
            $name: *const c_char,
            _ext: c_int,
            _size: usize,
            _constant: c_int,
            _global: c_int,
        ) $body
    };
}

register_var_entry! {
    /// # Safety
    /// `device_name` is a NUL-terminated string; `host_var` is the variable's host shadow.
    fn __warpsim___cudaRegisterVar(handle, host_var: *mut c_char, device_name) {
        // SAFETY: as the caller promises.
        unsafe { register_variable(handle, host_var as usize, device_name, None) }
    }
}

/// Registers a variable by its host key (the shadow's address, or the managed slot's).
///
/// # Safety
/// `handle` is a fatbin handle; `device_name` is null or NUL-terminated.
unsafe fn register_variable(handle: *mut *mut c_void, key: usize, device_name: *const c_char, managed_slot: Option<usize>) {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: as the caller promises.
        let Some((image, name)) = (unsafe { registered_name(handle, device_name) }) else { return };
        if key != 0 {
            with(|r| r.variables.insert(key, Variable { image, name, managed_slot }));
        }
    });
}

register_var_entry! {
    /// A `__managed__` variable: the host code reads its address from `*host_var_slot`, which
    /// `__cudaInitModule` fills in.
    ///
    /// # Safety
    /// `device_name` is a NUL-terminated string; `host_var_slot` is the host code's pointer slot.
    fn __warpsim___cudaRegisterManagedVar(handle, host_var_slot: *mut *mut c_void, device_name) {
        let slot = host_var_slot as usize;
        // SAFETY: as the caller promises.
        unsafe { register_variable(handle, slot, device_name, Some(slot)) }
    }
}

/// Loads an image and points the host code's slot of each of its `__managed__` variables at
/// the variable (the host code calls this before its first use of one). The driver must give
/// those variables memory the host can touch (CU_POINTER_ATTRIBUTE_IS_MANAGED); where it does
/// not, warpsim says so and the slots stay null. Returns 1 when every slot is set.
///
/// # Safety
/// `handle` is what `__cudaRegisterFatBinary` returned.
#[no_mangle]
pub unsafe extern "C" fn __warpsim___cudaInitModule(handle: *mut *mut c_void) -> c_char {
    let r = std::panic::catch_unwind(|| -> Result<(), Error> {
        // SAFETY: as the caller promises.
        let image = unsafe { image_of(handle) }.ok_or(Error(INVALID_VALUE))?;
        let (managed, m) = in_context(|r, key| {
            let managed: Vec<(CString, usize)> =
                r.variables.values().filter(|v| v.image == image).filter_map(|v| Some((v.name.clone(), v.managed_slot?))).collect();
            Ok((managed, module(r, image, key)?))
        })?;
        for (name, slot) in managed {
            let (mut p, mut size) = (0, 0);
            cu!(cuModuleGetGlobal_v2(&mut p, &mut size, m, name.as_ptr()))?;
            let mut is_managed: c_int = 0;
            let host_visible = cu!(cuPointerGetAttribute((&mut is_managed as *mut c_int).cast(), 8, p)).is_ok() && is_managed != 0;
            if !host_visible {
                eprintln!(
                    "warpsim: `__managed__` variable `{}` got no host memory from the driver \
                     (its address range could not be reserved); allocate it with cudaMallocManaged instead",
                    name.to_string_lossy()
                );
                return Err(Error(crate::error::NOT_SUPPORTED));
            }
            // SAFETY: the slot is the host code's `T*` for this variable, registered by nvcc's code.
            unsafe { (slot as *mut usize).write(p as usize) };
        }
        Ok(())
    });
    matches!(r, Ok(Ok(()))) as c_char
}

/// Forgets every loaded module and function (`cudaDeviceReset` destroys them with the context).
pub fn forget_modules() {
    with(|r| {
        r.loaded.clear();
        for img in r.images.iter_mut().flatten() {
            img.modules.clear();
        }
    });
}

/// The module of `image` in the current context, loading it the first time.
fn module(r: &mut Registry, image: usize, key: (i32, u64)) -> Result<Handle, Error> {
    let img = r.images.get_mut(image).and_then(Option::as_mut).ok_or(Error(INVALID_DEVICE_FUNCTION))?;
    if let Some(&(_, m)) = img.modules.iter().find(|(k, _)| *k == key) {
        return Ok(m as Handle);
    }
    let mut m: Handle = std::ptr::null_mut();
    if img.prelinked.is_empty() {
        cu!(cuModuleLoadData(&mut m, img.data as *const c_void))?;
    } else {
        m = link_and_load(&img.prelinked)?;
    }
    img.modules.push((key, m as usize));
    Ok(m)
}

/// The bytes of the fatbin at `p`, from its header (`u16 header_size` at 6, `u64 files_size` at 8).
///
/// # Safety
/// `p` points at a fatbin.
unsafe fn fatbin_len(p: usize) -> usize {
    // SAFETY: a fatbin header is 16 bytes.
    unsafe {
        let header = (p as *const u8).add(6).cast::<u16>().read_unaligned() as usize;
        let files = (p as *const u8).add(8).cast::<u64>().read_unaligned() as usize;
        header.saturating_add(files)
    }
}

/// Links the relocatable fatbins of a `-rdc` program with the driver's JIT linker and loads
/// the result as one module.
fn link_and_load(fatbins: &[usize]) -> Result<Handle, Error> {
    let mut state: Handle = std::ptr::null_mut();
    cu!(cuLinkCreate_v2(0, std::ptr::null_mut(), std::ptr::null_mut(), &mut state))?;
    let linked = (|| {
        for (i, &f) in fatbins.iter().enumerate() {
            let name = CString::new(format!("relocatable fatbin {} of {}", i + 1, fatbins.len())).unwrap_or_default();
            // SAFETY: `f` is one of the program's fatbins, whose header gives its length.
            let len = unsafe { fatbin_len(f) };
            let (n, o, v) = (0, std::ptr::null_mut(), std::ptr::null_mut());
            cu!(cuLinkAddData_v2(state, JIT_INPUT_FATBINARY, f as *mut c_void, len, name.as_ptr(), n, o, v))?;
        }
        let (mut blob, mut size): (*mut c_void, usize) = (std::ptr::null_mut(), 0);
        cu!(cuLinkComplete(state, &mut blob, &mut size))?;
        let mut m: Handle = std::ptr::null_mut();
        cu!(cuModuleLoadData(&mut m, blob))?;
        Ok(m)
    })();
    let _ = cu!(cuLinkDestroy(state));
    linked
}

/// The driver's function for a kernel's host stub, in the current context.
pub fn function(host_fun: *const c_void) -> Result<Handle, Error> {
    in_context(|r, (dev, generation)| {
        let key = (host_fun as usize, dev, generation);
        if let Some(&f) = r.loaded.get(&key) {
            return Ok(f as Handle);
        }
        let (image, name) = match r.functions.get(&(host_fun as usize)) {
            Some(f) => (f.image, f.name.clone()),
            // What CUDA 13 answers for a pointer that is no kernel (recorded on the H200:
            // tests/programs/h200/runtime_api.stdout).
            None => return Err(Error(INVALID_RESOURCE_HANDLE)),
        };
        let m = module(r, image, (dev, generation))?;
        let mut f: Handle = std::ptr::null_mut();
        cu!(cuModuleGetFunction(&mut f, m, name.as_ptr()))?;
        r.loaded.insert(key, f as usize);
        Ok(f)
    })
}

/// A registered variable's device address and size, in the current context.
pub fn symbol(host_var: *const c_void) -> Result<(CUdeviceptr, usize), Error> {
    in_context(|r, key| {
        let v = r.variables.get(&(host_var as usize)).ok_or(Error(INVALID_SYMBOL))?;
        let (image, name) = (v.image, v.name.clone());
        let m = module(r, image, key)?;
        let (mut p, mut size) = (0, 0);
        cu!(cuModuleGetGlobal_v2(&mut p, &mut size, m, name.as_ptr())).map_err(|_| Error(INVALID_SYMBOL))?;
        Ok((p, size))
    })
}

/// `symbol`'s range `[offset, offset + count)`, checked.
pub fn symbol_range(host_var: *const c_void, count: usize, offset: usize) -> Result<CUdeviceptr, Error> {
    let (p, size) = symbol(host_var)?;
    match offset.checked_add(count) {
        Some(end) if end <= size => Ok(p + offset as u64),
        _ => Err(Error(INVALID_VALUE)),
    }
}

entry_points! {
    /// Also `cudaGetKernel`.
    ///
    /// # Safety
    /// `kernel` is null or writable; `host_fun` is any value.
    fn __warpsim___cudaGetKernel(kernel: *mut *mut c_void, host_fun: *const c_void) -> kernel {
        if !with(|r| r.functions.contains_key(&(host_fun as usize))) {
            return Err(Error(INVALID_DEVICE_FUNCTION));
        }
        // The runtime's kernel handle is the host stub itself: launches find it the same way.
        Ok(host_fun.cast_mut())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nvcc's `-rdc` link stub registers a version-2 wrapper: its fatbin and the
    /// NULL-terminated list of prelinked fatbins are both kept; a version-1 wrapper has no list.
    #[test]
    fn a_version_2_wrapper_keeps_its_prelinked_fatbins() {
        let (data, a, b) = ([1u8; 16], [2u8; 16], [3u8; 16]);
        let list = [a.as_ptr() as usize, b.as_ptr() as usize, 0];
        let wrapper = |version: u32| {
            let mut w = WRAPPER_MAGIC.to_le_bytes().to_vec();
            w.extend_from_slice(&version.to_le_bytes());
            w.extend_from_slice(&(data.as_ptr() as u64).to_le_bytes());
            w.extend_from_slice(&(list.as_ptr() as u64).to_le_bytes());
            w
        };
        for (version, want) in [(2, vec![list[0], list[1]]), (1, vec![])] {
            let mut w = wrapper(version);
            // SAFETY: a wrapper whose pointers are live for the call.
            let handle = unsafe { __warpsim___cudaRegisterFatBinary(w.as_mut_ptr().cast()) };
            // SAFETY: the handle just made.
            let i = unsafe { image_of(handle) }.unwrap();
            let (d, p) = with(|r| r.images[i].as_ref().map(|img| (img.data, img.prelinked.clone())).unwrap());
            assert_eq!((d, p), (data.as_ptr() as usize, want), "version {version}");
            // SAFETY: as above.
            unsafe { __warpsim___cudaUnregisterFatBinary(handle) };
        }
    }
}
