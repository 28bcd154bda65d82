//! Mutable buffers on a real program: `tests/programs/running_sum_f32.pte`
//! (ExecuTorch 1.5.1: `self.acc.add_(x); return self.acc * 0.5`, `acc`
//! registered as `arange(8)` and exported with its initial value). Load
//! copies the initial value from the program's mutable data segment into
//! the caller's planned buffer, `aten::copy_` writes it, the state carries
//! over between executions and `Method::reset_state` puts the initial
//! value back; a file whose initial value lies outside its segment gets
//! `InvalidProgram`, never a read past it.

use std::path::{Path, PathBuf};

use etch_pte::schema::slot::subsegment_offsets;
use etch_pte::PteFile;
use etch_runtime::{ErrorCode, Method, Output, Program, Verification};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs")
}

/// 16-byte aligned bytes.
struct Aligned(Vec<u128>, usize);
impl Aligned {
    fn new(len: usize, fill: u8) -> Self {
        let mut a = Aligned(vec![0; len.div_ceil(16) + 1], len);
        a.bytes_mut().fill(fill);
        a
    }
    fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.0)[..self.1]
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.0)[..self.1]
    }
}

fn program_bytes() -> Aligned {
    let b = std::fs::read(dir().join("running_sum_f32.pte")).unwrap();
    let mut a = Aligned::new(b.len(), 0);
    a.bytes_mut().copy_from_slice(&b);
    a
}

/// The f32 data of a C-order `.npy`.
fn npy_f32(path: &Path) -> Vec<f32> {
    let b = std::fs::read(path).unwrap();
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    b[10 + hlen..]
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn step(k: usize, what: &str) -> Vec<f32> {
    npy_f32(&dir().join(format!("running_sum_f32.forward.steps/{k}.{what}0.npy")))
}

fn as_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn output(m: &Method<'_, '_>) -> Vec<f32> {
    match m.output(0).unwrap() {
        Output::Tensor(t) => t
            .data
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        o => panic!("{o:?}"),
    }
}

/// (memory id, offset) of the program's one mutable buffer (`acc`).
fn acc_place(bytes: &[u8]) -> (usize, usize) {
    let file = PteFile::new_checked(bytes).unwrap();
    let plan = file.plan("forward").unwrap();
    let mut found = Vec::new();
    for v in plan.values().unwrap().iter() {
        if let etch_pte::Value::Tensor(t) = v.unwrap().value().unwrap() {
            if let (Some(a), 1..) = (t.allocation_info().unwrap(), t.data_buffer_idx().unwrap()) {
                found.push((
                    a.memory_id().unwrap() as usize,
                    a.memory_offset_usize().unwrap(),
                ));
            }
        }
    }
    assert_eq!(found.len(), 1, "one mutable buffer");
    found[0]
}

#[test]
fn state_is_initialised_carried_and_reset_in_the_callers_planned_memory() {
    let bytes = program_bytes();
    let program = Program::from_bytes(bytes.bytes(), Verification::InternalConsistency).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let (id, off) = acc_place(bytes.bytes());
    assert_eq!(meta.num_memory_planned_buffers().unwrap(), 1);
    let mut state = vec![0u8; meta.method_state_bytes(etch_kernels::KERNELS).unwrap()];
    // Planned memory full of garbage: load must write the initial value.
    let mut buf = Aligned::new(meta.memory_planned_buffer_size(0).unwrap(), 0xa5);
    let mut planned = [buf.bytes_mut()];
    let mut m = Method::load(&meta, &mut state, &mut planned, etch_kernels::KERNELS, &[]).unwrap();
    let initial: Vec<f32> = (0..8).map(|i| i as f32).collect();
    {
        // The state's bytes are the caller's: read back through the slice.
        let acc = &planned_bytes(&m)[off..off + 32];
        assert_eq!(acc, as_bytes(&initial), "acc = arange(8) after load");
    }
    assert_eq!(id, 1);
    // ExecuTorch's reference: four steps of one loaded method.
    let mut acc = initial.clone();
    for k in 0..4 {
        let x = step(k, "input");
        m.set_input_bytes(0, &as_bytes(&x)).unwrap();
        m.execute().unwrap();
        assert_eq!(output(&m), step(k, "output"), "step {k}");
        for (a, x) in acc.iter_mut().zip(&x) {
            *a += x;
        }
        assert_eq!(
            &planned_bytes(&m)[off..off + 32],
            as_bytes(&acc),
            "step {k}"
        );
    }
    // Reset: the initial value again, so step 0 gives step 0's reference.
    m.reset_state().unwrap();
    assert_eq!(&planned_bytes(&m)[off..off + 32], as_bytes(&initial));
    m.set_input_bytes(0, &as_bytes(&step(0, "input"))).unwrap();
    m.execute().unwrap();
    assert_eq!(output(&m), step(0, "output"));
}

/// The method's planned buffer, read through an output view's base: the
/// planned memory is the caller's, `Method` only borrows it.
fn planned_bytes<'m>(m: &'m Method<'_, '_>) -> &'m [u8] {
    m.planned_buffer(0).unwrap()
}

