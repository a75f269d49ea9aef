//! Plain-text rendering of an [`Occupancy`]: sentences that say why, the
//! limit table, and a picture of the warp slots, in at most [`WIDTH`] columns.

use crate::occupancy::{Limiter, Occupancy};
use crate::preset::{GpuPreset, OccupancyRule};
use std::fmt::Write;

/// The widest line [`Occupancy::render_text`] produces.
pub const WIDTH: usize = 100;

/// Word-wraps `text` to `WIDTH` columns: the first line starts with
/// `first`, the others with `rest` (a hanging indent).
fn wrap(out: &mut String, first: &str, rest: &str, text: &str) {
    let mut line = String::from(first);
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > WIDTH {
            out.push_str(line.trim_end());
            out.push('\n');
            line = String::from(rest);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

fn bytes(n: u64) -> String {
    if n >= 1024 && n & 1023 == 0 {
        format!("{} KB", n / 1024)
    } else {
        format!("{n} B")
    }
}

fn plural(n: u32, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

pub(crate) fn render(o: &Occupancy, p: &GpuPreset) -> String {
    let warp = p.warp_word();
    let sm = p.sm_word();
    let sched = p.scheduler_word();
    let inp = &o.input;
    let amd = p.occupancy_rule == OccupancyRule::Amdgpu;
    let regs_word = if amd { "VGPRs" } else { "regs" };
    let mut out = String::new();

    wrap(
        &mut out,
        "",
        "  ",
        &format!(
            "{} ({}, {}): blocks of {} threads, {} {regs_word}/thread, {} static + {} dynamic shared memory{}.",
            p.key.to_uppercase(),
            p.name,
            p.arch,
            inp.block_threads,
            inp.regs_per_thread,
            bytes(inp.static_shared_bytes as u64),
            bytes(inp.dynamic_shared_bytes as u64),
            if inp.opt_in_shared { " (opted in)" } else { "" }
        ),
    );
    wrap(
        &mut out,
        "",
        "  ",
        &format!(
            "Occupancy: {} per {sm} x {} = {} of {} {warp}s ({:.1}% theoretical occupancy, {} threads).",
            plural(o.blocks_per_sm, "block"),
            plural(o.warps_per_block, warp),
            o.warps_per_sm,
            o.max_warps_per_sm,
            o.occupancy * 100.0,
            o.threads_per_sm
        ),
    );

    // The limiter sentence.
    let also: Vec<&str> = o.limiters.iter().skip(1).map(|l| l.as_str()).collect();
    let tie = if also.is_empty() { String::new() } else { format!(" (tied with {})", also.join(", ")) };
    let why = match o.limiter {
        Limiter::Warps => format!(
            "{} {warp}s per block into {} {warp} slots per {sm} leaves room for {} blocks{}.",
            o.warps_per_block,
            p.max_warps_per_sm,
            o.limits.warps,
            if o.warps_per_sm == o.max_warps_per_sm {
                " and fills the SM".to_string()
            } else {
                format!(", {} slots stay empty", o.max_warps_per_sm - o.warps_per_sm)
            }
        ),
        Limiter::Blocks => format!(
            "each {sm} holds at most {} resident blocks, and blocks of {} fill only {} of {} {warp} slots; \
             larger blocks would raise occupancy.",
            p.max_blocks_per_sm,
            plural(o.warps_per_block, warp),
            o.warps_per_sm,
            o.max_warps_per_sm
        ),
        Limiter::Registers if o.blocks_per_sm == 0 => {
            format!("{}.", o.zero_reason.as_deref().unwrap_or("no block fits"))
        }
        Limiter::Registers => {
            let raw = inp.regs_per_thread * p.warp_size;
            let mut s = format!(
                "{} {regs_word}/thread x {} lanes = {raw} per {warp}{}",
                inp.regs_per_thread,
                p.warp_size,
                if raw == o.registers_per_warp {
                    String::new()
                } else {
                    format!(", allocated in units of {} = {}", p.register_alloc_unit, o.registers_per_warp)
                }
            );
            match o.register_warps_per_scheduler {
                Some(k) => {
                    let _ = write!(
                        s,
                        "; each {sched}'s {} registers hold {k} {warp}s, {} x {k} = {} {warp}s per {sm} = {} of {}.",
                        p.registers_per_scheduler(),
                        p.schedulers_per_sm,
                        k * p.schedulers_per_sm,
                        plural(o.blocks_per_sm, "block"),
                        plural(o.warps_per_block, warp)
                    );
                }
                None => s.push('.'),
            }
            s
        }
        Limiter::SharedMemory => {
            if o.blocks_per_sm == 0 {
                format!("{}.", o.zero_reason.as_deref().unwrap_or("no block fits"))
            } else {
                format!(
                    "{} static + {} dynamic + {} reserved = {} per block after rounding to {} bytes; \
                     the {} carve-out holds {}.",
                    bytes(inp.static_shared_bytes as u64),
                    bytes(inp.dynamic_shared_bytes as u64),
                    bytes(p.shared_reserved_per_block as u64),
                    bytes(o.shared_per_block as u64),
                    p.shared_granularity,
                    bytes(o.shared_carveout_bytes as u64),
                    plural(o.blocks_per_sm, "block")
                )
            }
        }
        Limiter::Barriers => format!(
            "{} barriers per {sm} / {} per block = {}.",
            p.barriers_per_sm.unwrap_or(0),
            if amd { 1 } else { inp.barriers_per_block },
            plural(o.blocks_per_sm, "block")
        ),
    };
    wrap(&mut out, "", "  ", &format!("Limited by {}{tie}: {why}", o.limiter));

    // Limit table.
    let _ = writeln!(out, "Blocks per {sm} each limit allows:");
    let row = |name: &str, v: Option<u32>, how: String, l: Limiter| {
        let val = v.map_or("-".to_string(), |v| v.to_string());
        let mark = if o.limiters.contains(&l) { " <-" } else { "   " };
        let mut line = String::new();
        wrap(&mut line, &format!("  {name:<14}{val:>6}{mark} "), &" ".repeat(26), &how);
        line
    };
    out += &row(
        "warps",
        Some(o.limits.warps),
        format!("{} {warp} slots / {} per block", p.max_warps_per_sm, o.warps_per_block),
        Limiter::Warps,
    );
    out += &row("blocks", Some(o.limits.blocks), format!("{} block slots per {sm}", p.max_blocks_per_sm), Limiter::Blocks);
    out += &row(
        "registers",
        o.limits.registers,
        match o.register_warps_per_scheduler {
            Some(k) => format!(
                "{} per {warp}; {} per {sched} / {} = {k} {warp}s, x {}",
                o.registers_per_warp,
                p.registers_per_scheduler(),
                o.registers_per_warp,
                p.schedulers_per_sm
            ),
            None => "no registers".to_string(),
        },
        Limiter::Registers,
    );
    out += &row(
        "shared memory",
        o.limits.shared_memory,
        if o.shared_per_block == 0 {
            "no shared memory".to_string()
        } else {
            format!(
                "{} per block (limit {}{}); carve-out {} of {}",
                bytes(o.shared_per_block as u64),
                bytes(o.shared_per_block_limit as u64 - p.shared_reserved_per_block as u64),
                if p.shared_reserved_per_block > 0 {
                    format!(" + {} reserved", bytes(p.shared_reserved_per_block as u64))
                } else {
                    String::new()
                },
                bytes(o.shared_carveout_bytes as u64),
                bytes(p.shared_per_sm_max as u64)
            )
        },
        Limiter::SharedMemory,
    );
    out += &row(
        "barriers",
        o.limits.barriers,
        match (p.barriers_per_sm, o.limits.barriers) {
            (None, _) => format!("no barrier limit on {}", p.arch),
            (Some(_), None) => "no barriers used".to_string(),
            (Some(n), Some(_)) => {
                format!("{n} per {sm} / {} per block", if amd { 1 } else { inp.barriers_per_block })
            }
        },
        Limiter::Barriers,
    );

    // Partial warps.
    let pw = &o.partial_warps;
    if pw.idle_lanes_per_block == 0 {
        wrap(
            &mut out,
            "",
            "  ",
            &format!(
                "Partial {warp}s: none ({} threads = {} full {warp}{}).",
                inp.block_threads,
                o.warps_per_block,
                if o.warps_per_block == 1 { "" } else { "s" }
            ),
        );
    } else {
        wrap(
            &mut out,
            "",
            "  ",
            &format!(
                "Partial {warp}s: {} threads take {} {warp} slots; the last {warp} has {} idle lanes, {} per {sm} \
                 ({:.1}% of the lanes of resident {warp}s do nothing).",
                inp.block_threads,
                o.warps_per_block,
                pw.idle_lanes_per_block,
                pw.idle_lanes_per_sm,
                100.0 * pw.idle_lanes_per_block as f64 / (o.warps_per_block * p.warp_size) as f64
            ),
        );
    }

    // Warp-slot picture.
    wrap(
        &mut out,
        "",
        "  ",
        &format!(
            "{} slots per {sched} ({warp} w runs on {sched} w % {}; # full {warp}, + partial {warp}, . free):",
            capitalise(warp),
            p.schedulers_per_sm
        ),
    );
    let slots = p.warp_slots_per_scheduler();
    for s in 0..p.schedulers_per_sm {
        let mut line = format!("  {sched} {s:<2} |");
        let room = (WIDTH - 1).saturating_sub(line.len()) as u32;
        for k in 0..slots.min(room) {
            line.push(match o.slot(p, s, k) {
                Some(true) => '#',
                Some(false) => '+',
                None => '.',
            });
        }
        line.push('|');
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}
