//! `warpsim run --report report.html --trace trace.json`: the HTML report
//! opens in headless Chromium without a console message (the page has no
//! script, forbids every fetch by its Content-Security-Policy, so any
//! message means something is wrong) and holds its pictures; the trace
//! follows the Trace Event format.
//!
//! Chromium is Debian's `chromium` (`.ci/run` installs it); without it the
//! browser test says so and passes, except under CI (`CI` set), where it fails.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("warpsim-report-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// Runs the demo's `tour` kernel with `--report` and `--trace`, once.
fn outputs() -> &'static (PathBuf, PathBuf, serde_json::Value) {
    static O: OnceLock<(PathBuf, PathBuf, serde_json::Value)> = OnceLock::new();
    O.get_or_init(|| {
        let (html, trace) = (tmp("report.html"), tmp("trace.json"));
        let o = Command::new(env!("CARGO_BIN_EXE_warpsim"))
            .current_dir(repo())
            .args(["run", "demo/kernels.ptx", "--kernel", "tour", "--grid", "264", "--block", "256", "--json"])
            .args(["--param", "in:f32[270336]=unit_f32:in", "--param", "out:f32[67584]=zeros:out", "--param", "i32=4"])
            .arg("--out")
            .arg(tmp("out"))
            .arg("--report")
            .arg(&html)
            .arg("--trace")
            .arg(&trace)
            .output()
            .expect("running warpsim");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (html, trace, j)
    })
}

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("WARPSIM_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"] {
        for d in std::env::split_paths(&path) {
            if d.join(name).is_file() {
                return Some(d.join(name));
            }
        }
    }
    None
}

/// Runs headless Chromium on `page` with `extra` flags; returns (stdout,
/// the page's console messages from the browser log).
fn browse(chrome: &Path, page: &Path, extra: &[String]) -> (String, Vec<String>) {
    let profile = tmp(&format!("profile-{}", extra.len()));
    let o = Command::new(chrome)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--enable-logging=stderr", "--v=0"])
        .args(extra)
        .arg(format!("file://{}", page.canonicalize().unwrap().display()))
        .output()
        .expect("running chromium");
    assert!(o.status.success(), "chromium failed: {}", String::from_utf8_lossy(&o.stderr));
    let log = String::from_utf8_lossy(&o.stderr);
    // Chromium logs each console message of the page as `...:CONSOLE...] "text", source: URL (line)`.
    let console = log.lines().filter(|l| l.contains(":CONSOLE")).map(str::to_string).collect();
    (String::from_utf8_lossy(&o.stdout).into_owned(), console)
}

#[test]
fn html_report_opens_in_chromium_without_console_errors_and_has_its_pictures() {
    let (html, _, _) = outputs();
    let text = std::fs::read_to_string(html).unwrap().replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    // Self-contained: nothing to fetch, no script (the SVG namespace is a name, not a fetch).
    for bad in ["http://", "https://", "<script", "<link", "src="] {
        assert!(!text.contains(bad), "the report contains {bad:?}");
    }
    let Some(chrome) = chromium() else {
        assert!(std::env::var_os("CI").is_none(), "CI must have chromium (.ci/run installs it)");
        eprintln!("SKIPPED: no chromium on PATH (apt-get install chromium); the HTML was checked as text only");
        return;
    };
    // The detector sees console messages: a page that logs an error and tries a fetch.
    let bad = tmp("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'\"></head>\
         <body><img src=\"http://127.0.0.1:9/x.png\"><script>console.error('deliberate')</script></body></html>",
    )
    .unwrap();
    let (_, msgs) = browse(&chrome, &bad, &["--dump-dom".into()]);
    assert!(msgs.iter().any(|m| m.contains("deliberate")), "the console detector missed a console.error: {msgs:?}");

    let (dom, msgs) = browse(&chrome, html, &["--dump-dom".into()]);
    assert!(msgs.is_empty(), "the report logged to the console:\n{}", msgs.join("\n"));
    for (class, min_rects) in [("occupancy", 64 * 32), ("timeline", 8), ("branches", 2), ("memory", 4)] {
        let start = dom.find(&format!("<svg class=\"{class}\"")).unwrap_or_else(|| panic!("no {class} picture in the DOM"));
        let end = start + dom[start..].find("</svg>").unwrap();
        let rects = dom[start..end].matches("<rect").count();
        assert!(rects >= min_rects, "the {class} picture has {rects} rectangles, expected at least {min_rects}");
    }
    for id in ["summary", "lines", "occupancy", "timeline", "branches", "memory"] {
        assert!(dom.contains(&format!("<section id=\"{id}\"")), "no {id} section");
    }
    // The per-line table names CUDA lines and colours the costly ones.
    assert!(dom.contains("kernels.cu:"), "no CUDA source lines in the table");
    assert!(dom.contains("8.0-way"), "the column read's 8-way bank conflicts are not in the table");
    assert!(dom.contains("background:hsl(0,"), "nothing is coloured as wasteful");

    let shot = tmp("report.png");
    let (_, msgs) = browse(&chrome, html, &[format!("--screenshot={}", shot.display()), "--window-size=1280,2000".into()]);
    assert!(msgs.is_empty(), "{msgs:?}");
    let png = std::fs::read(&shot).expect("chromium wrote the screenshot");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 20_000, "screenshot of {} bytes", png.len());
    eprintln!("screenshot: {}", shot.display());
}

