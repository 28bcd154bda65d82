//! Whole-file verification: the one pass [`PteFile::new_checked`] runs.
//!
//! It visits every table reachable from the root and checks what the runtime
//! relies on: offsets and vector lengths in bounds (done by the readers),
//! union tags valid, every value / operator / delegate / segment / instruction
//! index in range, list items of the right kind, tensor shapes sane
//! (rank ≤ 16, sizes ≥ 0, `dim_order` a permutation, `numel × element size`
//! without overflow), constant and planned data ranges inside their segment or
//! buffer, and deprecated inline constants not mixed with a constant segment.
//!
//! Table-driven, for a small verifier: each schema table is one `const` description, a
//! list of `[slot, kind, argument]` fields, and one loop ([`Walk::table`])
//! checks every field of every table through the same few reader calls: a
//! scalar is readable (and an enum in range, an index below its bound), a
//! string readable (and UTF-8 for names), a vector inside the buffer (and its
//! value indices in range and of the right kind), a child table or each table
//! of a vector walked with its own description, a union's tag known and its
//! table walked. What is not per-field (segments, constants, tensor data,
//! delegate blobs) is a hook that runs before a table's fields, in the order
//! the hand-written verifier checked them.
//!
//! Shared sub-objects are legal in FlatBuffers, so a small malicious file could
//! make a naive walk revisit the same large vector many times. The walk
//! therefore has a work budget proportional to the file size, far above what
//! any exporter-written file needs (one unit per table, one per index
//! checked); exceeding it is `InvalidProgram`.

use crate::error::{Error, Result};
use crate::file::PteFile;
use crate::flatbuffer::{key, read_u32, read_u64, RawVector, Table, Vector};
use crate::schema::{is_utf8, BackendDelegate, EValue, SubsegmentOffsets, Tensor};
use crate::tensor;
use crate::types::{TensorDataLocation, ValueKind};

// Field kinds (low nibble of a field's second byte).
/// Scalar of `arg` bytes: readable.
const SCALAR: u8 = 0;
/// `i8` enum: in `0..arg`.
const ENUM: u8 = 1;
/// `i32` index below the bound of range `arg` (a `R_*`).
const INDEX: u8 = 2;
/// String: readable.
const STRING: u8 = 3;
/// String: readable and UTF-8 (names).
const UTF8: u8 = 4;
/// Vector of `arg`-byte scalars: inside the buffer.
const VECTOR: u8 = 5;
/// Vector of value indices, `arg` a `L_*` list kind.
const INDICES: u8 = 6;
/// Child table described by `D_*` `arg`.
const TABLE: u8 = 7;
/// Vector of tables, each described by `D_*` `arg`.
const TABLES: u8 = 8;
/// Union: tag at `slot`, table at `slot + 1`; `arg` a `U_*`.
const UNION: u8 = 9;
/// Flag: the field must be present.
const REQ: u8 = 0x80;
/// Flag (bits 4..6): the vector's length bounds the indices of range `r`.
const fn sets(r: u8) -> u8 {
    r << 4
}

// Ranges an index can point into (`INDEX`, `sets`).
const R_VALUES: u8 = 1;
const R_OPS: u8 = 2;
const R_DELEGATES: u8 = 3;
const R_INSTRUCTIONS: u8 = 4;
const R_BUFFERS: u8 = 5;
const R_SEGMENTS: u8 = 6;

// Kinds of value-index lists (`INDICES`).
const L_ARGS: u8 = 0;
const L_IO: u8 = 1;
const L_INT_LIST: u8 = 2;
const L_TENSOR_LIST: u8 = 3;
const L_OPTIONAL_TENSOR_LIST: u8 = 4;

// Unions.
const U_EVALUE: u8 = 0;

