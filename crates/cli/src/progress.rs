//! What a long launch shows while it runs: a progress line on a terminal
//! (blocks done, warp instructions per second), and the `--timeout`
//! wall-clock limit, so that a runaway loop does not look like a hang.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use warpsim_engine::Progress;

/// A launch being watched; dropping it stops the watch and clears the line.
pub struct Watch {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The exit status of a launch stopped by `--timeout` (as `timeout(1)`'s).
pub const TIMEOUT_STATUS: i32 = 124;

/// Watches a launch of `blocks` blocks: after a second, a progress line on
/// stderr when it is a terminal (and `quiet` is off); after `timeout`
/// seconds, a message and exit status 124.
pub fn watch(progress: Arc<Progress>, blocks: u64, timeout: Option<f64>, quiet: bool) -> Watch {
    let done = Arc::new(AtomicBool::new(false));
    let show = !quiet && std::io::stderr().is_terminal();
    if !show && timeout.is_none() {
        return Watch { done, thread: None };
    }
    let flag = done.clone();
    let thread = std::thread::spawn(move || {
        let t0 = Instant::now();
        let mut bar: Option<indicatif::ProgressBar> = None;
        while !flag.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
            let secs = t0.elapsed().as_secs_f64();
            if let Some(limit) = timeout.filter(|&l| secs >= l) {
                if let Some(b) = &bar {
                    b.abandon();
                }
                eprintln!(
                    "error: --timeout {limit} s: the launch was still running ({} of {blocks} blocks done); \
                     a runaway loop? --max-instructions N stops one block after N warp instructions",
                    progress.blocks.load(Ordering::Relaxed)
                );
                std::process::exit(TIMEOUT_STATUS);
            }
            if show && secs >= 1.0 {
                let b = bar.get_or_insert_with(|| {
                    let b = indicatif::ProgressBar::new(blocks);
                    let style = indicatif::ProgressStyle::with_template("{elapsed:>4} {bar:30} {pos}/{len} blocks, {msg}")
                        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
                    b.set_style(style);
                    b
                });
                let insts = progress.warp_instructions.load(Ordering::Relaxed);
                b.set_position(progress.blocks.load(Ordering::Relaxed));
                b.set_message(format!("{} warp instructions/s (Ctrl-C stops)", rate(insts as f64 / secs)));
            }
        }
        if let Some(b) = bar {
            b.finish_and_clear();
        }
    });
    Watch { done, thread: Some(thread) }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A rate in words: `9.7 M`, `410 k`, `52`.
pub fn rate(per_second: f64) -> String {
    if per_second >= 1e6 {
        format!("{:.1} M", per_second / 1e6)
    } else if per_second >= 1e3 {
        format!("{:.0} k", per_second / 1e3)
    } else {
        format!("{per_second:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_of_tiny_runs_are_not_zero_millions() {
        assert_eq!(rate(9.7e6), "9.7 M");
        assert_eq!(rate(41_000.0), "41 k");
        assert_eq!(rate(52.0), "52");
    }
}
