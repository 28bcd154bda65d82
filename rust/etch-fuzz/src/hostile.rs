//! Hostile but well-formed programs, built here at any size: many values,
//! many instructions, many chains, many operators. Every one is a valid
//! `.pte` that verifies; the point is how load and execute time grow with
//! the file (at most linearly). `etch-growth` times a series from
//! 1 KB to 1 MB (docs/robustness.md); `tests/growth.rs` asserts exact
//! outcomes.
//!
//! The builder writes a flatbuffer back to front (as flatbuffers are), in a
//! reversed byte vector so each object is appended: building is linear in
//! the file's size.

/// One field of a table: inline bytes, or a reference to an object.
enum F {
    Bytes(Vec<u8>),
    Ref(usize),
}

/// A flatbuffer being built; positions are distances from the file's end.
#[derive(Default)]
struct Fb(Vec<u8>);

impl Fb {
    /// Prepends `block`; its position.
    fn prepend(&mut self, block: &[u8]) -> usize {
        self.0.extend(block.iter().rev());
        self.0.len()
    }

    /// Position of byte `k` of a `len`-byte block about to be prepended.
    fn at(&self, len: usize, k: usize) -> usize {
        self.0.len() + len - k
    }

    fn table(&mut self, fields: &[(u16, F)]) -> usize {
        let mut object = vec![0u8; 4];
        let mut offsets = vec![0u16; fields.iter().map(|f| f.0 as usize + 1).max().unwrap_or(0)];
        let mut refs = Vec::new();
        for (slot, f) in fields {
            offsets[*slot as usize] = object.len() as u16;
            match f {
                F::Bytes(b) => {
                    object.extend_from_slice(b);
                    object.resize(object.len().next_multiple_of(4), 0);
                }
                F::Ref(target) => {
                    refs.push((object.len(), *target));
                    object.extend_from_slice(&[0; 4]);
                }
            }
        }
        let n = object.len();
        for (k, target) in refs {
            let v = (self.at(n, k) - target) as u32;
            object[k..k + 4].copy_from_slice(&v.to_le_bytes());
        }
        let mut vtable = Vec::new();
        vtable.extend_from_slice(&((4 + 2 * offsets.len()) as u16).to_le_bytes());
        vtable.extend_from_slice(&(n as u16).to_le_bytes());
        for o in &offsets {
            vtable.extend_from_slice(&o.to_le_bytes());
        }
        vtable.resize(vtable.len().next_multiple_of(4), 0);
        object[0..4].copy_from_slice(&(vtable.len() as i32).to_le_bytes());
        let table = self.prepend(&object);
        self.prepend(&vtable);
        table
    }

    fn scalars(&mut self, items: &[Vec<u8>]) -> usize {
        let mut b = (items.len() as u32).to_le_bytes().to_vec();
        for i in items {
            b.extend_from_slice(i);
        }
        self.prepend(&b)
    }

    fn refs(&mut self, targets: &[usize]) -> usize {
        let n = 4 + 4 * targets.len();
        let mut b = (targets.len() as u32).to_le_bytes().to_vec();
        for (i, &t) in targets.iter().enumerate() {
            b.extend_from_slice(&((self.at(n, 4 + 4 * i) - t) as u32).to_le_bytes());
        }
        self.prepend(&b)
    }

    fn string(&mut self, s: &str) -> usize {
        let mut b = (s.len() as u32).to_le_bytes().to_vec();
        b.extend_from_slice(s.as_bytes());
        b.push(0);
        b.resize(b.len().next_multiple_of(4), 0);
        self.prepend(&b)
    }

    /// An `Int` EValue (tag 2).
    fn int(&mut self, x: i64) -> usize {
        let t = self.table(&[(0, F::Bytes(x.to_le_bytes().to_vec()))]);
        self.table(&[(0, F::Bytes(vec![2])), (1, F::Ref(t))])
    }

    /// A KernelCall (tag 1) of operator `op` with the argument vector `args`.
    fn kernel_call(&mut self, op: i32, args: usize) -> usize {
        let call = self.table(&[(0, F::Bytes(op.to_le_bytes().to_vec())), (1, F::Ref(args))]);
        self.table(&[(0, F::Bytes(vec![1])), (1, F::Ref(call))])
    }