#[test]
fn trace_follows_the_trace_event_format() {
    let (_, trace, run) = outputs();
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(trace).unwrap()).expect("the trace is JSON");
    let obj = j.as_object().expect("JSON object format");
    let events = obj["traceEvents"].as_array().expect("traceEvents array");
    assert!(matches!(obj.get("displayTimeUnit").and_then(|v| v.as_str()), Some("ns" | "ms")));
    assert!(obj["otherData"]["time_unit"].as_str().unwrap().contains("one SM cycle is drawn as one nanosecond"));
    let cycles = obj["otherData"]["cycles"].as_u64().unwrap();
    assert!(cycles > 0);
    let mut names = std::collections::BTreeMap::new();
    let mut per_track: std::collections::BTreeMap<(u64, u64), Vec<(f64, f64)>> = Default::default();
    let mut complete = 0;
    for e in events {
        let ph = e["ph"].as_str().expect("every event has a phase");
        let pid = e["pid"].as_u64().expect("integer pid");
        let tid = e["tid"].as_u64().expect("integer tid");
        let name = e["name"].as_str().expect("every event has a name");
        match ph {
            "M" => {
                let args = e["args"].as_object().expect("metadata has args");
                match name {
                    "process_name" | "thread_name" => {
                        names.insert((pid, tid, name.to_string()), args["name"].as_str().expect("a name").to_string());
                    }
                    "process_sort_index" | "thread_sort_index" => assert!(args["sort_index"].is_i64() || args["sort_index"].is_u64()),
                    other => panic!("unknown metadata event {other}"),
                }
            }
            "X" => {
                complete += 1;
                let ts = e["ts"].as_f64().expect("ts is a number (microseconds)");
                let dur = e["dur"].as_f64().expect("dur is a number");
                assert!(ts >= 0.0 && dur > 0.0, "{e}");
                // One cycle is 0.001 us: every timestamp is a whole number of cycles.
                assert!(((ts * 1000.0) - (ts * 1000.0).round()).abs() < 1e-6, "{e}");
                assert!(ts * 1000.0 + dur * 1000.0 <= cycles as f64 + 1e-6);
                assert!(e["cat"].is_string());
                per_track.entry((pid, tid)).or_default().push((ts, ts + dur));
            }
            other => panic!("unexpected phase {other}"),
        }
    }
    assert!(complete > 0);
    // Tracks per SM, sub-partition and warp, all named.
    assert_eq!(names.get(&(1, 0, "process_name".into())).map(String::as_str), Some("SM 0"));
    for sp in 0..4 {
        assert_eq!(names.get(&(1, sp + 1, "thread_name".into())).map(String::as_str), Some(format!("sub-partition {sp}").as_str()));
    }
    let warp_tracks = names.iter().filter(|((_, _, k), v)| k == "thread_name" && v.starts_with("block ")).count();
    assert!(warp_tracks >= 8, "{warp_tracks} warp tracks");
    for ((pid, tid), spans) in &mut per_track {
        assert!(names.contains_key(&(*pid, *tid, "thread_name".into())), "track {pid}/{tid} has no name");
        // A sub-partition issues for one warp at a time; a warp is issued by one sub-partition.
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in spans.windows(2) {
            assert!(w[0].1 <= w[1].0 + 1e-9, "overlapping spans on track {pid}/{tid}: {w:?}");
        }
    }
    let _ = run;
}

#[test]
fn run_json_lists_the_report_and_the_trace() {
    let (html, trace, run) = outputs();
    let outs: Vec<&str> = run["outputs"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(outs.contains(&html.to_str().unwrap()) && outs.contains(&trace.to_str().unwrap()), "{outs:?}");
}

#[test]
fn the_timeline_and_the_trace_cover_every_sm() {
    // 264 blocks of 256 threads on the H200's 132 SMs: two blocks on each.
    let (html, trace, _) = outputs();
    let page = std::fs::read_to_string(html).unwrap();
    for sm in [0, 4, 131] {
        assert!(page.contains(&format!(">SM {sm} sub-partition 0<")), "the timeline has no row for SM {sm}");
    }
    assert!(page.contains("stalled (warp-cycles)"), "the stall column has no unit");
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(trace).unwrap()).unwrap();
    let sms: std::collections::BTreeSet<String> = j["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "process_name")
        .filter_map(|e| e["args"]["name"].as_str().map(str::to_string))
        .collect();
    assert!(sms.contains("SM 131") && sms.len() >= 132, "the trace covers {} SMs", sms.len());
}
