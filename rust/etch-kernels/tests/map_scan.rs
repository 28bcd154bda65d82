//! `torch.map` and `scan` as ExecuTorch 1.5.1 exports them (tests/programs
//! `map_f32`, `scan_f32`): a loop of a backward `JumpFalseCall` over an Int
//! counter (`executorch_prim::{add,eq,sub}.Scalar`) whose body writes its
//! result into slice `counter` of the stacked output with
//! `executorch_prim::et_copy_index.tensor`. Each program's steps against
//! ExecuTorch's runtime (bit-exact, in order on one loaded method), then the
//! index argument pointed at a patched Int: negative, or past the output's
//! slices, and `self` of the same rank as `src`: `InvalidArgument` at the
//! instruction, where upstream would abort or write out of bounds.

use std::path::{Path, PathBuf};

use etch_pte::schema::{slot, EValue};
use etch_pte::{PteFile, Table, Value};
use etch_runtime::{ErrorCode, Method, Output, Program, Verification};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs")
}

/// 16-byte aligned copy of `b`.
fn aligned(b: &[u8]) -> Vec<u128> {
    let mut v = vec![0u128; b.len().div_ceil(16)];
    bytemuck::cast_slice_mut::<u128, u8>(&mut v)[..b.len()].copy_from_slice(b);
    v
}

/// The raw little-endian payload of a version-1 `.npy`.
fn npy(path: &Path) -> Vec<u8> {
    let b = std::fs::read(path).unwrap();
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    b[10 + hlen..].to_vec()
}

/// Loads `bytes`' forward once and runs `f` on it.
fn with_method<R>(bytes: &[u8], f: impl FnOnce(&mut Method<'_, '_>) -> R) -> R {
    let file = aligned(bytes);
    let file = &bytemuck::cast_slice::<u128, u8>(&file)[..bytes.len()];
    let program = Program::from_bytes(file, Verification::InternalConsistency).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut state = vec![0u8; meta.method_state_bytes(etch_kernels::KERNELS).unwrap()];
    let mut bufs: Vec<Vec<u128>> = (0..meta.num_memory_planned_buffers().unwrap())
        .map(|i| vec![0u128; meta.memory_planned_buffer_size(i).unwrap().div_ceil(16)])
        .collect();
    let mut slices: Vec<&mut [u8]> = bufs
        .iter_mut()
        .map(|b| bytemuck::cast_slice_mut::<u128, u8>(b))
        .collect();
    let mut method =
        Method::load(&meta, &mut state, &mut slices, etch_kernels::KERNELS, &[]).unwrap();
    f(&mut method)
}

/// Step `k` of `name`: sets input 0, executes, returns output 0's bytes.
fn step(method: &mut Method<'_, '_>, name: &str, k: usize) -> etch_runtime::Result<Vec<u8>> {
    let d = dir().join(format!("{name}.forward.steps"));
    method.set_input_bytes(0, &npy(&d.join(format!("{k}.input0.npy"))))?;
    method.execute()?;
    let Output::Tensor(t) = method.output(0)? else {
        panic!("tensor output")
    };
    Ok(t.data.to_vec())
}

#[test]
fn map_and_scan_match_executorch_step_by_step() {
    for name in ["map_f32", "scan_f32"] {
        let bytes = std::fs::read(dir().join(format!("{name}.pte"))).unwrap();
        let d = dir().join(format!("{name}.forward.steps"));
        with_method(&bytes, |m| {
            for k in 0..4 {
                let want = npy(&d.join(format!("{k}.output0.npy")));
                assert_eq!(step(m, name, k).unwrap(), want, "{name} step {k}");
            }
        });
    }
}

/// Byte offset of the unique KernelCall argument vector `[len, args...]`
/// (little-endian i32s, as the flatbuffer stores it).
fn find_args(bytes: &[u8], args: &[i32]) -> usize {
    let mut pat = (args.len() as i32).to_le_bytes().to_vec();
    for a in args {
        pat.extend_from_slice(&a.to_le_bytes());
    }
    let hits: Vec<usize> = (0..bytes.len() - pat.len())
        .filter(|&i| bytes[i..i + pat.len()] == pat[..])
        .collect();
    assert_eq!(hits.len(), 1, "argument vector {args:?}");
    hits[0]
}

/// Byte position of Int value `index`'s payload in forward's value table.
fn int_at(bytes: &[u8], index: usize) -> usize {
    let file = PteFile::new_checked(bytes).unwrap();
    let v = file
        .plan("forward")
        .unwrap()
        .values()
        .unwrap()
        .get(index)
        .unwrap();
    let e = EValue(Table::at(bytes, v.position()).unwrap());
    assert!(matches!(e.value().unwrap(), Value::Int(1)));
    let val = e.0.table(slot::evalue::VAL).unwrap().unwrap();
    val.field(slot::single::VALUE, 8).unwrap().unwrap()
}

/// map_f32: instruction 4 is `et_copy_index(v1 [3, 4], v10 [4], v2)`, v2
/// the loop counter. Its index is pointed at v11 (the Int alpha of
/// `aten::add`, one), and v11 patched: minus one and three (past the three
/// slices of a static output) are InvalidArgument at instruction 4, two (a
/// slice there is) runs. `src` pointed at v0 (`[3, 4]`: the rank of
/// `self`) is refused the same way.
#[test]
fn bad_indices_and_ranks_are_invalid_arguments() {
    let base = std::fs::read(dir().join("map_f32.pte")).unwrap();
    let at = find_args(&base, &[1, 10, 2]);
    let mut to_alpha = base.clone();
    to_alpha[at + 12..at + 16].copy_from_slice(&11i32.to_le_bytes());
    let pos = int_at(&to_alpha, 11);
    for (v, refused) in [(-1i64, true), (3, true), (2, false), (1, false)] {
        let mut b = to_alpha.clone();
        b[pos..pos + 8].copy_from_slice(&v.to_le_bytes());
        let r = with_method(&b, |m| step(m, "map_f32", 0));
        if refused {
            let e = r.unwrap_err();
            assert_eq!((e.code, e.at), (ErrorCode::InvalidArgument, 4), "index {v}");
        } else {
            assert!(r.is_ok(), "index {v}: {r:?}");
        }
    }
    let mut same_rank = base.clone();
    same_rank[at + 8..at + 12].copy_from_slice(&0i32.to_le_bytes());
    let e = with_method(&same_rank, |m| step(m, "map_f32", 0)).unwrap_err();
    assert_eq!((e.code, e.at), (ErrorCode::InvalidArgument, 4));
}
