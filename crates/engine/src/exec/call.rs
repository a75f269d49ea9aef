//! Real calls: a per-thread call stack for functions that lowering did not
//! inline (recursion, function pointers, call trees too large to inline).
//!
//! A call pushes, for its lanes, a SIMT stack entry at the callee's first
//! instruction (reconvergence pc [`CALL_RPC`], which no pc reaches, so only
//! the callee's `ret` ends it and no schedule treats it as a sibling of the
//! caller's entry) and a [`CallRecord`]: where to return, the caller's frame
//! pointer, and the callee's registers as they were (restored on return, so
//! a recursive call leaves its caller's values). The callee's `.param` and
//! `.local` variables live in a fresh frame of each lane's local memory past
//! the caller's; the frame-pointer registers address it. Records nest like
//! the SIMT stack, so lanes of a warp may be at different depths: a group
//! of lanes that diverged calls on its own, and the others wait below.
//! Lanes that exit inside a call leave its record; the record goes once all
//! its lanes have returned or exited.

use super::*;

/// The reconvergence pc of a callee's stack entry: never reached, so the
/// entry ends only at `ret`.
pub const CALL_RPC: u32 = u32::MAX - 1;

/// Bytes per frame beyond the callee's variables (return address and the
/// caller's frame pointer, as the GPU's ABI keeps them).
const FRAME_LINK: u32 = 16;

/// One call in progress for a group of lanes of a warp.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallRecord {
    /// The callee (index into the kernel's functions).
    func: u32,
    /// The `call` instruction (its result slots are the caller's side).
    site: u32,
    /// Index of the callee's entry in the SIMT stack.
    entry: usize,
    /// Lanes that have neither returned nor exited.
    pending: u64,
    caller_fp: u32,
    fp: u32,
    /// The callee's registers at the call, lane columns as in the warp.
    saved32: Vec<u32>,
    saved64: Vec<u64>,
    saved_pred: Vec<u64>,
}

/// Bytes a slot holds: a frame slot's size, a register's width.
fn slot_size(s: &CallSlot) -> u32 {
    match s {
        CallSlot::Frame { size, .. } => *size,
        CallSlot::Reg(r) => match r.bank {
            Bank::R64 => 8,
            Bank::R32 => 4,
            Bank::Pred => 1,
        },
    }
}

/// A value moving across a call, one lane's.
#[derive(Clone, Copy)]
enum Moved {
    /// From a register (up to 64 bits).
    Value(u64),
    /// Bytes already copied frame to frame.
    Done,
}

impl<const W: usize> Warp<W> {
    /// Lane `lane`'s frame pointer (0 in the kernel's own code).
    pub(super) fn frame_base(&self, ctx: &WarpCtx<'_>, lane: usize) -> u64 {
        match ctx.kernel.frame_regs {
            Some((r64, _)) => self.r64[r64 as usize * W + lane],
            None => 0,
        }
    }

    /// Lane `lane`'s local memory bytes `[off, off + n)`, allocated on first use.
    fn local_bytes_at(&mut self, ctx: &WarpCtx<'_>, lane: usize, off: u32, n: u32) -> Option<std::ops::Range<usize>> {
        let per_lane = ctx.local_bytes as usize;
        if self.local.len() < per_lane * W {
            self.local.resize(per_lane * W, 0);
        }
        let end = off.checked_add(n)? as usize;
        (end <= per_lane).then(|| lane * per_lane + off as usize..lane * per_lane + end)
    }

    fn set_frame_regs(&mut self, ctx: &WarpCtx<'_>, fp: u32, mask: u64) {
        if let Some((r64, r32)) = ctx.kernel.frame_regs {
            for l in lanes(mask) {
                self.r64[r64 as usize * W + l] = fp as u64;
                self.r32[r32 as usize * W + l] = fp;
            }
        }
    }

    /// Drops the records of calls whose lanes have all returned or exited.
    fn drop_finished_calls(&mut self) {
        while self.calls.last().is_some_and(|r| r.pending & !self.exited == 0) {
            self.calls.pop();
        }
    }

