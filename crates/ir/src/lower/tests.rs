use super::*;

const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

fn compile(src: &str) -> Result<Program, String> {
    crate::compile_module("t.ptx", src).map_err(|e| e.to_string())
}

fn kernel(body: &str) -> String {
    format!("{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n{body}\n}}\n")
}

#[test]
fn line_index_finds_lines() {
    let ix = LineIndex::new("a\nbc\n\nd");
    let lines: Vec<u32> = (0..7).map(|o| ix.line(o)).collect();
    assert_eq!(lines, [1, 1, 2, 2, 2, 3, 4]);
    assert_eq!(ix.line(1000), 4);
    assert_eq!(LineIndex::new("").line(0), 1);
}

// Each instruction's line used to be found by counting newlines from the
// top of the file: quadratic, minutes for a 10 MB kernel.
#[test]
fn instruction_lines_are_right() {
    let p = compile(&kernel("\n\tadd.s32 %r1, %r1, 1;\r\n\n\tret;")).unwrap();
    let lines: Vec<u32> = p.kernels[0].info.iter().map(|i| i.ptx_line).collect();
    assert_eq!(lines, [9, 11, 4]);
}

// Fuzz-style finds: layout arithmetic overflowed (a debug-build panic, a
// silent wrap in release).
#[test]
fn huge_alignments_and_sizes_are_errors() {
    let e = compile(&kernel(".shared .align 4 .b8 a[5];\n.shared .align 4294967295 .b8 b[1];\nret;")).unwrap_err();
    assert!(e.contains("shared memory too large"), "{e}");
    let e = compile(&kernel(".shared .b8 a[4294967295];\n.shared .b8 b[4294967295];\nret;")).unwrap_err();
    assert!(e.contains("shared memory too large"), "{e}");
    let e = compile(&kernel(".local .u64 a[0x4000000000000000];\nret;")).unwrap_err();
    assert!(e.contains("local memory too large"), "{e}");
    let e = compile(&kernel(".local .u64 a[0x10000][0x10000][0x10000][0x10000];\nret;")).unwrap_err();
    assert!(e.contains("local memory too large"), "{e}");
    let e = compile(&format!("{HEAD}.visible .entry k(.param .b8 a[4294967295], .param .b8 b[2])\n{{\nret;\n}}\n")).unwrap_err();
    assert!(e.contains("kernel parameters too large"), "{e}");
    let e =
        compile(&format!("{HEAD}.visible .entry k(.param .b8 a[2147483649], .param .align 2147483648 .b8 b)\n{{\nret;\n}}\n")).unwrap_err();
    assert!(e.contains("kernel parameters too large"), "{e}");
    let src = format!("{HEAD}.shared .b8 s[4294967290];\n.extern .shared .align 16 .b8 d[];\n.visible .entry k()\n{{\nret;\n}}\n");
    let e = compile(&src).unwrap_err();
    assert!(e.contains("shared memory too large"), "{e}");
}

#[test]
fn huge_globals_are_errors_not_allocations() {
    let e = compile(&format!("{HEAD}.global .b8 g[0x100000000000];\n")).unwrap_err();
    assert!(e.contains("module variables too large"), "{e}");
    let e = compile(&format!("{HEAD}.global .b8 a[0x30000000];\n.global .b8 b[0x30000000];\n")).unwrap_err();
    assert!(e.starts_with("t.ptx:5:1: error: module variables too large"), "{e}");
    let e = compile(&format!("{HEAD}.global .v4 .b64 g[0x7fffffffffffffff];\n")).unwrap_err();
    assert!(e.contains("module variables too large"), "{e}");
}

#[test]
fn offsets_wrap_instead_of_overflowing() {
    let src = format!(
        "{HEAD}.extern .shared .b8 dyn[];\n.visible .entry k(.param .u64 p)\n{{\n.reg .b64 %rd<4>;\n.shared .b8 s[4];\n.local .b8 l[4];\n\
         mov.u64 %rd1, dyn+0x7fffffffffffffff;\nmov.u64 %rd1, s+0x7fffffffffffffff;\nmov.u64 %rd1, l+0x7fffffffffffffff;\n\
         mov.u64 %rd1, p+0x7fffffffffffffff;\nld.shared.u8 %rd2, [s+0x7fffffffffffffff];\nld.u8 %rd2, [s+0x7fffffffffffffff];\n\
         ld.local.u8 %rd2, [l+0x7fffffffffffffff];\nld.u8 %rd2, [l+0x7fffffffffffffff];\nld.param.u8 %rd2, [p+0x7fffffffffffffff];\n\
         ld.u8 %rd2, [0x7fffffffffffffff+0x7fffffffffffffff];\nret;\n}}\n"
    );
    let p = compile(&src).unwrap();
    assert_eq!(p.kernels[0].code.len(), 4 + 6 + 2);
}

