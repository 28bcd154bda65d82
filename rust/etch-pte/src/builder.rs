//! Builds small `.pte` files in tests (feature `builder`, which needs
//! `alloc`): programs no exporter writes, at any size (hostile
//! well-formed programs, `MoveCall`s, kernels with scalar results,
//! `JumpFalse`). Not for firmware.
//!
//! Writes a flatbuffer back to front, as flatbuffers are: an object's
//! position is its distance from the file's end, and a reference points to
//! an object written before it (at a higher address). The bytes are kept
//! reversed so each object is appended: building is linear in the file's
//! size.
//!
//! ```
//! use etch_pte::builder::Builder;
//! let mut b = Builder::default();
//! let values = { let five = b.int(5); b.refs(&[five]) };
//! let io = b.scalars(&[]);
//! let chain = { let none = b.refs(&[]); b.chain(io, none) };
//! let chains = b.refs(&[chain]);
//! let operators = b.refs(&[]);
//! let bytes = b.method_file(values, chains, operators, &[0]);
//! let file = etch_pte::PteFile::new_checked(&bytes).unwrap();
//! assert_eq!(file.plan("forward").unwrap().outputs().unwrap().len(), 1);
//! ```

use alloc::vec;
use alloc::vec::Vec;

/// One field of a table: inline bytes (padded to 4), or a reference to an
/// object already written (its position).
pub enum Field {
    Bytes(Vec<u8>),
    Ref(usize),
}

/// A flatbuffer being built; positions are distances from the file's end.
#[derive(Default)]
pub struct Builder(Vec<u8>);

impl Builder {
    /// Prepends `block`; its position.
    fn prepend(&mut self, block: &[u8]) -> usize {
        self.0.extend(block.iter().rev());
        self.0.len()
    }

    /// Position of byte `k` of a `len`-byte block about to be prepended.
    fn at(&self, len: usize, k: usize) -> usize {
        self.0.len() + len - k
    }