    /// Moves `size` bytes (the callee's side says how many) from `from` (at
    /// frame `from_fp`) to `to` (at `to_fp`) for `lane`; register writes are
    /// left to the caller (returned).
    #[allow(clippy::too_many_arguments)]
    fn move_slot(
        &mut self,
        ctx: &WarpCtx<'_>,
        lane: usize,
        from: &CallSlot,
        from_fp: u32,
        to: &CallSlot,
        to_fp: u32,
        size: u32,
    ) -> Result<Moved, FaultKind> {
        let oob =
            |off: u32, size: u32| FaultKind::OutOfBounds { space: FaultSpace::Local, access: MemAccessKind::Store, size, addr: off as u64 };
        match (from, to) {
            (CallSlot::Reg(r), CallSlot::Reg(_)) => Ok(Moved::Value(self.lane_value(*r, lane))),
            (CallSlot::Reg(r), CallSlot::Frame { off, .. }) => {
                let v = self.lane_value(*r, lane).to_le_bytes();
                let at = to_fp + off;
                let range = self.local_bytes_at(ctx, lane, at, size).ok_or_else(|| oob(at, size))?;
                let n = (size as usize).min(8);
                self.local[range.start..range.start + n].copy_from_slice(&v[..n]);
                Ok(Moved::Done)
            }
            (CallSlot::Frame { off, .. }, CallSlot::Reg(r)) => {
                let n = size.min(slot_size(to)).min(8);
                let _ = r;
                let at = from_fp + off;
                let range = self.local_bytes_at(ctx, lane, at, n).ok_or_else(|| oob(at, n))?;
                let mut b = [0u8; 8];
                b[..n as usize].copy_from_slice(&self.local[range]);
                Ok(Moved::Value(u64::from_le_bytes(b)))
            }
            (CallSlot::Frame { off: src, .. }, CallSlot::Frame { off: dst, .. }) => {
                let (a, b) = (from_fp + src, to_fp + dst);
                let s = self.local_bytes_at(ctx, lane, a, size).ok_or_else(|| oob(a, size))?;
                let d = self.local_bytes_at(ctx, lane, b, size).ok_or_else(|| oob(b, size))?;
                self.local.copy_within(s, d.start);
                Ok(Moved::Done)
            }
        }
    }

