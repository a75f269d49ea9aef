//! Property tests of the whole front end (parse + lower): no input panics,
//! every error points inside the source, and numbers mean the same in every
//! spelling. Case counts are kept small so the suite runs in seconds.

use proptest::prelude::*;
use proptest::test_runner::Config;
use std::path::PathBuf;
use warpsim_ir::{FrontEndError, Op, Program};

const FILE: &str = "mut.ptx";

fn corpus() -> &'static str {
    use std::sync::OnceLock;
    static SRC: OnceLock<String> = OnceLock::new();
    SRC.get_or_init(|| {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/kernels.ptx");
        std::fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("{}: {e}: the corpus must sit beside the repository (../shared/corpus/kernels.ptx)", p.display()))
    })
}

/// Parse and lower; on error, check what the message says about where.
fn compile_checked(src: &str) -> Result<Program, String> {
    match warpsim_ir::compile_module(FILE, src) {
        Ok(p) => Ok(p),
        Err(e) => {
            let msg = e.to_string();
            match e {
                FrontEndError::Parse(_) | FrontEndError::Lower(_) => check_rendered(&msg, src),
                FrontEndError::NoSuchKernel { .. } | FrontEndError::AmbiguousKernel { .. } => {}
            }
            Err(msg)
        }
    }
}

/// `FILE:line:col: error: ...`, then the source line, then a caret line.
fn check_rendered(msg: &str, src: &str) {
    let rest = msg.strip_prefix(&format!("{FILE}:")).unwrap_or_else(|| panic!("no file name in {msg:?}"));
    let mut it = rest.splitn(3, ':');
    let line: usize = it.next().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no line in {msg:?}"));
    let col: usize = it.next().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no column in {msg:?}"));
    assert!(it.next().is_some_and(|s| s.starts_with(" error: ")), "{msg:?}");
    let lines: Vec<&str> = src.split('\n').collect();
    assert!(line >= 1 && line <= lines.len(), "line {line} outside 1..={}: {msg:?}", lines.len());
    let text = lines[line - 1].strip_suffix('\r').unwrap_or(lines[line - 1]);
    assert!(col >= 1 && col <= text.chars().count() + 1, "column {col} outside line {line} ({text:?}): {msg:?}");
    let shown: Vec<&str> = msg.split('\n').collect();
    assert!(shown.len() >= 4, "{msg:?}");
    // A long line is shown as a window of SHOWN_COLUMNS characters around the caret, marked with `…`.
    let chars: Vec<char> = text.chars().collect();
    let n = warpsim_ptx::error::SHOWN_COLUMNS;
    let at = (col - 1).min(chars.len());
    let (from, to) = if chars.len() <= n { (0, chars.len()) } else { (at.saturating_sub(n / 2).min(chars.len() - n), 0) };
    let to = if chars.len() <= n { to } else { from + n };
    let (open, close) = (if from > 0 { "…" } else { "" }, if to < chars.len() { "…" } else { "" });
    let window: String = chars[from..to].iter().collect();
    let quoted = shown[shown.len() - 2];
    assert_eq!(quoted, format!("{line} | {open}{window}{close}"), "{msg:?}");
    let caret = shown[shown.len() - 1];
    let (_, marks) = caret.split_once(" | ").unwrap_or_else(|| panic!("no caret line in {msg:?}"));
    assert!(marks.trim_start().starts_with('^') && marks.trim_end().ends_with('^'), "{msg:?}");
    let caret_at = col - 1 - from + open.chars().count();
    assert_eq!(marks.trim_end().chars().position(|c| c == '^'), Some(caret_at), "caret not under column {col}: {msg:?}");
}

fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

// ---- (a) arbitrary input ---------------------------------------------------

proptest! {
    #![proptest_config(Config::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let src = String::from_utf8_lossy(&bytes);
        let _ = compile_checked(&src);
    }

    #[test]
    fn arbitrary_strings_never_panic(src in any::<String>()) {
        let _ = compile_checked(&src);
    }

    /// Strings over PTX's own alphabet get much further into the parser.
    #[test]
    fn ptx_alphabet_strings_never_panic(
        body in proptest::collection::vec(
            prop_oneof![
                Just(".reg .b32 %r<4>;".to_string()),
                Just(".reg .pred %p;".to_string()),
                Just(".shared .align 4 .b8 s[16];".to_string()),
                Just("{".to_string()), Just("}".to_string()),
                Just("mov.u32 %r1, %tid.x;".to_string()),
                Just("add.s32 %r1, %r1, 1;".to_string()),
                Just("@%p bra L;".to_string()), Just("L:".to_string()),
                Just("ld.shared.u32 %r2, [s+4];".to_string()),
                Just("st.shared.v2.u32 [s], {%r1, %r2};".to_string()),
                Just("setp.lt.u32 %p, %r1, 32;".to_string()),
                Just("call f;".to_string()), Just("ret;".to_string()),
                "[a-z0-9%.,;:@!{}()\\[\\]<>+*/&|^~ _$-]{0,12}",
            ],
            0..24,
        ),
    ) {
        let src = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.func f()\n{{\nret;\n}}\n.visible .entry k()\n{{\n{}\n}}\n",
            body.join("\n")
        );
        let _ = compile_checked(&src);
    }
}

