//! The occupancy calculator against the driver's answers on the H200, the
//! worked examples of hardware.md, and every limiter on every preset.

use warpsim_gpu::{occupancy, GpuPreset, Limiter, Occupancy, OccupancyError, OccupancyInput, RENDER_WIDTH};

fn preset(name: &str) -> GpuPreset {
    GpuPreset::by_name(name).unwrap()
}

fn occ(p: &str, input: OccupancyInput) -> Occupancy {
    let g = preset(p);
    let o = occupancy(&g, &input).unwrap_or_else(|e| panic!("{p} {input:?}: {e}"));
    // Every result renders within the width limit.
    let text = o.render_text(&g);
    for line in text.lines() {
        assert!(line.chars().count() <= RENDER_WIDTH, "{p}: line too long:\n{line}\n\n{text}");
    }
    o
}

/// Asserts blocks per SM and the primary limiter, and that the limiter's own
/// limit equals the result.
fn check(p: &str, input: OccupancyInput, blocks: u32, limiter: Limiter) -> Occupancy {
    let o = occ(p, input.clone());
    assert_eq!((o.blocks_per_sm, o.limiter), (blocks, limiter), "{p} {input:?}\n{}", o.render_text(&preset(p)));
    assert_eq!(o.limits.get(limiter), Some(blocks));
    o
}

// ---- h200-measurements.md: cudaOccupancyMaxActiveBlocksPerMultiprocessor ----

#[test]
fn h200_driver_table() {
    // (kernel, regs/thread, static shared), then blocks per SM for
    // B=32,S=0 | B=32,S=8K | B=32,S=32K | B=32,S=48K | B=33,S=0.
    let rows: [(&str, u32, u32, [u32; 5]); 3] = [
        ("gt_warp_probe", 18, 0, [32, 25, 6, 4, 32]),
        ("gt_smem_stride", 17, 4096, [32, 17, 6, 0, 32]),
        ("wmma", 40, 0, [32, 25, 6, 4, 24]),
    ];
    let cols: [(u32, u32); 5] = [(32, 0), (32, 8192), (32, 32768), (32, 49152), (33, 0)];
    for (kernel, regs, stat, want) in rows {
        for (&(b, dynamic), &blocks) in cols.iter().zip(&want) {
            let o = occ("h200", OccupancyInput::new(b, regs).shared(stat, dynamic));
            assert_eq!(o.blocks_per_sm, blocks, "{kernel} B={b} S={dynamic}\n{}", o.render_text(&preset("h200")));
        }
    }
}

#[test]
fn h200_table_limiters() {
    // B=32: the 32 block slots; with 8K dynamic: shared memory.
    check("h200", OccupancyInput::new(32, 18), 32, Limiter::Blocks);
    let o = check("h200", OccupancyInput::new(32, 18).shared(0, 8192), 25, Limiter::SharedMemory);
    assert_eq!(o.shared_per_block, 8192 + 1024);
    assert_eq!(o.shared_carveout_bytes, 228 * 1024);
    // 48 KB dynamic + 4 KB static is over the 48 KB default: the driver says 0.
    let o = check("h200", OccupancyInput::new(32, 17).shared(4096, 49152), 0, Limiter::SharedMemory);
    assert_eq!(o.shared_per_block_limit, 49152 + 1024);
    assert!(o.zero_reason.as_deref().unwrap().contains("without opting in"), "{:?}", o.zero_reason);
    assert_eq!(o.occupancy, 0.0);
    // With opt-in it fits: 54272 bytes per block, 4 in 228 KB.
    check("h200", OccupancyInput::new(32, 17).shared(4096, 49152).opt_in(true), 4, Limiter::SharedMemory);
    // The wmma kernel with 33 threads: 2 warps of 1280 registers each.
    let o = check("h200", OccupancyInput::new(33, 40), 24, Limiter::Registers);
    assert_eq!(o.registers_per_warp, 1280);
    assert_eq!(o.register_warps_per_scheduler, Some(12));
    assert_eq!(o.warps_per_sm, 48);
}

