//! Hostile numbers in well-formed files (zero and huge sizes, huge strides
//! and dilations, overflowing tap positions, huge `slice_copy` steps, every
//! int argument at its boundaries), reproduced on real fixtures by changing
//! those numbers, and at the kernel level without the loader's guard. Every case must end quickly in the exact outcome asserted
//! (cargo test builds with overflow checks: an unchecked multiply panics).

use std::path::Path;

use etch_fuzz::{load_execute, Outcome, Stage};
use etch_pte::schema::{slot, EValue};
use etch_pte::{InstructionArgs, PteFile, Table, Value};
use etch_runtime::{ErrorCode, Verification};

const BOTH: [Verification; 2] = [Verification::Minimal, Verification::InternalConsistency];

fn fixture(name: &str) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    std::fs::read(dir.join(format!("{name}.pte"))).unwrap()
}

/// For every kernel call to an operator whose name contains `op`, the value
/// indices of its arguments.
fn calls(bytes: &[u8], op: &str) -> Vec<Vec<usize>> {
    let file = PteFile::new_checked(bytes).unwrap();
    let plan = file.plan("forward").unwrap();
    let ops = plan.operators().unwrap();
    let mut out = Vec::new();
    for chain in plan.chains().unwrap().iter() {
        for instr in chain.unwrap().instructions().unwrap().iter() {
            if let InstructionArgs::KernelCall { op_index, args } = instr.unwrap().args().unwrap() {
                let name = ops.get(op_index as usize).unwrap().name().unwrap();
                if name.contains(op) {
                    out.push(args.iter().map(|a| a.unwrap() as usize).collect());
                }
            }
        }
    }
    out
}

fn evalue<'a>(bytes: &'a [u8], index: usize) -> EValue<'a> {
    let file = PteFile::new_checked(bytes).unwrap();
    let plan = file.plan("forward").unwrap();
    let v = plan.values().unwrap().get(index).unwrap();
    EValue(Table::at(bytes, v.position()).unwrap())
}

/// Byte position of the `i`-th size of tensor value `index`.
fn size_at(bytes: &[u8], index: usize, i: usize) -> usize {
    let Value::Tensor(t) = evalue(bytes, index).value().unwrap() else {
        panic!("value {index} is not a tensor");
    };
    t.sizes().unwrap().position() + 4 * i
}

/// Byte positions of the 64-bit `Int`s an `int[]` argument lists.
fn int_list_at(bytes: &[u8], index: usize) -> Vec<usize> {
    let Value::IntList(items) = evalue(bytes, index).value().unwrap() else {
        panic!("value {index} is not an int list");
    };
    items
        .iter()
        .map(|item| {
            let v = evalue(bytes, item.unwrap() as usize);
            let val = v.0.table(slot::evalue::VAL).unwrap().unwrap();
            val.field(slot::single::VALUE, 8).unwrap().unwrap()
        })
        .collect()
}

/// `ETCH_SAVE_CASES=DIR cargo test -p etch-fuzz --test hostile_numbers`
/// writes every case as a file (how `regressions/` got its `*-huge.pte` files).
fn save(name: &str, bytes: &[u8]) {
    if let Some(dir) = std::env::var_os("ETCH_SAVE_CASES") {
        let name = name.replace("::", "_").replace('.', "_");
        std::fs::write(Path::new(&dir).join(format!("{name}.pte")), bytes).unwrap();
    }
}

fn both(bytes: &[u8]) -> [Outcome; 2] {
    BOTH.map(|v| load_execute(bytes, v))
}

