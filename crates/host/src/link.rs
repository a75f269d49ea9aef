//! Linking PTX units, as the driver's JIT linker does for `-rdc` programs (a version-2 fatbin
//! wrapper lists one relocatable fatbin per translation unit) and for `cuLinkAddData` with
//! several PTX inputs: `.extern` functions and variables resolve against the `.visible` (or
//! `.weak` / `.common`) definitions of other units.
//!
//! The result is one PTX text per input unit (its *view*): the unit itself, completed with the
//! definitions it uses from the other units (transitively), so that each kernel is compiled
//! with what ptxas would give it (its own unit's module-level `.shared` variables, not every
//! unit's). Variables keep their names, and the loader gives each name one object shared by
//! all views (a `__device__` variable defined in one unit and used from another is one
//! variable). Internal (unlinked) names that clash across units are renamed, `.file` indices
//! are renumbered so line info keeps naming the right file, and a weak definition loses to a
//! strong one everywhere.
//!
//! Errors: a symbol defined (strongly) in two units names both; an `.extern` no unit defines
//! names the unit that needs it. Calls the simulator itself provides (PTX system calls such as
//! `vprintf`, `malloc`, `__assertfail`, and the device runtime's `cuda*` functions) and
//! `.extern .shared` arrays (dynamic shared memory) need no definition.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use warpsim_ptx::lexer::{tokenize, Tok, Token};

/// One PTX unit to link: what messages call it, and its text.
#[derive(Copy, Clone, Debug)]
pub struct LinkInput<'a> {
    pub name: &'a str,
    pub ptx: &'a str,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LinkError {
    #[error("{unit}: byte {offset} is not PTX")]
    Lex { unit: String, offset: u32 },
    #[error("{unit}: the text ends inside the item that starts at byte {offset} (unbalanced braces or a missing `;`)")]
    Unterminated { unit: String, offset: u32 },
    #[error("duplicate symbol `{symbol}`: defined in {first} and in {second}")]
    Duplicate { symbol: String, first: String, second: String },
    #[error("unresolved symbol `{symbol}`: {unit} uses this {what}, which no unit defines")]
    Unresolved { symbol: String, what: &'static str, unit: String },
}

/// Functions the simulator (or the device runtime) provides: an `.extern` of one needs no unit
/// to define it. The PTX ISA's system calls, and the device runtime API (`cudaMalloc`,
/// `cudaGetParameterBufferV2`, ...), which nvlink takes from libcudadevrt.
pub fn provided_by_the_device(name: &str) -> bool {
    matches!(name, "vprintf" | "malloc" | "free" | "__assertfail") || name.starts_with("cuda")
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Linkage {
    Visible,
    Weak,
    Extern,
    Internal,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    Entry,
    Func,
    /// A variable of this state space (`global`, `const`, `shared`, ...).
    Var(&'static str),
    /// `.version`, `.target`, `.address_size`, `.file`, `.section`, `.pragma`, anything else.
    Other,
}

#[derive(Clone, Debug)]
struct Item {
    kind: Kind,
    linkage: Linkage,
    names: Vec<String>,
    /// A function with a body, or a variable not `.extern`.
    defines: bool,
    /// Byte range of the whole item, and of a function's body (from `{` to `}`).
    start: u32,
    end: u32,
    body: Option<(u32, u32)>,
    /// Names used inside the item (every identifier; only top-level names matter).
    refs: Vec<String>,
    is_file: bool,
}

impl Item {
    fn symbol(&self) -> bool {
        !matches!(self.kind, Kind::Other)
    }

    /// Whether the name is visible to other units (entries always are).
    fn exported(&self) -> bool {
        self.kind == Kind::Entry || matches!(self.linkage, Linkage::Visible | Linkage::Weak)
    }

    fn what(&self) -> &'static str {
        match self.kind {
            Kind::Entry => "kernel",
            Kind::Func => "function",
            _ => "variable",
        }
    }
}

struct Unit<'a> {
    label: String,
    src: &'a str,
    items: Vec<Item>,
    /// `.version` as (major, minor) and the byte range of its number.
    version: Option<((u32, u32), (u32, u32))>,
    /// Byte ranges of file indices (`.file N`, `.loc N`, `inlined_at N`) and their values.
    file_indices: Vec<(u32, u32, u32)>,
    /// Byte ranges of every identifier, by name.
    idents: HashMap<String, Vec<(u32, u32)>>,
}

