//! Presets load by name and from files, and hold the figures of hardware.md.

use warpsim_gpu::{GpuPreset, OccupancyRule, PresetError, Vendor};

#[test]
fn names_and_aliases() {
    assert_eq!(GpuPreset::names(), ["t4", "a100", "h100", "h200", "mi300x"]);
    for (name, key) in [
        ("h200", "h200"),
        ("H200", "h200"),
        (" h100 ", "h100"),
        ("A100", "a100"),
        ("t4", "t4"),
        ("T4", "t4"),
        ("mi300x", "mi300x"),
        ("MI300X", "mi300x"),
        ("cdna3", "mi300x"),
        ("gfx942", "mi300x"),
        ("sm_75", "t4"),
        ("sm_80", "a100"),
    ] {
        assert_eq!(GpuPreset::by_name(name).unwrap().key, key, "{name}");
    }
    let e = GpuPreset::by_name("v100").unwrap_err();
    assert!(matches!(e, PresetError::Unknown { .. }));
    assert!(e.to_string().contains("t4, a100, h100, h200, mi300x"), "{e}");
}

#[test]
fn builtin_figures() {
    let h200 = GpuPreset::by_name("h200").unwrap();
    assert_eq!((h200.arch.as_str(), h200.vendor, h200.warp_size, h200.sm_count), ("sm_90", Vendor::Nvidia, 32, 132));
    assert_eq!((h200.max_warps_per_sm, h200.max_blocks_per_sm, h200.schedulers_per_sm), (64, 32, 4));
    assert_eq!((h200.shared_per_sm_max, h200.shared_per_block_optin, h200.shared_reserved_per_block), (233472, 232448, 1024));
    assert_eq!(h200.barriers_per_sm, Some(64));
    assert_eq!(h200.latencies.fma, 4);
    assert_eq!(h200.latencies.shfl, 24);
    assert!((2500..=3595).contains(&h200.launch_overhead_cycles));
    assert!(h200.notes.contains("3595"));

    let t4 = GpuPreset::by_name("t4").unwrap();
    assert_eq!((t4.max_warps_per_sm, t4.max_blocks_per_sm, t4.shared_granularity), (32, 16, 256));
    assert_eq!(t4.shared_carveouts, [32768, 65536]);
    assert_eq!(t4.barriers_per_sm, None);

    let a100 = GpuPreset::by_name("a100").unwrap();
    assert_eq!((a100.sm_count, a100.shared_per_sm_max, a100.shared_per_block_optin), (108, 167936, 166912));
    assert_eq!(a100.latencies.mma, Some(26));

    let mi = GpuPreset::by_name("mi300x").unwrap();
    assert_eq!((mi.vendor, mi.occupancy_rule, mi.warp_size), (Vendor::Amd, OccupancyRule::Amdgpu, 64));
    assert_eq!((mi.sm_count, mi.schedulers_per_sm, mi.max_warps_per_sm), (304, 4, 32));
    assert_eq!((mi.registers_per_sm, mi.max_registers_per_thread, mi.register_alloc_unit), (131072, 512, 512));
    assert_eq!(mi.shared_granularity, 512);

    for p in GpuPreset::builtin() {
        assert!(!p.notes.is_empty(), "{}", p.key);
        p.validate(&p.key).unwrap();
    }
}

#[test]
fn from_file_round_trip_and_validation() {
    let dir = std::env::temp_dir().join(format!("warpsim-gpu-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut p = GpuPreset::by_name("h200").unwrap();
    p.key = "myh200".into();
    p.sm_count = 66;
    let path = dir.join("mine.json");
    std::fs::write(&path, serde_json::to_string_pretty(&p).unwrap()).unwrap();
    let q = GpuPreset::from_file(&path).unwrap();
    assert_eq!(q, p);

    // Invalid values name the field.
    p.schedulers_per_sm = 3;
    std::fs::write(&path, serde_json::to_string_pretty(&p).unwrap()).unwrap();
    let e = GpuPreset::from_file(&path).unwrap_err().to_string();
    assert!(e.contains("max_warps_per_sm") && e.contains("mine.json"), "{e}");

    // Unknown fields and bad JSON say where.
    std::fs::write(&path, "{\n  \"key\": \"x\",\n  \"bogus\": 1\n}").unwrap();
    let e = GpuPreset::from_file(&path).unwrap_err().to_string();
    assert!(e.contains("line 3"), "{e}");
    let e = GpuPreset::from_file(dir.join("missing.json")).unwrap_err();
    assert!(matches!(e, PresetError::Io { .. }));
    std::fs::remove_dir_all(&dir).ok();
}
