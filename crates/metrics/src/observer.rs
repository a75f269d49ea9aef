//! The metrics observer: per-instruction counters gathered while the engine
//! runs, one observer per worker, merged at the end.

use crate::coalesce::{global_cost, local_addresses, shared_cost, shared_load_cost};
use crate::sass::Merged;
use std::sync::Arc;
use warpsim_engine::{MemAccessKind, Observer};
use warpsim_ir::window::{generic_space, LOCAL_WINDOW, SHARED_WINDOW};
use warpsim_ir::Space;

/// A struct of `u64` counters with `add`, which adds another's field by field.
macro_rules! counters {
    ($(#[$attr:meta])* pub struct $name:ident { $($(#[$fattr:meta])* pub $f:ident: u64,)* }) => {
        $(#[$attr])*
        #[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
        pub struct $name {
            $($(#[$fattr])* pub $f: u64,)*
        }

        impl $name {
            pub fn add(&mut self, o: &$name) {
                $(self.$f += o.$f;)*
            }
        }
    };
}

counters! {
    /// How often an instruction ran and how its lanes and branches went: for one pc
    /// ([`PcCounters`]) and, summed over the instructions that become SASS, for a launch
    /// ([`crate::Totals`]).
    pub struct InstCounts {
        pub warp_insts: u64,
        /// Active lanes summed over executions (Nsight Compute's thread instructions).
        pub thread_insts: u64,
        /// Active lanes whose guard predicate was true.
        pub pred_on_threads: u64,
        /// Branch executions and their distinct targets; divergent ones split the warp.
        pub branches: u64,
        pub branch_targets: u64,
        pub divergent_branches: u64,
    }
}

counters! {
    /// Memory traffic of accesses: for one pc ([`PcCounters`]) and, summed over the loads
    /// or the stores, for a launch ([`crate::Totals::ld`], [`crate::Totals::st`]).
    pub struct MemCounts {
        /// Global memory.
        pub global_requests: u64,
        pub global_sectors: u64,
        pub global_ideal_sectors: u64,
        pub global_lines: u64,
        pub global_bytes: u64,
        /// Local memory (interleaved per lane).
        pub local_requests: u64,
        pub local_sectors: u64,
        /// Shared memory.
        pub shared_requests: u64,
        pub shared_wavefronts: u64,
        pub shared_ideal_wavefronts: u64,
    }
}

/// Counters of one PTX instruction (one pc), summed over every warp that ran it
/// (serialised flat: one object of both parts' fields).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PcCounters {
    #[serde(flatten)]
    pub insts: InstCounts,
    #[serde(flatten)]
    pub mem: MemCounts,
}

impl PcCounters {
    pub fn add(&mut self, o: &PcCounters) {
        self.insts.add(&o.insts);
        self.mem.add(&o.mem);
    }
}

/// Gathers [`PcCounters`] for every instruction of one kernel.
#[derive(Clone, Debug)]
pub struct MetricsObserver {
    pub per_pc: Vec<PcCounters>,
    /// Shared loads that ptxas merges into wider ones ([`crate::sass::merged_shared_loads`]);
    /// empty: none.
    merged: Arc<[Merged]>,
}

impl MetricsObserver {
    pub fn new(code_len: usize) -> Self {
        MetricsObserver { per_pc: vec![PcCounters::default(); code_len], merged: Arc::from(Vec::new()) }
    }

    /// An observer for `kernel`, counting its merged shared loads as the SASS loads they become.
    /// `merged` is [`crate::sass::merged_shared_loads`] of the kernel, computed once per launch.
    pub fn with_merged_loads(code_len: usize, merged: Arc<[Merged]>) -> Self {
        MetricsObserver { per_pc: vec![PcCounters::default(); code_len], merged }
    }

    pub fn merge(&mut self, other: MetricsObserver) {
        for (a, b) in self.per_pc.iter_mut().zip(other.per_pc.iter()) {
            a.add(b);
        }
    }
}

impl Observer for MetricsObserver {
    const WANTS_MEMORY: bool = true;

    #[inline]
    fn instruction(&mut self, _warp: u32, pc: u32, active: u64, exec: u64) {
        let c = &mut self.per_pc[pc as usize];
        c.insts.warp_insts += 1;
        c.insts.thread_insts += active.count_ones() as u64;
        c.insts.pred_on_threads += exec.count_ones() as u64;
    }

    #[inline]
    fn branch(&mut self, _warp: u32, pc: u32, taken: u64, not_taken: u64) {
        let c = &mut self.per_pc[pc as usize];
        c.insts.branches += 1;
        let targets = (taken != 0) as u64 + (not_taken != 0) as u64;
        c.insts.branch_targets += targets.max(1);
        c.insts.divergent_branches += (targets == 2) as u64;
    }

    fn memory(&mut self, _warp: u32, pc: u32, space: Space, kind: MemAccessKind, bytes: u32, addrs: &[u64], mask: u64) {
        let c = &mut self.per_pc[pc as usize];
        let (mut global, mut shared, mut local) = (0u64, 0u64, 0u64);
        match space {
            Space::Global => global = mask,
            // The constant cache, not L1: Nsight counts no global requests for `ld.const`
            // (calibration/micro, group `mem11`: `const_*`).
            Space::Const => return,
            Space::Shared => shared = mask,
            Space::Local => local = mask,
            Space::KernelParam => return,
            Space::Generic => {
                for (l, &a) in addrs.iter().enumerate() {
                    if mask >> l & 1 == 0 {
                        continue;
                    }
                    match generic_space(a) {
                        Space::Shared => shared |= 1 << l,
                        Space::Local => local |= 1 << l,
                        _ => global |= 1 << l,
                    }
                }
            }
        }
        let mut tmp = [0u64; 64];
        let n = addrs.len().min(64);
        if global != 0 {
            let g = global_cost(addrs, global, bytes);
            c.mem.global_requests += 1;
            c.mem.global_sectors += g.sectors as u64;
            c.mem.global_ideal_sectors += g.ideal_sectors as u64;
            c.mem.global_lines += g.lines as u64;
            c.mem.global_bytes += g.bytes_requested as u64;
        }
        if shared != 0 {
            let a: &[u64] = if space == Space::Generic {
                for (t, &x) in tmp.iter_mut().zip(addrs) {
                    *t = x.wrapping_sub(SHARED_WINDOW);
                }
                &tmp[..n]
            } else {
                addrs
            };
            let s = match self.merged.get(pc as usize) {
                Some(&Merged::Leads { bytes: wide, delta }) if space == Space::Shared && kind == MemAccessKind::Load => {
                    let mut w = [0u64; 64];
                    for (x, &y) in w.iter_mut().zip(a) {
                        *x = y.wrapping_add_signed(delta as i64);
                    }
                    shared_load_cost(&w[..a.len().min(64)], shared, wide as u32)
                }
                _ if kind == MemAccessKind::Load => shared_load_cost(a, shared, bytes),
                _ => shared_cost(a, shared, bytes),
            };
            c.mem.shared_requests += 1;
            c.mem.shared_wavefronts += s.wavefronts as u64;
            c.mem.shared_ideal_wavefronts += s.ideal_wavefronts as u64;
        }
        if local != 0 {
            let mut off = [0u64; 64];
            // Only the local lanes' offsets (another lane's may be any value, e.g. a null pointer's).
            for (l, (o, &x)) in off.iter_mut().zip(addrs).enumerate() {
                if local >> l & 1 != 0 {
                    *o = if space == Space::Generic { x.wrapping_sub(LOCAL_WINDOW) } else { x };
                }
            }
            local_addresses(&off[..n], &mut tmp[..n]);
            let g = global_cost(&tmp[..n], local, bytes);
            c.mem.local_requests += 1;
            c.mem.local_sectors += g.sectors as u64;
        }
    }
}