// ---- hardware.md section 6 worked examples ----

#[test]
fn a100_worked_examples() {
    let o = check("a100", OccupancyInput::new(256, 64), 4, Limiter::Registers);
    assert_eq!((o.registers_per_warp, o.register_warps_per_scheduler, o.warps_per_sm), (2048, Some(8), 32));
    assert_eq!(o.occupancy, 0.5);
    let o = check("a100", OccupancyInput::new(256, 33), 6, Limiter::Registers);
    assert_eq!((o.registers_per_warp, o.register_warps_per_scheduler, o.warps_per_sm), (1280, Some(12), 48));
    assert_eq!(o.occupancy, 0.75);
}

// ---- each limiter on each preset ----

#[test]
fn t4_limiters() {
    // 32 warps per SM: 1024 threads is one block.
    check("t4", OccupancyInput::new(1024, 16), 1, Limiter::Warps);
    // 16 block slots.
    check("t4", OccupancyInput::new(32, 16), 16, Limiter::Blocks);
    // 128 regs: 4096 per warp, 4 warps per scheduler, 16 warps = 2 blocks of 8.
    check("t4", OccupancyInput::new(256, 128), 2, Limiter::Registers);
    // 64 KB shared, no reserved bytes, 256-byte granules: 16000 -> 16128, 4 blocks.
    let o = check("t4", OccupancyInput::new(32, 16).shared(16000, 0), 4, Limiter::SharedMemory);
    assert_eq!(o.shared_per_block, 16128);
    // Turing has no barrier limit.
    assert_eq!(occ("t4", OccupancyInput::new(32, 16).barriers(16)).limits.barriers, None);
    // 32 KB carve-out when asked for, and a 0-byte kernel still gets 32 KB.
    let o = check("t4", OccupancyInput::new(32, 16).shared(16384, 0).carveout_percent(50), 2, Limiter::SharedMemory);
    assert_eq!(o.shared_carveout_bytes, 32768);
    assert_eq!(occ("t4", OccupancyInput::new(32, 16).carveout_percent(0)).shared_carveout_bytes, 32768);
    // A preference smaller than the block needs is overridden.
    let o = check("t4", OccupancyInput::new(32, 16).shared(40000, 0).carveout_percent(10), 1, Limiter::SharedMemory);
    assert_eq!(o.shared_carveout_bytes, 65536);
    // Opt-in up to 64 KB.
    check("t4", OccupancyInput::new(32, 16).shared(0, 65536).opt_in(true), 1, Limiter::SharedMemory);
}

#[test]
fn a100_limiters() {
    check("a100", OccupancyInput::new(1024, 32), 2, Limiter::Warps);
    check("a100", OccupancyInput::new(64, 32), 32, Limiter::Warps); // tie with blocks, warps first
    check("a100", OccupancyInput::new(32, 32), 32, Limiter::Blocks);
    check("a100", OccupancyInput::new(512, 128), 1, Limiter::Registers);
    // 48 KB + 1 KB reserved = 50176, 3 in 164 KB.
    let o = check("a100", OccupancyInput::new(128, 32).shared(0, 49152), 3, Limiter::SharedMemory);
    assert_eq!(o.shared_carveout_bytes, 164 * 1024);
    // Carve-out preference of 50%: 82 KB aligns up to 100 KB.
    let o = check("a100", OccupancyInput::new(128, 32).shared(0, 20 * 1024).carveout_percent(50), 4, Limiter::SharedMemory);
    assert_eq!(o.shared_carveout_bytes, 100 * 1024);
    // Opt-in maximum 163 KB.
    check("a100", OccupancyInput::new(128, 32).shared(0, 166912).opt_in(true), 1, Limiter::SharedMemory);
    assert!(matches!(
        occupancy(&preset("a100"), &OccupancyInput::new(128, 32).shared(0, 166913).opt_in(true)),
        Err(OccupancyError::SharedTooLarge { .. })
    ));
    // No barrier limit before cc 9.0.
    assert_eq!(occ("a100", OccupancyInput::new(32, 16).barriers(16)).limits.barriers, None);
}

