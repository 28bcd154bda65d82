//! Every committed fixture, loaded and run by the runtime with every kernel:
//! outputs must be bit-identical to ExecuTorch's reference outputs, the state
//! bytes `MethodMeta` reports must be exactly what `Method::load` needs, and
//! short buffers or missing kernels must fail with the exact error.

use std::path::{Path, PathBuf};

use etch_runtime::{ErrorCode, Method, MethodMeta, Output, Program, Verification};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

fn fixtures() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pte"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    v.sort();
    assert_eq!(v.len(), 23, "the 23 committed fixtures");
    // The delegated program needs its backend: tested on its own below.
    v.retain(|n| !n.contains("xnnpack"));
    v
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

/// (shape, raw little-endian data) of a C-order `.npy`.
fn npy(path: &Path) -> (Vec<usize>, Vec<u8>) {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..6], b"\x93NUMPY");
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    let header = std::str::from_utf8(&b[10..10 + hlen]).unwrap();
    let s = &header[header.find("'shape': (").unwrap() + 10..];
    let shape = s[..s.find(')').unwrap()]
        .split(',')
        .filter_map(|x| x.trim().parse().ok())
        .collect();
    (shape, b[10 + hlen..].to_vec())
}

/// Logical (C order) <-> physical layout of a shape.
fn physical_index(shape: &etch_runtime::Shape) -> Vec<usize> {
    let sizes = shape.sizes();
    let strides = shape.strides();
    let mut idx = vec![0usize; sizes.len()];
    let mut out = Vec::new();
    for _ in 0..shape.numel() {
        out.push(idx.iter().zip(strides.iter()).map(|(i, s)| i * s).sum());
        for d in (0..sizes.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape.size(d as isize) {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

fn planned(meta: &MethodMeta<'_>) -> Vec<Aligned> {
    (0..meta.num_memory_planned_buffers().unwrap())
        .map(|i| Aligned::new(meta.memory_planned_buffer_size(i).unwrap()))
        .collect()
}

#[test]
fn every_fixture_is_bit_exact() {
    for name in fixtures() {
        let file = Aligned::read(&fixture_dir().join(format!("{name}.pte")));
        let program = Program::from_bytes(file.bytes(), Verification::InternalConsistency).unwrap();
        let meta = program.method_meta("forward").unwrap();
        let mut state = vec![0u8; meta.method_state_bytes(etch_kernels::KERNELS).unwrap()];
        let mut bufs = planned(&meta);
        let mut slices: Vec<&mut [u8]> = bufs.iter_mut().map(|b| b.bytes_mut()).collect();
        let mut method = Method::load(&meta, &mut state, &mut slices, etch_kernels::KERNELS, &[])
            .unwrap_or_else(|e| panic!("{name}: {e}"));

        let info = method.input_meta(0).unwrap();
        let (shape, data) = npy(&fixture_dir().join(format!("{name}.input0.npy")));
        let sizes: Vec<usize> = info.shape.sizes().iter().map(|s| s as usize).collect();
        assert_eq!(shape, sizes, "{name}");
        let elem = info.dtype.element_size().unwrap();
        let mut phys = vec![0u8; data.len()];
        for (k, p) in physical_index(&info.shape).into_iter().enumerate() {
            phys[p * elem..(p + 1) * elem].copy_from_slice(&data[k * elem..(k + 1) * elem]);
        }
        method.set_input_bytes(0, &phys).unwrap();
        // Twice: a second run must give the same (inputs stay set).
        for run in 0..2 {
            method.execute().unwrap_or_else(|e| panic!("{name}: {e}"));
            let Output::Tensor(out) = method.output(0).unwrap() else {
                panic!("{name}: tensor output")
            };
            let (rshape, reference) = npy(&fixture_dir().join(format!("{name}.output0.npy")));
            assert_eq!(
                rshape,
                out.shape
                    .sizes()
                    .iter()
                    .map(|s| s as usize)
                    .collect::<Vec<_>>()
            );
            let elem = out.dtype.element_size().unwrap();
            let mut logical = Vec::new();
            for p in physical_index(&out.shape) {
                logical.extend_from_slice(&out.data[p * elem..(p + 1) * elem]);
            }
            assert!(
                logical == reference,
                "{name} run {run}: output differs from ExecuTorch's reference"
            );
            if run == 0 {
                // The int8-I/O programs' input lives where the output goes:
                // set it again, as a firmware would per inference.
                method.set_input_bytes(0, &phys).unwrap();
            }
        }
    }
}

#[test]
fn state_bytes_are_exact_and_short_buffers_fail_with_the_shortfall() {
    for name in fixtures() {
        let file = Aligned::read(&fixture_dir().join(format!("{name}.pte")));
        let program = Program::from_bytes(file.bytes(), Verification::InternalConsistency).unwrap();
        let meta = program.method_meta("forward").unwrap();
        let need = meta.method_state_bytes(etch_kernels::KERNELS).unwrap();

        // Exactly enough state loads; one byte less fails with shortfall 1.
        let mut bufs = planned(&meta);
        let mut slices: Vec<&mut [u8]> = bufs.iter_mut().map(|b| b.bytes_mut()).collect();
        let mut state = vec![0u8; need];
        assert!(
            Method::load(&meta, &mut state, &mut slices, etch_kernels::KERNELS, &[]).is_ok(),
            "{name}"
        );
        if need > 0 {
            let mut slices: Vec<&mut [u8]> = bufs.iter_mut().map(|b| b.bytes_mut()).collect();
            let mut short = vec![0xa5u8; need - 1];
            let e = Method::load(&meta, &mut short, &mut slices, etch_kernels::KERNELS, &[])
                .err()
                .unwrap();
            assert_eq!(
                (e.code, e.at),
                (ErrorCode::MemoryAllocationFailed, 1),
                "{name}"
            );
            assert!(
                short.iter().all(|&b| b == 0xa5),
                "{name}: state written despite failure"
            );
        }

        // A planned buffer one byte short fails with shortfall 1, untouched.
        let arena = meta.memory_planned_buffer_size(0).unwrap();
        let mut small = Aligned::new(arena - 1);
        small.bytes_mut().fill(0x5a);
        let mut slices: Vec<&mut [u8]> = vec![small.bytes_mut()];
        let mut state = vec![0u8; need];
        let e = Method::load(&meta, &mut state, &mut slices, etch_kernels::KERNELS, &[])
            .err()
            .unwrap();
        assert_eq!(
            (e.code, e.at),
            (ErrorCode::MemoryAllocationFailed, 1),
            "{name}"
        );
        assert!(
            small.bytes().iter().all(|&b| b == 0x5a),
            "{name}: arena written despite failure"
        );
    }
}

#[test]
fn missing_kernels_are_all_named_at_load() {
    let file = Aligned::read(&fixture_dir().join("dscnn_cm_m33.pte"));
    let program = Program::from_bytes(file.bytes(), Verification::InternalConsistency).unwrap();
    let meta = program.method_meta("forward").unwrap();
    // Every kernel except the two convolutions.
    let kernels: Vec<etch_runtime::Kernel> = etch_kernels::KERNELS
        .iter()
        .filter(|k| !k.name.contains("conv2d"))
        .copied()
        .collect();
    let mut names = Vec::new();
    let missing = meta
        .for_each_missing_operator(&kernels, |n, o| names.push(format!("{n}.{o}")))
        .unwrap();
    assert_eq!(missing, 2);
    assert_eq!(
        names,
        [
            "cortex_m::quantized_depthwise_conv2d.out",
            "cortex_m::quantized_conv2d.out"
        ]
    );
    let mut bufs = planned(&meta);
    let mut slices: Vec<&mut [u8]> = bufs.iter_mut().map(|b| b.bytes_mut()).collect();
    let mut state = vec![0u8; meta.method_state_bytes(etch_kernels::KERNELS).unwrap()];
    let e = Method::load(&meta, &mut state, &mut slices, &kernels, &[])
        .err()
        .unwrap();
    assert_eq!((e.code, e.at), (ErrorCode::OperatorMissing, 2));
}

#[test]
fn a_kernel_whose_schema_differs_is_rejected_at_load() {
    let file = Aligned::read(&fixture_dir().join("dscnn_cm_m33.pte"));
    let program = Program::from_bytes(file.bytes(), Verification::InternalConsistency).unwrap();
    let meta = program.method_meta("forward").unwrap();
    // The 1.4.1 avg_pool schema had no `ceil_mode`: one argument fewer.
    let mut kernels: Vec<etch_runtime::Kernel> = etch_kernels::KERNELS.to_vec();
    let pool = kernels
        .iter_mut()
        .find(|k| k.name == "cortex_m::quantized_avg_pool2d.out")
        .unwrap();
    use etch_runtime::ArgKind as A;
    pool.args = &[
        A::Tensor,
        A::IntList,
        A::IntList,
        A::IntList,
        A::Int,
        A::Int,
        A::Int,
        A::Tensor,
        A::Tensor,
        A::Tensor,
    ];
    let mut bufs = planned(&meta);
    let mut slices: Vec<&mut [u8]> = bufs.iter_mut().map(|b| b.bytes_mut()).collect();
    let mut state = vec![0u8; meta.method_state_bytes(etch_kernels::KERNELS).unwrap()];
    let e = Method::load(&meta, &mut state, &mut slices, &kernels, &[])
        .err()
        .unwrap();
    assert_eq!(e.code, ErrorCode::InvalidProgram);
    assert_eq!(
        e.what,
        "kernel call does not match the operator schema (at = instruction)"
    );
    assert_eq!(e.at, 13, "instruction index of the avg_pool call");
    assert_eq!(
        meta.operator_of_instruction(13).unwrap(),
        ("cortex_m::quantized_avg_pool2d", "out")
    );
}

/// A stand-in for the XNNPACK backend: records what the runtime hands it and
/// writes a recognisable output (the first 8 inputs), so the test checks the
/// runtime's delegate plumbing, not XNNPACK.
struct RecordingBackend {
    blob_len: std::cell::Cell<usize>,
    executed: std::cell::Cell<u32>,
}

impl etch_runtime::Backend for RecordingBackend {
    fn id(&self) -> &str {
        "XnnpackBackend"
    }
    fn init(
        &self,
        processed: &[u8],
        _specs: etch_pte::Vector<'_, etch_pte::schema::CompileSpec<'_>>,
    ) -> etch_runtime::Result<etch_runtime::DelegateHandle> {
        self.blob_len.set(processed.len());
        Ok(0x5eed)
    }
    fn execute(
        &self,
        handle: etch_runtime::DelegateHandle,
        ctx: &mut etch_runtime::KernelContext<'_, '_>,
    ) -> etch_runtime::Result<()> {
        assert_eq!(handle, 0x5eed);
        assert_eq!(ctx.num_args(), 2);
        let ([x], [mut out]) = ctx.io([0], [1])?;
        let x = x.unwrap();
        out.as_f32_mut()?.copy_from_slice(&x.as_f32()?[..8]);
        self.executed.set(self.executed.get() + 1);
        Ok(())
    }
}

#[test]
fn delegates_are_initialised_and_called_or_reported_missing() {
    let file = Aligned::read(&fixture_dir().join("tiny_xnnpack_delegate.pte"));
    let program = Program::from_bytes(file.bytes(), Verification::InternalConsistency).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut bufs = planned(&meta);
    let mut state = vec![0u8; meta.method_state_bytes(etch_kernels::KERNELS).unwrap()];
    {
        let mut slices: Vec<&mut [u8]> = bufs.iter_mut().map(|b| b.bytes_mut()).collect();
        let e = Method::load(&meta, &mut state, &mut slices, etch_kernels::KERNELS, &[])
            .err()
            .unwrap();
        assert_eq!((e.code, e.at), (ErrorCode::NotFound, 0));
    }
    let backend = RecordingBackend {
        blob_len: 0.into(),
        executed: 0.into(),
    };
    let backends: [&dyn etch_runtime::Backend; 1] = [&backend];
    let mut slices: Vec<&mut [u8]> = bufs.iter_mut().map(|b| b.bytes_mut()).collect();
    let mut method = Method::load(
        &meta,
        &mut state,
        &mut slices,
        etch_kernels::KERNELS,
        &backends,
    )
    .unwrap();
    // The blob ExecuTorch's deserializer reports for backend_delegate_data[0].
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture_dir().join("tiny_xnnpack_delegate.expected.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        backend.blob_len.get() as u64,
        expected["backend_delegate_data_sizes"][0].as_u64().unwrap()
    );
    let input: Vec<u8> = (0..16)
        .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
        .collect();
    method.set_input_bytes(0, &input).unwrap();
    method.execute().unwrap();
    assert_eq!(backend.executed.get(), 1);
    let Output::Tensor(out) = method.output(0).unwrap() else {
        panic!()
    };
    assert_eq!(
        out.as_f32().unwrap(),
        &[0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]
    );
}
