//! Arbitrary bytes through the launch-description parsers a user feeds by hand:
//! `warpsim run --param` arguments (one per line), manifest JSON and `.npy` headers.
//! Any panic, hang or stack overflow is a bug; errors are the expected outcome.
#![no_main]

use std::io::Cursor;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use warpsim_launch::{BufferInit, Init, Manifest, ParamSpec};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for line in text.lines().take(16) {
        if let Ok(ParamSpec::Buffer(spec)) = warpsim_launch::parse_param_arg(line) {
            // Files are left alone (the fuzzer must not read /dev/zero); inline values
            // and named initialisers are built and sampled at both ends.
            if !matches!(spec.init, Init::File(_)) && spec.count <= 1 << 16 {
                if let Ok(init) = BufferInit::from_spec(&spec) {
                    let mut head = [0u8; 64];
                    init.fill_bytes(0, &mut head[..init.byte_len().min(64) as usize]);
                    if spec.count > 0 {
                        let _ = init.element(spec.count - 1);
                    }
                }
            }
        }
    }
    let _ = Manifest::from_json_str(&text, Path::new("/nonexistent-fuzz-dir"));
    let _ = warpsim_launch::npy::read_npy(Cursor::new(data));
});