    /// `call`: each group of lanes with one callee enters it (a direct call
    /// has one group; an indirect one a group per distinct function address).
    pub(super) fn call<O: Observer>(
        &mut self,
        ctx: &WarpCtx<'_>,
        obs: &mut O,
        pc: u32,
        active: u64,
        exec: u64,
        site: &CallSite,
    ) -> Result<(), WarpFault> {
        let kernel: &Kernel = ctx.kernel;
        let funcs = &kernel.functions;
        let mut groups: Vec<(u32, u64)> = Vec::new();
        match site.target {
            CallTarget::Direct(f) => groups.push((f, exec)),
            CallTarget::Indirect(r) => {
                for l in lanes(exec) {
                    let addr = self.lane_value(r, l);
                    let Some(f) = funcs.iter().position(|f| f.addr == addr) else {
                        let what = format!("indirect call to {addr:#x}, which is not the address of a function of this module");
                        return Err(WarpFault::lane(pc, l, FaultKind::Unsupported(what)));
                    };
                    match groups.iter_mut().find(|g| g.0 == f as u32) {
                        Some(g) => g.1 |= 1 << l,
                        None => groups.push((f as u32, 1 << l)),
                    }
                }
            }
        }
        obs.branch(self.index, pc, exec, active & !exec);
        self.drop_finished_calls();
        let caller_fp = self.calls.last().map_or(0, |r| r.fp);
        let fp = (caller_fp.saturating_add(site.caller_frame)).div_ceil(16).saturating_mul(16).saturating_add(FRAME_LINK);
        // The first group is entered last, so that it runs first.
        for &(fi, mask) in groups.iter().rev() {
            let f = &funcs[fi as usize];
            let first = mask.trailing_zeros() as usize;
            if site.args.len() != f.params.len() || site.rets.len() != f.rets.len() {
                let what = format!(
                    "call of `{}` with {} arguments and {} results; it takes {} and {}",
                    f.name,
                    site.args.len(),
                    site.rets.len(),
                    f.params.len(),
                    f.rets.len()
                );
                return Err(WarpFault::lane(pc, first, FaultKind::Unsupported(what)));
            }
            if fp as u64 + f.frame_bytes as u64 > ctx.local_bytes as u64 {
                let depth = self.calls.iter().filter(|r| r.pending >> first & 1 != 0).count() as u32 + 1;
                return Err(WarpFault::lane(pc, first, FaultKind::StackOverflow { depth, stack_size: ctx.stack_size }));
            }
            // Arguments are read before the callee's registers are written.
            let mut moved = vec![Moved::Done; site.args.len() * W];
            for l in lanes(mask) {
                for (k, (from, to)) in site.args.iter().zip(&f.params).enumerate() {
                    moved[k * W + l] =
                        self.move_slot(ctx, l, from, caller_fp, to, fp, slot_size(to)).map_err(|e| WarpFault::lane(pc, l, e))?;
                }
            }
            let [(a32, b32), (a64, b64), (ap, bp)] = f.saved;
            let record = CallRecord {
                func: fi,
                site: pc,
                entry: self.stack.len(),
                pending: mask,
                caller_fp,
                fp,
                saved32: self.r32[a32 as usize * W..b32 as usize * W].to_vec(),
                saved64: self.r64[a64 as usize * W..b64 as usize * W].to_vec(),
                saved_pred: self.preds[ap as usize..bp as usize].to_vec(),
            };
            for (k, to) in f.params.iter().enumerate() {
                if let CallSlot::Reg(r) = to {
                    for l in lanes(mask) {
                        if let Moved::Value(v) = moved[k * W + l] {
                            self.put_lane(*r, l, v);
                        }
                    }
                }
            }
            self.set_frame_regs(ctx, fp, mask);
            self.calls.push(record);
            self.stack.push(StackEntry { pc: f.entry, mask, rpc: CALL_RPC });
        }
        Ok(())
    }

