//! Test helpers for the exec handlers: a bare 32-lane warp to call handlers
//! on directly, a block's worth of memory to give them, and one-block runs of
//! small PTX kernels for what needs a whole launch.

use super::*;
use crate::launch::{alloc_module_globals, launch, LaunchArgs, LaunchConfig, LaunchError, LaunchInput, LaunchStats};

pub const FULL: u64 = 0xFFFF_FFFF;

/// A 32-lane warp with zeroed registers, all lanes present, one stack entry at pc 0.
pub fn bare(n32: u32, n64: u32, npred: u32) -> Warp<32> {
    bare_of::<32>(n32, n64, npred)
}

/// [`bare`] with `W` lanes.
pub fn bare_of<const W: usize>(n32: u32, n64: u32, npred: u32) -> Warp<W> {
    let all = u64::MAX >> (64 - W);
    Warp {
        index: 0,
        r32: vec![0; n32 as usize * W],
        r64: vec![0; n64 as usize * W],
        preds: vec![0; npred as usize],
        stack: vec![StackEntry { pc: 0, mask: all, rpc: NO_RECONV }],
        present: all,
        exited: 0,
        local: Vec::new(),
        state: WarpState::Ready,
        past_end: Vec::new(),
        printed: String::new(),
        calls: Vec::new(),
    }
}

pub use crate::rng::numbers;

/// Sets 32-bit register `slot` of every lane to `f(lane)`.
pub fn fill32(w: &mut Warp<32>, slot: u32, f: impl Fn(usize) -> u32) {
    for l in 0..32 {
        w.r32[slot as usize * 32 + l] = f(l);
    }
}

/// Register `slot`'s 32 lanes.
pub fn col(w: &Warp<32>, slot: u32) -> Vec<u32> {
    w.r32[slot as usize * 32..][..32].to_vec()
}

/// What a warp's handlers need from a block: a kernel, global and shared memory, counters.
pub struct Block {
    pub kernel: Kernel,
    pub gmem: GlobalMemory,
    pub shared: Vec<u8>,
    pub params: Vec<u8>,
    clock: u64,
    budget: u64,
    warp_insts: u64,
    thread_insts: u64,
}

impl Block {
    pub fn new(shared_bytes: usize) -> Self {
        let prog = warpsim_ir::compile_kernel("t.ptx", &kernel_src(".param .u64 p0", "ret;"), "k").unwrap();
        let kernel = prog.kernel("k").unwrap().clone();
        Block {
            kernel,
            gmem: GlobalMemory::new(),
            shared: vec![0; shared_bytes],
            params: Vec::new(),
            clock: 0,
            budget: 1 << 20,
            warp_insts: 0,
            thread_insts: 0,
        }
    }

    /// Clock, budget, warp and thread instructions so far.
    pub fn counters(&self) -> [u64; 4] {
        [self.clock, self.budget, self.warp_insts, self.thread_insts]
    }

    pub fn ctx(&mut self) -> WarpCtx<'_> {
        WarpCtx {
            kernel: &self.kernel,
            gmem: &self.gmem,
            shared: &mut self.shared,
            params: &self.params,
            clock: &mut self.clock,
            budget: &mut self.budget,
            budget_limit: 1 << 20,
            serve_past_end: true,
            warp_instructions: &mut self.warp_insts,
            thread_instructions: &mut self.thread_insts,
            local_bytes: self.kernel.local_bytes,
            stack_size: 1024,
        }
    }
}

pub const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

fn kernel_src(params: &str, body: &str) -> String {
    format!("{HEAD}.visible .entry k({params})\n{{\n{body}\n}}\n")
}

/// A module of `items` (functions, variables) and kernel `k(.param .u64 p0)`
/// in which each thread runs `body`, with `%r1` = `%tid.x`, `%rd1` = `p0` and
/// `%p<4>`, `%r<8>`, `%rd<10>` declared, then stores 32-bit register `out`
/// at word `%tid.x` of `p0`.
pub fn per_thread(items: &str, body: &str, out: &str) -> String {
    format!(
        "{HEAD}{items}.visible .entry k(.param .u64 p0)
{{
    .reg .pred %p<4>; .reg .b32 %r<8>; .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [p0];
    mov.u32 %r1, %tid.x;
{body}
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], {out};
    ret;
}}
"
    )
}

/// A finished one-block launch of a test kernel.
pub struct Run {
    pub mem: GlobalMemory,
    pub bufs: Vec<u64>,
    pub result: Result<LaunchStats, LaunchError>,
}

impl Run {
    pub fn u32s(&self, buf: usize, n: usize) -> Vec<u32> {
        let mut b = vec![0u8; n * 4];
        self.mem.read(self.bufs[buf], &mut b).unwrap();
        b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
    }

    /// The fault the launch stopped with.
    pub fn fault(&self) -> &crate::fault::KernelFault {
        match &self.result {
            Err(LaunchError::Fault(f)) => f,
            r => panic!("expected a fault, got {r:?}"),
        }
    }
}

/// Runs kernel `k(.param .u64 p0, p1, ...)` with `body`, one block of
/// `threads`, one zeroed global buffer of `bytes` per entry of `bufs` (buffer
/// `i` is parameter `p{i}`), `init` written into buffer 0.
pub fn run(body: &str, threads: u32, bufs: &[u64], init: &[u32]) -> Run {
    let params = (0..bufs.len()).map(|i| format!(".param .u64 p{i}")).collect::<Vec<_>>().join(", ");
    run_src(&kernel_src(&params, body), threads, bufs, init)
}

/// [`run`] of a whole module `src` whose kernel `k` takes one `.u64` buffer address per entry of `bufs`.
pub fn run_src(src: &str, threads: u32, bufs: &[u64], init: &[u32]) -> Run {
    run_src_edited(src, threads, bufs, init, |_| {})
}

/// [`run_src`] with kernel `k` changed by `edit` after lowering.
pub fn run_src_edited(src: &str, threads: u32, bufs: &[u64], init: &[u32], edit: impl FnOnce(&mut Kernel)) -> Run {
    let mut prog = warpsim_ir::compile_kernel("t.ptx", src, "k").unwrap_or_else(|e| panic!("{e}"));
    if let Some(k) = prog.kernels.iter_mut().find(|k| k.name == "k") {
        edit(k);
    }
    let k = prog.kernel("k").unwrap();
    let mut mem = GlobalMemory::new();
    let globals = alloc_module_globals(&prog, &mut mem);
    let mut param_bytes = Vec::new();
    let mut addrs = Vec::new();
    for (i, &n) in bufs.iter().enumerate() {
        let a = mem.alloc(&format!("b{i}"), n, None);
        addrs.push(a);
        param_bytes.extend_from_slice(&a.to_le_bytes());
    }
    let bytes: Vec<u8> = init.iter().flat_map(|v| v.to_le_bytes()).collect();
    if !bytes.is_empty() {
        mem.write(addrs[0], &bytes).unwrap();
    }
    let cfg = LaunchConfig { block: [threads, 1, 1], ..Default::default() };
    let input = LaunchInput { program: &prog, kernel: k, mem: &mem, globals: &globals, params: &param_bytes };
    let result = launch(&LaunchArgs { input, cfg: &cfg });
    Run { mem, bufs: addrs, result }
}
