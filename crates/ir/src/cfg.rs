//! Control-flow graph over basic blocks and immediate post-dominators: where
//! the lanes of a divergent branch meet again (the SIMT stack's
//! reconvergence point).

use crate::inst::{Inst, Op, Pc};

/// Reconvergence point meaning "never": the paths only end at exit.
pub const NO_RECONV: Pc = Pc::MAX;

/// Successor program counters of `code[pc]`; `code.len()` stands for exit.
pub fn successors(code: &[Inst], pc: usize) -> Vec<usize> {
    let exit = code.len();
    let next = pc + 1;
    let inst = &code[pc];
    let guarded = inst.guard.is_some();
    match &inst.op {
        Op::Bra { target, .. } => {
            if guarded {
                vec![*target as usize, next]
            } else {
                vec![*target as usize]
            }
        }
        Op::BrxIdx { targets, .. } => targets.iter().map(|&t| t as usize).collect(),
        Op::Exit | Op::Trap => {
            if guarded {
                vec![next, exit]
            } else {
                vec![exit]
            }
        }
        _ => vec![next],
    }
}

/// Immediate post-dominator of every instruction, as a pc (`NO_RECONV` when
/// only exit post-dominates it).
pub fn immediate_post_dominators(code: &[Inst]) -> Vec<Pc> {
    let n = code.len();
    if n == 0 {
        return Vec::new();
    }
    // Basic blocks.
    let mut leader = vec![false; n + 1];
    leader[0] = true;
    for pc in 0..n {
        if code[pc].op.is_branch() {
            leader[pc + 1] = true;
            for s in successors(code, pc) {
                leader[s] = true;
            }
        }
    }
    let mut block_of = vec![0usize; n];
    let mut starts = Vec::new();
    for pc in 0..n {
        if leader[pc] {
            starts.push(pc);
        }
        block_of[pc] = starts.len() - 1;
    }
    let nb = starts.len();
    let exit_node = nb;
    let block_end = |b: usize| if b + 1 < nb { starts[b + 1] } else { n };
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); nb + 1];
    let mut pred: Vec<Vec<usize>> = vec![Vec::new(); nb + 1];
    for b in 0..nb {
        let last = block_end(b) - 1;
        for s in successors(code, last) {
            let t = if s >= n { exit_node } else { block_of[s] };
            if !succ[b].contains(&t) {
                succ[b].push(t);
                pred[t].push(b);
            }
        }
    }
    // Post-dominators: dominators of the reverse graph rooted at exit.
    // Reverse postorder of the reverse graph.
    let mut order = Vec::with_capacity(nb + 1);
    let mut seen = vec![false; nb + 1];
    let mut stack: Vec<(usize, usize)> = vec![(exit_node, 0)];
    seen[exit_node] = true;
    while let Some((node, i)) = stack.pop() {
        if i < pred[node].len() {
            stack.push((node, i + 1));
            let p = pred[node][i];
            if !seen[p] {
                seen[p] = true;
                stack.push((p, 0));
            }
        } else {
            order.push(node);
        }
    }
    order.reverse();
    let mut rpo_index = vec![usize::MAX; nb + 1];
    for (i, &b) in order.iter().enumerate() {
        rpo_index[b] = i;
    }
    const UNDEF: usize = usize::MAX;
    let mut idom = vec![UNDEF; nb + 1];
    idom[exit_node] = exit_node;
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().skip(1) {
            let mut new = UNDEF;
            for &s in &succ[b] {
                if idom[s] == UNDEF {
                    continue;
                }
                new = if new == UNDEF {
                    s
                } else {
                    let (mut x, mut y) = (new, s);
                    while x != y {
                        while rpo_index[x] > rpo_index[y] {
                            x = idom[x];
                        }
                        while rpo_index[y] > rpo_index[x] {
                            y = idom[y];
                        }
                    }
                    x
                };
            }
            if new != UNDEF && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    let mut out = vec![NO_RECONV; n];
    for pc in 0..n {
        let b = block_of[pc];
        if pc + 1 < block_end(b) {
            out[pc] = (pc + 1) as Pc;
        } else {
            let d = idom[b];
            out[pc] = if d == UNDEF || d == exit_node { NO_RECONV } else { starts[d] as Pc };
        }
    }
    out
}
