//! Pathological but finite inputs: deep nesting, long expressions, a huge
//! file, huge register ranges and call trees. None may panic, overflow the
//! stack (tests run on 2 MiB threads) or take long.

use std::time::{Duration, Instant};
use warpsim_ir::compile_module;

const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

fn kernel(body: &str) -> String {
    format!("{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n{body}\n}}\n")
}

/// Compiles `src` and returns the error message (panicking if it compiled).
fn error_of(src: &str) -> String {
    match compile_module("s.ptx", src) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

/// `needle` in `e`, without dumping a megabyte of source on failure.
fn has(e: &str, needle: &str) -> bool {
    let ok = e.contains(needle);
    if !ok {
        eprintln!("expected {needle:?} in: {}", e.chars().take(300).collect::<String>());
    }
    ok
}

fn quick<T>(what: &str, limit: Duration, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let r = f();
    let took = t.elapsed();
    assert!(took < limit, "{what} took {took:?}");
    r
}

const DEEP: usize = 100_000;

#[test]
fn braces_100k_deep_in_a_body() {
    let src = kernel(&format!("{}{}", "{".repeat(DEEP), "}".repeat(DEEP)));
    let e = quick("braces", Duration::from_secs(5), || error_of(&src));
    assert!(has(&e, "scopes nested too deeply"));
}

#[test]
fn braces_100k_deep_unclosed_and_at_module_level() {
    let e = error_of(&kernel(&"{".repeat(DEEP)));
    assert!(has(&e, "nested too deeply"));
    let e = error_of(&format!("{HEAD}{}", "{".repeat(DEEP)));
    assert!(has(&e, "s.ptx:4:1: error: expected a directive, found `{`"));
    // `.section` skips braces without recursion.
    let e = error_of(&format!("{HEAD}.section .debug_info {}", "{".repeat(DEEP)));
    assert!(has(&e, "unclosed `{`"));
    compile_module("s.ptx", &format!("{HEAD}.section .debug_info {}{}", "{".repeat(DEEP), "}".repeat(DEEP))).unwrap();
}

#[test]
fn braces_100k_deep_in_operands_and_initialisers() {
    let e = error_of(&kernel(&format!("mov.b32 %r1, {}%r2{};", "{".repeat(DEEP), "}".repeat(DEEP))));
    assert!(has(&e, "nested too deeply"));
    let src = format!("{HEAD}.global .u32 g[1] = {}1{};\n", "{".repeat(DEEP), "}".repeat(DEEP));
    assert!(has(&error_of(&src), "nested too deeply"));
}

#[test]
fn parentheses_100k_deep() {
    let e = error_of(&kernel(&format!("mov.b32 %r1, {}1{};", "(".repeat(DEEP), ")".repeat(DEEP))));
    assert!(has(&e, "nested too deeply"));
    let e = error_of(&kernel(&format!("ld.global.u32 %r1, [{}1{}];", "(".repeat(DEEP), ")".repeat(DEEP))));
    assert!(has(&e, "nested too deeply"));
    let e = error_of(&format!("{HEAD}.global .u32 g[{}4{}];\n", "(".repeat(DEEP), ")".repeat(DEEP)));
    assert!(has(&e, "nested too deeply"));
    // Call-style lists: `(` followed by a name.
    let e = error_of(&kernel(&format!("call {}%r1{};", "(".repeat(DEEP), ")".repeat(DEEP))));
    assert!(has(&e, "nested too deeply"));
    // Shallow nesting still works.
    let ok = kernel(&format!("mov.b32 %r1, {}1{};", "(".repeat(30), ")".repeat(30)));
    compile_module("s.ptx", &ok).unwrap();
}

#[test]
fn long_operator_chains() {
    for op in ["-", "~", "!"] {
        let e = error_of(&kernel(&format!("mov.b32 %r1, {}1;", op.repeat(DEEP))));
        assert!(has(&e, "nested too deeply"), "{op}");
    }
    // A leading `+` is no operand; in an address it starts an offset expression.
    let e = error_of(&kernel(&format!("mov.b32 %r1, {}1;", "+".repeat(DEEP))));
    assert!(has(&e, "expected an operand, found `+`"));
    let e = error_of(&kernel(&format!("ld.global.u32 %r1, [%rd1{}1];", "+".repeat(DEEP))));
    assert!(has(&e, "nested too deeply"));
    let e = error_of(&kernel(&format!("setp.eq.u32 %p, {}%r1, 0;", "!".repeat(DEEP))));
    assert!(has(&e, "nested too deeply"));
    let e = error_of(&kernel(&format!("mov.b32 %r1, %r2{};", "|%r2".repeat(DEEP))));
    assert!(has(&e, "nested too deeply"));
    // A long flat expression is a loop, not recursion, for left-associative
    // operators of one precedence level...
    let flat = kernel(&format!("mov.b32 %r1, 1{};", "+1".repeat(DEEP)));
    let p = quick("flat sum", Duration::from_secs(5), || compile_module("s.ptx", &flat).unwrap());
    assert!(p.kernels[0].const32.iter().any(|c| c.1 == DEEP as u32 + 1));
    // ... and mixed precedences recurse at most once per level.
    let mixed = kernel(&format!("mov.b32 %r1, 1{};", "|2^3&4<<1+5*6".repeat(DEEP / 10)));
    quick("mixed", Duration::from_secs(5), || compile_module("s.ptx", &mixed).unwrap());
}

#[test]
fn ten_megabyte_file_of_adds() {
    let line = "\tadd.s32 %r1, %r1, 1;\n";
    let n = 10 * 1024 * 1024 / line.len();
    let mut body = String::with_capacity(n * line.len());
    for _ in 0..n {
        body.push_str(line);
    }
    let src = kernel(&body);
    assert!(src.len() >= 10 * 1024 * 1024);
    let p = quick("10 MB file", Duration::from_secs(60), || compile_module("big.ptx", &src).unwrap());
    let k = &p.kernels[0];
    assert_eq!(k.code.len(), n + 1);
    // Lines are counted right at the far end of the file too.
    assert_eq!(k.info[n - 1].ptx_line as usize, 8 + n - 1);
}

#[test]
fn four_billion_registers_cost_nothing_until_used() {
    let src = format!(
        "{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<4000000000>;\n.reg .pred %p<4294967295>;\nadd.s32 %r3999999999, %r0, %r123456789;\nret;\n}}\n"
    );
    let p = quick("huge range", Duration::from_secs(1), || compile_module("s.ptx", &src).unwrap());
    assert_eq!(p.kernels[0].n32, 3);
    // Past the end of the range: an error, not a wrap-around.
    let src = format!("{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<4000000000>;\nmov.b32 %r4000000000, 1;\n}}\n");
    assert!(has(&error_of(&src), "unknown register `%r4000000000`"));
    // A count past 2^32 is rejected rather than truncated.
    let src = format!("{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<4294967297>;\nmov.b32 %r1, 1;\n}}\n");
    let e = error_of(&src);
    assert!(has(&e, "a register count must be below 2^32"));
}

/// A chain of `.func`s, each body 60 scopes deep around the next call:
/// the deepest legal recursion of the lowering (inlining x scopes).
#[test]
fn deep_scopes_times_deep_inlining() {
    let depth = 31;
    let mut src = String::from(HEAD);
    for i in (0..depth).rev() {
        let inner = if i + 1 < depth { format!("call f{};", i + 1) } else { "ret;".to_string() };
        src.push_str(&format!(".func f{i}()\n{{\n{}{inner}{}\n}}\n", "{".repeat(60), "}".repeat(60)));
    }
    src.push_str(&format!(".visible .entry k()\n{{\n{}call f0;{}\n}}\n", "{".repeat(60), "}".repeat(60)));
    let p = compile_module("s.ptx", &src).unwrap_or_else(|e| panic!("{e}"));
    assert!(!p.kernels[0].code.is_empty());
    assert!(p.kernels[0].functions.is_empty(), "all inlined");
    // One more level is called rather than inlined.
    let src = src.replacen(".func f30()\n{\n", ".func f31()\n{\nret;\n}\n.func f30()\n{\ncall f31;\n", 1);
    let p = compile_module("s.ptx", &src).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = p.kernels[0].functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["f31"]);
}

