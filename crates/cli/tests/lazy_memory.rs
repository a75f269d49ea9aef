//! A launch that declares a 4 GiB input and touches 1% of it stays far below
//! 500 MB of resident memory: pages are materialised only when stored to, and
//! loads from untouched pages read the initialiser directly.

use std::process::Command;

#[test]
fn four_gib_input_touching_one_percent_stays_small() {
    let corpus = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/kernels.ptx");
    let out = std::env::temp_dir().join(format!("warpsim-lazy-{}", std::process::id()));
    let n: u64 = (1 << 30) / 100; // out[i] = in[i * 100]: every 100th float of 2^30
    let o = Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .args(["run", corpus.to_str().unwrap(), "--kernel", "gt_strided_read", "--json"])
        .args(["--grid", &n.div_ceil(256).to_string(), "--block", "256"])
        .args(["--param", "in:f32[1073741824]=unit_f32:in"])
        .args(["--param", &format!("out:f32[{n}]=zeros:out")])
        .args(["--param", "i32=100", "--param", &format!("i32={n}")])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .expect("running warpsim");
    let _ = std::fs::remove_dir_all(&out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rss = j["peak_rss_bytes"].as_u64().expect("peak_rss_bytes (Linux)");
    eprintln!("peak RSS {} MB, resident global memory {} MB", rss >> 20, j["resident_global_bytes"].as_u64().unwrap() >> 20);
    assert!(rss < 500 << 20, "peak RSS {} MB", rss >> 20);
}