// `.b128` elements are 16 bytes: the initialiser used to slice 16 bytes
// out of a u64's 8 and panic.
#[test]
fn b128_initialisers() {
    let p = compile(&format!("{HEAD}.global .b128 g[2] = {{-2, 0x1234}};\n")).unwrap();
    let init = &p.globals[0].init;
    assert_eq!(init.len(), 32);
    assert_eq!(u128::from_le_bytes(init[..16].try_into().unwrap()), -2i128 as u128);
    assert_eq!(u128::from_le_bytes(init[16..].try_into().unwrap()), 0x1234);
}

// The end-of-call label of an inlined function used the key `$end`, which a
// label of the callee could also have: a branch to that label jumped out.
#[test]
fn callee_label_named_like_the_call_end() {
    let src = format!(
        "{HEAD}.func f()\n{{\n.reg .pred %p;\nsetp.eq.u32 %p, 1, 1;\n@%p bra $end;\ntrap;\n$end:\nret;\n}}\n\
         .visible .entry k()\n{{\ncall f;\nexit;\n}}\n"
    );
    let p = compile(&src).unwrap();
    let k = &p.kernels[0];
    let trap = k.code.iter().position(|i| matches!(i.op, Op::Trap)).unwrap();
    let Op::Bra { target, .. } = k.code[trap - 1].op else { panic!("{:?}", k.code) };
    assert_eq!(target as usize, trap + 1, "the branch goes to the callee's own `$end`");
}

// Register ranges used to be scanned one by one on every name look-up:
// quadratic in a module with many `%x<N>` declarations.
#[test]
fn register_ranges_by_prefix() {
    let mut sc = Scope::default();
    sc.declare_range("%a", ScalarType::B32, 100);
    sc.declare_range("%a1", ScalarType::B64, 4);
    sc.declare_range("%r", ScalarType::B16, u32::MAX);
    assert_eq!(sc.range_type("%a12"), Some(ScalarType::B32)); // both match: the first declared wins
    assert_eq!(sc.range_type("%a13"), Some(ScalarType::B32));
    assert_eq!(sc.range_type("%a100"), None);
    assert_eq!(sc.range_type("%a10"), Some(ScalarType::B32));
    assert_eq!(sc.range_type("%a1"), Some(ScalarType::B32));
    assert_eq!(sc.range_type("%a"), None);
    assert_eq!(sc.range_type("%a01"), None); // no leading zeros
    assert_eq!(sc.range_type("%a0"), Some(ScalarType::B32));
    assert_eq!(sc.range_type("%r4294967294"), Some(ScalarType::B16));
    assert_eq!(sc.range_type("%r4294967295"), None);
    assert_eq!(sc.range_type("%r99999999999999999999"), None);
    assert_eq!(sc.range_type(&format!("%r{}", "9".repeat(100_000))), None);
    let mut sc = Scope::default();
    sc.declare_range("%a1", ScalarType::B64, 4);
    sc.declare_range("%a", ScalarType::B32, 100);
    assert_eq!(sc.range_type("%a12"), Some(ScalarType::B64));
    assert_eq!(sc.range_type("%a14"), Some(ScalarType::B32));
}

#[test]
fn inlining_budget() {
    let mut src = String::from(HEAD);
    src.push_str(".func f20()\n{\nret;\n}\n");
    for i in (0..20).rev() {
        src.push_str(&format!(".func f{i}()\n{{\ncall f{n};\ncall f{n};\n}}\n", n = i + 1));
    }
    src.push_str(".visible .entry k()\n{\ncall f0;\n}\n");
    // Past the budget the calls are real calls: code once per function.
    let p = compile(&src).unwrap();
    assert!(!p.kernels[0].functions.is_empty());
    assert!(p.kernels[0].functions.iter().all(|f| f.name.starts_with('f')));
    // A modest tree (2^10 bodies) is all inlined.
    let small = src.replace(".func f10()\n{\ncall f11;\ncall f11;\n}", ".func f10()\n{\nret;\n}");
    let p = compile(&small).unwrap();
    assert!(p.kernels[0].code.len() > 1024);
    assert!(p.kernels[0].functions.is_empty());
}

#[test]
fn reserved_smem_offsets_name_a_region_of_their_own() {
    let p = compile(&kernel(
        ".shared .b32 s[4];\nmov.u32 %r0, %reserved_smem_offset_begin;\nmov.u32 %r1, %reserved_smem_offset_end;\nmov.u32 %r2, %reserved_smem_offset_1;\nret;",
    ))
    .unwrap();
    assert_eq!(p.kernels[0].shared_static_bytes, 16 + 1024);
    let e = compile(&kernel("mov.u32 %r0, %reserved_smem_offset_9;\nret;")).unwrap_err();
    assert!(e.contains("%reserved_smem_offset_9"), "{e}");
}