// Table descriptions (`DESCS` index).
const D_PROGRAM: u8 = 0;
const D_PLAN: u8 = 1;
const D_META: u8 = 2;
const D_EVALUE: u8 = 3;
const D_TENSOR: u8 = 4;
const D_ALLOCATION: u8 = 5;
const D_EXTRA: u8 = 6;
const D_OPERATOR: u8 = 7;
const D_CHAIN: u8 = 8;
const D_INSTRUCTION: u8 = 9;
const D_KERNEL_CALL: u8 = 10;
const D_DELEGATE_CALL: u8 = 11;
const D_MOVE_CALL: u8 = 12;
const D_JUMP_FALSE_CALL: u8 = 13;
const D_FREE_CALL: u8 = 14;
const D_FRAME_LIST: u8 = 15;
const D_FRAME: u8 = 16;
const D_DELEGATE: u8 = 17;
const D_DATA_REFERENCE: u8 = 18;
const D_COMPILE_SPEC: u8 = 19;
const D_DEVICE: u8 = 20;
/// `Buffer` and `BackendDelegateInlineData`: one `[ubyte]`.
const D_BYTES: u8 = 21;
const D_DATA_SEGMENT: u8 = 22;
const D_SUBSEGMENTS: u8 = 23;
const D_NAMED_DATA: u8 = 24;
/// `Int` and `Double`: one 8-byte scalar.
const D_WORD: u8 = 25;
const D_BOOL: u8 = 26;
const D_STRING: u8 = 27;
const D_INT_LIST: u8 = 28;
const D_DOUBLE_LIST: u8 = 29;
const D_BOOL_LIST: u8 = 30;
const D_TENSOR_LIST: u8 = 31;
const D_OPTIONAL_TENSOR_LIST: u8 = 32;
/// `Program.constant_segment`: `SubsegmentOffsets` with the constant hook.
const D_CONSTANT_SEGMENT: u8 = 33;
/// Union entries: no such tag / a tag without a table (`Null`).
const D_INVALID: u8 = 0xff;
const D_NONE: u8 = 0xfe;

type Desc = &'static [[u8; 3]];