/// The first audit's "Hang": a tensor with one zero and one huge size has zero bytes
/// and passed verification and `Method::load`; the kernels then looped over
/// the huge size (quantized_conv2d over 60 s). Every activation of every
/// window operator in the zoo fixtures, resized `[N, C, 2147483647, 0]`, is
/// now rejected at load: its extent cannot fit any memory the program has.
#[test]
fn zero_and_huge_sizes_are_rejected_at_load() {
    let mut cases = 0;
    for name in ["zoo_cm_m33", "zoo_cm_m55"] {
        let base = fixture(name);
        assert_eq!(both(&base), [Ok(()), Ok(())], "{name} runs unmodified");
        for op in [
            "quantized_conv2d",
            "quantized_max_pool2d",
            "quantized_avg_pool2d",
            "quantized_transpose_conv2d",
            "cortex_m::pad",
        ] {
            let sites = calls(&base, op);
            assert!(!sites.is_empty(), "{name} calls {op}");
            for args in sites {
                // The input (first argument) and the output (last).
                for &value in [args[0], *args.last().unwrap()].iter() {
                    let mut bytes = base.clone();
                    let (h, w) = (size_at(&base, value, 2), size_at(&base, value, 3));
                    bytes[h..h + 4].copy_from_slice(&i32::MAX.to_le_bytes());
                    bytes[w..w + 4].copy_from_slice(&0i32.to_le_bytes());
                    let t = std::time::Instant::now();
                    let got = both(&bytes);
                    assert!(
                        t.elapsed().as_secs() < 5,
                        "{name} {op} v{value}: {:?}",
                        t.elapsed()
                    );
                    save(&format!("{name}-{op}-v{value}-zero-huge"), &bytes);
                    let rejected = Err((Stage::Load, ErrorCode::InvalidProgram));
                    assert_eq!(got, [rejected, rejected], "{name} {op} v{value}");
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 28);
}

/// The first audit's "Overflow": stride and dilation values from the file (here
/// 2^62 + 1) overflowed unchecked multiplies in `Window::tap` and in the
/// depthwise kernels: a panic with overflow checks, nonsense geometry
/// without. Now the kernel rejects the geometry.
#[test]
fn huge_strides_and_dilations_are_invalid_arguments() {
    let huge = ((1u64 << 62) + 1).to_le_bytes();
    let mut cases = 0;
    // (fixture, operator, argument indices of stride and dilation).
    for (name, op, lists) in [
        ("zoo_cm_m33", "quantized_conv2d", &[3usize, 5][..]),
        ("zoo_cm_m55", "quantized_conv2d", &[3, 5][..]),
        ("dscnn_cm_m33", "quantized_depthwise_conv2d", &[3, 5][..]),
        ("dscnn_cm_m0", "quantized_depthwise_conv2d", &[3, 5][..]),
        ("dscnn_cm_m33", "quantized_conv2d", &[3, 5][..]),
        ("zoo_cm_m33", "quantized_max_pool2d", &[2, 4][..]),
        ("zoo_cm_m33", "quantized_transpose_conv2d", &[3, 6][..]),
    ] {
        let base = fixture(name);
        for args in calls(&base, op) {
            for &list in lists {
                for at in int_list_at(&base, args[list]) {
                    let mut bytes = base.clone();
                    bytes[at..at + 8].copy_from_slice(&huge);
                    save(&format!("{name}-{op}-arg{list}-at{at}-huge"), &bytes);
                    let got = both(&bytes);
                    let want = Err((Stage::Execute, ErrorCode::InvalidArgument));
                    assert_eq!(got, [want, want], "{name} {op} arg {list} @{at}");
                    cases += 1;
                }
            }
        }
    }
    assert!(cases >= 30, "{cases} cases");
}

// The same at the kernel level, without the loader's guard: an empty output
// is no work whatever its other sizes, and positions that would overflow
// `usize` are an invalid argument, never a wrapped index.

use etch_kernels::cortex_m::{
    avg_pool_s8, conv_s8, depthwise_conv_s8, max_pool_s8, ConvQuant, Nhwc, Window,
};
use etch_kernels::KernelError;

const Q: ConvQuant = ConvQuant {
    input_offset: 3,
    output_offset: -1,
    act_min: -128,
    act_max: 127,
};

fn nhwc(n: usize, h: usize, w: usize, c: usize) -> Nhwc {
    Nhwc { n, h, w, c }
}

fn window(input: Nhwc, output: Nhwc, k: usize, stride: usize, dil: usize) -> Window {
    Window {
        input,
        output,
        kernel: (k, k),
        stride: (stride, stride),
        padding: (1, 1),
        dilation: (dil, dil),
    }
}

#[test]
fn empty_outputs_with_huge_sizes_do_no_work() {
    let input = [1i8; 4 * 4 * 8];
    let filter = [1i8; 8 * 3 * 3 * 8];
    let dw_filter = [1i8; 3 * 3 * 8];
    let (mult, shift) = ([1 << 30; 8], [-1; 8]);
    let i = nhwc(1, 4, 4, 8);
    // Output [1, 8, 2147483647, 0] in NCHW terms: zero bytes, 2^31 rows.
    let o = nhwc(1, i32::MAX as usize, 0, 8);
    let g = window(i, o, 3, 1, 1);
    let t = std::time::Instant::now();
    assert_eq!(
        conv_s8(&g, &Q, &input, &filter, None, &mult, &shift, &mut []),
        Ok(())
    );
    assert_eq!(
        depthwise_conv_s8(&g, &Q, 1, &input, &dw_filter, None, &mult, &shift, &mut []),
        Ok(())
    );
    assert_eq!(max_pool_s8(&g, (-128, 127), &input, &mut []), Ok(()));
    assert_eq!(avg_pool_s8(&g, (-128, 127), &input, &mut []), Ok(()));
    // An empty input under a non-empty output bounds nothing: rejected.
    let g = window(nhwc(1, i32::MAX as usize, 0, 8), nhwc(1, 4, 4, 8), 3, 1, 1);
    let mut out = [0i8; 4 * 4 * 8];
    let bad = Err(KernelError::InvalidArgument);
    assert_eq!(
        conv_s8(&g, &Q, &[], &filter, None, &mult, &shift, &mut out),
        bad
    );
    assert_eq!(
        depthwise_conv_s8(&g, &Q, 1, &[], &dw_filter, None, &mult, &shift, &mut out),
        bad
    );
    assert_eq!(max_pool_s8(&g, (-128, 127), &[], &mut out), bad);
    assert_eq!(avg_pool_s8(&g, (-128, 127), &[], &mut out), bad);
    assert!(t.elapsed().as_millis() < 1000, "{:?}", t.elapsed());
}

#[test]
fn overflowing_tap_positions_are_invalid_arguments() {
    // Window::tap is checked: no wrap, no panic.
    assert_eq!(Window::tap(3, 0, usize::MAX / 2, 0, 1, 8), None);
    assert_eq!(Window::tap(1, 2, 1, 0, usize::MAX, 8), None);
    assert_eq!(Window::tap(1, 2, 3, 4, 1, 8), Some(1));
    let input = [1i8; 4 * 4 * 8];
    let (mult, shift) = ([1 << 30; 8], [-1; 8]);
    let i = nhwc(1, 4, 4, 8);
    let o = nhwc(1, 4, 4, 8);
    let mut out = [0i8; 4 * 4 * 8];
    let bad = Err(KernelError::InvalidArgument);
    for (stride, dil) in [
        (usize::MAX / 2, 1),
        (1, usize::MAX / 2),
        (usize::MAX, 1),
        (1, usize::MAX),
    ] {
        let g = window(i, o, 3, stride, dil);
        assert!(!g.positions_fit());
        let filter = [1i8; 8 * 3 * 3 * 8];
        assert_eq!(
            conv_s8(&g, &Q, &input, &filter, None, &mult, &shift, &mut out),
            bad
        );
        // Depthwise: multiplier 1 (two paths by build) and multiplier 8
        // from one input channel (the single-input paths).
        let dw = [1i8; 3 * 3 * 8];
        assert_eq!(
            depthwise_conv_s8(&g, &Q, 1, &input, &dw, None, &mult, &shift, &mut out),
            bad
        );
        let g1 = window(nhwc(1, 4, 4, 1), o, 3, stride, dil);
        let one = [1i8; 16];
        assert_eq!(
            depthwise_conv_s8(&g1, &Q, 8, &one, &dw, None, &mult, &shift, &mut out),
            bad
        );
        let g2 = window(nhwc(1, 4, 4, 2), o, 3, stride, dil);
        let two = [1i8; 32];
        assert_eq!(
            depthwise_conv_s8(&g2, &Q, 4, &two, &dw, None, &mult, &shift, &mut out),
            bad
        );
        assert_eq!(max_pool_s8(&g, (-128, 127), &input, &mut out), bad);
    }
}

/// The `step` of `aten::slice_copy` comes from the file and was
/// multiplied into a stride unchecked (`*s *= step as usize`): "attempt to
/// multiply with overflow" in every overflow-checked build. Every step Int of
/// every slice_copy in the LSTM zoo fixture, set to a huge value, is now an
/// invalid argument; a negative step (wraps in `as usize`) and zero too.
#[test]
fn huge_slice_copy_steps_are_invalid_arguments() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/zoo");
    let base = std::fs::read(dir.join("lstm_f32.pte")).unwrap();
    assert_eq!(both(&base), [Ok(()), Ok(())], "lstm_f32 runs unmodified");
    let mut cases = 0;
    for args in calls(&base, "aten::slice_copy") {
        let Value::Int(_) = evalue(&base, args[4]).value().unwrap() else {
            panic!("slice_copy step is not an Int");
        };
        let val = evalue(&base, args[4])
            .0
            .table(slot::evalue::VAL)
            .unwrap()
            .unwrap();
        let at = val.field(slot::single::VALUE, 8).unwrap().unwrap();
        for step in [i64::MAX, (1 << 62) + 1, -1, 0] {
            let mut bytes = base.clone();
            bytes[at..at + 8].copy_from_slice(&step.to_le_bytes());
            if step == (1 << 62) + 1 {
                save(&format!("lstm_f32-slice_copy-step-at{at}-huge"), &bytes);
            }
            let want = Err((Stage::Execute, ErrorCode::InvalidArgument));
            assert_eq!(both(&bytes), [want, want], "step {step} @{at}");
            cases += 1;
        }
    }
    assert!(cases >= 4, "{cases} cases");
}

/// The audit by execution: every Int the first call of each
/// operator takes (an Int argument, or an item of an int[] argument) in
/// every single-operator program, custom-op program and zoo model up to
/// 80 KB (275 files: every kernel a fixture reaches), set to each boundary
/// value below. This test builds with overflow checks (as does the `fuzz`
/// profile), so an unchecked multiply, add or negation of a file-supplied
/// number anywhere in a kernel panics; each mutant must instead end in an
/// error code or run to the end. Panics are collected and listed. With the
/// slice_copy fix of a90e198 reverted it lists 168 of 29,010 cases (before
/// the first-call-per-operator reduction), all `step` Ints of the GRU and
/// LSTM models.
#[test]
fn every_int_argument_at_its_boundaries_gives_a_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    for dir in ["tests/ops", "tests/zoo", "tests/custom"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            // The zoo models over 80 KB repeat the smaller ones' operators.
            if p.extension().is_some_and(|x| x == "pte")
                && std::fs::metadata(&p).unwrap().len() <= 80 * 1024
            {
                files.push(p);
            }
        }
    }
    files.sort();
    // The extremes; values that pass a conversion to usize on 64-bit hosts
    // but overflow a product (2^62 + 1, 2^32); and -1 (a dim, an index or
    // a size counted from the end).
    let boundaries: [i64; 5] = [i64::MAX, i64::MIN, (1 << 62) + 1, 1 << 32, -1];
    let (mut cases, mut panics) = (0usize, Vec::new());
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for path in &files {
        let base = std::fs::read(path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        for at in int_arguments(&base) {
            for v in boundaries {
                let mut bytes = base.clone();
                bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
                cases += 1;
                // Verification off: the kernels see the same numbers either
                // way, and the verifier's cost would double the run.
                let run = || load_execute(&bytes, Verification::Minimal);
                if std::panic::catch_unwind(run).is_err() {
                    save(&format!("{name}-int-at{at}-{v}"), &bytes);
                    panics.push(format!("{name} @{at} = {v}"));
                }
            }
        }
    }
    std::panic::set_hook(hook);
    eprintln!("{} files, {cases} cases", files.len());
    assert!(cases > 1_000, "{cases} cases");
    assert!(
        panics.is_empty(),
        "{} of {cases} panicked:\n{}",
        panics.len(),
        panics.join("\n")
    );
}

/// Byte positions of the 64-bit Ints the kernel calls of `bytes` take,
/// directly or as int[] items: for each operator, those of its first call
/// (later calls of the same operator reach the same kernel code with the
/// same kind of number), each position once.
fn int_arguments(bytes: &[u8]) -> Vec<usize> {
    let file = PteFile::new_checked(bytes).unwrap();
    let plan = file.plan("forward").unwrap();
    let values = plan.values().unwrap();
    let int_at = |index: usize| -> Option<usize> {
        let v = EValue(Table::at(bytes, values.get(index).ok()?.position()).ok()?);
        match v.value().ok()? {
            Value::Int(_) => {
                let val = v.0.table(slot::evalue::VAL).ok()??;
                val.field(slot::single::VALUE, 8).ok()?
            }
            _ => None,
        }
    };
    let mut out = std::collections::BTreeSet::new();
    let mut ops_seen = std::collections::BTreeSet::new();
    for chain in plan.chains().unwrap().iter() {
        for instr in chain.unwrap().instructions().unwrap().iter() {
            let InstructionArgs::KernelCall { args, op_index } = instr.unwrap().args().unwrap()
            else {
                continue;
            };
            if !ops_seen.insert(op_index) {
                continue;
            }
            for a in args.iter() {
                let a = a.unwrap() as usize;
                if let Some(at) = int_at(a) {
                    out.insert(at);
                    continue;
                }
                let v = evalue(bytes, a);
                if let Ok(Value::IntList(items)) = v.value() {
                    for item in items.iter().flatten() {
                        if let Some(at) = int_at(item as usize) {
                            out.insert(at);
                        }
                    }
                }
            }
        }
    }
    out.into_iter().collect()
}

/// `slice_copy` ignored `end` and took the slice's length from
/// the output tensor, so a file with `end` moved copied rows outside the
/// slice. Now the output's size along `dim` must be `ceil((end - start) /
/// step)` after upstream's clamping: every `end` Int of the LSTM model set
/// to its `start` (an empty slice under a non-empty output) is an invalid
/// argument, and set to `i64::MAX` (clamped to the size) still runs only if
/// the slice then has the output's length.
#[test]
fn slice_copy_output_length_follows_start_end_and_step() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/zoo");
    let base = std::fs::read(dir.join("lstm_f32.pte")).unwrap();
    let int_of = |bytes: &[u8], index: usize| -> Option<(usize, i64)> {
        let v = evalue(bytes, index);
        let Ok(Value::Int(x)) = v.value() else {
            return None;
        };
        let val = v.0.table(slot::evalue::VAL).ok()??;
        Some((val.field(slot::single::VALUE, 8).ok()??, x))
    };
    let mut cases = 0;
    for args in calls(&base, "aten::slice_copy") {
        let (Some((end_at, _)), Some((_, start))) =
            (int_of(&base, args[3]), int_of(&base, args[2]))
        else {
            continue;
        };
        let mut bytes = base.clone();
        bytes[end_at..end_at + 8].copy_from_slice(&start.to_le_bytes());
        let want = Err((Stage::Execute, ErrorCode::InvalidArgument));
        assert_eq!(both(&bytes), [want, want], "end = start {start} @{end_at}");
        cases += 1;
    }
    assert!(cases >= 4, "{cases} cases");
}