#[test]
fn newer_targets_parse() {
    for t in ["sm_90a", "sm_100a", "sm_120", "sm_120a", "sm_101f"] {
        let src = format!(".version 8.8\n.target {t}\n.address_size 64\n.visible .entry k()\n{{\nret;\n}}\n");
        compile(&src).unwrap_or_else(|e| panic!("{t}: {e}"));
    }
}

#[test]
fn vector_register_forms() {
    let p = compile(&kernel(
        ".reg .v4 .b32 v;\n.reg .v2 .b64 w;\nmov.b32 v.z, 1;\nmov.v4.b32 {v.w, v.x, v.y, v.z}, v;\nmov.v2.b64 w, {%rd0, %rd1};\nret;",
    ))
    .unwrap();
    // The rotation goes through copies: sources are read before any write.
    assert!(p.kernels[0].code.len() >= 9);
    let e = compile(&kernel(".reg .v2 .b32 v<2>;\nret;")).unwrap_err();
    assert!(e.contains("vector registers"), "{e}");
}

#[test]
fn recursive_and_address_taken_functions_get_code_of_their_own() {
    let src = format!(
        "{HEAD}.func (.param .b32 r) f(.param .b32 n)\n{{\n.reg .b32 %r<3>;\nld.param.u32 %r1, [n];\n{{\n.param .b32 a;\n.param .b32 b;\nst.param.b32 [a], %r1;\ncall (b), f, (a);\n}}\nst.param.b32 [r], %r1;\nret;\n}}\n\
         .func g()\n{{\nret;\n}}\n.func h()\n{{\nret;\n}}\n\
         .visible .entry k()\n{{\n.reg .b32 %r<3>;\n.reg .b64 %rd<3>;\nmov.u64 %rd1, g;\ncall h;\ncall %rd1, (), proto;\n{{\n.param .b32 a;\n.param .b32 b;\nst.param.b32 [a], %r1;\ncall (b), f, (a);\n}}\nret;\n}}\n"
    );
    let p = compile(&src).unwrap();
    let k = &p.kernels[0];
    let mut names: Vec<&str> = k.functions.iter().map(|f| f.name.as_str()).collect();
    names.sort();
    // `h` is inlined as before; `g` is called through a pointer, `f` recursive.
    assert_eq!(names, ["f", "g"]);
    let f = k.functions.iter().find(|f| f.name == "f").unwrap();
    assert!(k.code[f.entry as usize..].iter().any(|i| matches!(i.op, Op::Ret)));
    assert_eq!(f.params, [CallSlot::Frame { off: 0, size: 4 }]);
    assert!(k.frame_regs.is_some());
    // Each `ret` branches to the function's one `Ret`, where its paths meet.
    let rets = k.code.iter().filter(|i| matches!(i.op, Op::Ret)).count();
    assert_eq!(rets, 2);
}

// 256-bit vector accesses (PTX 8.8): `.v8` of 32-bit and `.v4` of 64-bit
// elements, `.global` only, sm_100 and later; a `.v8` runs as two halves.
#[test]
fn vectors_of_256_bits() {
    let body = ".reg .b32 %s<8>;\nld.global.v8.u32 {%s0, %s1, %s2, %s3, %s4, %s5, %s6, %s7}, [%rd0+32];\n\
                st.global.v8.b32 [%rd1], {%s7, %s6, %s5, %s4, %s3, %s2, %s1, %s0};\n\
                ld.global.v4.u64 {%rd0, %rd1, %rd2, %rd3}, [%rd0];\nret;";
    let src = |t: &str| {
        format!(".version 8.8\n.target {t}\n.address_size 64\n.visible .entry k()\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n{body}\n}}\n")
    };
    let p = compile(&src("sm_100a")).unwrap();
    let mem: Vec<(char, i64, u8, u8)> = p.kernels[0]
        .code
        .iter()
        .filter_map(|i| match &i.op {
            Op::Ld { addr, n, size, .. } => Some(('l', addr.offset, *n, *size)),
            Op::St { addr, n, size, .. } => Some(('s', addr.offset, *n, *size)),
            _ => None,
        })
        .collect();
    assert_eq!(mem, [('l', 32, 4, 4), ('l', 48, 4, 4), ('s', 0, 4, 4), ('s', 16, 4, 4), ('l', 0, 4, 8)]);
    let e = compile(&src("sm_90")).unwrap_err();
    assert!(e.contains("need sm_100 or later") && e.contains("sm_90"), "{e}");
    let e = compile(&src("sm_120").replace("ld.global.v8.u32", "ld.shared.v8.u32")).unwrap_err();
    assert!(e.contains("only in the .global state space"), "{e}");
    let e = compile(&src("sm_120").replace("ld.global.v4.u64", "ld.global.v8.u64")).unwrap_err();
    assert!(e.contains("at most 256 bits"), "{e}");
    let e = compile(&src("sm_120").replace("ld.global.v8.u32", "ld.global.v8.u8")).unwrap_err();
    assert!(e.contains("at most 256 bits (.v8 of 32-bit"), "{e}");
}
