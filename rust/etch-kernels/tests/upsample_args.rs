//! Bad arguments to the upsample kernels: a real single-operator program from
//! `tests/ops/` runs, then the same file with its `scale_factors` or
//! `output_size` rewritten (scales that do not give the output's size, a
//! negative scale, a size other than the output's) ends in
//! `InvalidArgument` from `execute`, as upstream's
//! `check_upsample_2d_common_args` / `resize_upsample_2d` give, never a panic.

use etch_runtime::ErrorCode;

mod support;
use support::{program, run_on_zeros as run};

/// `name` with every occurrence of `from` (`count` of them) replaced by `to`.
fn patched(name: &str, from: &[u8], to: &[u8], count: usize) -> Vec<u8> {
    let mut file = program(name);
    assert_eq!(run(&file), Ok(()), "{name} runs unmodified");
    let at: Vec<usize> = file
        .windows(from.len())
        .enumerate()
        .filter(|(_, w)| *w == from)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(at.len(), count, "{name}: occurrences of {from:?}");
    for i in at {
        file[i..i + from.len()].copy_from_slice(to);
    }
    file
}

fn invalid(file: &[u8], what: &str) {
    assert_eq!(
        run(file),
        Err(("execute", ErrorCode::InvalidArgument)),
        "{what}"
    );
}

#[test]
fn scale_factors_must_give_the_output_size_and_be_positive() {
    // scale_factors [2.0, 2.0] for (3, 4) -> (6, 8).
    let two = 2.0f64.to_le_bytes();
    for name in [
        "upsample_bilinear2d_scale_f32",
        "upsample_nearest2d_scale_f32",
    ] {
        invalid(
            &patched(name, &two, &3.0f64.to_le_bytes(), 2),
            "scales 3.0 give (9, 12)",
        );
        invalid(
            &patched(name, &two, &(-2.0f64).to_le_bytes(), 2),
            "negative scales",
        );
    }
    // align_corners with scale_factors [2.5, 2.5]: (3, 4) -> (7, 10).
    invalid(
        &patched(
            "upsample_bilinear2d_align_scale_f32",
            &2.5f64.to_le_bytes(),
            &2.0f64.to_le_bytes(),
            2,
        ),
        "scales 2.0 give (6, 8)",
    );
}

#[test]
fn output_size_must_be_the_outputs() {
    // output_size [5, 9] (align_corners) for an output of (5, 9): [5, 8] is not it.
    invalid(
        &patched(
            "upsample_bilinear2d_align_f32",
            &[9, 0, 0, 0, 0, 0, 0, 0],
            &[8, 0, 0, 0, 0, 0, 0, 0],
            1,
        ),
        "output_size [5, 8]",
    );
}
