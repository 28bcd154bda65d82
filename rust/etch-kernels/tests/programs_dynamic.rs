//! The bounded-dynamic-shape and dim-order programs of tests/programs
//! (tools/export/programs_dynamic.py): each method loaded once,
//! its steps set (inputs with their own sizes) and executed in order;
//! every output's sizes exact and its values exact (or within the program's
//! stated ulp bound) against ExecuTorch's runtime. Then bad input: sizes
//! above the bound, rank changes, static inputs, resizes beyond the planned
//! capacity and overflowing sym values are exact error codes.

use std::path::{Path, PathBuf};

use etch_pte::schema::{slot, EValue};
use etch_pte::{InstructionArgs, PteFile, Table, Value};
use etch_runtime::{
    ErrorCode, Method, MethodMeta, Output, Program, ScalarType, Shape, TensorView, Verification,
};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs")
}

/// 16-byte aligned bytes.
struct Aligned(Vec<u128>, usize);
impl Aligned {
    fn new(len: usize) -> Self {
        Aligned(vec![0; len.div_ceil(16) + 1], len)
    }
    fn of(b: &[u8]) -> Self {
        let mut a = Aligned::new(b.len());
        a.bytes_mut().copy_from_slice(b);
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
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
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

/// Physical element index of each logical (C-order) element of `shape`.
fn physical_index(shape: &Shape) -> Vec<usize> {
    let rank = shape.rank();
    let strides = shape.strides();
    let mut idx = vec![0usize; rank];
    let mut out = Vec::new();
    for _ in 0..shape.numel() {
        out.push(idx.iter().zip(strides.iter()).map(|(i, s)| i * s).sum());
        for d in (0..rank).rev() {
            idx[d] += 1;
            if idx[d] < shape.size(d as isize) {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

/// The program's comparison rule from its `.json`: `None` for "exact",
/// `Some(n)` for `{"ulp": n}`.
fn rule(name: &str) -> Option<u64> {
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join(format!("{name}.json"))).unwrap())
            .unwrap();
    j["rule"]["ulp"].as_u64()
}

fn ulp(a: f32, b: f32) -> u64 {
    let key = |x: f32| {
        let i = x.to_bits() as i32;
        if i < 0 {
            i32::MIN as i64 - i as i64
        } else {
            i as i64
        }
    };
    key(a).abs_diff(key(b))
}

struct Loaded {
    file: Aligned,
}

impl Loaded {
    fn new(bytes: &[u8]) -> Self {
        Loaded {
            file: Aligned::of(bytes),
        }
    }
    /// Runs `f` with the method loaded (once) in fresh memory.
    fn with<R>(&self, f: impl FnOnce(&mut Method<'_, '_>, &MethodMeta<'_>) -> R) -> R {
        let program =
            Program::from_bytes(self.file.bytes(), Verification::InternalConsistency).unwrap();
        let meta = program.method_meta("forward").unwrap();
        let need = meta.method_state_bytes(etch_kernels::KERNELS).unwrap();
        let mut state = vec![0u8; need];
        let mut bufs: Vec<Aligned> = (0..meta.num_memory_planned_buffers().unwrap())
            .map(|i| Aligned::new(meta.memory_planned_buffer_size(i).unwrap()))
            .collect();
        let mut slices: Vec<&mut [u8]> = bufs.iter_mut().map(|b| b.bytes_mut()).collect();
        let mut method =
            Method::load(&meta, &mut state, &mut slices, etch_kernels::KERNELS, &[]).unwrap();
        f(&mut method, &meta)
    }
}

/// Sets input `i` from logical data with `sizes` (the method's dim order).
fn set_input(
    method: &mut Method<'_, '_>,
    i: usize,
    sizes: &[u32],
    data: &[u8],
) -> etch_runtime::Result<()> {
    let info = method.input_meta(i).unwrap();
    // The method's dim order (contiguous for another rank: refused anyway).
    let order: Vec<u8> = if sizes.len() == info.shape.rank() {
        info.shape.dim_order().to_vec()
    } else {
        (0..sizes.len() as u8).collect()
    };
    let shape = Shape::new(sizes, &order).unwrap();
    let elem = info.dtype.element_size().unwrap();
    let mut phys = vec![0u8; data.len()];
    for (k, p) in physical_index(&shape).into_iter().enumerate() {
        phys[p * elem..(p + 1) * elem].copy_from_slice(&data[k * elem..(k + 1) * elem]);
    }
    method.set_input(
        i,
        TensorView {
            dtype: info.dtype,
            shape,
            data: &phys,
        },
    )
}

/// Output `j` in logical order, with its sizes.
fn output(method: &Method<'_, '_>, j: usize) -> (Vec<usize>, ScalarType, Vec<u8>) {
    let Output::Tensor(out) = method.output(j).unwrap() else {
        panic!("tensor output")
    };
    let elem = out.dtype.element_size().unwrap();
    let mut logical = Vec::new();
    for p in physical_index(&out.shape) {
        logical.extend_from_slice(&out.data[p * elem..(p + 1) * elem]);
    }
    let sizes = out.shape.sizes().iter().map(|s| s as usize).collect();
    (sizes, out.dtype, logical)
}

fn steps(name: &str) -> usize {
    let d = dir().join(format!("{name}.forward.steps"));
    (0..)
        .take_while(|k| d.join(format!("{k}.input0.npy")).exists())
        .count()
}

/// Runs every step of `name` in one loaded method; returns the steps run.
fn run_program(name: &str) -> usize {
    let bytes = std::fs::read(dir().join(format!("{name}.pte"))).unwrap();
    let bound = rule(name);
    let n = steps(name);
    let d = dir().join(format!("{name}.forward.steps"));
    Loaded::new(&bytes).with(|method, _| {
        for k in 0..n {
            for i in 0..method.num_inputs().unwrap() {
                let (shape, data) = npy(&d.join(format!("{k}.input{i}.npy")));
                let sizes: Vec<u32> = shape.iter().map(|&s| s as u32).collect();
                set_input(method, i, &sizes, &data).unwrap_or_else(|e| panic!("{name} {k}: {e}"));
            }
            method
                .execute()
                .unwrap_or_else(|e| panic!("{name} step {k}: {e}"));
            for j in 0..method.num_outputs().unwrap() {
                let (rshape, reference) = npy(&d.join(format!("{k}.output{j}.npy")));
                let (sizes, dtype, got) = output(method, j);
                assert_eq!(sizes, rshape, "{name} step {k} output {j}: sizes");
                match (bound, dtype) {
                    (Some(n), ScalarType::FLOAT) => {
                        let (a, b): (&[f32], &[f32]) =
                            (bytemuck::cast_slice(&got), bytemuck::cast_slice(&reference));
                        let worst = a.iter().zip(b).map(|(&x, &y)| ulp(x, y)).max();
                        assert!(
                            worst.unwrap_or(0) <= n,
                            "{name} step {k} output {j}: {worst:?} ulp > {n}"
                        );
                    }
                    _ => assert!(got == reference, "{name} step {k} output {j} differs"),
                }
            }
        }
    });
    n
}

/// The dynamic-length sequence models at T = 32, 5, 17, 1 in one loaded
/// method, float and int8: sizes exact, values within the stated bound.
/// seq_ops_dyn_f32 needs cat, native_layer_norm, slice_copy and _softmax
/// to resize their outputs, and executorch_prim floordiv, mod and neg
/// (its outputs' sizes and values are T // 2 + 1, T % 3 - T, -(T // 2)).
/// seq_prim_dyn_f32 needs executorch_prim truediv (T / 4 as a fill value:
/// a Double in a value the program declares an Int), round, ceil, trunc
/// (sizes round(T / 2), ceil(T / 4), int(T / 3) + 1; round(1 / 2) = 0 is
/// an empty output at T = 1), gt, lt, ge, le as `torch.cond` predicates,
/// and moved branch results keeping their run-time sizes;
/// seq_symops_dyn_f32 sym_float, sym_max, sym_min and sym_not;
/// linear_dyn_f32 aten::linear resizing its output to [1, T, 4].
#[test]
fn dynamic_sequence_runs_at_every_length() {
    for name in [
        "seq_dyn_f32",
        "seq_dyn_int8",
        "seq_ops_dyn_f32",
        "seq_prim_dyn_f32",
        "seq_symops_dyn_f32",
        "linear_dyn_f32",
    ] {
        assert_eq!(run_program(name), 4, "{name}");
    }
}

/// The dim-order wall: a [1, 1, 32, 32] input with dim order [0, 2, 1, 3]
/// into a convolution with a channels-last output, exact.
#[test]
fn size_one_dim_orders_run_exactly() {
    for name in ["dimorder_f32", "dimorder_int8", "dimorder_cm"] {
        assert_eq!(run_program(name), 1, "{name}");
    }
}

fn seq() -> Vec<u8> {
    std::fs::read(dir().join("seq_dyn_f32.pte")).unwrap()
}

/// Step `k`'s input of the float sequence model.
fn seq_input(k: usize) -> (Vec<u32>, Vec<u8>) {
    let (shape, data) = npy(&dir().join(format!("seq_dyn_f32.forward.steps/{k}.input0.npy")));
    (shape.iter().map(|&s| s as u32).collect(), data)
}

/// `set_input` resizes as ExecuTorch's `resize_tensor`: a size above the
/// bound, more elements than planned, another rank or another size of a
/// static input is `InvalidArgument` (at = the input), and the input keeps
/// its sizes: the method still runs the last accepted length.
#[test]
fn input_sizes_above_the_bound_are_invalid_arguments() {
    Loaded::new(&seq()).with(|method, meta| {
        let info = meta.input_tensor_meta(0).unwrap();
        assert!(info.is_dynamic);
        assert_eq!(info.shape.sizes(), [1, 32, 8]);
        let (sizes, data) = seq_input(1); // T = 5
        set_input(method, 0, &sizes, &data).unwrap();
        let bad: [&[u32]; 4] = [&[1, 33, 8], &[2, 32, 8], &[1, 40], &[1, 5, 8, 1]];
        for s in bad {
            let n: u32 = s.iter().product();
            let e = set_input(method, 0, s, &vec![0u8; 4 * n as usize]).unwrap_err();
            assert_eq!((e.code, e.at), (ErrorCode::InvalidArgument, 0), "{s:?}");
        }
        // Bytes of another length than the current sizes: refused too.
        let e = method.set_input_bytes(0, &data[..16]).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        method.execute().unwrap();
        let (sizes, _, _) = output(method, 0);
        assert_eq!(sizes, [1, 20], "still T = 5");
    });
    // A static input accepts only its own sizes.
    let conv = std::fs::read(dir().join("dimorder_f32.pte")).unwrap();
    Loaded::new(&conv).with(|method, meta| {
        assert!(!meta.input_tensor_meta(0).unwrap().is_dynamic);
        let e = set_input(method, 0, &[1, 1, 16, 32], &[0u8; 2048]).unwrap_err();
        assert_eq!((e.code, e.at), (ErrorCode::InvalidArgument, 0));
    });
}

/// The method state holds the run-time sizes, sized exactly: one byte less
/// fails with the shortfall, before anything is written.
#[test]
fn state_bytes_include_the_dynamic_sizes_exactly() {
    let file = Aligned::of(&seq());
    let program = Program::from_bytes(file.bytes(), Verification::InternalConsistency).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let need = meta.method_state_bytes(etch_kernels::KERNELS).unwrap();
    let mut bufs: Vec<Aligned> = (0..meta.num_memory_planned_buffers().unwrap())
        .map(|i| Aligned::new(meta.memory_planned_buffer_size(i).unwrap()))
        .collect();
    let mut slices: Vec<&mut [u8]> = bufs.iter_mut().map(|b| b.bytes_mut()).collect();
    let mut short = vec![0xa5u8; need - 1];
    let e = Method::load(&meta, &mut short, &mut slices, etch_kernels::KERNELS, &[])
        .err()
        .unwrap();
    assert_eq!((e.code, e.at), (ErrorCode::MemoryAllocationFailed, 1));
    assert!(short.iter().all(|&b| b == 0xa5));
    // Every bounded dynamic tensor: 4 + 1 bytes + 4 per dimension.
    let file_view = PteFile::new_checked(file.bytes()).unwrap();
    let values = file_view.plan("forward").unwrap().values().unwrap();
    let mut dims = 0;
    for v in values.iter() {
        if let Value::Tensor(t) = v.unwrap().value().unwrap() {
            if t.shape_dynamism().unwrap() == etch_pte::ShapeDynamism::DynamicBound {
                dims += 5 + 4 * t.sizes().unwrap().len();
            }
        }
    }
    assert!(dims > 0);
    assert!(need >= dims, "{need} state bytes, {dims} of run-time sizes");
}

// ---- hostile numbers: the constants the sizes are computed from ----

/// Value indices of the arguments of every call to an operator whose name
/// contains `op`, with its instruction index.
fn calls(bytes: &[u8], op: &str) -> Vec<(usize, Vec<usize>)> {
    let file = PteFile::new_checked(bytes).unwrap();
    let plan = file.plan("forward").unwrap();
    let ops = plan.operators().unwrap();
    let mut out = Vec::new();
    let mut index = 0;
    for chain in plan.chains().unwrap().iter() {
        for instr in chain.unwrap().instructions().unwrap().iter() {
            if let InstructionArgs::KernelCall { op_index, args } = instr.unwrap().args().unwrap() {
                if ops
                    .get(op_index as usize)
                    .unwrap()
                    .name()
                    .unwrap()
                    .contains(op)
                {
                    out.push((index, args.iter().map(|a| a.unwrap() as usize).collect()));
                }
            }
            index += 1;
        }
    }
    out
}

fn evalue<'a>(bytes: &'a [u8], index: usize) -> EValue<'a> {
    let file = PteFile::new_checked(bytes).unwrap();
    let v = file
        .plan("forward")
        .unwrap()
        .values()
        .unwrap()
        .get(index)
        .unwrap();
    EValue(Table::at(bytes, v.position()).unwrap())
}

/// Byte position of Int value `index`'s payload.
fn int_at(bytes: &[u8], index: usize) -> usize {
    assert!(matches!(
        evalue(bytes, index).value().unwrap(),
        Value::Int(_)
    ));
    let val = evalue(bytes, index)
        .0
        .table(slot::evalue::VAL)
        .unwrap()
        .unwrap();
    val.field(slot::single::VALUE, 8).unwrap().unwrap()
}

/// Items (value indices) of int-list value `index`.
fn list(bytes: &[u8], index: usize) -> Vec<usize> {
    let Value::IntList(items) = evalue(bytes, index).value().unwrap() else {
        panic!("value {index} is not an int list");
    };
    items.iter().map(|i| i.unwrap() as usize).collect()
}

/// Runs the float sequence model (patched) at step `k`'s length.
fn run_patched(bytes: &[u8], k: usize) -> etch_runtime::Result<()> {
    let (sizes, data) = seq_input(k);
    Loaded::new(bytes).with(|method, _| {
        set_input(method, 0, &sizes, &data)?;
        method.execute()
    })
}

/// `aten::full`'s size list [1, T, 1] with its last constant changed: 2
/// asks for 2 T elements of a tensor planned for 32 (at T = 32: a resize
/// beyond the planned capacity), -5 a negative size, i64::MAX an
/// overflowing one. Each is InvalidArgument at that instruction (the
/// resize is refused before the kernel takes its output's bytes).
#[test]
fn resizes_beyond_the_plan_are_invalid_arguments() {
    let base = seq();
    assert_eq!(run_patched(&base, 0), Ok(()));
    let [(at, args)] = calls(&base, "aten::full").try_into().unwrap();
    let items = list(&base, args[0]);
    let last = int_at(&base, *items.last().unwrap());
    for v in [2i64, -5, i64::MAX, i64::MIN] {
        let mut bytes = base.clone();
        bytes[last..last + 8].copy_from_slice(&v.to_le_bytes());
        let e = run_patched(&bytes, 0).unwrap_err();
        assert_eq!(
            (e.code, e.at),
            (ErrorCode::InvalidArgument, at as u32),
            "full size {v}"
        );
    }
}

/// `executorch_prim::mul.Scalar(T, 4)` with the constant 4 made huge: the
/// Int product overflows (upstream's int64 arithmetic would be undefined),
/// InvalidArgument at the instruction; made negative, the view it feeds
/// gets a negative size: InvalidArgument too.
#[test]
fn overflowing_or_negative_sym_values_are_invalid_arguments() {
    let base = seq();
    let [(at, args)] = calls(&base, "executorch_prim::mul").try_into().unwrap();
    let constant = if matches!(evalue(&base, args[1]).value().unwrap(), Value::Int(4)) {
        args[1]
    } else {
        args[0]
    };
    let pos = int_at(&base, constant);
    let mut bytes = base.clone();
    bytes[pos..pos + 8].copy_from_slice(&i64::MAX.to_le_bytes());
    let e = run_patched(&bytes, 0).unwrap_err();
    assert_eq!((e.code, e.at), (ErrorCode::InvalidArgument, at as u32));
    bytes[pos..pos + 8].copy_from_slice(&(-4i64).to_le_bytes());
    let e = run_patched(&bytes, 2).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.at > at as u32, "the view after it fails, not the product");
}