// ---- (b) mutations of the real corpus ----------------------------------------

#[derive(Debug, Clone)]
enum Mutation {
    /// Delete tokens `[a, a+n)` (indices into the token list, scaled).
    DeleteTokens(prop::sample::Index, usize),
    DuplicateLine(prop::sample::Index),
    SwapLines(prop::sample::Index, prop::sample::Index),
    InsertPunct(prop::sample::Index, String),
    Truncate(prop::sample::Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<prop::sample::Index>(), 1usize..8).prop_map(|(i, n)| Mutation::DeleteTokens(i, n)),
        any::<prop::sample::Index>().prop_map(Mutation::DuplicateLine),
        (any::<prop::sample::Index>(), any::<prop::sample::Index>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        (any::<prop::sample::Index>(), "[{}()\\[\\];:,.<>+\\-*/%!~@|&^=\"]{1,3}").prop_map(|(i, p)| Mutation::InsertPunct(i, p)),
        any::<prop::sample::Index>().prop_map(Mutation::Truncate),
    ]
}

fn apply(src: &str, m: &Mutation) -> String {
    match m {
        Mutation::DeleteTokens(i, n) => {
            match warpsim_ptx::lexer::tokenize(src) {
                Ok(toks) if !toks.is_empty() => {
                    let a = i.index(toks.len());
                    let b = (a + n - 1).min(toks.len() - 1);
                    format!("{}{}", &src[..toks[a].start as usize], &src[toks[b].end as usize..])
                }
                // An earlier mutation broke the lexing (say, an open `"`): delete characters instead.
                _ => {
                    let a = floor_boundary(src, i.index(src.len() + 1));
                    let b = floor_boundary(src, a + n * 4);
                    format!("{}{}", &src[..a], &src[b..])
                }
            }
        }
        Mutation::DuplicateLine(i) => {
            let mut lines: Vec<&str> = src.split('\n').collect();
            let k = i.index(lines.len());
            lines.insert(k, lines[k]);
            lines.join("\n")
        }
        Mutation::SwapLines(a, b) => {
            let mut lines: Vec<&str> = src.split('\n').collect();
            let (a, b) = (a.index(lines.len()), b.index(lines.len()));
            lines.swap(a, b);
            lines.join("\n")
        }
        Mutation::InsertPunct(i, p) => {
            let at = floor_boundary(src, i.index(src.len() + 1));
            format!("{}{}{}", &src[..at], p, &src[at..])
        }
        Mutation::Truncate(i) => src[..floor_boundary(src, i.index(src.len() + 1))].to_string(),
    }
}

proptest! {
    #![proptest_config(Config::with_cases(160))]

    #[test]
    fn corpus_mutations_never_panic_and_errors_point_inside(muts in proptest::collection::vec(mutation(), 1..4)) {
        let mut src = corpus().to_string();
        for m in &muts {
            src = apply(&src, m);
        }
        let _ = compile_checked(&src);
    }
}

#[test]
fn unmutated_corpus_compiles() {
    compile_checked(corpus()).unwrap();
}

// ---- (c) numbers -------------------------------------------------------------

fn kernel_with(decls: &str, body: &str) -> String {
    format!(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n{decls}\n{body}\n}}\n")
}