    /// A MoveCall (tag 3) of value `from` to value `to`.
    fn move_call(&mut self, from: i32, to: i32) -> usize {
        let m = self.table(&[
            (0, F::Bytes(from.to_le_bytes().to_vec())),
            (1, F::Bytes(to.to_le_bytes().to_vec())),
        ]);
        self.table(&[(0, F::Bytes(vec![3])), (1, F::Ref(m))])
    }

    fn chain(&mut self, io: usize, instructions: usize) -> usize {
        self.table(&[(0, F::Ref(io)), (1, F::Ref(io)), (2, F::Ref(instructions))])
    }

    fn operator(&mut self, name: &str) -> usize {
        let (n, o) = (self.string(name), self.string(""));
        self.table(&[(0, F::Ref(n)), (1, F::Ref(o))])
    }

    /// The file of one plan, "forward": no inputs, `outputs`, one empty
    /// memory id.
    fn method_file(
        mut self,
        values: usize,
        chains: usize,
        operators: usize,
        outputs: &[i32],
    ) -> Vec<u8> {
        let inputs = self.scalars(&[]);
        let outs: Vec<Vec<u8>> = outputs.iter().map(|x| x.to_le_bytes().to_vec()).collect();
        let outputs = self.scalars(&outs);
        let sizes = self.scalars(&[0i64.to_le_bytes().to_vec()]);
        let name = self.string("forward");
        let plan = self.table(&[
            (0, F::Ref(name)),
            (2, F::Ref(values)),
            (3, F::Ref(inputs)),
            (4, F::Ref(outputs)),
            (5, F::Ref(chains)),
            (6, F::Ref(operators)),
            (8, F::Ref(sizes)),
        ]);
        let plans = self.refs(&[plan]);
        let root = self.table(&[
            (0, F::Bytes(0u32.to_le_bytes().to_vec())),
            (1, F::Ref(plans)),
        ]);
        let len = self.0.len() + 8;
        let mut head = ((len - root) as u32).to_le_bytes().to_vec();
        head.extend_from_slice(b"ET12");
        self.prepend(&head);
        self.0.reverse();
        self.0
    }
}

/// A family of hostile programs, scaled by `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `n` values v1..=n and `n` instructions `move v0 -> vk`: `n` run-time
    /// written values (state slots), each written once per execute.
    Values(usize),
    /// `n` chains of one instruction each, `move v0 -> v1`.
    Chains(usize),
    /// `n` instructions `move v0 -> v1` in one chain: one slot, read and
    /// written `n` times.
    Instructions(usize),
    /// `n` operators, distinct and unregistered (`test::gone<k>`), each
    /// called by one instruction: load fails with `OperatorMissing`, at =
    /// `n`.
    Operators(usize),
}

impl Shape {
    pub fn n(self) -> usize {
        match self {
            Shape::Values(n) | Shape::Chains(n) | Shape::Instructions(n) | Shape::Operators(n) => n,
        }
    }

    pub fn with_n(self, n: usize) -> Shape {
        match self {
            Shape::Values(_) => Shape::Values(n),
            Shape::Chains(_) => Shape::Chains(n),
            Shape::Instructions(_) => Shape::Instructions(n),
            Shape::Operators(_) => Shape::Operators(n),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Shape::Values(_) => "values",
            Shape::Chains(_) => "chains",
            Shape::Instructions(_) => "instructions",
            Shape::Operators(_) => "operators",
        }
    }
}