/// One description per table of `schema/program.fbs`: `[slot, kind, arg]`
/// (slots as in `schema::slot`). Fields whose length bounds later indices
/// come first; otherwise declaration order. Only read at compile time: flash
/// holds them flattened ([`FIELDS`], [`START`]), without a slice per table.
const DESCS: [Desc; 34] = [
    // Program. Segments first: named data indexes them.
    &[
        [0, SCALAR, 4],
        [4, TABLES | sets(R_SEGMENTS), D_DATA_SEGMENT],
        [2, TABLES, D_BYTES],
        [5, TABLE, D_CONSTANT_SEGMENT],
        [3, TABLES, D_BYTES],
        [6, TABLES, D_SUBSEGMENTS],
        [7, TABLES, D_NAMED_DATA],
        [1, TABLES | REQ, D_PLAN],
    ],
    // ExecutionPlan: values, buffer sizes, operators and delegates bound the
    // indices of what follows them.
    &[
        [0, UTF8 | REQ, 0],
        [1, TABLE, D_META],
        [8, VECTOR | REQ | sets(R_BUFFERS), 8],
        [2, TABLES | REQ | sets(R_VALUES), D_EVALUE],
        [3, INDICES | REQ, L_IO],
        [4, INDICES | REQ, L_IO],
        [6, TABLES | sets(R_OPS), D_OPERATOR],
        [7, TABLES | sets(R_DELEGATES), D_DELEGATE],
        [5, TABLES | REQ, D_CHAIN],
        [9, TABLES, D_DEVICE],
    ],
    // ContainerMetadata
    &[[0, STRING, 0], [1, STRING, 0]],
    // EValue
    &[[0, UNION, U_EVALUE]],
    // Tensor (its data and shape: `Walk::tensor`)
    &[
        [1, SCALAR, 4],
        [8, ENUM, 3],
        [4, SCALAR, 1],
        [7, SCALAR, 1],
        [9, TABLE, D_EXTRA],
        [0, SCALAR, 1],
        [2, VECTOR | REQ, 4],
        [3, VECTOR | REQ, 1],
        [5, SCALAR, 4],
        [6, TABLE, D_ALLOCATION],
    ],
    // AllocationDetails
    &[[0, SCALAR, 4], [1, SCALAR, 4], [2, SCALAR, 4]],
    // ExtraTensorInfo
    &[
        [0, SCALAR, 8],
        [1, STRING, 0],
        [3, SCALAR, 1],
        [4, SCALAR, 1],
        [2, ENUM, 2],
    ],
    // Operator
    &[[0, UTF8 | REQ, 0], [1, UTF8, 0]],
    // Chain
    &[
        [0, VECTOR, 4],
        [1, VECTOR, 4],
        [2, TABLES | REQ | sets(R_INSTRUCTIONS), D_INSTRUCTION],
        [3, TABLES, D_FRAME_LIST],
    ],
    // Instruction
    &[[0, UNION, U_INSTRUCTION]],
    // KernelCall
    &[[0, INDEX, R_OPS], [1, INDICES | REQ, L_ARGS]],
    // DelegateCall
    &[[0, INDEX, R_DELEGATES], [1, INDICES | REQ, L_ARGS]],
    // MoveCall
    &[[0, INDEX, R_VALUES], [1, INDEX, R_VALUES]],
    // JumpFalseCall
    &[[0, INDEX, R_VALUES], [1, INDEX, R_INSTRUCTIONS]],
    // FreeCall
    &[[0, INDEX, R_VALUES]],
    // FrameList
    &[[0, TABLES, D_FRAME]],
    // Frame
    &[
        [0, STRING, 0],
        [1, SCALAR, 4],
        [2, STRING, 0],
        [3, STRING, 0],
    ],
    // BackendDelegate (its blob: `Walk::table`)
    &[
        [0, UTF8 | REQ, 0],
        [1, TABLE | REQ, D_DATA_REFERENCE],
        [2, TABLES, D_COMPILE_SPEC],
    ],
    // BackendDelegateDataReference
    &[[1, SCALAR, 4], [0, ENUM, 2]],
    // CompileSpec
    &[[0, STRING, 0], [1, VECTOR, 1]],
    // NonConstBufferDevice
    &[[0, INDEX, R_BUFFERS], [1, SCALAR, 1], [2, SCALAR, 1]],
    // Buffer, BackendDelegateInlineData
    &[[0, VECTOR, 1]],
    // DataSegment
    &[[0, SCALAR, 8], [1, SCALAR, 8]],
    // SubsegmentOffsets
    &[[0, SCALAR, 4], [1, VECTOR, 8]],
    // NamedData
    &[[0, STRING | REQ, 0], [1, INDEX, R_SEGMENTS]],
    // Int, Double
    &[[0, SCALAR, 8]],
    // Bool
    &[[0, SCALAR, 1]],
    // String
    &[[0, STRING, 0]],
    // IntList
    &[[0, INDICES, L_INT_LIST]],
    // DoubleList
    &[[0, VECTOR, 8]],
    // BoolList
    &[[0, VECTOR, 1]],
    // TensorList
    &[[0, INDICES, L_TENSOR_LIST]],
    // OptionalTensorList
    &[[0, INDICES, L_OPTIONAL_TENSOR_LIST]],
    // SubsegmentOffsets of the constant segment (its offsets: `Walk::table`)
    &[[0, SCALAR, 4], [1, VECTOR, 8]],
];

const U_INSTRUCTION: u8 = 1;

/// The table of each union tag (`ValueKind`, `InstructionKind` numbering).
static UNIONS: [[u8; 12]; 2] = [
    [
        D_INVALID,
        D_NONE,
        D_WORD,
        D_BOOL,
        D_WORD,
        D_TENSOR,
        D_STRING,
        D_INT_LIST,
        D_DOUBLE_LIST,
        D_BOOL_LIST,
        D_TENSOR_LIST,
        D_OPTIONAL_TENSOR_LIST,
    ],
    [
        D_INVALID,
        D_KERNEL_CALL,
        D_DELEGATE_CALL,
        D_MOVE_CALL,
        D_JUMP_FALSE_CALL,
        D_FREE_CALL,
        D_INVALID,
        D_INVALID,
        D_INVALID,
        D_INVALID,
        D_INVALID,
        D_INVALID,
    ],
];

const N_FIELDS: usize = {
    let (mut n, mut d) = (0, 0);
    while d < DESCS.len() {
        n += DESCS[d].len();
        d += 1;
    }
    n
};
const _: () = assert!(N_FIELDS < 256);

