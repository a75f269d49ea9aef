//! Diagnostics: what a checker found, where (CUDA source line, PTX line,
//! block, thread, lane), and how often. The same place is reported once,
//! with a count.

use std::collections::HashMap;
use std::fmt;

/// The kinds of bug `warpsim check` reports.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DiagKind {
    /// Two accesses to the same bytes from different threads, at least one
    /// a write, not ordered by a happens-before edge.
    Race,
    /// A block barrier reached by only part of a warp (or of the block).
    BarrierDivergence,
    /// A barrier that can never complete.
    Deadlock,
    /// A warp-synchronous instruction whose member mask is wrong.
    SyncMask,
    OutOfBounds,
    Misaligned,
    /// A read of shared or local memory that nothing wrote.
    Uninitialized,
}

impl DiagKind {
    /// The name used in JSON (`"kind"`).
    pub fn name(self) -> &'static str {
        match self {
            DiagKind::Race => "race",
            DiagKind::BarrierDivergence => "barrier_divergence",
            DiagKind::Deadlock => "deadlock",
            DiagKind::SyncMask => "sync_mask",
            DiagKind::OutOfBounds => "out_of_bounds",
            DiagKind::Misaligned => "misaligned",
            DiagKind::Uninitialized => "uninitialized",
        }
    }

    /// The name used on the terminal.
    pub fn title(self) -> &'static str {
        match self {
            DiagKind::Race => "data race",
            DiagKind::BarrierDivergence => "barrier divergence",
            DiagKind::Deadlock => "deadlock",
            DiagKind::SyncMask => "sync mask",
            DiagKind::OutOfBounds => "out of bounds",
            DiagKind::Misaligned => "misaligned access",
            DiagKind::Uninitialized => "uninitialised read",
        }
    }
}

/// One place in the kernel, executed by one thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    pub ptx_line: u32,
    /// `file:line` from `.loc`.
    pub source_line: Option<String>,
    pub opcode: String,
    pub block: [u32; 3],
    pub thread: Option<[u32; 3]>,
    pub warp: Option<u32>,
    pub lane: Option<u32>,
    /// `read`, `write` or `atomic` for memory accesses.
    pub access: Option<&'static str>,
}

impl Site {
    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "ptx_line": self.ptx_line,
            "source_line": self.source_line,
            "instruction": self.opcode,
            "block": self.block,
            "thread": self.thread,
            "warp": self.warp,
            "lane": self.lane,
            "access": self.access,
        })
    }

    /// Who executed it, as `warpsim check` prints it after "by":
    /// `block (0,0,0) thread (3,0,0) (warp 0 lane 3)`.
    pub fn who(&self) -> String {
        let [bx, by, bz] = self.block;
        let mut s = format!("block ({bx},{by},{bz})");
        if let Some([x, y, z]) = self.thread {
            s += &format!(" thread ({x},{y},{z})");
        }
        match (self.warp, self.lane) {
            (Some(w), Some(l)) => s += &format!(" (warp {w} lane {l})"),
            (Some(w), None) => s += &format!(" (warp {w})"),
            _ => {}
        }
        s
    }

    /// Where, as `warpsim check` prints it after "at": `kernel.cu:12 (PTX line 40: `st.global.u32`)`,
    /// or `PTX line 40: ...` without line info.
    pub fn where_(&self) -> String {
        match &self.source_line {
            Some(src) => format!("{src} (PTX line {}: `{}`)", self.ptx_line, self.opcode),
            None => format!("PTX line {}: `{}`", self.ptx_line, self.opcode),
        }
    }
}

/// One finding, with the first instance's details and how many instances there were.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub kind: DiagKind,
    pub message: String,
    pub site: Site,
    /// For a race: the other access.
    pub other: Option<Site>,
    /// `global`, `shared` or `local` for memory findings.
    pub space: Option<&'static str>,
    pub address: Option<u64>,
    /// How many times this place was found (lane accesses, executions).
    pub count: u64,
}

impl Diagnostic {
    pub fn ptx_line(&self) -> u32 {
        self.site.ptx_line
    }

    pub fn source_line(&self) -> Option<&str> {
        self.site.source_line.as_deref()
    }

    /// The threads involved (this access's, then for a race the other's), each with
    /// its block, thread, warp and lane and the `text` `warpsim check` prints for it.
    fn threads(&self) -> serde_json::Value {
        let one = |s: &Site| serde_json::json!({"block": s.block, "thread": s.thread, "warp": s.warp, "lane": s.lane, "text": s.who()});
        let mut v = vec![one(&self.site)];
        v.extend(self.other.as_ref().map(one));
        v.into()
    }