/// Each `.func` calling the next one twice: 2^24 inlined bodies unless cut off.
#[test]
fn exponential_call_tree_is_cut_off() {
    let levels = 24;
    let mut src = String::from(HEAD);
    src.push_str(&format!(".func f{levels}()\n{{\nret;\n}}\n"));
    for i in (0..levels).rev() {
        src.push_str(&format!(".func f{i}()\n{{\ncall f{n};\ncall f{n};\n}}\n", n = i + 1));
    }
    src.push_str(".visible .entry k()\n{\ncall f0;\n}\n");
    // Inlined up to the limit, then called: each function gets code once.
    let p = quick("call tree", Duration::from_secs(20), || compile_module("s.ptx", &src).unwrap_or_else(|e| panic!("{e}")));
    let k = &p.kernels[0];
    assert!(!k.functions.is_empty() && k.functions.len() <= levels + 1);
    assert!(k.code.len() < 1 << 22, "{}", k.code.len());
}

/// Many `%name<N>` declarations: each register use must not scan them all.
#[test]
fn many_register_ranges() {
    let n = 50_000;
    let mut body = String::new();
    for i in 0..n {
        body.push_str(&format!(".reg .b32 %v{i}_<2>;\n"));
    }
    for i in 0..n {
        body.push_str(&format!("add.s32 %v{i}_1, %v{i}_0, %v{}_1;\n", n - 1 - i));
    }
    let src = kernel(&body);
    let p = quick("many ranges", Duration::from_secs(10), || compile_module("s.ptx", &src).unwrap());
    assert_eq!(p.kernels[0].n32, 2 * n as u32);
}
