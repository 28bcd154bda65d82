//! An application's own kernel for an operator etch does not ship:
//! `etch_demo::scaled_softsign.out`, defined with torch.library and exported
//! by tools/export/custom_op.py (tests/custom/), registered next to the
//! selected kernels in a fixed-capacity `Registry`. Its reference is the
//! operator's Python definition (the pip runtime has no kernel for it).

use std::path::{Path, PathBuf};

use etch_runtime::context::required;
use etch_runtime::{
    op, Error, ErrorCode, Kernel, KernelContext, Method, Output, Program, Registry, Result,
    Verification,
};

fn custom_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/custom")
}

/// 16-byte aligned copy of a file.
struct Aligned(Vec<u128>, usize);
impl Aligned {
    fn new(len: usize) -> Self {
        Aligned(vec![0; len.div_ceil(16) + 1], len)
    }
    fn read(path: &Path) -> Self {
        let b = std::fs::read(path).unwrap();
        let mut a = Aligned::new(b.len());
        a.bytes_mut().copy_from_slice(&b);
        a
    }
    fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.0)[..self.1]
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.0)[..self.1]
    }
}

/// Raw data of a C-order little-endian `.npy`.
fn npy_data(path: &Path) -> Vec<u8> {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..6], b"\x93NUMPY");
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    b[10 + hlen..].to_vec()
}

/// `(x / (1 + |x|)) · s` in f32, as the operator's definition.
fn scaled_softsign(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let s = ctx.double(1)? as f32;
    let ([x], [mut out]) = ctx.io([0], [2])?;
    let x = required(x, 0)?;
    if x.shape.sizes() != out.shape.sizes() {
        return Err(Error::new(ErrorCode::InvalidArgument, "shapes", 0));
    }
    for (o, &v) in out.as_f32_mut()?.iter_mut().zip(x.as_f32()?) {
        *o = (v / (1.0 + v.abs())) * s;
    }
    Ok(())
}

const SCALED_SOFTSIGN: Kernel = op!(
    "etch_demo::scaled_softsign.out(Tensor x, float s, *, Tensor(a!) out) -> Tensor(a!)",
    scaled_softsign
);

/// The same operator declared with `int s`: the program passes a float.
const WRONG_SCHEMA: Kernel = op!(
    "etch_demo::scaled_softsign.out(Tensor x, int s, *, Tensor(a!) out) -> Tensor(a!)",
    scaled_softsign
);

const N: usize = etch_kernels::ops::KERNEL_COUNT + 2;

/// Loads and runs the fixture with `kernels`; the output bytes, or the stage
/// and code where it stopped.
fn run(kernels: &[Kernel]) -> std::result::Result<Vec<u8>, (&'static str, ErrorCode)> {
    let dir = custom_dir();
    let file = Aligned::read(&dir.join("custom_softsign.pte"));
    let program = Program::from_bytes(file.bytes(), Verification::InternalConsistency)
        .map_err(|e| ("program", e.code))?;
    let meta = program
        .method_meta("forward")
        .map_err(|e| ("meta", e.code))?;
    let mut arena = Aligned::new(64 * 1024);
    let mut state = vec![0u8; 4096];
    let mut planned: Vec<&mut [u8]> = vec![arena.bytes_mut()];
    let mut method = Method::load(&meta, &mut state, &mut planned, kernels, &[])
        .map_err(|e| ("load", e.code))?;
    let input = npy_data(&dir.join("custom_softsign.input0.npy"));
    method
        .set_input_bytes(0, &input)
        .map_err(|e| ("input", e.code))?;
    method.execute().map_err(|e| ("execute", e.code))?;
    match method.output(0).map_err(|e| ("output", e.code))? {
        Output::Tensor(t) => Ok(t.data.to_vec()),
        _ => Err(("output", ErrorCode::InvalidType)),
    }
}

fn registry() -> Registry<N> {
    Registry::<N>::from_slice(etch_kernels::KERNELS).unwrap()
}

#[test]
fn registered_rust_kernel_runs_the_custom_op_bit_exact() {
    let mut r = registry();
    r.register(SCALED_SOFTSIGN).unwrap();
    let want = npy_data(&custom_dir().join("custom_softsign.output0.npy"));
    assert_eq!(run(r.kernels()), Ok(want));
}

#[test]
fn unregistered_custom_op_is_operator_missing() {
    assert_eq!(
        run(etch_kernels::KERNELS),
        Err(("load", ErrorCode::OperatorMissing))
    );
    // The loader names it.
    let file = Aligned::read(&custom_dir().join("custom_softsign.pte"));
    let program = Program::from_bytes(file.bytes(), Verification::Minimal).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut missing = Vec::new();
    meta.for_each_missing_operator(etch_kernels::KERNELS, |name, overload| {
        missing.push(format!("{name}.{overload}"))
    })
    .unwrap();
    assert_eq!(missing, ["etch_demo::scaled_softsign.out"]);
}