#[test]
fn h100_limiters() {
    check("h100", OccupancyInput::new(1024, 16), 2, Limiter::Warps);
    check("h100", OccupancyInput::new(32, 16), 32, Limiter::Blocks);
    check("h100", OccupancyInput::new(256, 80), 3, Limiter::Registers);
    check("h100", OccupancyInput::new(128, 32).shared(0, 100 * 1024).opt_in(true), 2, Limiter::SharedMemory);
    check("h100", OccupancyInput::new(32, 16).barriers(3), 21, Limiter::Barriers);
    // Opt-in maximum 227 KB.
    check("h100", OccupancyInput::new(128, 32).shared(0, 232448).opt_in(true), 1, Limiter::SharedMemory);
}

#[test]
fn h200_limiters() {
    check("h200", OccupancyInput::new(1024, 16), 2, Limiter::Warps);
    check("h200", OccupancyInput::new(32, 18), 32, Limiter::Blocks);
    check("h200", OccupancyInput::new(33, 40), 24, Limiter::Registers);
    check("h200", OccupancyInput::new(32, 18).shared(0, 8192), 25, Limiter::SharedMemory);
    // Named barriers: 64 per SM; 4 per block -> 16 blocks.
    let o = check("h200", OccupancyInput::new(32, 18).barriers(4), 16, Limiter::Barriers);
    assert_eq!(o.limits.barriers, Some(16));
    // No barriers used: no barrier limit.
    assert_eq!(occ("h200", OccupancyInput::new(32, 18).barriers(0)).limits.barriers, None);
    // Default barrier count is 1: 64 blocks allowed, never binding.
    assert_eq!(occ("h200", OccupancyInput::new(32, 18)).limits.barriers, Some(64));
}

#[test]
fn mi300x_limiters() {
    // 16 waves per work-group, 2 fit in 32 wave slots.
    let o = check("mi300x", OccupancyInput::new(1024, 32), 2, Limiter::Warps);
    assert_eq!(o.warps_per_block, 16);
    // 128 VGPRs: 512/128 = 4 waves per SIMD, 16 per CU, 4 groups of 4 waves.
    let o = check("mi300x", OccupancyInput::new(256, 128), 4, Limiter::Registers);
    assert_eq!((o.registers_per_warp, o.register_warps_per_scheduler), (128 * 64, Some(4)));
    // VGPRs round up to granules of 8: 41 -> 48, 512/48 = 10 waves per SIMD.
    assert_eq!(occ("mi300x", OccupancyInput::new(64, 41)).register_warps_per_scheduler, Some(10));
    // LDS: 64 KiB in 512-byte granules: 16000 -> 16384, 4 groups.
    let o = check("mi300x", OccupancyInput::new(64, 32).shared(16000, 0), 4, Limiter::SharedMemory);
    assert_eq!(o.shared_per_block, 16384);
    // 64 KiB is the most a work-group can have, with or without opt-in.
    check("mi300x", OccupancyInput::new(64, 32).shared(0, 65536), 1, Limiter::SharedMemory);
    assert!(matches!(
        occupancy(&preset("mi300x"), &OccupancyInput::new(64, 32).shared(0, 65537)),
        Err(OccupancyError::SharedTooLarge { .. })
    ));
    // Single-wave groups use no barrier: 32 groups, warps and blocks tie.
    let o = check("mi300x", OccupancyInput::new(64, 32), 32, Limiter::Warps);
    assert_eq!(o.limits.barriers, None);
    assert_eq!(o.limiters, vec![Limiter::Warps, Limiter::Blocks]);
    // Two-wave groups: min(32/2, 16 barriers) -- barriers tie with warps (LLVM's
    // getMaxWorkGroupsPerCU); on gfx942 they can never bind alone.
    let o = check("mi300x", OccupancyInput::new(128, 32), 16, Limiter::Warps);
    assert_eq!(o.limiters, vec![Limiter::Warps, Limiter::Barriers]);
    // `barriers_per_block` is ignored on AMD.
    assert_eq!(occ("mi300x", OccupancyInput::new(128, 32).barriers(9)).limits.barriers, Some(16));
    // 512 VGPRs: one wave per SIMD, 4 per CU; a 16-wave group cannot fit.
    let o = check("mi300x", OccupancyInput::new(1024, 512), 0, Limiter::Registers);
    assert!(o.zero_reason.is_some());
    check("mi300x", OccupancyInput::new(256, 512), 1, Limiter::Registers);
}