/// The fields of every description in order: table `d`'s are
/// `FIELDS[START[d]..START[d + 1]]`.
static FIELDS: [[u8; 3]; N_FIELDS] = FLAT.0;
static START: [u8; DESCS.len() + 1] = FLAT.1;
const FLAT: ([[u8; 3]; N_FIELDS], [u8; DESCS.len() + 1]) = {
    let mut fields = [[0; 3]; N_FIELDS];
    let mut start = [0; DESCS.len() + 1];
    let (mut n, mut d) = (0, 0);
    while d < DESCS.len() {
        start[d] = n as u8;
        let mut f = 0;
        while f < DESCS[d].len() {
            fields[n] = DESCS[d][f];
            n += 1;
            f += 1;
        }
        d += 1;
    }
    start[d] = n as u8;
    (fields, start)
};

/// The fields of description `desc`.
fn fields(desc: u8) -> &'static [[u8; 3]] {
    let d = desc as usize;
    match (START.get(d), START.get(d + 1)) {
        (Some(&s), Some(&e)) => FIELDS.get(s as usize..e as usize).unwrap_or(&[]),
        _ => &[],
    }
}

// Descriptions of errors (`messages` builds only; firmware gets the code).
const M_MISSING: u8 = 0;
const M_UTF8: u8 = 1;
const M_ENUM: u8 = 2;
/// + union: unknown tag.
const M_TAG: u8 = 3;
/// + union: table missing.
const M_UNION_TABLE: u8 = 5;
const M_BUDGET: u8 = 7;
const M_NEGATIVE_SIZE: u8 = 8;
const M_NOT_INT: u8 = 9;
const M_NOT_TENSOR: u8 = 10;
/// + list kind: item out of range.
const M_LIST: u8 = 11;
/// + range: index out of range.
const M_RANGE: u8 = 16;

#[cfg(feature = "messages")]
fn what(m: u8) -> &'static str {
    const MESSAGES: [&str; 23] = [
        "required field missing",
        "name is not UTF-8",
        "enum value out of range",
        "EValue has an unknown type tag",
        "Instruction has an unknown argument type",
        "EValue.val missing",
        "Instruction.instr_args missing",
        "file too complex to verify",
        "negative planned buffer size",
        "IntList item is not an Int",
        "TensorList item is not a Tensor",
        "instruction argument out of range",
        "input/output value out of range",
        "IntList item out of range",
        "TensorList item out of range",
        "TensorList item out of range",
        "",
        "value index out of range",
        "op_index out of range",
        "delegate_index out of range",
        "JumpFalse destination out of range",
        "buffer device index out of range",
        "named data segment out of range",
    ];
    MESSAGES.get(m as usize).copied().unwrap_or("")
}

#[cfg(not(feature = "messages"))]
#[inline(always)]
fn what(_: u8) -> &'static str {
    ""
}

#[inline(never)]
fn invalid(m: u8, at: usize) -> Error {
    Error::invalid(what(m), at)
}

/// Verifies the whole file. See the module docs for what is checked.
#[inline(never)]
pub fn verify(file: &PteFile<'_>) -> Result<()> {
    let program = file.program();
    // Zeros through `black_box`, in place: a constant zero array is a call
    // to `__aeabi_memclr4` (174 B), which nothing else in the core needs.
    let mut bound = [core::hint::black_box(0); 8];
    let mut walk = Walk {
        file,
        buf: program.0.buffer(),
        budget: file.data().len().saturating_mul(64).saturating_add(4096),
        bound: &mut bound,
        values: Vector::empty(),
        buffer_sizes: Vector::empty(),
    };
    walk.table(program.0, D_PROGRAM)
}

struct Walk<'f, 'a> {
    file: &'f PteFile<'a>,
    buf: &'a [u8],
    budget: usize,
    /// Length of the last vector that `sets` each range.
    bound: &'f mut [usize; 8],
    values: Vector<'a, EValue<'a>>,
    buffer_sizes: Vector<'a, i64>,
}

fn check_index(index: i64, len: usize, m: u8, at: usize) -> Result<usize> {
    if index < 0 || index as u64 >= len as u64 {
        return Err(invalid(m, at));
    }
    Ok(index as usize)
}