    /// A table with `fields` (slot, field); its vtable is written right
    /// before it. Its position.
    pub fn table(&mut self, fields: &[(u16, Field)]) -> usize {
        let mut object = vec![0u8; 4];
        let mut offsets = vec![0u16; fields.iter().map(|f| f.0 as usize + 1).max().unwrap_or(0)];
        let mut refs = Vec::new();
        for (slot, f) in fields {
            offsets[*slot as usize] = object.len() as u16;
            match f {
                Field::Bytes(b) => {
                    object.extend_from_slice(b);
                    object.resize(object.len().next_multiple_of(4), 0);
                }
                Field::Ref(target) => {
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
        // The vtable sits right before the table: soffset = its length.
        object[0..4].copy_from_slice(&(vtable.len() as i32).to_le_bytes());
        let table = self.prepend(&object);
        self.prepend(&vtable);
        table
    }

    /// A vector of inline scalars (each item's little-endian bytes).
    pub fn scalars(&mut self, items: &[Vec<u8>]) -> usize {
        let mut b = (items.len() as u32).to_le_bytes().to_vec();
        for i in items {
            b.extend_from_slice(i);
        }
        self.prepend(&b)
    }

    /// A vector of `i32`s (value indices: arguments, outputs).
    pub fn i32s(&mut self, items: &[i32]) -> usize {
        let items: Vec<Vec<u8>> = items.iter().map(|x| x.to_le_bytes().to_vec()).collect();
        self.scalars(&items)
    }

    /// A vector of references to the objects at `targets`.
    pub fn refs(&mut self, targets: &[usize]) -> usize {
        let n = 4 + 4 * targets.len();
        let mut b = (targets.len() as u32).to_le_bytes().to_vec();
        for (i, &t) in targets.iter().enumerate() {
            b.extend_from_slice(&((self.at(n, 4 + 4 * i) - t) as u32).to_le_bytes());
        }
        self.prepend(&b)
    }

    /// A string (length, bytes, NUL).
    pub fn string(&mut self, s: &str) -> usize {
        let mut b = (s.len() as u32).to_le_bytes().to_vec();
        b.extend_from_slice(s.as_bytes());
        b.push(0);
        b.resize(b.len().next_multiple_of(4), 0);
        self.prepend(&b)
    }

    /// An `Int` EValue (tag 2).
    pub fn int(&mut self, x: i64) -> usize {
        let t = self.table(&[(0, Field::Bytes(x.to_le_bytes().to_vec()))]);
        self.table(&[(0, Field::Bytes(vec![2])), (1, Field::Ref(t))])
    }

    /// A `Bool` EValue (tag 3).
    pub fn bool(&mut self, b: bool) -> usize {
        let t = self.table(&[(0, Field::Bytes(vec![b as u8]))]);
        self.table(&[(0, Field::Bytes(vec![3])), (1, Field::Ref(t))])
    }

    /// An instruction: a KernelCall (tag 1) of operator `op` with the
    /// argument vector at `args`.
    pub fn kernel_call(&mut self, op: i32, args: usize) -> usize {
        let call = self.table(&[
            (0, Field::Bytes(op.to_le_bytes().to_vec())),
            (1, Field::Ref(args)),
        ]);
        self.table(&[(0, Field::Bytes(vec![1])), (1, Field::Ref(call))])
    }

    /// An instruction: a MoveCall (tag 3) of value `from` to value `to`.
    pub fn move_call(&mut self, from: i32, to: i32) -> usize {
        let m = self.table(&[
            (0, Field::Bytes(from.to_le_bytes().to_vec())),
            (1, Field::Bytes(to.to_le_bytes().to_vec())),
        ]);
        self.table(&[(0, Field::Bytes(vec![3])), (1, Field::Ref(m))])
    }

    /// An instruction: a JumpFalse (tag 4) on value `cond` to instruction
    /// `destination` of its chain.
    pub fn jump_false(&mut self, cond: i32, destination: i32) -> usize {
        let jf = self.table(&[
            (0, Field::Bytes(cond.to_le_bytes().to_vec())),
            (1, Field::Bytes(destination.to_le_bytes().to_vec())),
        ]);
        self.table(&[(0, Field::Bytes(vec![4])), (1, Field::Ref(jf))])
    }

    /// A chain of the instruction vector at `instructions`; its inputs and
    /// outputs are the (empty) vector at `io`.
    pub fn chain(&mut self, io: usize, instructions: usize) -> usize {
        self.table(&[
            (0, Field::Ref(io)),
            (1, Field::Ref(io)),
            (2, Field::Ref(instructions)),
        ])
    }

    /// An operator `name` with the empty overload.
    pub fn operator(&mut self, name: &str) -> usize {
        let (n, o) = (self.string(name), self.string(""));
        self.table(&[(0, Field::Ref(n)), (1, Field::Ref(o))])
    }

    /// The file of one plan, "forward", of the value, chain and operator
    /// vectors at `values`, `chains`, `operators`: no inputs, outputs
    /// `outputs`, one empty memory id. Its bytes, in file order.
    pub fn method_file(
        mut self,
        values: usize,
        chains: usize,
        operators: usize,
        outputs: &[i32],
    ) -> Vec<u8> {
        let inputs = self.scalars(&[]);
        let outputs = self.i32s(outputs);
        let sizes = self.scalars(&[0i64.to_le_bytes().to_vec()]);
        let name = self.string("forward");
        let plan = self.table(&[
            (0, Field::Ref(name)),
            (2, Field::Ref(values)),
            (3, Field::Ref(inputs)),
            (4, Field::Ref(outputs)),
            (5, Field::Ref(chains)),
            (6, Field::Ref(operators)),
            (8, Field::Ref(sizes)),
        ]);
        let plans = self.refs(&[plan]);
        let root = self.table(&[
            (0, Field::Bytes(0u32.to_le_bytes().to_vec())),
            (1, Field::Ref(plans)),
        ]);
        // Root offset and "ET12".
        let len = self.0.len() + 8;
        let mut head = ((len - root) as u32).to_le_bytes().to_vec();
        head.extend_from_slice(b"ET12");
        self.prepend(&head);
        self.0.reverse();
        self.0
    }
}
