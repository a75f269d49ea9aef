//! Arbitrary bytes through the whole front end: parse, then lower every entry.
//! Any panic, hang or stack overflow is a bug; errors are the expected outcome.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Valid UTF-8 as is; anything else lossily, so byte-level mutations still reach the parser.
    let src = String::from_utf8_lossy(data);
    match warpsim_ptx::parse_module("fuzz.ptx", &src) {
        Ok(m) => {
            if let Err(e) = warpsim_ir::lower::lower_program(&m, "fuzz.ptx", &src) {
                check_rendered(&e.to_string(), &src);
            }
            // Each entry on its own too (lower_program stops at the first failing kernel).
            for f in m.entries() {
                if let Err(e) = warpsim_ir::lower::lower_program_kernel(&m, "fuzz.ptx", &src, &f.name) {
                    check_rendered(&e.to_string(), &src);
                }
            }
        }
        Err(e) => check_rendered(&e.to_string(), &src),
    }
});

/// Every error names the file and a line:col inside the source.
fn check_rendered(msg: &str, src: &str) {
    let rest = msg.strip_prefix("fuzz.ptx:").unwrap_or_else(|| panic!("no file name in {msg:?}"));
    let mut it = rest.splitn(3, ':');
    let line: usize = it.next().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no line in {msg:?}"));
    let col: usize = it.next().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no column in {msg:?}"));
    let nlines = src.split('\n').count();
    assert!(line >= 1 && line <= nlines, "line {line} outside 1..={nlines}: {msg:?}");
    let text = src.split('\n').nth(line - 1).unwrap_or("");
    assert!(col >= 1 && col <= text.chars().count() + 1, "col {col} outside line {line}: {msg:?}");
}
