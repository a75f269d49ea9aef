//! `warpsim occupancy`: how many blocks and warps of a launch fit on one SM
//! of a GPU preset, and what limits them.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;
use warpsim_gpu::{occupancy, GpuPreset, OccupancyInput};

#[derive(Args)]
pub struct OccupancyArgs {
    /// GPU preset name (t4, a100, h100, h200, mi300x) or a preset JSON file.
    #[arg(long, default_value = "h200")]
    pub gpu: String,
    /// Threads per block: N or X,Y,Z.
    #[arg(long)]
    pub block: String,
    /// Registers per thread (as ptxas reports them); estimated from --ptx if absent.
    #[arg(long)]
    pub regs: Option<u32>,
    /// Dynamic shared memory per block, in bytes.
    #[arg(long, default_value_t = 0)]
    pub shared: u32,
    /// Static shared memory per block, in bytes (taken from --ptx if given).
    #[arg(long)]
    pub static_shared: Option<u32>,
    /// Named barriers the kernel uses.
    #[arg(long, default_value_t = 1)]
    pub barriers: u32,
    /// The kernel opted in to more than 48 KB of shared memory per block.
    #[arg(long)]
    pub opt_in: bool,
    /// A PTX file to estimate registers and static shared memory from.
    #[arg(long)]
    pub ptx: Option<PathBuf>,
    /// The kernel in --ptx (optional when it has one).
    #[arg(long)]
    pub kernel: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// A preset by name, or read from a file path.
pub fn load_preset(gpu: &str) -> Result<GpuPreset> {
    match GpuPreset::by_name(gpu) {
        Ok(p) => Ok(p),
        Err(e) if std::path::Path::new(gpu).exists() => {
            let _ = e;
            GpuPreset::from_file(gpu).with_context(|| format!("reading GPU preset {gpu}"))
        }
        Err(e) => bail!("{e} (built in: {})", GpuPreset::names().join(", ")),
    }
}

pub fn cmd_occupancy(a: OccupancyArgs) -> Result<()> {
    let preset = load_preset(&a.gpu)?;
    let threads: u32 = a
        .block
        .split([',', 'x'])
        .map(|p| p.trim().parse::<u32>().with_context(|| format!("--block: {p:?} is not a number")))
        .collect::<Result<Vec<_>>>()?
        .iter()
        .product();
    let mut estimate = None;
    let mut static_shared = a.static_shared.unwrap_or(0);
    if let Some(path) = &a.ptx {
        // A .cu file is compiled as `run` compiles it (its PTX kept in warpsim-out/).
        let (name, src) = warpsim::cuda::load_kernel_file(path, std::path::Path::new("warpsim-out"), &[])?;
        let m = warpsim_ptx::parse_module(&name, &src).map_err(|e| anyhow::anyhow!("{e}"))?;
        let kernel = match &a.kernel {
            Some(k) => k.clone(),
            None => match m.entries().map(|f| f.name.clone()).collect::<Vec<_>>().as_slice() {
                [one] => one.clone(),
                many => bail!("{name} has {} kernels; choose one with --kernel", many.len()),
            },
        };
        let (prog, mangled) = warpsim_ir::compile_kernel_resolved(&name, &src, &kernel).map_err(|e| anyhow::anyhow!("{e}"))?;
        let k = prog.kernel(&mangled).ok_or_else(|| anyhow::anyhow!("kernel {mangled} missing after compiling it"))?;
        if a.static_shared.is_none() {
            static_shared = k.shared_static_bytes;
        }
        estimate = Some(warpsim_ir::regs::estimate_registers(k));
    }
    let (regs, estimated) = match (a.regs, &estimate) {
        (Some(r), _) => (r, false),
        (None, Some(e)) => (e.regs_per_thread, true),
        (None, None) => bail!("give --regs R (as ptxas -v reports it) or --ptx FILE to estimate it from"),
    };
    let input = OccupancyInput::new(threads, regs).shared(static_shared, a.shared).barriers(a.barriers).opt_in(a.opt_in);
    let occ = occupancy(&preset, &input)?;
    if a.json {
        let mut j = occ.to_json();
        if let serde_json::Value::Object(m) = &mut j {
            m.insert("gpu".into(), serde_json::json!(preset.key));
            m.insert("regs_per_thread".into(), serde_json::json!(regs));
            m.insert("regs_estimated".into(), serde_json::json!(estimated));
        }
        println!("{}", serde_json::to_string_pretty(&j)?);
    } else {
        if estimated {
            let e = estimate.as_ref().unwrap();
            println!("registers per thread: {regs} (an estimate from the PTX: {}; pass --regs for ptxas' figure)", e.method);
        }
        print!("{}", occ.render_text(&preset));
    }
    Ok(())
}

/// Occupancy of a launch on the preset that matches its warp size (H200 for
/// 32 lanes, MI300X for 64), with registers estimated from the PTX: JSON and
/// a one-line summary.
pub fn launch_occupancy(
    kernel: &warpsim_host::Kernel,
    block: [u32; 3],
    dynamic_shared: u32,
    warp_size: u32,
) -> Option<(serde_json::Value, String)> {
    let preset = GpuPreset::by_name(if warp_size == 64 { "mi300x" } else { "h200" }).ok()?;
    let k = kernel.ir();
    let est = warpsim_ir::regs::estimate_registers(k);
    let threads = block.iter().product();
    let input = OccupancyInput::new(threads, est.regs_per_thread).shared(k.shared_static_bytes, dynamic_shared);
    let o = occupancy(&preset, &input).ok()?;
    let mut j = o.to_json();
    if let serde_json::Value::Object(m) = &mut j {
        m.insert("gpu".into(), serde_json::json!(preset.key));
        m.insert("regs_estimated".into(), serde_json::json!(true));
    }
    let lost = o.partial_warps.idle_lanes_per_block;
    let line = format!(
        "  occupancy ({})  {} blocks/SM, {}/{} warps ({:.0}%), {}-limited, ~{} regs (est.){}",
        preset.key.to_uppercase(),
        o.blocks_per_sm,
        o.warps_per_sm,
        o.max_warps_per_sm,
        100.0 * o.occupancy,
        o.limiter,
        est.regs_per_thread,
        if lost > 0 { format!(", {lost} idle lanes") } else { String::new() }
    );
    Some((j, line))
}