/// The constant that `mov` of the (only) instruction reads.
fn mov_const(src: &str) -> u64 {
    let p = warpsim_ir::compile_module("n.ptx", src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let k = &p.kernels[0];
    let Op::Mov { a, .. } = k.code[0].op else { panic!("not a mov: {:?}\n{src}", k.code[0].op) };
    let c64 = k.const64.iter().find(|c| c.0 == a.slot && a.bank == warpsim_ir::Bank::R64).map(|c| c.1);
    let c32 = k.const32.iter().find(|c| c.0 == a.slot && a.bank == warpsim_ir::Bank::R32).map(|c| c.1 as u64);
    c64.or(c32).unwrap_or_else(|| panic!("source of the mov is not a constant\n{src}"))
}

/// Every PTX spelling of the integer `v`.
fn int_spellings(v: u64) -> Vec<String> {
    let mut out = vec![format!("{v}"), format!("0x{v:x}"), format!("0X{v:X}"), format!("0{v:o}"), format!("0b{v:b}"), format!("0B{v:b}")];
    if v < 8 {
        out.push(format!("00{v:o}"));
    }
    let with_u: Vec<String> = out.iter().map(|s| format!("{s}U")).collect();
    out.extend(with_u);
    out
}

proptest! {
    #![proptest_config(Config::with_cases(64))]

    #[test]
    fn integer_literals_lower_to_the_same_constant(v in prop_oneof![any::<u64>(), 0u64..300, (0u32..64).prop_map(|s| 1u64 << s)]) {
        for lit in int_spellings(v) {
            let src = kernel_with(".reg .b64 %rd<2>;", &format!("mov.b64 %rd1, {lit};"));
            prop_assert_eq!(mov_const(&src), v, "{}", lit);
            let src = kernel_with(".reg .b64 %rd<2>;", &format!("mov.b64 %rd1, -{lit};"));
            prop_assert_eq!(mov_const(&src), v.wrapping_neg(), "-{}", lit);
            let src = kernel_with(".reg .b32 %r<2>;", &format!("mov.b32 %r1, {lit};"));
            prop_assert_eq!(mov_const(&src), v as u32 as u64, "{}", lit);
            let src = kernel_with(".reg .s32 %r<2>;", &format!("mov.s32 %r1, -{lit};"));
            prop_assert_eq!(mov_const(&src), v.wrapping_neg() as u32 as u64, "-{}", lit);
        }
    }

    /// Integer initialisers of a global: every spelling gives the same bytes.
    #[test]
    fn integer_initialisers_agree(v in any::<u64>()) {
        let lits = int_spellings(v);
        let mut all: Vec<String> = lits.clone();
        all.extend(lits.iter().map(|l| format!("-{l}")));
        let src = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.global .u64 g[{}] = {{{}}};\n",
            all.len(),
            all.join(", ")
        );
        let p = warpsim_ir::compile_module("g.ptx", &src).unwrap_or_else(|e| panic!("{e}"));
        let init = &p.globals[0].init;
        for (k, lit) in all.iter().enumerate() {
            let got = u64::from_le_bytes(init[k * 8..k * 8 + 8].try_into().unwrap());
            let want = if k < lits.len() { v } else { v.wrapping_neg() };
            prop_assert_eq!(got, want, "{}", lit);
        }
    }

    #[test]
    fn f32_literals_lower_to_the_same_bits(x in any::<f32>().prop_filter("finite", |x| x.is_finite())) {
        let bits = x.to_bits();
        let hex = format!("0f{bits:08X}");
        let lower_hex = format!("0f{bits:08x}");
        // The f64 with exactly the f32's value, in decimal (Rust's shortest round-trip form).
        let dec = format!("{:?}", (x as f64).abs());
        let sign = if x.is_sign_negative() { "-" } else { "" };
        let decl = ".reg .f32 %f<2>;";
        prop_assert_eq!(mov_const(&kernel_with(decl, &format!("mov.f32 %f1, {hex};"))), bits as u64);
        prop_assert_eq!(mov_const(&kernel_with(decl, &format!("mov.f32 %f1, {lower_hex};"))), bits as u64);
        prop_assert_eq!(mov_const(&kernel_with(decl, &format!("mov.f32 %f1, {sign}{dec};"))), bits as u64, "{}{}", sign, dec);
        prop_assert_eq!(
            mov_const(&kernel_with(decl, &format!("mov.f32 %f1, -{hex};"))),
            (bits ^ 0x8000_0000) as u64
        );
        // An f32 literal into an f64 register widens exactly.
        prop_assert_eq!(mov_const(&kernel_with(".reg .f64 %fd<2>;", &format!("mov.f64 %fd1, {hex};"))), (x as f64).to_bits());
    }

    #[test]
    fn f64_literals_lower_to_the_same_bits(x in any::<f64>().prop_filter("finite", |x| x.is_finite())) {
        let bits = x.to_bits();
        let hex = format!("0d{bits:016X}");
        let dec = format!("{:?}", x.abs());
        let sign = if x.is_sign_negative() { "-" } else { "" };
        let decl = ".reg .f64 %fd<2>;";
        prop_assert_eq!(mov_const(&kernel_with(decl, &format!("mov.f64 %fd1, {hex};"))), bits);
        prop_assert_eq!(mov_const(&kernel_with(decl, &format!("mov.f64 %fd1, {sign}{dec};"))), bits, "{}{}", sign, dec);
        prop_assert_eq!(mov_const(&kernel_with(decl, &format!("mov.f64 %fd1, -{hex};"))), bits ^ (1 << 63));
        prop_assert_eq!(mov_const(&kernel_with(decl, &format!("mov.f64 %fd1, -{dec};"))), (-x.abs()).to_bits());
    }
}
