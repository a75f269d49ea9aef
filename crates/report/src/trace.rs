//! The warp timeline as Chrome Trace Event JSON
//! (<https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU>),
//! which ui.perfetto.dev and chrome://tracing open.
//!
//! Layout: one process per SM (`pid` = SM + 1), and in it one thread per
//! sub-partition (`tid` = sub-partition + 1: which warp issued, run by run)
//! followed by one thread per warp (`tid` = 1000 + its slot: when that warp
//! issued). Timestamps are in microseconds, as the format requires, with
//! one cycle drawn as one nanosecond (`ts` = cycle / 1000); the metadata says so.

use crate::model::Timeline;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The trace object: `{"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}`.
pub fn chrome_trace(t: &Timeline, kernel: &str) -> Value {
    let mut ev: Vec<Value> = Vec::new();
    let us = |c: u64| c as f64 / 1000.0;
    // Warp tracks: per SM, one per (block, warp) in order of first issue.
    let mut warp_tids: BTreeMap<(u32, u64, u32), u32> = BTreeMap::new();
    let mut next_tid: BTreeMap<u32, u32> = BTreeMap::new();
    let mut spans: Vec<_> = t.spans.iter().collect();
    spans.sort_by_key(|s| (s.start, s.sm, s.subpartition));
    for s in &spans {
        warp_tids.entry((s.sm, s.block, s.warp)).or_insert_with(|| {
            let n = next_tid.entry(s.sm).or_insert(1000);
            *n += 1;
            *n
        });
    }
    for sm in t.sms() {
        let pid = sm + 1;
        ev.push(json!({"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": format!("SM {sm}")}}));
        ev.push(json!({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0, "args": {"sort_index": sm}}));
        for sp in 0..t.subpartitions_per_sm {
            let tid = sp + 1;
            ev.push(json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": format!("sub-partition {sp}")}}));
            ev.push(json!({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid, "args": {"sort_index": sp}}));
        }
    }
    for (&(sm, block, warp), &tid) in &warp_tids {
        ev.push(
            json!({"name": "thread_name", "ph": "M", "pid": sm + 1, "tid": tid, "args": {"name": format!("block {block} warp {warp}")}}),
        );
        ev.push(json!({"name": "thread_sort_index", "ph": "M", "pid": sm + 1, "tid": tid, "args": {"sort_index": tid}}));
    }
    for s in &spans {
        let args =
            json!({"block": s.block, "warp": s.warp, "sub_partition": s.subpartition, "first_cycle": s.start, "cycles": s.end - s.start});
        ev.push(json!({
            "name": format!("block {} warp {}", s.block, s.warp), "cat": "issue", "ph": "X",
            "ts": us(s.start), "dur": us(s.end - s.start), "pid": s.sm + 1, "tid": s.subpartition + 1, "args": args,
        }));
        ev.push(json!({
            "name": s.label, "cat": "warp", "ph": "X",
            "ts": us(s.start), "dur": us(s.end - s.start), "pid": s.sm + 1, "tid": warp_tids[&(s.sm, s.block, s.warp)], "args": args,
        }));
    }
    json!({
        "traceEvents": ev,
        "displayTimeUnit": "ns",
        "otherData": {
            "generator": "warpsim",
            "kernel": kernel,
            "source": t.source,
            "time_unit": "one SM cycle is drawn as one nanosecond (ts and dur are in microseconds, so 0.001 = 1 cycle)",
            "cycles": t.cycles,
            "truncated": t.truncated,
        },
    })
}
