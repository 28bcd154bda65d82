//! `io`'s one-output path against the general one (pieces): for every
//! kernel call of every committed program, the same views (dtype, shape,
//! the very bytes) or the same error, and the error when an input is the
//! output itself.

extern crate std;
use super::*;
use crate::calls::{encode, Env};
use crate::state::{instruction, Cursor};
use crate::Program;
use etch_pte::{InstructionArgs, PteFile};
use std::path::Path;
use std::vec;
use std::vec::Vec;

/// What a view says: dtype, sizes, dim order, and where its bytes are.
type Seen = (i8, Vec<u32>, Vec<u8>, usize, usize);

fn seen(dtype: ScalarType, shape: &Shape<'_>, data: &[u8]) -> Seen {
    let sizes = shape.sizes().iter().collect();
    let order = shape.dim_order().to_vec();
    (dtype.0, sizes, order, data.as_ptr() as usize, data.len())
}

/// `io` over `inputs` and `out` (argument positions) by the one-output path
/// (`fast`) or the pieces: the views, or the error code.
fn views(
    ctx: &mut KernelContext<'_, '_>,
    fast: bool,
    inputs: &[usize],
    out: usize,
) -> core::result::Result<Vec<Option<Seen>>, crate::ErrorCode> {
    let mut ins: Vec<Option<TensorView<'_>>> = vec![None; inputs.len()];
    let mut outs = [TensorViewMut::empty()];
    let r = if fast {
        ctx.io_one_output(inputs, out, &mut ins, &mut outs)
    } else {
        ctx.io_pieces(true, inputs, &[out], &mut ins, &mut outs)
    };
    r.map_err(|e| e.code)?;
    let mut all = vec![Some(seen(outs[0].dtype, &outs[0].shape, outs[0].data))];
    all.extend(
        ins.iter()
            .map(|v| v.map(|v| seen(v.dtype, &v.shape, v.data))),
    );
    Ok(all)
}

#[test]
fn one_output_views_are_the_pieces_views() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (mut calls, mut made) = (0, 0);
    for dir in ["tests/fixtures", "tests/ops", "tests/zoo", "bench/models"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_none_or(|x| x != "pte") {
                continue;
            }
            let bytes = std::fs::read(&p).unwrap();
            let mut words = vec![0u128; bytes.len().div_ceil(16)];
            bytemuck::cast_slice_mut::<u128, u8>(&mut words)[..bytes.len()].copy_from_slice(&bytes);
            let bytes = &bytemuck::cast_slice::<u128, u8>(&words)[..bytes.len()];
            let program = Program::from_file(PteFile::new_checked(bytes).unwrap());
            for m in 0..program.num_methods().unwrap() {
                let meta = program
                    .method_meta(program.method_name(m).unwrap())
                    .unwrap();
                let (c, f) = check_method(&meta);
                calls += c;
                made += f;
            }
        }
    }
    std::eprintln!("{calls} calls, views made for {made}");
    assert!(calls > 1000 && made > 1000, "{calls} {made}");
}

/// (calls compared, calls whose views both paths made) of one method.
fn check_method(meta: &MethodMeta<'_>) -> (usize, usize) {
    let plan = meta.plan;
    let values = plan.values().unwrap();
    let env = Env {
        file: meta.file(),
        overrides: crate::overrides::Overrides::none(),
    };
    // Planned buffers as `Method::load` takes them: 16-byte aligned.
    let n_buffers = meta.num_memory_planned_buffers().unwrap();
    let mut store: Vec<Vec<u128>> = (0..n_buffers)
        .map(|i| vec![0u128; meta.memory_planned_buffer_size(i).unwrap().div_ceil(16)])
        .collect();
    let (mut calls, mut made) = (0, 0);
    let mut at = Cursor::default();
    for i in 0..meta.num_instructions().unwrap() {
        let f = instruction(&plan, i, &mut at).unwrap();
        let InstructionArgs::KernelCall { op_index, args } = f.instr else {
            continue;
        };
        let words = encode(&values, op_index as u32, args, None, &mut []);
        let mut table = vec![0u32; words];
        encode(&values, op_index as u32, args, Some(&env), &mut table);
        let call = Call::at(&table);
        let n = args.len();
        // The return value (last) as the output, every other tensor or
        // None argument of another value as an input.
        if n < 2 || call.entry(n - 1) & 15 != calls::TENSOR {
            continue;
        }
        let out_v = args.get(n - 1).unwrap();
        let inputs: Vec<usize> = (0..n - 1)
            .filter(|&k| {
                let tag = call.entry(k) & 15;
                (tag == calls::TENSOR || tag == calls::NULL) && args.get(k).unwrap() != out_v
            })
            .collect();
        let mut with_out = inputs.clone();
        with_out.push(n - 1);
        let mut planned: Vec<&mut [u8]> = store
            .iter_mut()
            .map(|b| bytemuck::cast_slice_mut::<u128, u8>(b))
            .collect();
        let mut memory: &mut [&mut [u8]] = &mut planned;
        let mut dims = [];
        let mut ctx = KernelContext {
            meta,
            values,
            args,
            call,
            memory: &mut memory as &mut dyn Arenas,
            overrides: OverridesMut(&mut []),
            dims: &mut dims,
            scratch: &mut [],
            kernel: 0,
        };
        let general = views(&mut ctx, false, &inputs, n - 1);
        let one = views(&mut ctx, true, &inputs, n - 1);
        assert_eq!(one, general, "instruction {i}");
        made += one.is_ok() as usize;
        // The output read as an input too: an overlap, on both paths.
        let general = views(&mut ctx, false, &with_out, n - 1);
        let one = views(&mut ctx, true, &with_out, n - 1);
        assert_eq!(one, general, "instruction {i}, output as input");
        if ctx
            .call
            .tensor(call.entry(n - 1), meta.data)
            .unwrap()
            .nbytes
            > 0
        {
            assert_eq!(one, Err(crate::ErrorCode::InvalidProgram));
        }
        calls += 1;
    }
    (calls, made)
}