// ---- zeros the driver gives, and errors ----

#[test]
fn registers_over_the_block_limit_give_zero() {
    // 1024 threads x 128 regs = 131072 > 65536.
    let o = check("h200", OccupancyInput::new(1024, 128), 0, Limiter::Registers);
    assert!(o.zero_reason.as_deref().unwrap().contains("65536"));
    assert_eq!(o.warps_per_sm, 0);
    // 800 threads = 25 warps, rounded up to 28 for the check: 28 x 2560 = 71680 > 65536
    // although 25 x 2560 = 64000 would fit.
    check("h200", OccupancyInput::new(800, 80), 0, Limiter::Registers);
    check("h200", OccupancyInput::new(768, 80), 1, Limiter::Registers);
}

#[test]
fn errors_say_why() {
    let h200 = preset("h200");
    let e = occupancy(&h200, &OccupancyInput::new(1025, 32)).unwrap_err();
    assert_eq!(e, OccupancyError::BlockTooLarge { gpu: "h200".into(), threads: 1025, max: 1024 });
    assert!(e.to_string().contains("1024 threads"), "{e}");
    assert_eq!(occupancy(&h200, &OccupancyInput::new(0, 32)).unwrap_err(), OccupancyError::EmptyBlock);
    let e = occupancy(&h200, &OccupancyInput::new(128, 256)).unwrap_err();
    assert!(matches!(e, OccupancyError::TooManyRegisters { regs: 256, max: 255, .. }), "{e}");
    occupancy(&h200, &OccupancyInput::new(128, 255)).unwrap();
    let e = occupancy(&h200, &OccupancyInput::new(128, 32).shared(8192, 232448).opt_in(true)).unwrap_err();
    assert!(matches!(e, OccupancyError::SharedTooLarge { max: 232448, .. }), "{e}");
    assert!(e.to_string().contains("even with opt-in"), "{e}");
    let e = occupancy(&h200, &OccupancyInput::new(128, 32).barriers(17)).unwrap_err();
    assert!(matches!(e, OccupancyError::TooManyBarriers { barriers: 17, max: 16, .. }), "{e}");
    let e = occupancy(&h200, &OccupancyInput::new(128, 32).carveout_percent(101)).unwrap_err();
    assert_eq!(e, OccupancyError::BadCarveout { pct: 101 });
    let e = occupancy(&preset("mi300x"), &OccupancyInput::new(64, 513)).unwrap_err();
    assert!(matches!(e, OccupancyError::TooManyRegisters { max: 512, .. }), "{e}");
}

// ---- partial warps, rendering, JSON ----

#[test]
fn partial_warp_waste() {
    let o = occ("h200", OccupancyInput::new(100, 32));
    assert_eq!(o.warps_per_block, 4);
    assert_eq!(o.partial_warps.idle_lanes_per_block, 28);
    assert_eq!(o.blocks_per_sm, 16);
    assert_eq!(o.partial_warps.idle_lanes_per_sm, 28 * 16);
    assert_eq!(o.partial_warps.partial_warps_per_sm, 16);
    let full = occ("h200", OccupancyInput::new(128, 32));
    assert_eq!(full.partial_warps.idle_lanes_per_sm, 0);
    // Wave64: a group of 100 takes 2 waves and leaves 28 lanes idle.
    let o = occ("mi300x", OccupancyInput::new(100, 32));
    assert_eq!((o.warps_per_block, o.partial_warps.idle_lanes_per_block), (2, 28));
}