fn text<'a>(src: &'a str, t: &Token) -> &'a str {
    src.get(t.start as usize..t.end as usize).unwrap_or("")
}

/// A short description of a unit for messages: its name, and its source file or first kernel.
fn describe(name: &str, src: &str, toks: &[Token]) -> String {
    let mut file = None;
    let mut kernel = None;
    for (i, t) in toks.iter().enumerate() {
        let s = text(src, t);
        if file.is_none() && s == ".file" {
            file = toks.get(i + 2).filter(|t| t.tok == Tok::Str).map(|t| text(src, t).trim_matches('"').to_string());
        }
        if kernel.is_none() && s == ".entry" {
            kernel = toks.get(i + 1).filter(|t| t.tok == Tok::Ident).map(|t| text(src, t).to_string());
        }
    }
    match (file, kernel) {
        (Some(f), _) => format!("{name} ({f})"),
        (None, Some(k)) => format!("{name} (kernel {k})"),
        (None, None) => name.to_string(),
    }
}

/// Index just past the `}` matching the `{` at `i`.
fn skip_braced(toks: &[Token], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    while let Some(t) = toks.get(i) {
        match t.tok {
            Tok::LBrace => depth += 1,
            Tok::RBrace => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Index just past the `;` ending the statement at `i` (braces and parentheses nest).
fn skip_statement(toks: &[Token], mut i: usize) -> Option<usize> {
    let mut depth = 0i64;
    while let Some(t) = toks.get(i) {
        match t.tok {
            Tok::LBrace | Tok::LParen | Tok::LBracket => depth += 1,
            Tok::RBrace | Tok::RParen | Tok::RBracket => depth -= 1,
            Tok::Semi if depth <= 0 => return Some(i + 1),
            _ => {}
        }
        i += 1;
    }
    None
}

fn scan<'a>(name: &str, src: &'a str) -> Result<Unit<'a>, LinkError> {
    let toks = tokenize(src).map_err(|offset| LinkError::Lex { unit: name.to_string(), offset })?;
    let label = describe(name, src, &toks);
    let unterminated = |t: &Token| LinkError::Unterminated { unit: label.clone(), offset: t.start };
    let mut items = Vec::new();
    let mut version = None;
    let mut i = 0;
    while i < toks.len() {
        let first = toks[i];
        let mut linkage = Linkage::Internal;
        while let Some(t) = toks.get(i) {
            match text(src, t) {
                ".visible" => linkage = Linkage::Visible,
                ".weak" | ".common" => linkage = Linkage::Weak,
                ".extern" => linkage = Linkage::Extern,
                _ => break,
            }
            i += 1;
        }
        let Some(head) = toks.get(i) else { return Err(unterminated(&first)) };
        let word = text(src, head);
        let mut item = Item {
            kind: Kind::Other,
            linkage,
            names: Vec::new(),
            defines: false,
            start: first.start,
            end: 0,
            body: None,
            refs: Vec::new(),
            is_file: false,
        };
        let end = match word {
            ".version" => {
                if let Some(v) = toks.get(i + 1) {
                    let (major, minor) = text(src, v).split_once('.').unwrap_or((text(src, v), "0"));
                    if let (Ok(a), Ok(b)) = (major.parse(), minor.parse()) {
                        version = Some(((a, b), (v.start, v.end)));
                    }
                }
                i + 2
            }
            ".address_size" => i + 2,
            ".target" => {
                let mut j = i + 2;
                while toks.get(j).is_some_and(|t| t.tok == Tok::Comma) {
                    j += 2;
                }
                j
            }
            ".file" => {
                item.is_file = true;
                let mut j = i + 3;
                while toks.get(j).is_some_and(|t| t.tok == Tok::Comma) {
                    j += 2;
                }
                j
            }
            ".section" => {
                let mut j = i;
                while toks.get(j).is_some_and(|t| t.tok != Tok::LBrace) {
                    j += 1;
                }
                skip_braced(&toks, j).ok_or_else(|| unterminated(&first))?
            }
            ".entry" | ".func" => {
                item.kind = if word == ".entry" { Kind::Entry } else { Kind::Func };
                let mut j = i + 1;
                let mut parens = 0i64;
                loop {
                    let Some(t) = toks.get(j) else { return Err(unterminated(&first)) };
                    match t.tok {
                        Tok::LParen => parens += 1,
                        Tok::RParen => parens -= 1,
                        Tok::Ident if parens == 0 && item.names.is_empty() => item.names.push(text(src, t).to_string()),
                        Tok::Semi if parens <= 0 => break j + 1,
                        Tok::LBrace if parens <= 0 => {
                            let e = skip_braced(&toks, j).ok_or_else(|| unterminated(&first))?;
                            item.body = Some((t.start, toks[e - 1].end));
                            item.defines = true;
                            break e;
                        }
                        _ => {}
                    }
                    j += 1;
                }
            }
            w if w.len() > 1 && warpsim_ptx::StateSpace::from_ptx(&w[1..]).is_some() => {
                item.kind = Kind::Var(match &w[1..] {
                    "global" => "global",
                    "const" => "const",
                    "shared" => "shared",
                    _ => "other",
                });
                item.defines = linkage != Linkage::Extern;
                let e = skip_statement(&toks, i).ok_or_else(|| unterminated(&first))?;
                let mut depth = 0i64;
                for k in i + 1..e {
                    match toks[k].tok {
                        Tok::LBrace | Tok::LParen | Tok::LBracket => depth += 1,
                        Tok::RBrace | Tok::RParen | Tok::RBracket => depth -= 1,
                        Tok::Ident if depth == 0 && matches!(toks[k - 1].tok, Tok::Dot | Tok::Comma) => {
                            item.names.push(text(src, &toks[k]).to_string())
                        }
                        _ => {}
                    }
                }
                e
            }
            _ => match toks[i..].iter().position(|t| matches!(t.tok, Tok::Semi | Tok::LBrace)) {
                Some(k) if toks[i + k].tok == Tok::LBrace => skip_braced(&toks, i + k).ok_or_else(|| unterminated(&first))?,
                Some(k) => i + k + 1,
                None => toks.len(),
            },
        };
        let end = end.min(toks.len()).max(i + 1);
        item.end = toks[end - 1].end;
        if item.symbol() {
            let refs: HashSet<&str> = toks[i..end].iter().filter(|t| t.tok == Tok::Ident).map(|t| text(src, t)).collect();
            item.refs = refs.into_iter().map(str::to_string).collect();
            item.refs.sort();
        }
        items.push(item);
        i = end;
    }
    let mut file_indices = Vec::new();
    let mut idents: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
    for (k, t) in toks.iter().enumerate() {
        let s = text(src, t);
        if matches!(s, ".file" | ".loc" | "inlined_at") {
            if let Some(n) = toks.get(k + 1).filter(|n| n.tok == Tok::Int) {
                if let Ok(v) = text(src, n).trim_end_matches('U').parse() {
                    file_indices.push((n.start, n.end, v));
                }
            }
        }
        if t.tok == Tok::Ident {
            idents.entry(s.to_string()).or_default().push((t.start, t.end));
        }
    }
    Ok(Unit { label, src, items, version, file_indices, idents })
}

/// Where a name's definition is: (unit, item).
type Def = (usize, usize);

/// Links `units`: one PTX text per unit, in order (see the module header).
pub fn link_ptx(units: &[LinkInput<'_>]) -> Result<Vec<String>, LinkError> {
    let units: Vec<Unit<'_>> = units.iter().map(|u| scan(u.name, u.ptx)).collect::<Result<_, _>>()?;
    // Exported definitions: the strong one, else the first weak one.
    let mut chosen: HashMap<&str, (Def, bool)> = HashMap::new();
    for (u, unit) in units.iter().enumerate() {
        for (k, it) in unit.items.iter().enumerate() {
            if !it.symbol() || !it.defines || !it.exported() {
                continue;
            }
            let strong = it.linkage != Linkage::Weak;
            for n in &it.names {
                match chosen.get(n.as_str()) {
                    Some(&((v, _), true)) if strong => {
                        return Err(LinkError::Duplicate { symbol: n.clone(), first: units[v].label.clone(), second: unit.label.clone() })
                    }
                    Some(&(_, false)) if strong => {
                        chosen.insert(n, ((u, k), true));
                    }
                    Some(_) => {}
                    None => {
                        chosen.insert(n, ((u, k), strong));
                    }
                }
            }
        }
    }
    // Each unit's own definitions (any linkage), and the names it declares at top level.
    let own: Vec<HashMap<&str, usize>> = units
        .iter()
        .map(|unit| {
            let mut m = HashMap::new();
            for (k, it) in unit.items.iter().enumerate().filter(|(_, it)| it.symbol() && it.defines) {
                for n in &it.names {
                    m.entry(n.as_str()).or_insert(k);
                }
            }
            m
        })
        .collect();
    // Each unit's declarations without a definition (`.extern`s, prototypes).
    let decls: Vec<HashMap<&str, usize>> = units
        .iter()
        .map(|unit| {
            let mut m = HashMap::new();
            for (k, it) in unit.items.iter().enumerate().filter(|(_, it)| it.symbol() && !it.defines) {
                for n in &it.names {
                    m.entry(n.as_str()).or_insert(k);
                }
            }
            m
        })
        .collect();
    let declared: Vec<HashSet<&str>> = units
        .iter()
        .map(|u| u.items.iter().filter(|it| it.symbol()).flat_map(|it| it.names.iter().map(String::as_str)).collect())
        .collect();
    let exported: Vec<HashSet<&str>> = units
        .iter()
        .map(|u| u.items.iter().filter(|it| it.symbol() && it.exported()).flat_map(|it| it.names.iter().map(String::as_str)).collect())
        .collect();
    // Declarations needing a definition from elsewhere.
    for (u, unit) in units.iter().enumerate() {
        for it in unit.items.iter().filter(|it| it.symbol() && !it.defines) {
            if it.kind == Kind::Var("shared") {
                continue;
            }
            for n in &it.names {
                let provided = matches!(it.kind, Kind::Func) && provided_by_the_device(n);
                if !own[u].contains_key(n.as_str()) && !chosen.contains_key(n.as_str()) && !provided {
                    return Err(LinkError::Unresolved { symbol: n.clone(), what: it.what(), unit: unit.label.clone() });
                }
            }
        }
    }
    // Internal names to rename: those an earlier unit declares, or a later one exports.
    let all: HashSet<&str> = declared.iter().flatten().copied().collect();
    let mut taken: HashSet<String> = all.iter().map(|s| s.to_string()).collect();
    let mut renames: Vec<HashMap<&str, String>> = vec![HashMap::new(); units.len()];
    for (u, unit) in units.iter().enumerate() {
        for it in unit.items.iter().filter(|it| it.symbol() && !it.exported() && it.linkage != Linkage::Extern) {
            for n in &it.names {
                let clash =
                    (0..u).any(|v| declared[v].contains(n.as_str())) || (u + 1..units.len()).any(|v| exported[v].contains(n.as_str()));
                if clash && !renames[u].contains_key(n.as_str()) {
                    let mut new = format!("{n}_$u{u}");
                    while taken.contains(&new) || unit.idents.contains_key(&new) {
                        new.push('$');
                    }
                    taken.insert(new.clone());
                    renames[u].insert(n, new);
                }
            }
        }
    }
    // File indices: unit u's are shifted past those of the units before it.
    let mut file_offset = vec![0u32; units.len()];
    for u in 1..units.len() {
        let prev_max = units[u - 1].file_indices.iter().map(|f| f.2).max().unwrap_or(0);
        file_offset[u] = file_offset[u - 1].saturating_add(prev_max);
    }
    let edits: Vec<Vec<(u32, u32, String)>> = units
        .iter()
        .enumerate()
        .map(|(u, unit)| {
            let mut e: Vec<(u32, u32, String)> = Vec::new();
            for (old, new) in &renames[u] {
                for &(s, t) in unit.idents.get(*old).into_iter().flatten() {
                    e.push((s, t, new.clone()));
                }
            }
            if file_offset[u] > 0 {
                for &(s, t, v) in &unit.file_indices {
                    e.push((s, t, v.saturating_add(file_offset[u]).to_string()));
                }
            }
            e.sort_by_key(|x| x.0);
            e
        })
        .collect();

    let mut views = Vec::with_capacity(units.len());
    for (u, unit) in units.iter().enumerate() {
        // The definition a name used in unit `w` means in this view.
        let resolve = |w: usize, n: &str| -> Option<Def> {
            if let Some(&k) = own[w].get(n) {
                if !units[w].items[k].exported() {
                    return Some((w, k));
                }
            }
            chosen.get(n).map(|&(d, _)| d).or_else(|| own[w].get(n).map(|&k| (w, k)))
        };
        let mut cut: Vec<(u32, u32, String)> = Vec::new();
        let mut queue: VecDeque<Def> = VecDeque::new();
        for (k, it) in unit.items.iter().enumerate().filter(|(_, it)| it.symbol() && it.kind != Kind::Var("shared")) {
            for n in &it.names {
                let Some(d) = resolve(u, n) else { continue };
                if d == (u, k) {
                    continue;
                }
                if matches!(it.kind, Kind::Var(_)) {
                    // An `.extern` declaration or a losing weak definition: the chosen one comes instead.
                    cut.push((it.start, it.end, String::new()));
                } else if let Some((s, e)) = it.body {
                    // A losing weak function: its prototype stays.
                    cut.push((s, e, ";".into()));
                }
                if d.0 != u {
                    queue.push_back(d);
                }
            }
        }
        let mut pulled: BTreeSet<Def> = BTreeSet::new();
        while let Some(d) = queue.pop_front() {
            if d.0 == u || !pulled.insert(d) {
                continue;
            }
            for r in &units[d.0].items[d.1].refs {
                match resolve(d.0, r) {
                    // Kernels are never copied (device code cannot launch them here).
                    Some(next) if units[next.0].items[next.1].kind == Kind::Entry => {}
                    Some(next) => queue.push_back(next),
                    // A function the device provides: its declaration comes along.
                    None if !declared[u].contains(r.as_str()) => {
                        if let Some(&k) = decls[d.0].get(r.as_str()) {
                            queue.push_back((d.0, k));
                        }
                    }
                    None => {}
                }
            }
        }
        let mut version = unit.version.map(|v| v.0);
        for &(w, _) in &pulled {
            version = version.max(units[w].version.map(|v| v.0));
        }
        let mut own_edits = edits[u].clone();
        own_edits.retain(|e| !cut.iter().any(|c| c.0 <= e.0 && e.1 <= c.1));
        own_edits.extend(cut);
        if let (Some((v, (s, e))), Some(max)) = (unit.version, version) {
            if max > v {
                own_edits.push((s, e, format!("{}.{}", max.0, max.1)));
            }
        }
        own_edits.sort_by_key(|x| x.0);
        let mut out = apply(unit.src, 0, unit.src.len() as u32, &own_edits);
        let mut by_unit: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for &(w, k) in &pulled {
            by_unit.entry(w).or_default().push(k);
        }
        for (w, ks) in by_unit {
            let from = &units[w];
            out.push_str(&format!("\n// warpsim link: from {}\n", from.label));
            let files = from.items.iter().filter(|it| it.is_file);
            for it in files.chain(ks.iter().map(|&k| &from.items[k])) {
                out.push_str(&apply(from.src, it.start, it.end, &edits[w]));
                out.push('\n');
            }
        }
        views.push(out);
    }
    Ok(views)
}

/// `src[start..end]` with the (sorted, disjoint) replacements inside it made.
fn apply(src: &str, start: u32, end: u32, edits: &[(u32, u32, String)]) -> String {
    let mut out = String::with_capacity((end - start) as usize + 64);
    let mut at = start;
    let first = edits.partition_point(|e| e.0 < start);
    for (s, e, r) in edits[first..].iter().take_while(|e| e.0 < end) {
        if *s < at || *e > end {
            continue;
        }
        out.push_str(src.get(at as usize..*s as usize).unwrap_or(""));
        out.push_str(r);
        at = *e;
    }
    out.push_str(src.get(at as usize..end as usize).unwrap_or(""));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{launch, Context, Dims, LaunchOptions, Module};

    /// nvcc's shape of a `-rdc` unit: an `.extern` function and variable defined in `B`, a weak
    /// function `B` overrides, and an internal function whose name `B` uses too.
    const A: &str = include_str!("../testdata/link_a.ptx");

    const B: &str = include_str!("../testdata/link_b.ptx");

    fn link(units: &[(&str, &str)]) -> Result<Vec<String>, LinkError> {
        let inputs: Vec<LinkInput<'_>> = units.iter().map(|&(name, ptx)| LinkInput { name, ptx }).collect();
        link_ptx(&inputs)
    }

    /// Runs kernel `name` of `ptx` on one thread with a 16-byte output buffer; its four words.
    fn run(ptx: &str, name: &str) -> Result<[u32; 4], crate::HostError> {
        let mut m = Module::from_ptx("view.ptx", ptx.to_string());
        let k = m.kernel(name)?;
        let mut ctx = Context::new();
        ctx.load(&k);
        let out = ctx.alloc("out", 16, None);
        launch(&mut ctx, &k, &Dims::new([1, 1, 1], [1, 1, 1], 0), &out.0.to_le_bytes(), &LaunchOptions::default())?;
        let b = ctx.read_vec(out, 16, "out")?;
        Ok(std::array::from_fn(|i| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap())))
    }

    #[test]
    fn a_kernel_calls_functions_and_reads_variables_of_the_other_unit() {
        assert!(run(A, "ka").is_err(), "unlinked, `poly` has no body");
        let views = link(&[("unit 1", A), ("unit 2", B)]).unwrap();
        assert_eq!(views.len(), 2);
        // poly(5) = 5 * k + B's helper; B's strong `twice` beats A's weak one; scale + counter;
        // A's own helper (B's was renamed).
        assert_eq!(run(&views[0], "ka").unwrap(), [51, 21, 103, 1000]);
        assert_eq!(run(&views[1], "kb").unwrap()[0], 3);
        // Each variable is declared once in each view that uses it; nothing is left `.extern`.
        let m = warpsim_ptx::parse_module("a", &views[0]).unwrap();
        let names: Vec<&str> = m.globals.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names.iter().filter(|n| **n == "counter").count(), 1, "{names:?}");
        assert!(m.globals.iter().all(|g| !g.is_extern), "{names:?}");
        assert!(names.contains(&"k") && names.contains(&"scale"), "{names:?}");
        // Kernels stay in their own unit; the weak `twice` is a prototype beside B's.
        assert!(m.function("kb").is_none());
        assert_eq!(m.functions.iter().filter(|f| f.name == "twice" && f.body.is_some()).count(), 1);
        // The newer PTX version of the units pulled in.
        assert!(views[0].starts_with(".version 9.5"), "{}", &views[0][..40]);
    }

    #[test]
    fn file_indices_and_clashing_internal_names_are_kept_apart() {
        let views = link(&[("unit 1", A), ("unit 2", B)]).unwrap();
        let m = warpsim_ptx::parse_module("a", &views[0]).unwrap();
        let files: Vec<(u32, &str)> = m.files.iter().map(|(i, f)| (*i, f.as_str())).collect();
        assert_eq!(files, [(1, "a.cu"), (2, "b.cu")]);
        assert!(views[0].contains(".loc 2 3 1") && views[0].contains(".loc 1 7 1"));
        let helpers: Vec<&str> = m.functions.iter().map(|f| f.name.as_str()).filter(|n| n.starts_with("helper")).collect();
        assert_eq!(helpers, ["helper", "helper_$u1"]);
        // B's own view calls its helper by the new name too.
        assert!(views[1].contains("call.uni (retval0), helper_$u1, ();"));
        assert!(!views[1].contains(" helper()"));
    }

    #[test]
    fn a_symbol_defined_twice_names_both_units() {
        let again = B.replace("\"b.cu\"", "\"c.cu\"");
        let e = link(&[("unit 1", A), ("unit 2", B), ("unit 3", &again)]).unwrap_err();
        assert_eq!(e, LinkError::Duplicate { symbol: "counter".into(), first: "unit 2 (b.cu)".into(), second: "unit 3 (c.cu)".into() });
        assert!(e.to_string().contains("`counter`: defined in unit 2 (b.cu) and in unit 3 (c.cu)"), "{e}");
        // Two weak definitions are no error: the first is taken.
        let weak = ".version 9.0\n.target sm_90\n.address_size 64\n.weak .global .align 4 .u32 w = 1;\n";
        let weak2 = weak.replace("= 1", "= 2");
        let views = link(&[("x", weak), ("y", &weak2)]).unwrap();
        assert!(views[1].contains("w = 1") && !views[1].contains("w = 2"), "{}", views[1]);
    }

    #[test]
    fn an_extern_no_unit_defines_names_the_unit_that_needs_it() {
        let e = link(&[("unit 1", A)]).unwrap_err();
        assert_eq!(e, LinkError::Unresolved { symbol: "poly".into(), what: "function", unit: "unit 1 (a.cu)".into() });
        let no_counter = B.replace(".visible .global .align 4 .u32 counter = 100;", "");
        let e = link(&[("unit 1", A), ("unit 2", &no_counter)]).unwrap_err().to_string();
        assert_eq!(e, "unresolved symbol `counter`: unit 1 (a.cu) uses this variable, which no unit defines");
    }

    #[test]
    fn device_provided_calls_and_dynamic_shared_need_no_definition() {
        let p = ".version 9.0\n.target sm_90\n.address_size 64\n\
                 .extern .func (.param .b32 func_retval0) vprintf(.param .b64 a, .param .b64 b);\n\
                 .extern .shared .align 16 .b8 smem[];\n\
                 .global .align 1 .b8 $str[3] = {65, 10, 0};\n\
                 .visible .func f()\n{\n.reg .b64 %rd<2>;\nmov.u64 %rd1, $str;\n{\n.param .b32 r;\ncall.uni (r), vprintf, (%rd1, %rd1);\n}\nret;\n}\n";
        let q = ".version 9.0\n.target sm_90\n.address_size 64\n.extern .func f();\n\
                 .global .align 1 .b8 $str[3] = {66, 10, 0};\n\
                 .visible .entry k()\n{\ncall.uni f, ();\nret;\n}\n";
        let views = link(&[("p", p), ("q", q)]).unwrap();
        // q's view: its own `$str` renamed (the earlier unit keeps the name), and p's vprintf declaration.
        assert!(views[1].contains("$str_$u1[3] = {66") && views[1].contains("$str[3] = {65"), "{}", views[1]);
        assert!(views[1].contains(".extern .func (.param .b32 func_retval0) vprintf"), "{}", views[1]);
        let m = warpsim_ptx::parse_module("q", &views[1]).unwrap();
        assert!(m.function("f").is_some());
    }

    #[test]
    fn text_that_is_not_ptx_is_an_error_not_a_panic() {
        assert_eq!(link(&[("bad", "\u{1}")]).unwrap_err(), LinkError::Lex { unit: "bad".into(), offset: 0 });
        for cut in [".visible", ".visible .entry k() {", ".global .u32 x", ".section .debug {", ".func (.param .b32 r) f("] {
            assert!(matches!(link(&[("cut", cut), ("b", B)]), Err(LinkError::Unterminated { .. })), "{cut}");
        }
        for junk in ["}", "{", ";;", ".version", ".target", ".file 1", ")", "= 3;", ".entry"] {
            let _ = link(&[("junk", junk), ("b", B)]);
        }
    }
}
