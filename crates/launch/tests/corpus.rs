//! The real corpus: every case parses, expected files agree with their hashes,
//! and the initialisers rebuild the H200's inputs (checked through outputs that
//! are plain copies or integer functions of them).

use std::path::{Path, PathBuf};

use warpsim_launch::check::check_case_output;
use warpsim_launch::*;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/cases.json")
}

fn manifest() -> Manifest {
    load_manifest(corpus()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_case_parses() {
    let m = manifest();
    assert_eq!(m.cases.len(), 41);
    assert!(m.gpu.as_deref().unwrap_or("").contains("H200"));
    for c in &m.cases {
        assert!(c.ptx.ends_with("kernels.ptx"), "{}", c.name);
        assert!(c.ptx.exists(), "{}: {}", c.name, c.ptx.display());
        assert!(c.kernel.starts_with("gt_"));
        assert!(c.block_threads() >= 1 && c.block_threads() <= 1024);
        assert!(!c.params.is_empty());
        // The buggy kernels were run under compute-sanitizer only.
        assert_eq!(c.h200.is_some(), c.expect_diagnostic.is_none(), "{}", c.name);
        if c.expect.is_empty() {
            assert!(c.expect_diagnostic.is_some(), "{} has neither expect nor expect_diagnostic", c.name);
        }
        for (name, e) in &c.expect {
            let b = c.buffer(name).unwrap();
            assert!(b.role.is_output());
            assert!(e.is_checkable(), "{}.{name}", c.name);
        }
    }
    let probe = m.case("warp_probe_256").unwrap();
    assert_eq!(probe.expect["clk"].property, Some(Property::WarpUniformClock));
    assert_eq!(probe.expect["clk"].h200_distinct_values, Some(7));
    assert_eq!(probe.expect["clk"].warps, Some(8));
    assert_eq!(probe.ncu_metric("smsp__inst_executed.sum").map(|x| x > 0.0), Some(true));
    let ws = m.case("warp_sum").unwrap();
    assert_eq!(ws.grid, [256, 1, 1]);
    assert!(ws.h200_ncu().contains_key("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"));
    let bug = m.case("bug_oob").unwrap();
    assert!(bug.expect.is_empty());
    assert_eq!(bug.params[1].as_scalar().unwrap().bits, 64);
    // The manifest survives a round trip through its JSON form.
    let back = Manifest::from_json(&m.to_json(), Path::new("")).unwrap();
    assert_eq!(back.cases, m.cases);
}

#[test]
fn expected_files_match_their_hashes() {
    let m = manifest();
    let mut both = 0;
    for c in &m.cases {
        for (name, e) in &c.expect {
            let (Some(f), Some(sha)) = (&e.file, &e.sha256) else {
                continue;
            };
            let bytes = std::fs::read(f).unwrap();
            assert_eq!(&sha256_hex(&bytes), sha, "{}.{name}", c.name);
            // and the file passes its own check
            let r = check_case_output(c, name, &bytes).unwrap();
            assert!(r.matched, "{}: {r}", c.name);
            assert_eq!(r.method, CheckMethod::File);
            both += 1;
        }
    }
    assert!(both >= 8, "only {both} expectations with both file and sha256");
}

/// `strided_read_k` computes `out[i] = in[i * k]` and `copy_f4` copies, so their
/// hashes pin down `unit_f32` at millions of indices (up to 2^25).
#[test]
fn unit_f32_rebuilds_the_strided_inputs() {
    let m = manifest();
    for c in &m.cases {
        if !(c.name.starts_with("strided_read_") || c.name == "copy_f4") {
            continue;
        }
        let input = BufferInit::from_spec(c.buffer("in").unwrap()).unwrap();
        let stride = match c.params.get(2).and_then(ParamSpec::as_scalar) {
            Some(s) if c.name != "copy_f4" => s.bits,
            _ => 1,
        };
        let out = c.buffer("out").unwrap();
        let mut bytes = Vec::with_capacity(out.byte_len() as usize);
        for i in 0..out.count {
            bytes.extend_from_slice(&(input.element(i * stride) as u32).to_le_bytes());
        }
        let r = check_case_output(c, "out", &bytes).unwrap();
        assert!(r.matched, "{}: {r}", c.name);
        assert_eq!(r.method, CheckMethod::Sha256);
    }
}

/// The same through the engine's lazy memory: the input of `strided_read_32`
/// (128 MiB) is never materialised when read back for hashing.
#[test]
fn filler_through_global_memory() {
    let m = manifest();
    let c = m.case("strided_read_32").unwrap();
    let spec = c.buffer("in").unwrap();
    let mut mem = warpsim_engine::memory::GlobalMemory::new();
    let base = mem.alloc(&spec.name, spec.byte_len(), Some(BufferInit::from_spec(spec).unwrap().into_filler()));
    let out = c.buffer("out").unwrap();
    let mut bytes = vec![0u8; out.byte_len() as usize];
    for i in 0..out.count {
        let v = mem.load(base + 4 * 32 * i, 4).unwrap();
        bytes[4 * i as usize..4 * i as usize + 4].copy_from_slice(&(v as u32).to_le_bytes());
    }
    let r = check_with(
        "out",
        &c.expect["out"],
        Dtype::F32,
        c.block_threads(),
        bytes.len() as u64,
        |off, buf: &mut [u8]| -> Result<(), String> {
            buf.copy_from_slice(&bytes[off as usize..off as usize + buf.len()]);
            Ok(())
        },
    )
    .unwrap();
    assert!(r.matched, "{r}");
    // Reading a whole input for hashing does not materialise it either.
    let sha = sha256_hex_with(1 << 20, |off, buf| mem.read(base + off, buf).map_err(|e| format!("{e:?}"))).unwrap();
    assert_eq!(sha.len(), 64);
    assert!(mem.resident_bytes() <= spec.byte_len());
}

/// `warp_scan` is an inclusive scan within each warp of `hash_u32` as i32,
/// modulo 2^32: the expected file follows from the initialiser.
#[test]
fn hash_u32_rebuilds_the_scan_input() {
    let m = manifest();
    let c = m.case("warp_scan").unwrap();
    let input = BufferInit::from_spec(c.buffer("in").unwrap()).unwrap();
    let n = c.buffer("out").unwrap().count;
    let mut out = Vec::new();
    let mut acc = 0u32;
    for i in 0..n {
        if i % 32 == 0 {
            acc = 0;
        }
        acc = acc.wrapping_add(input.element(i) as u32);
        out.extend_from_slice(&acc.to_le_bytes());
    }
    let r = check_case_output(c, "out", &out).unwrap();
    assert!(r.matched, "{r}");
}

/// The warp probes: lane ids, active masks and a synthetic clock.
#[test]
fn warp_probe_outputs() {
    let m = manifest();
    for c in m.cases.iter().filter(|c| c.name.starts_with("warp_probe_")) {
        let t = c.block_threads();
        let lane: Vec<u8> = (0..t).flat_map(|i| ((i % 32) as u32).to_le_bytes()).collect();
        let r = check_case_output(c, "lane", &lane).unwrap();
        assert!(r.matched, "{}: {r}", c.name);
        let mask: Vec<u8> = (0..t)
            .flat_map(|i| {
                let in_warp = (t - i / 32 * 32).min(32);
                let m = if in_warp == 32 { u32::MAX } else { (1u32 << in_warp) - 1 };
                m.to_le_bytes()
            })
            .collect();
        let r = check_case_output(c, "mask", &mask).unwrap();
        assert!(r.matched, "{}: {r}", c.name);
        let clk: Vec<u8> = (0..t).flat_map(|i| (1000 + 4 * (i / 32)).to_le_bytes()).collect();
        let r = check_case_output(c, "clk", &clk).unwrap();
        assert!(r.matched, "{}: {r}", c.name);
        assert_eq!(r.distinct_values, c.expect["clk"].warps, "{}", c.name);
        let mut bad = clk.clone();
        bad[0] ^= 1;
        if t > 1 {
            assert!(!check_case_output(c, "clk", &bad).unwrap().matched);
        }
    }
}