/// The program of `shape`: values v0 = Int 7 and Int 0 for every other,
/// output v1 (which execute sets to 7).
pub fn build(shape: Shape) -> Vec<u8> {
    let mut fb = Fb::default();
    let seven = fb.int(7);
    let zero = fb.int(0);
    let n_values = match shape {
        Shape::Values(n) => n + 1,
        _ => 2,
    };
    let mut value_refs = vec![seven];
    value_refs.extend(std::iter::repeat_n(zero, n_values - 1));
    let values = fb.refs(&value_refs);
    let io = fb.scalars(&[]);
    let chain = |fb: &mut Fb, refs: &[usize]| {
        let instructions = fb.refs(refs);
        fb.chain(io, instructions)
    };
    let (chains, operators) = match shape {
        Shape::Values(n) => {
            let refs: Vec<usize> = (0..n).map(|k| fb.move_call(0, k as i32 + 1)).collect();
            (vec![chain(&mut fb, &refs)], vec![])
        }
        Shape::Chains(n) => {
            let chains = (0..n)
                .map(|_| {
                    let m = fb.move_call(0, 1);
                    chain(&mut fb, &[m])
                })
                .collect();
            (chains, vec![])
        }
        Shape::Instructions(n) => {
            let refs: Vec<usize> = (0..n).map(|_| fb.move_call(0, 1)).collect();
            (vec![chain(&mut fb, &refs)], vec![])
        }
        Shape::Operators(n) => {
            let args = fb.scalars(&[]);
            let refs: Vec<usize> = (0..n).map(|k| fb.kernel_call(k as i32, args)).collect();
            let c = chain(&mut fb, &refs);
            let ops = (0..n)
                .map(|k| fb.operator(&format!("test::gone{k}")))
                .collect();
            (vec![c], ops)
        }
    };
    let chains = fb.refs(&chains);
    let operators = fb.refs(&operators);
    fb.method_file(values, chains, operators, &[1])
}

/// The smallest `n` whose program of `shape` is at least `bytes` long.
pub fn n_for_size(shape: Shape, bytes: usize) -> usize {
    let per = build(shape.with_n(64))
        .len()
        .saturating_sub(build(shape.with_n(0)).len())
        / 64;
    let mut n = bytes.saturating_sub(build(shape.with_n(0)).len()) / per.max(1);
    while build(shape.with_n(n)).len() < bytes {
        n += 1 + n / 100;
    }
    n
}

/// What one load (and execute) of a hostile program gave, and how long
/// each step took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timed {
    /// `Ok` or the first error's code.
    pub outcome: Result<(), etch_runtime::ErrorCode>,
    /// Program::from_bytes + method_meta + method_state_bytes + Method::load.
    pub load: std::time::Duration,
    /// One execute (zero if load failed).
    pub execute: std::time::Duration,
    /// `MethodMeta::for_each_missing_operator` (what `log` builds and
    /// `etch run` call on `OperatorMissing`).
    pub missing: std::time::Duration,
}

/// Loads `file` with `verification` and every etch kernel, executes once
/// and checks output 0 is Int 7; times each step.
pub fn load_execute_timed(file: &[u8], verification: etch_runtime::Verification) -> Timed {
    use etch_runtime::{ErrorCode, Method, Output, Program};
    use std::time::{Duration, Instant};
    let data = crate::Aligned::from_bytes(file);
    let mut t = Timed {
        outcome: Ok(()),
        load: Duration::ZERO,
        execute: Duration::ZERO,
        missing: Duration::ZERO,
    };
    let start = Instant::now();
    let result = (|| {
        let program = Program::from_bytes(data.bytes(), verification).map_err(|e| e.code)?;
        let meta = program.method_meta("forward").map_err(|e| e.code)?;
        let bytes = meta
            .method_state_bytes(etch_kernels::KERNELS)
            .map_err(|e| e.code)?;
        let mut state = vec![0u8; bytes];
        let mut planned: Vec<&mut [u8]> = Vec::new();
        let loaded = Method::load(&meta, &mut state, &mut planned, etch_kernels::KERNELS, &[]);
        t.load = start.elapsed();
        let s = Instant::now();
        let mut names = 0usize;
        meta.for_each_missing_operator(etch_kernels::KERNELS, |_, _| names += 1)
            .map_err(|e| e.code)?;
        t.missing = s.elapsed();
        let mut method = loaded.map_err(|e| e.code)?;
        let s = Instant::now();
        method.execute().map_err(|e| e.code)?;
        t.execute = s.elapsed();
        match method.output(0) {
            Ok(Output::Int(7)) => Ok(()),
            _ => Err(ErrorCode::Internal),
        }
    })();
    if t.load == Duration::ZERO {
        t.load = start.elapsed();
    }
    t.outcome = result;
    t
}
