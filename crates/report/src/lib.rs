//! Reports a person wants to look at, from data any part of warpsim can fill:
//!
//! * [`html()`]: one self-contained HTML page (inline CSS and SVG, no script,
//!   nothing fetched): the launch summary, a per-source-line table coloured
//!   by divergence, sectors per request, bank conflicts and stalls, and SVG
//!   pictures of the occupancy stepper, the warp timeline, the divergence of
//!   each branch and the sectors per request of each memory instruction.
//! * [`trace::chrome_trace`]: the warp timeline as Chrome Trace Event JSON
//!   (ui.perfetto.dev and chrome://tracing open it): one process per SM, one
//!   track per sub-partition and one per warp, one cycle drawn as one
//!   nanosecond.
//! * [`svg`]: the pictures alone.
//!
//! The crate knows nothing of the engine: [`Report`] is plain data, and the
//! command line fills it from the metrics observer, the occupancy calculator
//! and the timing model.
#![forbid(unsafe_code)]

pub mod explain;
pub mod html;
pub mod model;
pub mod svg;
pub mod trace;

pub use html::html;
pub use model::*;

#[cfg(test)]
mod tests {
    use super::*;

    fn span(sp: u32, warp: u32, start: u64, end: u64) -> IssueSpan {
        IssueSpan { sm: 0, subpartition: sp, block: 0, warp, start, end, label: "add.s32".into() }
    }

    #[test]
    fn adjacent_spans_of_one_warp_merge() {
        let mut t = Timeline {
            source: "test".into(),
            cycles: 10,
            subpartitions_per_sm: 4,
            spans: vec![span(0, 1, 0, 1), span(0, 1, 1, 2), span(0, 2, 2, 3), span(1, 1, 2, 3)],
            truncated: false,
        };
        t.coalesce();
        assert_eq!(t.spans.len(), 3);
        assert_eq!((t.spans[0].start, t.spans[0].end, t.spans[0].label.as_str()), (0, 2, "add.s32"));
    }

    #[test]
    fn text_is_escaped_everywhere() {
        let r = Report {
            title: "<script>alert(1)</script>".into(),
            lines: vec![LineRow { place: "a&b".into(), text: Some("if (x < 1 && y > \"2\")".into()), ..Default::default() }],
            ..Default::default()
        };
        let h = html(&r);
        assert!(!h.contains("<script>"));
        assert!(h.contains("&lt;script&gt;") && h.contains("x &lt; 1 &amp;&amp; y &gt; &quot;2&quot;"));
    }

    #[test]
    fn trace_has_named_tracks_and_microsecond_timestamps() {
        let t = Timeline { source: "test".into(), cycles: 5, subpartitions_per_sm: 2, spans: vec![span(1, 3, 2, 5)], truncated: false };
        let j = trace::chrome_trace(&t, "k");
        let ev = j["traceEvents"].as_array().unwrap();
        let x: Vec<_> = ev.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(x.len(), 2, "one event on the sub-partition track, one on the warp's");
        assert!(x.iter().all(|e| e["ts"] == 0.002 && e["dur"] == 0.003));
        let named = |n: &str| ev.iter().any(|e| e["ph"] == "M" && e["args"]["name"] == n);
        assert!(named("SM 0") && named("sub-partition 1") && named("block 0 warp 3"));
        assert_eq!(j["displayTimeUnit"], "ns");
    }

    #[test]
    fn header_rows_fold_away_and_findings_show_grouped() {
        let row = |place: &str, in_header: bool| LineRow { place: place.into(), warp_insts: 7, in_header, ..Default::default() };
        let r = Report {
            lines: vec![row("k.cu:3", false), row("__clang_cuda_builtin_vars.h:53", true)],
            diagnostics: Some(vec![DiagnosticGroupView {
                heading: "Data race at k.cu:3: 1 place, 2 times".into(),
                places: vec!["a".into()],
            }]),
            advice: vec![("Data race".into(), "use an atomic".into())],
            fault: Some("out-of-bounds store".into()),
            ..Default::default()
        };
        let h = html(&r);
        let fold =
            h.find("<details><summary>1 line in CUDA headers (7 warp instructions), folded</summary>").expect("no folded header rows");
        assert!(h.find("k.cu:3").unwrap() < fold && h[fold..].contains("__clang_cuda_builtin_vars.h:53"));
        assert!(h.contains("<section id=\"fault\"") && h.contains("Data race at k.cu:3") && h.contains("use an atomic"));
        assert!(!html(&Report::default()).contains("id=\"diagnostics\""), "an unchecked launch has no findings section");
    }

    #[test]
    fn the_timeline_draws_every_sm_over_every_cycle() {
        let spans = (0..132u32)
            .map(|sm| IssueSpan {
                sm,
                subpartition: 0,
                block: sm as u64,
                warp: 0,
                start: sm as u64 * 100,
                end: sm as u64 * 100 + 50,
                label: "x".into(),
            })
            .collect();
        let t = Timeline { source: "t".into(), cycles: 13_250, subpartitions_per_sm: 4, spans, truncated: false };
        let svg = svg::timeline(&t);
        assert_eq!(svg.matches("<rect").count(), 132);
        assert!(svg.contains(">SM 131 sub-partition 0<") && svg.contains("all 13250 cycles"));
    }
}
