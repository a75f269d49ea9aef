//! The self-contained HTML page.

use crate::model::{LineRow, Report};
use crate::svg::{self, esc};
use std::fmt::Write;

/// Background for a cell whose badness is `b` (0 good, 1 bad): green to red.
fn shade(b: f64) -> String {
    let b = b.clamp(0.0, 1.0);
    format!("background:hsl({:.0},70%,{:.0}%)", 120.0 * (1.0 - b), 92.0 - 12.0 * b)
}

const CSS: &str = "
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:24px auto;max-width:1280px;color:#222;padding:0 16px}
h1{font-size:22px;margin-bottom:2px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd;padding-bottom:4px}
.sub{color:#666;margin-top:0}
table{border-collapse:collapse;font-size:13px}
td,th{padding:3px 6px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th{white-space:normal;vertical-align:bottom}
th{background:#fafafa;position:sticky;top:0}
td.l,th.l{text-align:left}
td.src{font-family:ui-monospace,Menlo,Consolas,monospace;text-align:left;white-space:pre;max-width:300px;overflow:hidden;text-overflow:ellipsis}
.summary td:first-child{text-align:left;font-weight:600}.summary td.note{text-align:left;color:#666;white-space:normal}
.scroll{overflow-x:auto}td.ptx{text-align:left;max-width:150px;overflow:hidden;text-overflow:ellipsis;color:#666}
.caption{color:#555;font-size:13px;max-width:1000px}
.legend span{display:inline-block;padding:1px 8px;margin-right:6px;border-radius:3px;font-size:12px}
figure{margin:8px 0 18px 0;overflow-x:auto}
.fault{background:#fde8e8;border:1px solid #e0a0a0;padding:8px 12px;border-radius:4px;white-space:pre-wrap;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}
.diag summary{font-weight:600;cursor:pointer;margin:6px 0}.diag pre{background:#f6f6f6;padding:6px 10px;font-size:12px;overflow-x:auto;margin:2px 0 2px 16px}
.tl{max-height:640px;overflow:auto;border:1px solid #eee}
";

/// Renders `r` as one HTML page with everything inline.
pub fn html(r: &Report) -> String {
    let mut s = String::new();
    s.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    // Nothing may be fetched: the page is complete as it is.
    s.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">");
    let _ = write!(s, "<title>{}</title><style>{CSS}</style></head><body>", esc(&r.title));
    let _ = write!(s, "<h1>{}</h1><p class=\"sub\">{}</p>", esc(&r.title), esc(&r.subtitle));
    if let Some(f) = &r.fault {
        let _ = write!(
            s,
            "<section id=\"fault\"><h2>The launch faulted</h2><div class=\"fault\">{}</div><p class=\"caption\">Everything below covers the part of the launch that ran before the fault.</p></section>",
            esc(f)
        );
    }

    s.push_str("<section id=\"summary\"><h2>Launch</h2><table class=\"summary\">");
    for it in &r.summary {
        let _ = write!(s, "<tr><td>{}</td><td>{}</td><td class=\"note\">{}</td></tr>", esc(&it.label), esc(&it.value), esc(&it.note));
    }
    s.push_str("</table></section>");

    diagnostics(&mut s, r);
    lines_table(&mut s, r);

    s.push_str("<section id=\"occupancy\"><h2>Occupancy: one SM's warp slots</h2>");
    match &r.occupancy {
        Some(o) => {
            let _ = write!(s, "<p class=\"caption\">{}</p><figure>{}</figure>", esc(&o.caption), svg::occupancy(o));
        }
        None => s.push_str("<p class=\"caption\">No occupancy picture for this launch.</p>"),
    }
    s.push_str("</section>");

    s.push_str("<section id=\"timeline\"><h2>Warp timeline: which warp issued on each sub-partition</h2>");
    let _ = write!(s, "<p class=\"caption\">{}</p>", esc(&r.timeline_note));
    if let Some(t) = &r.timeline {
        let _ = write!(s, "<div class=\"tl\">{}</div>", svg::timeline(t));
    }
    s.push_str("</section>");

    s.push_str("<section id=\"branches\"><h2>Divergence of each branch</h2>");
    s.push_str("<p class=\"caption\">Each bar is one conditional branch instruction: red is the share of its executions in which the warp's lanes disagreed and the warp had to run both sides, one after the other, with the other lanes masked off.</p>");
    let _ = write!(s, "<figure>{}</figure></section>", svg::branches(&r.branches, r.warp_size));

    s.push_str("<section id=\"memory\"><h2>Sectors per request of each memory instruction</h2>");
    s.push_str("<p class=\"caption\">Global memory moves 32-byte sectors: a warp reading 32 consecutive floats needs 4 sectors per request. Shared memory serves one wavefront per pass over its 32 banks: lanes that hit different rows of one bank need more. The black mark is the ideal for the bytes the warp asked for; orange bars go past it.</p>");
    let _ = write!(s, "<figure>{}</figure></section>", svg::memory(&r.memory));

    if !r.notes.is_empty() {
        s.push_str("<section id=\"notes\"><h2>Notes</h2><ul>");
        for n in &r.notes {
            let _ = write!(s, "<li>{}</li>", esc(n));
        }
        s.push_str("</ul></section>");
    }
    s.push_str("<p class=\"sub\">Made by warpsim. This page is self-contained: it loads nothing.</p></body></html>\n");
    s
}

/// The checkers' findings, grouped by source line and kind, with the advice.
fn diagnostics(s: &mut String, r: &Report) {
    let Some(groups) = &r.diagnostics else { return };
    s.push_str("<section id=\"diagnostics\"><h2>Checker findings</h2>");
    if groups.is_empty() {
        s.push_str("<p class=\"caption\">The checkers found no problems in the part of the launch that ran.</p></section>");
        return;
    }
    for (i, g) in groups.iter().enumerate() {
        let _ = write!(s, "<details class=\"diag\"{}><summary>{}</summary>", if i < 3 { " open" } else { "" }, esc(&g.heading));
        for p in &g.places {
            let _ = write!(s, "<pre>{}</pre>", esc(p));
        }
        s.push_str("</details>");
    }
    s.push_str("<ul>");
    for (kind, advice) in &r.advice {
        let _ = write!(s, "<li><b>{}</b>: {}</li>", esc(kind), esc(advice));
    }
    s.push_str("</ul></section>");
}

fn lines_table(s: &mut String, r: &Report) {
    let ws = r.warp_size.max(1) as f64;
    s.push_str("<section id=\"lines\"><h2>Per source line</h2>");
    s.push_str("<p class=\"legend\"><span style=\"background:hsl(120,70%,92%)\">as good as it gets</span><span style=\"background:hsl(60,70%,86%)\">some waste</span><span style=\"background:hsl(0,70%,80%)\">most of the work wasted</span></p>");
    let total_stalls: u64 = r.lines.iter().filter_map(|l| l.stall_cycles).sum();
    let head = "<div class=\"scroll\"><table class=\"lines\"><tr><th class=\"l\">line</th><th class=\"l\">source</th><th>warp insts</th><th>threads/inst</th><th>divergent branches</th><th>sectors/request (ideal)</th><th>bank conflicts (way)</th><th>stalled (warp-cycles)</th><th class=\"l\">PTX lines</th></tr>";
    let (headers, own): (Vec<&LineRow>, Vec<&LineRow>) = r.lines.iter().partition(|l| l.in_header);
    s.push_str(head);
    for l in &own {
        row(s, l, ws, total_stalls);
    }
    s.push_str("</table></div>");
    if !headers.is_empty() {
        let insts: u64 = headers.iter().map(|l| l.warp_insts).sum();
        let _ = write!(
            s,
            "<details><summary>{} line{} in CUDA headers ({insts} warp instructions), folded</summary>{head}",
            headers.len(),
            if headers.len() == 1 { "" } else { "s" }
        );
        for l in &headers {
            row(s, l, ws, total_stalls);
        }
        s.push_str("</table></div></details>");
    }
    s.push_str("</section>");
}

fn row(s: &mut String, l: &LineRow, ws: f64, total_stalls: u64) {
    let tpi_bad = 1.0 - l.threads_per_inst / ws;
    let div_bad = if l.branches == 0 { 0.0 } else { l.divergent_branches as f64 / l.branches as f64 };
    let _ = write!(
        s,
        "<tr><td class=\"l\">{}</td><td class=\"src\">{}</td><td>{}</td><td style=\"{}\">{:.1}</td><td style=\"{}\">{}</td>",
        esc(&l.place),
        esc(l.text.as_deref().unwrap_or("")),
        l.warp_insts,
        shade(tpi_bad),
        l.threads_per_inst,
        shade(div_bad),
        if l.branches == 0 { "-".to_string() } else { format!("{} of {}", l.divergent_branches, l.branches) }
    );
    match l.sectors_per_request {
        Some((a, i)) => {
            let bad = if a <= 0.0 { 0.0 } else { 1.0 - i / a };
            let _ = write!(s, "<td style=\"{}\">{a:.2} ({i:.2})</td>", shade(bad));
        }
        None => s.push_str("<td>-</td>"),
    }
    match l.bank_conflicts {
        Some((c, way)) => {
            let bad = if way <= 1.0 { 0.0 } else { 1.0 - 1.0 / way };
            let _ = write!(s, "<td style=\"{}\">{c} ({way:.1}-way)</td>", shade(bad));
        }
        None => s.push_str("<td>-</td>"),
    }
    match l.stall_cycles {
        Some(c) => {
            let bad = if total_stalls == 0 { 0.0 } else { (c as f64 / total_stalls as f64 * 3.0).min(1.0) };
            let _ = write!(s, "<td style=\"{}\">{c}</td>", shade(bad));
        }
        None => s.push_str("<td title=\"needs the timing model\">-</td>"),
    }
    let list: Vec<String> = l.ptx_lines.iter().map(u32::to_string).collect();
    let list = list.join(" ");
    let _ = write!(s, "<td class=\"ptx\" title=\"{}\">{}</td></tr>", esc(&list), esc(&list));
}