/// Byte position of the 64-bit `Int` value `index`.
fn int_at(bytes: &[u8], index: usize) -> usize {
    let v = evalue(bytes, index);
    let val = v.0.table(slot::evalue::VAL).unwrap().unwrap();
    val.field(slot::single::VALUE, 8).unwrap().unwrap()
}

/// `pixel_shuffle`/`pixel_unshuffle` on empty tensors with a factor whose
/// square fits `usize` but not `isize` (found by the static arithmetic
/// audit, tools/ci/arith-audit.py: the walk's channel stride multiplied the
/// factor by itself as `isize`): `InvalidArgument`, no overflow.
#[test]
fn pixel_shuffle_factor_whose_square_overflows_isize_is_an_invalid_argument() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ops");
    for (name, op) in [
        ("pixel_shuffle_f32", "pixel_shuffle"),
        ("pixel_unshuffle_f32", "pixel_unshuffle"),
    ] {
        let original = std::fs::read(dir.join(format!("{name}.pte"))).unwrap();
        let call = calls(&original, op).remove(0);
        let (x, factor, out) = (call[0], call[1], call[2]);
        // r = 3,037,000,500: r² = 9.22e18 < 2^64 (usize) but > i64::MAX.
        let r: i64 = 3_037_000_500;
        let mut bytes = original.clone();
        let at = int_at(&bytes, factor);
        bytes[at..at + 8].copy_from_slice(&r.to_le_bytes());
        // Every size after the batch zero: each shape check holds.
        for t in [x, out] {
            for i in 1..4 {
                let at = size_at(&bytes, t, i);
                bytes[at..at + 4].copy_from_slice(&0i32.to_le_bytes());
            }
        }
        save(&format!("{name}_huge_factor"), &bytes);
        for outcome in both(&bytes) {
            assert_eq!(
                outcome,
                Err((Stage::Execute, ErrorCode::InvalidArgument)),
                "{name}"
            );
        }
    }
}
