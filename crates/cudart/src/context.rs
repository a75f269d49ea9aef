//! The runtime's implicit contexts: each thread works on a current device (0 until
//! `cudaSetDevice`), and the first call that needs the device makes that device's primary
//! context current on the thread, initialising the driver on the way. `cudaDeviceReset`
//! starts a new generation: every thread then retains the primary context afresh.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::driver::{cu, CUdevice, Handle};
use crate::error::{Error, INVALID_DEVICE, NO_DEVICE};

/// Launch limits of a device, read once.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_threads: u32,
    pub max_block: [u32; 3],
    pub max_grid: [u32; 3],
}

#[derive(Default)]
struct Devices {
    count: Option<i32>,
    primary: BTreeMap<i32, usize>,
    limits: BTreeMap<i32, Limits>,
}

static DEVICES: Mutex<Devices> = Mutex::new(Devices { count: None, primary: BTreeMap::new(), limits: BTreeMap::new() });
static GENERATION: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static DEVICE: Cell<i32> = const { Cell::new(0) };
    /// (device, generation) whose primary context is current on this thread; generation 0: none.
    static CURRENT: Cell<(i32, u64)> = const { Cell::new((0, 0)) };
}

fn devices() -> MutexGuard<'static, Devices> {
    DEVICES.lock().unwrap_or_else(|e| e.into_inner())
}

/// The bumped generation after a reset.
pub fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

/// The number of devices, initialising the driver the first time.
pub fn device_count() -> Result<i32, Error> {
    let mut d = devices();
    if let Some(n) = d.count {
        return Ok(n);
    }
    cu!(cuInit(0))?;
    let mut n = 0;
    cu!(cuDeviceGetCount(&mut n))?;
    d.count = Some(n);
    Ok(n)
}

/// The driver's handle of device `ordinal`, checked against the count.
pub fn device_handle(ordinal: i32) -> Result<CUdevice, Error> {
    let n = device_count()?;
    if n == 0 {
        return Err(Error(NO_DEVICE));
    }
    if ordinal < 0 || ordinal >= n {
        return Err(Error(INVALID_DEVICE));
    }
    let mut dev = 0;
    cu!(cuDeviceGet(&mut dev, ordinal))?;
    Ok(dev)
}

/// This thread's device.
pub fn current_device() -> i32 {
    DEVICE.get()
}

/// Chooses this thread's device (checked), as `cudaSetDevice` does.
pub fn set_device(ordinal: i32) -> Result<(), Error> {
    device_handle(ordinal)?;
    DEVICE.set(ordinal);
    Ok(())
}

/// Makes the current device's primary context current on this thread if it is not yet;
/// returns the device ordinal.
pub fn ensure() -> Result<i32, Error> {
    let dev = DEVICE.get();
    let generation = generation();
    if CURRENT.get() == (dev, generation) {
        return Ok(dev);
    }
    let handle = device_handle(dev)?;
    let ctx = {
        let mut d = devices();
        match d.primary.get(&dev) {
            Some(&c) => c,
            None => {
                let mut c: Handle = std::ptr::null_mut();
                cu!(cuDevicePrimaryCtxRetain(&mut c, handle))?;
                d.primary.insert(dev, c as usize);
                c as usize
            }
        }
    };
    cu!(cuCtxSetCurrent(ctx as Handle))?;
    CURRENT.set((dev, generation));
    Ok(dev)
}

/// Releases and resets the current device's primary context (`cudaDeviceReset`).
pub fn reset() -> Result<(), Error> {
    let dev = DEVICE.get();
    let handle = device_handle(dev)?;
    let had = devices().primary.remove(&dev).is_some();
    if had {
        cu!(cuDevicePrimaryCtxRelease_v2(handle))?;
    }
    GENERATION.fetch_add(1, Ordering::AcqRel);
    cu!(cuDevicePrimaryCtxReset_v2(handle))
}

/// An integer attribute of device `ordinal`.
pub fn attribute(ordinal: i32, attr: i32) -> Result<i32, Error> {
    let dev = device_handle(ordinal)?;
    let mut v = 0;
    cu!(cuDeviceGetAttribute(&mut v, attr, dev))?;
    Ok(v)
}

/// The launch limits of device `ordinal`.
pub fn limits(ordinal: i32) -> Result<Limits, Error> {
    if let Some(l) = devices().limits.get(&ordinal) {
        return Ok(*l);
    }
    let a = |attr| attribute(ordinal, attr).map(|v| v.max(0) as u32);
    let l = Limits { max_threads: a(1)?, max_block: [a(2)?, a(3)?, a(4)?], max_grid: [a(5)?, a(6)?, a(7)?] };
    devices().limits.insert(ordinal, l);
    Ok(l)
}