/// `render_text` of preset `p` for `input` (printed, for a failing test's output).
fn rendered(p: &str, input: OccupancyInput) -> String {
    let t = occ(p, input).render_text(&preset(p));
    println!("{t}");
    t
}

#[test]
fn render_text_explains() {
    let t = rendered("a100", OccupancyInput::new(256, 64));
    assert!(t.contains("Limited by registers: 64 regs/thread x 32 lanes = 2048 per warp"), "{t}");
    assert!(t.contains("50.0%"), "{t}");
    let rows: Vec<&str> = t.lines().filter(|l| l.trim_start().starts_with("scheduler")).collect();
    assert_eq!(rows.len(), 4, "{t}");
    for r in &rows {
        assert_eq!(r.matches('#').count(), 8, "{r}");
        assert_eq!(r.matches('.').count(), 8, "{r}");
    }

    // Partial warps show as `+`: 100 threads = 4 warps, the 4th partial; 16 blocks fill 64 slots.
    let t = rendered("h200", OccupancyInput::new(100, 32));
    let pic: String = t.lines().filter(|l| l.contains("scheduler ") && l.contains('|')).collect();
    assert_eq!(pic.matches('+').count(), 16, "{t}");
    assert_eq!(pic.matches('#').count(), 48, "{t}");
    assert!(t.contains("28 idle lanes"), "{t}");

    // Zero blocks: the sentence says why.
    let t = rendered("h200", OccupancyInput::new(32, 17).shared(4096, 49152));
    assert!(t.contains("Limited by shared memory"), "{t}");
    assert!(t.contains("without opting in"), "{t}");

    let t = rendered("mi300x", OccupancyInput::new(256, 128));
    assert!(t.contains("SIMD 3"), "{t}");
    assert!(t.contains("waves"), "{t}");
}

#[test]
fn render_width_everywhere() {
    for p in GpuPreset::builtin() {
        for b in [1, 32, 33, 100, 256, 1000, p.max_threads_per_block] {
            for r in [0, 16, 40, 128, 255] {
                for (s, d) in [(0, 0), (4096, 8192), (0, 48 * 1024), (1000, 60000)] {
                    for bars in [0, 1, 3] {
                        let inp = OccupancyInput::new(b, r).shared(s, d).barriers(bars).opt_in(d > 49152);
                        if let Ok(o) = occupancy(&p, &inp) {
                            assert!(o.blocks_per_sm <= p.max_blocks_per_sm);
                            assert!(o.warps_per_sm <= p.max_warps_per_sm);
                            let t = o.render_text(&p);
                            for line in t.lines() {
                                assert!(line.chars().count() <= RENDER_WIDTH, "{}: {line}\n{t}", p.key);
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn json_names() {
    let o = occ("h200", OccupancyInput::new(32, 17).shared(4096, 8192));
    let j = o.to_json();
    assert_eq!(j["blocks_per_sm"], 17);
    assert_eq!(j["warps_per_sm"], 17);
    assert_eq!(j["limiter"], "shared_memory");
    assert!((j["occupancy"].as_f64().unwrap() - 17.0 / 64.0).abs() < 1e-12);
    assert_eq!(j["limits"]["shared_memory"], 17);
    assert_eq!(j["limits"]["barriers"], 64);
    let names: Vec<String> = [Limiter::Warps, Limiter::Blocks, Limiter::Registers, Limiter::SharedMemory, Limiter::Barriers]
        .iter()
        .map(|l| serde_json::to_value(l).unwrap().as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["warps", "blocks", "registers", "shared_memory", "barriers"]);
    assert_eq!(Limiter::Registers.ncu_metric(), "launch__occupancy_limit_registers");
}
