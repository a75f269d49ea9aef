//! Where in the program a launch was made, for `warpsim exec --check` and its reports: the
//! first frame of the host call stack outside warpsim's libraries (this driver and the
//! runtime that defines `cudaLaunchKernel`) and nvcc's launch stubs (`__device_stub__*`,
//! `__cudaLaunchKernel_helper`, the host function named as the kernel), as
//! `function (file:line)`, the line when the program has debug info (`-g`).
//!
//! Only when the checkers or a report are on ([`WANTED`]): the stack walk (glibc's
//! `backtrace`) costs microseconds a launch; naming a stack reads the program's symbols and
//! line tables (std's backtrace), once per distinct stack. A stack entering from Python
//! (through libffi) has no C call site worth naming: none is given.

use std::collections::HashMap;
use std::ffi::{c_int, c_void, CStr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

/// Whether launches record their call site (set when the driver starts).
pub static WANTED: AtomicBool = AtomicBool::new(false);

/// The program's part of a launch's call stack: return addresses, innermost first.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stack(Vec<usize>);

/// Frames walked, and frames of the program kept.
const DEPTH: usize = 64;
const KEEP: usize = 12;

/// The base address of the object holding code address `p`.
fn object_of(p: usize) -> Option<(usize, String)> {
    let mut info: libc::Dl_info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr only reads the loader's tables and writes `info`.
    if unsafe { libc::dladdr(p as *const c_void, &mut info) } == 0 {
        return None;
    }
    let name = if info.dli_fname.is_null() {
        String::new()
    } else {
        // SAFETY: the loader's NUL-terminated file name.
        unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned()
    };
    Some((info.dli_fbase as usize, name))
}

/// The objects whose frames are warpsim's: this driver and the runtime over it.
fn ours() -> &'static [usize] {
    static OURS: OnceLock<Vec<usize>> = OnceLock::new();
    OURS.get_or_init(|| {
        let mut v: Vec<usize> = object_of(capture as *const () as usize).map(|o| o.0).into_iter().collect();
        // SAFETY: a lookup by a NUL-terminated name in the global scope.
        let rt = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"cudaLaunchKernel".as_ptr()) };
        // SAFETY: the same for the program itself (a null name is the main program).
        let main = unsafe { libc::dlopen(std::ptr::null(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        let main_base = (!main.is_null()).then(|| object_of(main as usize)).flatten().map(|o| o.0);
        if let Some((base, _)) = (!rt.is_null()).then(|| object_of(rt as usize)).flatten() {
            if Some(base) != main_base {
                v.push(base);
            }
        }
        v
    })
}

/// This launch's call stack outside warpsim, when call sites are wanted.
pub fn capture() -> Option<Stack> {
    if !WANTED.load(Ordering::Relaxed) {
        return None;
    }
    let mut buf = [std::ptr::null_mut::<c_void>(); DEPTH];
    // SAFETY: glibc writes at most DEPTH addresses into `buf`.
    let n = unsafe { libc::backtrace(buf.as_mut_ptr(), DEPTH as c_int) }.clamp(0, DEPTH as c_int) as usize;
    let ours = ours();
    let mut ips = buf[..n].iter().map(|&p| p as usize).skip_while(|&ip| object_of(ip).is_none_or(|o| ours.contains(&o.0))).peekable();
    if ips.peek().and_then(|&ip| object_of(ip)).is_some_and(|(_, name)| name.rsplit('/').next().is_some_and(|f| f.starts_with("libffi"))) {
        return None;
    }
    let ips: Vec<usize> = ips.take(KEEP).collect();
    (!ips.is_empty()).then_some(Stack(ips))
}

/// One frame of std's full backtrace text: its address and its symbols (innermost inlined
/// function first), each with `file:line:col` when known.
#[derive(Debug, PartialEq)]
struct Frame {
    ip: usize,
    symbols: Vec<(String, Option<String>)>,
}

/// Reads `{:#}` of a `std::backtrace::Backtrace`: `  N:     0xADDR - NAME` lines (an inlined
/// function is a frame of the caller's address; older std wrote it as a `  - NAME` line),
/// each followed by `at FILE:LINE:COL` when known.
fn parse(text: &str) -> Vec<Frame> {
    let mut frames: Vec<Frame> = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(at) = t.strip_prefix("at ") {
            if let Some(s) = frames.last_mut().and_then(|f| f.symbols.last_mut()) {
                s.1 = Some(at.to_string());
            }
            continue;
        }
        if let Some(name) = t.strip_prefix("- ") {
            if let Some(f) = frames.last_mut() {
                f.symbols.push((name.trim().to_string(), None));
            }
            continue;
        }
        let (head, name) = match t.split_once(" - ") {
            Some((h, n)) => (h.trim(), n.trim().to_string()),
            None => (t.trim(), String::from("<unknown>")),
        };
        match head.split_once(':') {
            Some((index, ip)) if index.chars().all(|c| c.is_ascii_digit()) && !index.is_empty() => {
                let ip = usize::from_str_radix(ip.trim().trim_start_matches("0x"), 16).unwrap_or(0);
                frames.push(Frame { ip, symbols: vec![(name, None)] });
            }
            _ => {}
        }
    }
    frames
}