/// Offsets of the first mutable data segment entry: (position of
/// `segment_index`, position of the offsets' first element).
fn mutable_fields(bytes: &[u8]) -> (usize, usize) {
    let file = PteFile::new_checked(bytes).unwrap();
    let first = file
        .program()
        .mutable_data_segments()
        .unwrap()
        .get(0)
        .unwrap();
    let seg = first
        .0
        .field(subsegment_offsets::SEGMENT_INDEX, 4)
        .unwrap()
        .unwrap();
    (seg, first.offsets().unwrap().position())
}

/// Loads the patched program both ways: `verified` is the code etch-pte's
/// verifier gives (`PteFile::new_checked`, what `Program::from_bytes` runs
/// with `InternalConsistency` when etch-runtime is built with `verify`),
/// `loaded` what `Method::load` gives after a minimal check (None: loads).
fn load_codes(bytes: &[u8]) -> (Option<ErrorCode>, Option<ErrorCode>) {
    let verified = PteFile::new_checked(bytes).err().map(|e| e.code);
    let program = Program::from_bytes(bytes, Verification::Minimal).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut state = vec![0u8; meta.method_state_bytes(etch_kernels::KERNELS).unwrap()];
    let mut buf = Aligned::new(meta.memory_planned_buffer_size(0).unwrap(), 0);
    let mut planned = [buf.bytes_mut()];
    let loaded = Method::load(&meta, &mut state, &mut planned, etch_kernels::KERNELS, &[])
        .err()
        .map(|e| e.code);
    (verified, loaded)
}

#[test]
fn inconsistent_mutable_data_is_invalid_program() {
    let good = program_bytes();
    let (seg, offsets) = mutable_fields(good.bytes());
    assert_eq!(load_codes(good.bytes()), (None, None));
    let invalid = Some(ErrorCode::InvalidProgram);
    // The segment index out of range (the file has 2 segments).
    for index in [2u32, 99, u32::MAX] {
        let mut b = program_bytes();
        b.bytes_mut()[seg..seg + 4].copy_from_slice(&index.to_le_bytes());
        assert_eq!(load_codes(b.bytes()), (invalid, invalid), "segment {index}");
    }
    // acc's initial value (offsets[1]) running past the segment's end (32 B):
    // by one byte, far, and at an offset that overflows.
    for start in [1u64, 32, 1 << 40, u64::MAX - 8] {
        let mut b = program_bytes();
        let at = offsets + 8;
        b.bytes_mut()[at..at + 8].copy_from_slice(&start.to_le_bytes());
        assert_eq!(load_codes(b.bytes()), (invalid, invalid), "offset {start}");
    }
    // Segment 0 (4 B) is too short for the 32-byte value.
    let mut b = program_bytes();
    b.bytes_mut()[seg..seg + 4].copy_from_slice(&0u32.to_le_bytes());
    assert_eq!(load_codes(b.bytes()), (invalid, invalid), "segment 0");
}

/// Position of `acc`'s planned offset (`memory_offset_low`) in the file.
fn acc_offset_field(bytes: &[u8]) -> usize {
    use etch_pte::schema::slot::allocation_details;
    let file = PteFile::new_checked(bytes).unwrap();
    let plan = file.plan("forward").unwrap();
    for v in plan.values().unwrap().iter() {
        if let etch_pte::Value::Tensor(t) = v.unwrap().value().unwrap() {
            if let (Some(a), 1..) = (t.allocation_info().unwrap(), t.data_buffer_idx().unwrap()) {
                return a
                    .0
                    .field(allocation_details::MEMORY_OFFSET_LOW, 4)
                    .unwrap()
                    .expect("acc's offset is written (not the default 0)");
            }
        }
    }
    panic!("no mutable buffer")
}

/// A mutable buffer whose initial value would land past the end of its
/// planned buffer (acc's 32 bytes placed 16 bytes before the end, at the
/// end, and far past it): `InvalidProgram` (0x23) from the verifier and
/// from `Method::load` without it, whose check of the tensor's place
/// against the plan's buffer size runs before the initial values are
/// copied. (ExecuTorch's `HierarchicalAllocator::get_offset_address`
/// refuses the place too, with `MemoryAllocationFailed` against the
/// caller's buffer.)
#[test]
fn initial_data_past_the_planned_buffer_is_refused() {
    let good = program_bytes();
    let program = Program::from_bytes(good.bytes(), Verification::Minimal).unwrap();
    let size = program
        .method_meta("forward")
        .unwrap()
        .memory_planned_buffer_size(0)
        .unwrap();
    let at = acc_offset_field(good.bytes());
    for offset in [size as u32 - 16, size as u32, u32::MAX - 8] {
        let mut b = program_bytes();
        b.bytes_mut()[at..at + 4].copy_from_slice(&offset.to_le_bytes());
        let (verified, loaded) = load_codes(b.bytes());
        assert_eq!(verified, Some(ErrorCode::InvalidProgram), "offset {offset}");
        assert_eq!(loaded, Some(ErrorCode::InvalidProgram), "offset {offset}");
    }
}
