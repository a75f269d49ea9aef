//! The pictures, as standalone SVG elements (inline in the HTML page).

use crate::model::{BranchRow, MemRow, OccupancyView, Timeline};
use std::fmt::Write;

/// Escapes text for XML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A colour for block `b` (lit lanes).
fn block_colour(b: u32) -> &'static str {
    const C: [&str; 6] = ["#2e7d32", "#1565c0", "#6a1b9a", "#ef6c00", "#00838f", "#ad1457"];
    C[b as usize % C.len()]
}

/// A colour for warp `w` of block `b` on the timeline.
fn warp_colour(b: u64, w: u32) -> String {
    let h = (w as u64 * 47 + b * 131) % 360;
    format!("hsl({h},62%,48%)")
}

const FONT: &str = "font-family=\"system-ui,sans-serif\" font-size=\"11\"";

/// The occupancy stepper: the SM's warp slots down the side, each warp's
/// lanes across: lit for a thread of a resident block, grey for a lane that
/// holds no thread, white for a free slot.
pub fn occupancy(v: &OccupancyView) -> String {
    let cell = 10u32;
    let gap = 1u32;
    let row = cell + 2;
    let label_w = 138u32;
    let n = v.slots.len() as u32;
    // At most 32 slots down the side; more go into further columns.
    let per_col = n.clamp(1, 32);
    let cols = n.div_ceil(per_col).max(1);
    let col_w = label_w + v.warp_size * (cell + gap) + 24;
    let width = cols * col_w;
    let height = 24 + per_col * row + 8;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"occupancy\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"{}\">",
        esc(&v.caption)
    );
    for c in 0..cols {
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"12\" {FONT}>lanes 0 to {} of each warp slot &#8594;</text>",
            c * col_w + label_w,
            v.warp_size - 1
        );
    }
    for (i, slot) in v.slots.iter().enumerate() {
        let (c, r) = (i as u32 / per_col, i as u32 % per_col);
        let x0 = c * col_w;
        let y = 20 + r * row;
        let label = match slot.block {
            Some(b) => format!("slot {i}: block {b} warp {}", slot.warp_in_block),
            None => format!("slot {i}: free"),
        };
        let _ = write!(s, "<text x=\"{x0}\" y=\"{}\" {FONT} fill=\"#444\">{}</text>", y + cell - 1, esc(&label));
        let title = match slot.block {
            Some(b) => {
                format!("slot {i}: warp {} of block {b}, {} of {} lanes hold a thread", slot.warp_in_block, slot.active_lanes, v.warp_size)
            }
            None => format!("slot {i}: free"),
        };
        let _ = write!(s, "<g class=\"slot\"><title>{}</title>", esc(&title));
        for l in 0..v.warp_size {
            let x = x0 + label_w + l * (cell + gap);
            let (class, fill) = match slot.block {
                Some(b) if l < slot.active_lanes => ("lit", block_colour(b)),
                Some(_) => ("idle", "#c9cfd4"),
                None => ("free", "#ffffff"),
            };
            let _ = write!(
                s,
                "<rect class=\"{class}\" x=\"{x}\" y=\"{y}\" width=\"{cell}\" height=\"{cell}\" fill=\"{fill}\" stroke=\"#d0d0d0\" stroke-width=\"0.5\"/>"
            );
        }
        s.push_str("</g>");
    }
    s.push_str("</svg>");
    s
}

/// Most bars one timeline draws; past it the picture says what it left out.
const MAX_TIMELINE_RECTS: usize = 150_000;