impl<'a> Walk<'_, 'a> {
    fn spend(&mut self, n: usize, at: usize) -> Result<()> {
        self.budget = self.budget.checked_sub(n).ok_or(invalid(M_BUDGET, at))?;
        Ok(())
    }

    /// Checks table `t` against description `desc`, after its hook.
    #[inline(never)]
    fn table(&mut self, t: Table<'a>, desc: u8) -> Result<()> {
        let at = t.position();
        self.spend(1, at)?;
        match desc {
            D_PROGRAM => self.program()?,
            D_TENSOR => self.tensor(Tensor(t))?,
            D_DELEGATE => {
                self.file.delegate_data(BackendDelegate(t).processed()?)?;
            }
            D_SUBSEGMENTS | D_CONSTANT_SEGMENT => {
                // Offsets inside their segment: every mutable data segment
                // with offsets, the constant segment when it has more than
                // its placeholder, and then not beside inline constants.
                let sub = SubsegmentOffsets(t);
                let offsets = sub.offsets()?;
                let constant = desc == D_CONSTANT_SEGMENT;
                if offsets.len() > constant as usize {
                    if constant && !self.file.program().constant_buffer()?.is_empty() {
                        return Err(Error::invalid(
                            "both constant_segment and constant_buffer are used",
                            at,
                        ));
                    }
                    self.offsets_inside(sub.segment_index()?, offsets)?;
                }
            }
            _ => {}
        }
        for &[slot, kind, arg] in fields(desc) {
            let slot = slot as u16;
            if kind & REQ != 0 && t.field(slot, 4)?.is_none() {
                return Err(invalid(M_MISSING, at));
            }
            match kind & 0xf {
                SCALAR | ENUM | INDEX => {
                    let size = match kind & 0xf {
                        SCALAR => arg as usize,
                        ENUM => 1,
                        _ => 4,
                    };
                    // An 8-byte `SCALAR` is only checked for lying in the
                    // buffer (`scalar_word` returns its position).
                    let bits = t.scalar_word(key(slot, size, false), 0)?;
                    if kind & 0xf == ENUM && bits as u8 >= arg {
                        return Err(invalid(M_ENUM, at));
                    }
                    if kind & 0xf == INDEX {
                        let bound = self.bound[(arg & 7) as usize];
                        check_index(bits as i32 as i64, bound, M_RANGE + arg, at)?;
                    }
                }
                STRING | UTF8 => {
                    // Absent reads as empty, which is UTF-8.
                    let s = t.string_or_empty(slot)?;
                    if kind & 0xf == UTF8 && !is_utf8(s) {
                        return Err(invalid(M_UTF8, at));
                    }
                }
                VECTOR | INDICES | TABLES => {
                    let elem = match kind & 0xf {
                        VECTOR => arg as usize,
                        INDICES if arg == L_INT_LIST => 8,
                        _ => 4,
                    };
                    let raw = t.raw_vector_or_empty(slot, elem)?;
                    let range = (kind >> 4) & 7;
                    if range != 0 {
                        self.bound_by(range, raw)?;
                    }
                    match kind & 0xf {
                        INDICES => self.indices(raw, arg)?,
                        TABLES => {
                            let tables = Vector::<Table<'a>>::from_raw(raw);
                            for i in 0..tables.len() {
                                self.table(tables.get(i)?, arg)?;
                            }
                        }
                        _ => {}
                    }
                }
                TABLE => {
                    if let Some(child) = t.table(slot)? {
                        self.table(child, arg)?;
                    }
                }
                _ => {
                    // UNION
                    let tag = t.scalar_word(key(slot, 1, false), 0)?;
                    let child = match UNIONS[(arg & 1) as usize].get(tag) {
                        None | Some(&D_INVALID) => return Err(invalid(M_TAG + arg, at)),
                        Some(&D_NONE) => continue,
                        Some(&d) => d,
                    };
                    match t.table(slot + 1)? {
                        Some(c) => self.table(c, child)?,
                        None => return Err(invalid(M_UNION_TABLE + arg, at)),
                    }
                }
            }
        }
        Ok(())
    }

    /// A vector whose length bounds the indices of `range`.
    fn bound_by(&mut self, range: u8, raw: RawVector<'a>) -> Result<()> {
        let v = Vector::<u8>::from_raw(raw);
        // A JumpFalse destination may equal its chain's instruction count:
        // that ends the chain (how `torch.cond`'s true branch skips a false
        // branch emitted last), as in ExecuTorch's `Method::execute`.
        self.bound[(range & 7) as usize] = v.len() + (range == R_INSTRUCTIONS) as usize;
        if range == R_VALUES {
            self.values = Vector::from_raw(raw);
        }
        if range == R_BUFFERS {
            self.buffer_sizes = Vector::from_raw(raw);
            for size in self.buffer_sizes.iter() {
                if size? < 0 {
                    return Err(invalid(M_NEGATIVE_SIZE, v.position()));
                }
            }
        }
        Ok(())
    }

    /// Value indices: each in range and, in lists, of the list's kind.
    #[inline(never)]
    fn indices(&mut self, raw: RawVector<'a>, list: u8) -> Result<()> {
        let v = Vector::<u8>::from_raw(raw);
        let at = v.position();
        self.spend(v.len(), at)?;
        for i in 0..v.len() {
            let item = if list == L_INT_LIST {
                read_u64(self.buf, at + 8 * i)? as i64
            } else {
                read_u32(self.buf, at + 4 * i)? as i32 as i64
            };
            if list == L_OPTIONAL_TENSOR_LIST && item == -1 {
                continue;
            }
            let i = check_index(item, self.bound[R_VALUES as usize], M_LIST + list, at)?;
            let (want, m) = match list {
                L_INT_LIST => (ValueKind::Int, M_NOT_INT),
                L_TENSOR_LIST | L_OPTIONAL_TENSOR_LIST => (ValueKind::Tensor, M_NOT_TENSOR),
                _ => continue,
            };
            if self.values.get(i)?.kind()? != want {
                return Err(invalid(m, at));
            }
        }
        Ok(())
    }

    /// Segments inside the file (data offsets: the `SubsegmentOffsets`
    /// hook in [`Walk::table`]).
    fn program(&mut self) -> Result<()> {
        let file = self.file;
        let program = file.program();
        let segments = program.segments()?;
        for i in 0..segments.len() {
            self.spend(1, segments.position())?;
            file.segment(i)?;
        }
        Ok(())
    }

    /// Every offset at most the length of segment `index`.
    fn offsets_inside(&mut self, index: u32, offsets: Vector<'a, u64>) -> Result<()> {
        let segment = self.file.segment(index as usize)?;
        for off in offsets.iter() {
            self.spend(1, offsets.position())?;
            if off? > segment.len() as u64 {
                return Err(Error::invalid(
                    "data offset outside its segment",
                    offsets.position(),
                ));
            }
        }
        Ok(())
    }

    /// Shape, size, and where the data is: inside its planned buffer, its
    /// mutable segment or the constants.
    #[inline(never)]
    fn tensor(&mut self, t: Tensor<'a>) -> Result<()> {
        let file = self.file;
        let at = t.position();
        tensor::check_dim_order(&t)?;
        let nbytes = tensor::nbytes(&t)?;
        let external = match t.extra_tensor_info()? {
            Some(info) => info.location()? == TensorDataLocation::External,
            None => false,
        };
        let data_buffer_idx = t.data_buffer_idx()?;
        match t.allocation_info()? {
            Some(alloc) => {
                let id = alloc.memory_id()? as usize;
                if id == 0 || id >= self.buffer_sizes.len() {
                    return Err(Error::invalid("memory_id out of range", alloc.position()));
                }
                let size = self.buffer_sizes.get(id)? as u64;
                let end = alloc
                    .memory_offset()?
                    .checked_add(nbytes as u64)
                    .ok_or(Error::invalid("planned offset overflows", alloc.position()))?;
                if end > size {
                    return Err(Error::invalid(
                        "planned tensor outside its buffer",
                        alloc.position(),
                    ));
                }
                if data_buffer_idx > 0 && !external {
                    // Initial value of a mutable planned tensor.
                    let mutable = file.program().mutable_data_segments()?;
                    let first = mutable.get(0)?;
                    let offsets = first.offsets()?;
                    let start = offsets.get(data_buffer_idx as usize)?;
                    let segment = file.segment(first.segment_index()? as usize)?;
                    let fits = start
                        .checked_add(nbytes as u64)
                        .is_some_and(|e| e <= segment.len() as u64);
                    if !fits {
                        return Err(Error::invalid("mutable data outside its segment", at));
                    }
                }
            }
            None => {
                if data_buffer_idx > 0 && !external {
                    file.constant_data(data_buffer_idx, nbytes)?;
                }
            }
        }
        Ok(())
    }
}