    /// The object `warpsim corpus --check --json` prints in `"diagnostics"`: kind, message,
    /// `place` and `threads` (as the terminal report words them), and the parts of each.
    pub fn to_json(&self) -> serde_json::Value {
        let mut j = serde_json::json!({
            "kind": self.kind.name(),
            "message": self.message,
            "ptx_line": self.site.ptx_line,
            "source_line": self.site.source_line,
            "instruction": self.site.opcode,
            "block": self.site.block,
            "thread": self.site.thread,
            "warp": self.site.warp,
            "lane": self.site.lane,
            "count": self.count,
            "place": self.site.where_(),
            "threads": self.threads(),
        });
        let o = j.as_object_mut().expect("object");
        if let Some(a) = self.site.access {
            o.insert("access".into(), a.into());
        }
        if let Some(s) = self.space {
            o.insert("space".into(), s.into());
        }
        if let Some(a) = self.address {
            o.insert("address".into(), format!("{a:#x}").into());
        }
        if let Some(other) = &self.other {
            o.insert("other".into(), other.to_json());
        }
        j
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.title(), self.message)?;
        write!(f, "\n  at {}", self.site.where_())?;
        write!(f, "\n  by {}", self.site.who())?;
        if let Some(o) = &self.other {
            write!(f, "\n  and {} at {}", o.who(), o.where_())?;
        }
        if self.count > 1 {
            write!(f, "\n  ({} times at this place)", self.count)?;
        }
        Ok(())
    }
}

/// Renders diagnostics for the terminal: one paragraph each, then a summary line.
pub fn render(diags: &[Diagnostic]) -> String {
    if diags.is_empty() {
        return "warpsim check: no problems found\n".to_string();
    }
    let mut s = String::new();
    for d in diags {
        s += &format!("{d}\n\n");
    }
    let mut kinds: Vec<(DiagKind, usize)> = Vec::new();
    for d in diags {
        match kinds.iter_mut().find(|k| k.0 == d.kind) {
            Some(k) => k.1 += 1,
            None => kinds.push((d.kind, 1)),
        }
    }
    kinds.sort();
    let parts: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {}", k.name())).collect();
    s += &format!("warpsim check: {} problem place(s): {}\n", diags.len(), parts.join(", "));
    s
}

/// What to do about a kind of bug, once per kind in [`render_grouped`].
pub fn advice(kind: DiagKind, one_address: bool) -> &'static str {
    match kind {
        DiagKind::Race if one_address => {
            "Many threads read-modify-write one address (like `out[0] += x`): a barrier cannot make that correct; \
             use an atomic (atomicAdd) or reduce in shared memory or with shuffles first."
        }
        DiagKind::Race => {
            "Two threads touch the same bytes, one writing, with nothing ordering them: put a barrier between the write and \
             the read (__syncthreads() for the block, __syncwarp() within a warp), or give each thread its own bytes."
        }
        DiagKind::BarrierDivergence => {
            "An aligned barrier (__syncthreads) must be reached by every thread of the block, the lanes of a warp together: \
             move it out of the divergent branch."
        }
        DiagKind::Deadlock => {
            "Some threads wait at a barrier that the others never reach (an early return, a branch): make every thread reach it."
        }
        DiagKind::SyncMask => {
            "A *_sync intrinsic's mask must name exactly the lanes that execute it: compute it with __activemask() or \
             __ballot_sync() where only some lanes arrive."
        }
        DiagKind::OutOfBounds => "An index runs past its buffer: check the bounds test (`if (i < n)`) and the buffer's size.",
        DiagKind::Misaligned => "An access's address is not a multiple of its size (a vector load needs the whole vector's alignment).",
        DiagKind::Uninitialized => "A thread reads shared or local memory that nothing wrote: write it first, or barrier after the writes.",
    }
}

/// Diagnostics of one kind on one source line.
pub struct DiagGroup<'a> {
    pub kind: DiagKind,
    /// `kernel.cu:42`, or `PTX line 118` where the PTX has no line info.
    pub line: String,
    pub diags: Vec<&'a Diagnostic>,
}

impl DiagGroup<'_> {
    /// How many times the group's places were found, in all.
    pub fn times(&self) -> u64 {
        self.diags.iter().map(|d| d.count).sum()
    }

    /// `Data race at kernel.cu:42: 3 places, 96 times`.
    pub fn heading(&self) -> String {
        let times = self.times();
        let places = if self.diags.len() == 1 { "1 place".to_string() } else { format!("{} places", self.diags.len()) };
        format!("{} at {}: {places}, {times} time{}", self.kind.title(), self.line, if times == 1 { "" } else { "s" })
    }

    /// The group on one line, as the terminal and `corpus --check` show it:
    /// `race at k.cu:42 [3 places, 96x; --verbose lists them]: <the first place's message>`.
    pub fn summary_line(&self) -> String {
        let (places, times) = (self.diags.len(), self.times());
        let count = match (places, times) {
            (1, 1) => String::new(),
            (1, t) => format!(" [{t}x]"),
            (p, t) => format!(" [{p} places, {t}x; --verbose lists them]"),
        };
        format!("{} at {}{count}: {}", self.kind.name(), self.line, self.diags[0].message)
    }

    /// One instruction racing with itself: many threads store to one address (a read-modify-write).
    fn one_address(&self) -> bool {
        self.diags.iter().any(|d| d.other.as_ref().is_some_and(|o| o.ptx_line == d.site.ptx_line))
    }
}