/// The warp timeline: one row per (SM, sub-partition) that issued, a coloured
/// bar for each run of cycles in which that sub-partition issued for one warp,
/// over every cycle of the launch. Long launches get a wide picture (about 4
/// cycles a pixel, at most 24000 pixels) to scroll; bars thinner than a pixel
/// merge into the bar before them.
pub fn timeline(t: &Timeline) -> String {
    let mut rows: Vec<(u32, u32)> = t.spans.iter().map(|s| (s.sm, s.subpartition)).collect();
    rows.sort_unstable();
    rows.dedup();
    let cycles = t.cycles.max(1);
    let plot_w = (cycles as f64 / 4.0).clamp(1000.0, 24000.0);
    let label_w = 150.0f64;
    let row_h = 14.0f64;
    let top = 24.0f64;
    let width = label_w + plot_w + 20.0;
    let height = top + rows.len() as f64 * row_h + 24.0;
    let x_of = |c: u64| label_w + plot_w * (c.min(cycles) as f64 / cycles as f64);
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" role=\"img\" aria-label=\"warp timeline\">"
    );
    // A tick about every 120 pixels, labelled in cycles.
    let step = nice_step((cycles as f64 * 1200.0 / plot_w) as u64);
    let mut c = 0;
    while c <= cycles {
        let x = x_of(c);
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"18\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/><text x=\"{x:.1}\" y=\"13\" {FONT} text-anchor=\"middle\" fill=\"#666\">{c}</text>",
            height - 22.0
        );
        c += step;
    }
    for (i, (sm, sp)) in rows.iter().enumerate() {
        let y = top + i as f64 * row_h;
        let _ = write!(s, "<text x=\"0\" y=\"{:.1}\" {FONT}>SM {sm} sub-partition {sp}</text>", y + 10.0);
    }
    let mut order: Vec<usize> = (0..t.spans.len()).collect();
    order.sort_by_key(|&i| (t.spans[i].sm, t.spans[i].subpartition, t.spans[i].start));
    let (mut drawn, mut left_out) = (0usize, 0usize);
    let mut row = 0usize;
    let mut last_x1 = f64::MIN;
    for &i in &order {
        let sp = &t.spans[i];
        if rows[row] != (sp.sm, sp.subpartition) {
            row = rows.partition_point(|&k| k < (sp.sm, sp.subpartition));
            last_x1 = f64::MIN;
        }
        let x0 = x_of(sp.start).max(last_x1);
        let x1 = x_of(sp.end).max(x0 + 0.6);
        if x_of(sp.end) <= last_x1 {
            continue; // within pixels already drawn
        }
        if drawn >= MAX_TIMELINE_RECTS {
            left_out += 1;
            continue;
        }
        drawn += 1;
        last_x1 = x1;
        let y = top + row as f64 * row_h;
        let _ = write!(
            s,
            "<rect class=\"issue\" x=\"{x0:.2}\" y=\"{y:.1}\" width=\"{:.2}\" height=\"{:.1}\" fill=\"{}\"><title>{}</title></rect>",
            x1 - x0,
            row_h - 3.0,
            warp_colour(sp.block, sp.warp),
            esc(&format!("cycles {}..{}: block {} warp {} ({})", sp.start, sp.end, sp.block, sp.warp, sp.label))
        );
    }
    let mut caption = format!("cycle &#8594; (all {cycles} cycles of {} SM sub-partitions; colour = warp)", rows.len());
    if left_out > 0 {
        caption += &format!("; {left_out} later bars left out to keep the page small");
    }
    if t.truncated {
        caption += "; the timing model kept only part of the launch's issue spans";
    }
    let _ = write!(s, "<text x=\"{label_w}\" y=\"{:.1}\" {FONT} fill=\"#666\">{caption}</text>", height - 6.0);
    s.push_str("</svg>");
    s
}

fn nice_step(span: u64) -> u64 {
    let raw = (span / 10).max(1);
    let mag = 10u64.pow((raw as f64).log10().floor() as u32);
    for m in [1, 2, 5, 10] {
        if m * mag >= raw {
            return m * mag;
        }
    }
    10 * mag
}

/// Per-row bar charts (branches, memory): label column, bar and row height.
const BAR_W: f64 = 360.0;
const LABEL_W: f64 = 300.0;
const ROW_H: f64 = 22.0;

/// Opens a bar chart of `rows` rows, `extra` wide past the bars; with no
/// rows, the `empty` note.
fn open_bars(class: &str, aria: &str, rows: usize, extra: f64, empty: &str) -> String {
    let width = LABEL_W + BAR_W + extra;
    let height = 10.0 + rows.max(1) as f64 * ROW_H;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"{class}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" role=\"img\" aria-label=\"{aria}\">"
    );
    if rows == 0 {
        let _ = write!(s, "<text x=\"0\" y=\"16\" {FONT}>{empty}</text>");
    }
    s
}

