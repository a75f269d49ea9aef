//! The corpus PTX (nvcc 13, sm_90) must parse completely.

use std::path::PathBuf;

fn corpus_ptx() -> Option<(String, String)> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/kernels.ptx");
    let src = std::fs::read_to_string(&p).ok()?;
    Some((p.display().to_string(), src))
}

#[test]
fn corpus_module_parses() {
    let Some((file, src)) = corpus_ptx() else {
        panic!("../shared/corpus/kernels.ptx is missing: the corpus must sit beside the repository");
    };
    let m = warpsim_ptx::parse_module(&file, &src).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.version.as_deref(), Some("9.0"));
    assert_eq!(m.target, vec!["sm_90"]);
    assert_eq!(m.address_size, Some(64));
    let entries: Vec<_> = m.entries().map(|f| f.name.clone()).collect();
    assert!(entries.contains(&"gt_warp_probe".to_string()));
    assert_eq!(entries.len(), 19, "{entries:?}");
    assert!(!m.files.is_empty());
}

#[test]
fn syntax_error_points_at_line_and_column() {
    let src = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n  add.s32 %r1, %r2 %r3;\n}\n";
    let e = warpsim_ptx::parse_module("bad.ptx", src).unwrap_err();
    assert_eq!(e.pos.line, 6);
    assert_eq!(e.pos.col, 20);
    let text = e.to_string();
    assert!(text.starts_with("bad.ptx:6:20: error:"), "{text}");
    assert!(text.contains("add.s32 %r1, %r2 %r3;"), "{text}");
    assert!(text.lines().last().unwrap().trim_end().ends_with('^'), "{text}");
}