#[test]
fn schema_mismatch_is_invalid_program_at_load() {
    let mut r = registry();
    r.register(WRONG_SCHEMA).unwrap();
    assert_eq!(run(r.kernels()), Err(("load", ErrorCode::InvalidProgram)));
}

#[test]
fn registration_codes_are_executorchs() {
    let mut r = registry();
    r.register(SCALED_SOFTSIGN).unwrap();
    // The same operator again: RegistrationAlreadyRegistered (0x16), also
    // for a built-in kernel.
    let again = r.register(WRONG_SCHEMA).unwrap_err();
    assert_eq!(again.code, ErrorCode::RegistrationAlreadyRegistered);
    assert_eq!(again.code as u32, 0x16);
    if let Some(&builtin) = etch_kernels::KERNELS.first() {
        let code = r.register(builtin).unwrap_err().code;
        assert_eq!(code, ErrorCode::RegistrationAlreadyRegistered);
    }
    // One slot left, then RegistrationExceedingMaxKernels (0x15).
    const OTHER: Kernel = op!("etch_demo::other(Tensor x) -> Tensor", scaled_softsign);
    const THIRD: Kernel = op!("etch_demo::third(Tensor x) -> Tensor", scaled_softsign);
    r.register(OTHER).unwrap();
    let full = r.register(THIRD).unwrap_err();
    assert_eq!(full.code, ErrorCode::RegistrationExceedingMaxKernels);
    assert_eq!(full.code as u32, 0x15);
    assert_eq!(r.kernels().len(), N);
    // Failed registrations left the registry as it was: the kernel still runs.
    let want = npy_data(&custom_dir().join("custom_softsign.output0.npy"));
    assert_eq!(run(r.kernels()), Ok(want));
}

/// The kernel with 1,001 bytes of scratch declared: checks it gets at least
/// that many, word-aligned, then runs as usual.
fn softsign_with_scratch(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let scratch = ctx.take_scratch();
    if scratch.len() * 8 < 1001 || !ctx.take_scratch().is_empty() {
        return Err(Error::new(ErrorCode::MemoryAllocationFailed, "scratch", 0));
    }
    // Written whole: it is the caller's state buffer, not someone else's.
    scratch.fill(0x5a5a_5a5a_5a5a_5a5a);
    scaled_softsign(ctx)
}

const WITH_SCRATCH: Kernel = op!(
    "etch_demo::scaled_softsign.out(Tensor x, float s, *, Tensor(a!) out) -> Tensor(a!)",
    softsign_with_scratch,
    scratch = 1001,
);

#[test]
fn declared_scratch_is_in_the_method_state_and_given_to_the_kernel() {
    let mut plain = registry();
    plain.register(SCALED_SOFTSIGN).unwrap();
    let mut with = registry();
    with.register(WITH_SCRATCH).unwrap();
    let file = Aligned::read(&custom_dir().join("custom_softsign.pte"));
    let program = Program::from_bytes(file.bytes(), Verification::InternalConsistency).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let base = meta.method_state_bytes(plain.kernels()).unwrap();
    // Rounded up to whole 8-byte words, plus up to 7 bytes to align them.
    assert_eq!(meta.kernel_scratch_bytes(with.kernels()).unwrap(), 1008);
    assert_eq!(
        meta.method_state_bytes(with.kernels()).unwrap(),
        base + 1015
    );
    let want = npy_data(&custom_dir().join("custom_softsign.output0.npy"));
    assert_eq!(run(with.kernels()), Ok(want));

    // Exactly enough state at every misalignment loads and runs; one byte
    // less fails with shortfall 1.
    let need = base + 1015;
    for skew in 0..8 {
        let mut arena = Aligned::new(64 * 1024);
        let mut planned: Vec<&mut [u8]> = vec![arena.bytes_mut()];
        let mut buf = vec![0u8; need + skew];
        let state = &mut buf[skew..];
        let mut m = Method::load(&meta, state, &mut planned, with.kernels(), &[]).unwrap();
        let input = npy_data(&custom_dir().join("custom_softsign.input0.npy"));
        m.set_input_bytes(0, &input).unwrap();
        m.execute().unwrap();
    }
    let mut arena = Aligned::new(64 * 1024);
    let mut planned: Vec<&mut [u8]> = vec![arena.bytes_mut()];
    let mut short = vec![0u8; need - 1];
    let e = Method::load(&meta, &mut short, &mut planned, with.kernels(), &[])
        .err()
        .unwrap();
    assert_eq!((e.code, e.at), (ErrorCode::MemoryAllocationFailed, 1));
}