/// Whether a symbol (its name, mangled or not, and place) is nvcc's launch machinery for
/// `kernel` rather than the program's code: the stubs nvcc writes (`__device_stub__*`, in a
/// `*.cudafe1.stub.c`), the runtime header's helpers (`__cuda*`), the host function named as
/// the kernel.
fn is_stub(name: &str, at: Option<&str>, kernel: &str) -> bool {
    let d = demangle(name);
    d.starts_with("__device_stub__")
        || d.starts_with("__cuda")
        || name == kernel
        || name == "<unknown>"
        || at.is_some_and(|a| a.contains(".cudafe1."))
}

/// A C++ name demangled (others as they are).
fn demangle(name: &str) -> String {
    if !name.starts_with("_Z") {
        return name.to_string();
    }
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|s| s.demangle(&cpp_demangle::DemangleOptions::default()).ok())
        .unwrap_or_else(|| name.to_string())
}

/// `FILE:LINE` of `FILE:LINE:COL`, relative to the working directory when under it.
fn short_location(at: &str, cwd: Option<&str>) -> String {
    let mut parts: Vec<&str> = at.rsplitn(3, ':').collect();
    parts.reverse();
    let (file, line) = match parts.as_slice() {
        [f, l, c] if l.parse::<u32>().is_ok() && c.parse::<u32>().is_ok() => (*f, *l),
        [f, l] if l.parse::<u32>().is_ok() => (*f, *l),
        _ => return at.to_string(),
    };
    let file = cwd.and_then(|c| file.strip_prefix(c)).map(|f| f.trim_start_matches('/')).unwrap_or(file);
    let file = file.strip_prefix("./").unwrap_or(file);
    format!("{file}:{line}")
}

/// The first program frame of `stack` in `frames`, past nvcc's stubs for `kernel`.
fn site_in(frames: &[Frame], stack: &Stack, kernel: &str, cwd: Option<&str>) -> Option<String> {
    for &ip in &stack.0 {
        // Functions inlined at `ip` come as frames of the same address, innermost first.
        let symbols = frames.iter().filter(|f| f.ip == ip).flat_map(|f| &f.symbols);
        if let Some((name, at)) = symbols.into_iter().find(|(n, at)| !is_stub(n, at.as_deref(), kernel)) {
            let name = demangle(name);
            return Some(match at {
                Some(at) => format!("{name} ({})", short_location(at, cwd)),
                None => name,
            });
        }
    }
    None
}

/// Call sites named so far, by (stack, kernel).
type Names = HashMap<(Stack, String), Option<String>>;

/// The call site of a launch of `kernel` made from `stack`, named once per stack. Call it on
/// the thread that captured `stack`, deeper in the same calls.
pub fn name(stack: &Stack, kernel: &str) -> Option<String> {
    static NAMED: Mutex<Option<Names>> = Mutex::new(None);
    let key = (stack.clone(), kernel.to_string());
    let mut g = NAMED.lock().unwrap_or_else(|e| e.into_inner());
    let cache = g.get_or_insert_with(HashMap::new);
    if let Some(s) = cache.get(&key) {
        return s.clone();
    }
    let text = format!("{:#}", std::backtrace::Backtrace::force_capture());
    let cwd = std::env::current_dir().ok().map(|c| c.to_string_lossy().into_owned());
    let site = site_in(&parse(&text), stack, kernel, cwd.as_deref());
    cache.insert(key, site.clone());
    site
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "   0:     0x7f00000010 - std::backtrace::Backtrace::create
                               at /rustc/x/library/std/src/backtrace.rs:331:13
   1:     0x55000000a0 - __cudaLaunchKernel_helper
                               at /usr/include/crt/host_runtime.h:40:5
   2:     0x55000000a0 - _Z21__device_stub__Z4racyPiPi
                               at /tmp/tmpxft_0001-6_racy.cudafe1.stub.c:14:1
                             - _Z4racyPi
                               at /tmp/p/racy.cu:3:1
   3:     0x55000000a0 - _Z6launchi
                               at /tmp/p/racy.cu:20:3
   4:     0x55000000b0 - main
                               at /tmp/p/racy.cu:30:3
   5:     0x55000000c0 - <unknown>
";

    #[test]
    fn the_site_is_the_first_program_symbol_past_the_stubs() {
        let frames = parse(TEXT);
        assert_eq!(frames.len(), 6);
        assert_eq!(frames[2].ip, 0x55000000a0);
        assert_eq!(frames[2].symbols.len(), 2);
        assert_eq!(frames[3].symbols[0], ("_Z6launchi".into(), Some("/tmp/p/racy.cu:20:3".into())));
        let stack = Stack(vec![0x55000000a0, 0x55000000b0]);
        assert_eq!(site_in(&frames, &stack, "_Z4racyPi", Some("/tmp/p")), Some("launch(int) (racy.cu:20)".into()));
        assert_eq!(site_in(&frames, &stack, "_Z4racyPi", None), Some("launch(int) (/tmp/p/racy.cu:20)".into()));
        // Past frames warpsim does not know the stack never looks.
        assert_eq!(site_in(&frames, &Stack(vec![0x55000000b0]), "_Z4racyPi", None), Some("main (/tmp/p/racy.cu:30)".into()));
        assert_eq!(site_in(&frames, &Stack(vec![0x55000000c0]), "_Z4racyPi", None), None);
    }

    #[test]
    fn a_symbol_without_a_line_is_named_alone() {
        let frames = parse("   0:     0x10 - _Z3runv\n   1:     0x20 - main\n");
        assert_eq!(site_in(&frames, &Stack(vec![0x10, 0x20]), "k", None), Some("run()".into()));
    }
}