    /// `ret` of a called function: the lanes get their results and the
    /// caller's registers back and wait at the call site's next instruction.
    pub(super) fn ret<O: Observer>(&mut self, ctx: &WarpCtx<'_>, obs: &mut O, pc: u32, exec: u64) -> Result<(), WarpFault> {
        let kernel: &Kernel = ctx.kernel;
        self.drop_finished_calls();
        let Some(rec) = self.calls.pop() else {
            return Err(WarpFault::lane(
                pc,
                exec.trailing_zeros() as usize,
                FaultKind::Unsupported("`ret` with no call to return from".into()),
            ));
        };
        let back = exec & rec.pending;
        let f = &kernel.functions[rec.func as usize];
        let Op::Call(site) = &kernel.code[rec.site as usize].op else {
            return Err(WarpFault::warp(pc, FaultKind::Unsupported("a return to an instruction that is no call".into())));
        };
        obs.branch(self.index, pc, exec, 0);
        // Results: register values are read now, frame bytes copied now.
        let mut moved = vec![Moved::Done; site.rets.len() * W];
        for l in lanes(back) {
            for (k, (from, to)) in f.rets.iter().zip(&site.rets).enumerate() {
                moved[k * W + l] =
                    self.move_slot(ctx, l, from, rec.fp, to, rec.caller_fp, slot_size(from)).map_err(|e| WarpFault::lane(pc, l, e))?;
            }
        }
        // The callee's registers as they were at the call.
        let [(a32, _), (a64, _), (ap, _)] = f.saved;
        for (k, chunk) in rec.saved32.chunks_exact(W).enumerate() {
            write32::<W>(&mut self.r32, a32 + k as u32, chunk.try_into().unwrap(), back);
        }
        for (k, chunk) in rec.saved64.chunks_exact(W).enumerate() {
            write64::<W>(&mut self.r64, a64 + k as u32, chunk.try_into().unwrap(), back);
        }
        for (k, &p) in rec.saved_pred.iter().enumerate() {
            set_pred(&mut self.preds, ap + k as u32, p, back);
        }
        for (k, to) in site.rets.iter().enumerate() {
            match to {
                CallSlot::Reg(r) => {
                    for l in lanes(back) {
                        if let Moved::Value(v) = moved[k * W + l] {
                            self.put_lane(*r, l, v);
                        }
                    }
                }
                CallSlot::Frame { off, .. } if O::WANTS_MEMORY => {
                    // The result lands in the caller's frame, as a store there.
                    let size = slot_size(&f.rets[k]);
                    let addrs = [(rec.caller_fp + off) as u64; W];
                    obs.memory(self.index, pc, Space::Local, MemAccessKind::Store, size, &addrs, back);
                }
                CallSlot::Frame { .. } => {}
            }
        }
        self.set_frame_regs(ctx, rec.caller_fp, back);
        let from = rec.entry.min(self.stack.len());
        for e in &mut self.stack[from..] {
            e.mask &= !back;
        }
        let rest = rec.pending & !back;
        if rest & !self.exited != 0 {
            self.calls.push(CallRecord { pending: rest, ..rec });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use crate::fault::FaultKind;
    use crate::launch::{alloc_module_globals, launch, LaunchArgs, LaunchConfig, LaunchInput};
    use crate::memory::GlobalMemory;
    use crate::schedule::Schedule;
    use crate::LaunchError;

    /// nvcc's call of a one-argument function: `ret = func(arg)` through a
    /// block of `.param` frames (`call` is `call` or `call.uni`).
    fn call1(call: &str, func: &str, arg: &str, ret: &str) -> String {
        format!("    {{\n    .param .b32 a; .param .b32 b;\n    st.param.b32 [a], {arg};\n    {call} (b), {func}, (a);\n    ld.param.b32 {ret}, [b];\n    }}")
    }

    /// `fact(n)` by real recursion, `.param` frames as nvcc writes them.
    fn fact() -> String {
        format!(
            ".func (.param .b32 ret) fact(.param .b32 n)
{{
    .reg .pred %p<2>; .reg .b32 %r<6>;
    ld.param.u32 %r1, [n];
    setp.lt.s32 %p1, %r1, 2;
    mov.u32 %r5, 1;
    @%p1 bra DONE;
    add.s32 %r2, %r1, -1;
{}
    mul.lo.s32 %r5, %r3, %r1;
DONE:
    st.param.b32 [ret], %r5;
    ret;
}}
",
            call1("call.uni", "fact", "%r2", "%r3")
        )
    }

    /// `out[t] = fact(t % modulo)`.
    fn fact_kernel(modulo: u32) -> String {
        let body = format!("    rem.u32 %r2, %r1, {modulo};\n{}", call1("call.uni", "fact", "%r2", "%r3"));
        per_thread(&fact(), &body, "%r3")
    }

    #[test]
    fn recursion_runs_with_lanes_at_different_depths() {
        let r = run_src(&fact_kernel(13), 64, &[64 * 4], &[]);
        r.result.as_ref().unwrap();
        let want: Vec<u32> = (0..64u32).map(|t| (1..=(t % 13).max(1)).product()).collect();
        assert_eq!(r.u32s(0, 64), want);
    }

    /// [`run_src`] of `src` with `cfg` (one block of `threads`), its buffer 0 read back.
    fn run_with(src: &str, threads: u32, cfg: LaunchConfig) -> Result<Vec<u32>, LaunchError> {
        let prog = warpsim_ir::compile_kernel("t.ptx", src, "k").unwrap_or_else(|e| panic!("{e}"));
        let mut mem = GlobalMemory::new();
        let globals = alloc_module_globals(&prog, &mut mem);
        let out = mem.alloc("out", threads as u64 * 4, None);
        let cfg = LaunchConfig { block: [threads, 1, 1], ..cfg };
        let params = out.to_le_bytes();
        let input = LaunchInput { program: &prog, kernel: prog.kernel("k").unwrap(), mem: &mem, globals: &globals, params: &params };
        let args = LaunchArgs { input, cfg: &cfg };
        launch(&args)?;
        let mut b = vec![0u8; threads as usize * 4];
        mem.read(out, &mut b).unwrap();
        Ok(b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect())
    }

    #[test]
    fn independent_thread_scheduling_keeps_calls_apart() {
        // Random schedules reorder and split the lane groups inside the calls;
        // results stay those of the SIMT stack.
        let want: Vec<u32> = (0..64u32).map(|t| (1..=(t % 13).max(1)).product()).collect();
        for seed in 0..12 {
            let cfg = LaunchConfig { schedule: Schedule::Random { seed }, ..Default::default() };
            assert_eq!(run_with(&fact_kernel(13), 64, cfg).unwrap(), want, "seed {seed}");
        }
    }

    #[test]
    fn a_guarded_call_runs_for_its_lanes_only() {
        let src = fact_kernel(13).replace(
            "    st.param.b32 [a], %r2;\n    call.uni (b), fact, (a);\n    ld.param.b32 %r3, [b];\n    }\n    mul.wide",
            "    .reg .pred %q;\n    st.param.b32 [a], %r2;\n    st.param.b32 [b], 7;\n    setp.lt.u32 %q, %r1, 20;\n    @%q call.uni (b), fact, (a);\n    ld.param.b32 %r3, [b];\n    }\n    mul.wide",
        );
        assert_ne!(src, fact_kernel(13));
        let got = run_with(&src, 32, LaunchConfig::default()).unwrap();
        let want: Vec<u32> = (0..32u32).map(|t| if t < 20 { (1..=(t % 13).max(1)).product() } else { 7 }).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_larger_stack_holds_deeper_recursion() {
        let cfg = LaunchConfig { stack_size: 8192, ..Default::default() };
        let got = run_with(&fact_kernel(101), 128, cfg).unwrap();
        let want: Vec<u32> = (0..128u32).map(|t| (1..=(t % 101).max(1)).fold(1u32, |a, b| a.wrapping_mul(b))).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_stack_past_the_limit_is_refused() {
        let cfg = LaunchConfig { stack_size: crate::launch::MAX_STACK_SIZE + 1, ..Default::default() };
        let e = run_with(&fact_kernel(13), 32, cfg).unwrap_err();
        assert!(matches!(&e, LaunchError::Config(m) if m.contains("--stack-size")), "{e:?}");
    }

    #[test]
    fn recursion_too_deep_is_a_stack_overflow() {
        // 1 KiB of stack, 32 bytes a frame: depth 100 does not fit.
        let r = run_src(&fact_kernel(101), 128, &[128 * 4], &[]);
        let f = r.fault();
        let FaultKind::StackOverflow { depth, stack_size } = f.kind else { panic!("{f}") };
        assert_eq!(stack_size, 1024);
        assert!((20..=40).contains(&depth), "{depth}");
        assert!(f.to_string().contains("--stack-size"), "{f}");
        // The first thread to overflow is one of the deep ones.
        assert!(f.thread.unwrap()[0] % 101 >= depth, "{f}");
    }

    #[test]
    fn each_call_has_its_own_local_array() {
        // f(d): a local array filled with d, then f(d-1), then the array is
        // read back: a shared frame would give the innermost values.
        let f = format!(
            ".func (.param .b32 ret) f(.param .b32 d)
{{
    .local .align 4 .b8 arr[16];
    .reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<4>;
    ld.param.u32 %r1, [d];
    mov.u64 %rd1, arr;
    st.local.u32 [%rd1], %r1;
    st.local.u32 [arr+12], %r1;
    mov.u32 %r4, 0;
    setp.eq.s32 %p1, %r1, 0;
    @%p1 bra DONE;
    add.s32 %r2, %r1, -1;
{}
DONE:
    ld.local.u32 %r5, [arr];
    cvta.local.u64 %rd2, %rd1;
    ld.u32 %r6, [%rd2+12];
    add.s32 %r5, %r5, %r6;
    add.s32 %r4, %r4, %r5;
    st.param.b32 [ret], %r4;
    ret;
}}
",
            call1("call.uni", "f", "%r2", "%r4")
        );
        let src = per_thread(&f, &call1("call", "f", "%r1", "%r3"), "%r3");
        let r = run_src(&src, 8, &[32], &[]);
        r.result.as_ref().unwrap();
        // Sum over d = t..0 of 2d = t(t+1).
        assert_eq!(r.u32s(0, 8), (0..8u32).map(|t| t * (t + 1)).collect::<Vec<_>>());
    }

    #[test]
    fn function_pointers_dispatch_per_lane() {
        const FUNCS: &str = ".func (.param .b32 r) twice(.param .b32 x)
{
    .reg .b32 %r<3>;
    ld.param.u32 %r1, [x];
    add.s32 %r2, %r1, %r1;
    st.param.b32 [r], %r2;
    ret;
}
.func (.param .b32 r) square(.param .b32 x)
{
    .reg .b32 %r<3>;
    ld.param.u32 %r1, [x];
    mul.lo.s32 %r2, %r1, %r1;
    st.param.b32 [r], %r2;
    ret;
}
.global .align 8 .u64 table[2] = {twice, square};
";
        let src = per_thread(
            FUNCS,
            "    and.b32 %r2, %r1, 1;
    setp.eq.b32 %p1, %r2, 1;
    mov.u64 %rd4, twice;
    mov.u64 %rd5, square;
    selp.b64 %rd6, %rd5, %rd4, %p1;
    {
    .param .b32 a; .param .b32 b;
    st.param.b32 [a], %r1;
    prototype_0 : .callprototype (.param .b32 _) _ (.param .b32 _);
    call (b), %rd6, (a), prototype_0;
    ld.param.b32 %r3, [b];
    }
    shr.u32 %r4, %r1, 1;
    and.b32 %r4, %r4, 1;
    mul.wide.u32 %rd7, %r4, 8;
    mov.u64 %rd8, table;
    add.s64 %rd8, %rd8, %rd7;
    ld.global.u64 %rd9, [%rd8];
    {
    .param .b32 a; .param .b32 b;
    st.param.b32 [a], 3;
    prototype_1 : .callprototype (.param .b32 _) _ (.param .b32 _);
    call (b), %rd9, (a), prototype_1;
    ld.param.b32 %r5, [b];
    }
    add.s32 %r3, %r3, %r5;",
            "%r3",
        );
        let r = run_src(&src, 32, &[128], &[]);
        r.result.as_ref().unwrap();
        let want: Vec<u32> = (0..32u32).map(|t| if t & 1 == 1 { t * t } else { 2 * t } + if t & 2 != 0 { 9 } else { 6 }).collect();
        assert_eq!(r.u32s(0, 32), want);
    }

    #[test]
    fn a_pointer_that_is_no_function_faults() {
        let src = format!(
            "{HEAD}.func (.param .b32 r) one()
{{
    st.param.b32 [r], 1;
    ret;
}}
.visible .entry k(.param .u64 p0)
{{
    .reg .b32 %r<3>; .reg .b64 %rd<4>;
    mov.u64 %rd1, one;
    add.s64 %rd2, %rd1, 4;
    {{
    .param .b32 b;
    call (b), %rd2, (), prototype_0;
    ld.param.b32 %r1, [b];
    }}
    ret;
}}
"
        );
        let r = run_src(&src, 1, &[4], &[]);
        assert!(
            matches!(&r.result, Err(LaunchError::Fault(f)) if matches!(&f.kind, FaultKind::Unsupported(m) if m.contains("not the address of a function"))),
            "{:?}",
            r.result
        );
    }
}