/// Groups diagnostics by kind and source line, in order of first appearance,
/// with one paragraph of advice per kind found.
pub fn group_diagnostics(diags: &[Diagnostic]) -> (Vec<DiagGroup<'_>>, Vec<(DiagKind, &'static str)>) {
    let mut groups: Vec<DiagGroup<'_>> = Vec::new();
    for d in diags {
        let line = d.site.source_line.clone().unwrap_or_else(|| format!("PTX line {}", d.site.ptx_line));
        match groups.iter_mut().find(|g| g.kind == d.kind && g.line == line) {
            Some(g) => g.diags.push(d),
            None => groups.push(DiagGroup { kind: d.kind, line, diags: vec![d] }),
        }
    }
    let mut kinds: Vec<(DiagKind, bool)> = Vec::new();
    for g in &groups {
        let one = g.one_address();
        match kinds.iter_mut().find(|k| k.0 == g.kind) {
            Some(k) => k.1 |= one,
            None => kinds.push((g.kind, one)),
        }
    }
    let advice = kinds.iter().map(|&(k, one)| (k, advice(k, one))).collect();
    (groups, advice)
}

/// Renders diagnostics grouped by kind and source line: one line for each
/// group (its places, times and first message, as `corpus --check` shows it)
/// with where and by whom it was first found, then one paragraph of advice per
/// kind. With `verbose`, every diagnostic as [`render`] shows it.
pub fn render_grouped(diags: &[Diagnostic], verbose: bool) -> String {
    if verbose || diags.is_empty() {
        return render(diags);
    }
    let (groups, advice) = group_diagnostics(diags);
    let mut s = String::new();
    let mut reasons: Vec<&str> = Vec::new();
    for g in &groups {
        let d = g.diags[0];
        let mut line = g.summary_line();
        // A race's reason (after the last "; ") once: later lines with the same one refer to it.
        if let Some((_, why)) = d.message.rsplit_once("; ").filter(|_| g.kind == DiagKind::Race) {
            if reasons.contains(&why) {
                line = format!("{}the same reason as above", line.strip_suffix(why).unwrap_or(&line));
            } else {
                reasons.push(why);
            }
        }
        s += &format!("{line}\n  first at {} by {}", d.site.where_(), d.site.who());
        if let Some(o) = &d.other {
            s += &format!(",\n  and {} at {}", o.who(), o.where_());
        }
        s += "\n";
    }
    s += "\n";
    for (k, a) in &advice {
        s += &format!("{}: {a}\n", k.title());
    }
    let parts: Vec<String> =
        advice.iter().map(|(k, _)| format!("{} {}", groups.iter().filter(|g| g.kind == *k).count(), k.name())).collect();
    s += &format!("\nwarpsim check: {} problem place(s) on {} line(s): {}\n", diags.len(), groups.len(), parts.join(", "));
    s
}

/// Deduplicating collector: one diagnostic per key, counted.
#[derive(Default)]
pub struct Collector {
    index: HashMap<(DiagKind, u32, u32, u32), usize>,
    pub diags: Vec<Diagnostic>,
}

/// At most this many distinct places are kept (a badly broken kernel would
/// otherwise produce one per instruction); later ones are only counted.
const MAX_PLACES: usize = 1000;

impl Collector {
    /// Counts an instance of `key`; builds the diagnostic the first time.
    #[inline]
    pub fn report(&mut self, key: (DiagKind, u32, u32, u32), build: impl FnOnce() -> Diagnostic) {
        if let Some(&i) = self.index.get(&key) {
            self.diags[i].count += 1;
            return;
        }
        if self.diags.len() >= MAX_PLACES {
            return;
        }
        let mut d = build();
        d.count = 1;
        self.index.insert(key, self.diags.len());
        self.diags.push(d);
    }

    pub fn merge(&mut self, other: Collector) {
        for d in other.diags {
            let key = (d.kind, d.site.ptx_line, d.other.as_ref().map_or(u32::MAX, |o| o.ptx_line), hash_str(&d.message));
            match self
                .diags
                .iter_mut()
                .find(|x| (x.kind, x.site.ptx_line, x.other.as_ref().map_or(u32::MAX, |o| o.ptx_line), hash_str(&x.message)) == key)
            {
                Some(x) => x.count += d.count,
                None => self.diags.push(d),
            }
        }
    }
}

fn hash_str(s: &str) -> u32 {
    s.bytes().fold(0x811C_9DC5u32, |h, b| (h ^ b as u32).wrapping_mul(0x0100_0193))
}

/// `lanes 0-15, 32`: a lane mask as ranges.
pub fn lanes(mask: u64) -> String {
    let mut parts = Vec::new();
    let mut l = 0u32;
    while l < 64 {
        if mask >> l & 1 == 0 {
            l += 1;
            continue;
        }
        let start = l;
        while l < 64 && mask >> l & 1 != 0 {
            l += 1;
        }
        parts.push(if l - 1 == start { format!("{start}") } else { format!("{start}-{}", l - 1) });
    }
    if parts.is_empty() {
        "no lanes".into()
    } else if mask.count_ones() == 1 {
        format!("lane {}", parts[0])
    } else {
        format!("lanes {}", parts.join(", "))
    }
}