/// Divergence of each branch: executions split into uniform (green) and
/// divergent (red), with the active lanes per execution.
pub fn branches(rows: &[BranchRow], warp_size: u32) -> String {
    let (bar_w, label_w, row_h) = (BAR_W, LABEL_W, ROW_H);
    let mut s = open_bars("branches", "divergence of each branch", rows.len(), 260.0, "no conditional branch ran");
    for (i, b) in rows.iter().enumerate() {
        let y = 4.0 + i as f64 * row_h;
        let frac = if b.executions == 0 { 0.0 } else { b.divergent as f64 / b.executions as f64 };
        let _ = write!(s, "<text x=\"0\" y=\"{:.1}\" {FONT}>{} (PTX line {})</text>", y + 12.0, esc(&b.place), b.ptx_line);
        let title = format!(
            "{}: {} of {} executions divergent; {:.1} of {warp_size} lanes active per execution",
            b.place, b.divergent, b.executions, b.threads_per_exec
        );
        let _ = write!(s, "<g class=\"branch\"><title>{}</title>", esc(&title));
        let _ = write!(s, "<rect x=\"{label_w}\" y=\"{y:.1}\" width=\"{bar_w}\" height=\"16\" fill=\"#66bb6a\"/>");
        if frac > 0.0 {
            let _ = write!(
                s,
                "<rect class=\"divergent\" x=\"{label_w}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"16\" fill=\"#e53935\"/>",
                bar_w * frac
            );
        }
        s.push_str("</g>");
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" {FONT}>{:.0}% divergent, {:.1} lanes/exec</text>",
            label_w + bar_w + 8.0,
            y + 12.0,
            100.0 * frac,
            b.threads_per_exec
        );
    }
    s.push_str("</svg>");
    s
}

/// Sectors (global) or wavefronts (shared) per request of each memory
/// instruction, against the ideal for the bytes it asked for.
pub fn memory(rows: &[MemRow]) -> String {
    let (bar_w, label_w, row_h) = (BAR_W, LABEL_W, ROW_H);
    let max = rows.iter().map(|r| r.per_request).fold(32.0f64, f64::max);
    let mut s = open_bars(
        "memory",
        "sectors per request of each memory instruction",
        rows.len(),
        300.0,
        "no global or shared memory instruction ran",
    );
    for (i, m) in rows.iter().enumerate() {
        let y = 4.0 + i as f64 * row_h;
        let unit = if m.space == "shared" { "wavefronts" } else { "sectors" };
        let bad = m.per_request > m.ideal_per_request + 1e-9;
        let _ = write!(s, "<text x=\"0\" y=\"{:.1}\" {FONT}>{} {}</text>", y + 12.0, esc(&m.place), esc(&m.op));
        let title = format!(
            "{} (PTX line {}) {}: {} requests, {:.2} {unit} per request, ideal {:.2}",
            m.place, m.ptx_line, m.op, m.requests, m.per_request, m.ideal_per_request
        );
        let _ = write!(s, "<g class=\"mem\"><title>{}</title>", esc(&title));
        let _ = write!(s, "<rect x=\"{label_w}\" y=\"{y:.1}\" width=\"{bar_w}\" height=\"16\" fill=\"#f1f3f4\"/>");
        let w = bar_w * m.per_request / max;
        let _ = write!(
            s,
            "<rect class=\"{}\" x=\"{label_w}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"16\" fill=\"{}\"/>",
            if bad { "excess" } else { "ideal" },
            if bad { "#fb8c00" } else { "#43a047" }
        );
        let xi = label_w + bar_w * m.ideal_per_request / max;
        let _ = write!(
            s,
            "<line x1=\"{xi:.1}\" y1=\"{:.1}\" x2=\"{xi:.1}\" y2=\"{:.1}\" stroke=\"#000\" stroke-width=\"2\"/>",
            y - 1.0,
            y + 17.0
        );
        s.push_str("</g>");
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" {FONT}>{:.2} {unit}/request (ideal {:.2}), {} requests</text>",
            label_w + bar_w + 8.0,
            y + 12.0,
            m.per_request,
            m.ideal_per_request,
            m.requests
        );
    }
    s.push_str("</svg>");
    s
}
