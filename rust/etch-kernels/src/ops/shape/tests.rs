//! Host tests of the shape kernels' walks.

use super::join::*;
use super::slice::*;
use super::tile::*;
use super::view::*;
use etch_runtime::tensor::{TensorView, TensorViewMut};
use etch_runtime::Result;
use etch_runtime::{ErrorCode, ScalarType, Shape};

fn view<'a>(sizes: &'a [u32], order: &'a [u8], data: &'a [u8]) -> TensorView<'a> {
    TensorView {
        dtype: ScalarType::CHAR,
        shape: Shape::new(sizes, order).unwrap(),
        data,
    }
}

fn out<'a>(sizes: &'a [u32], data: &'a mut [u8]) -> TensorViewMut<'a> {
    TensorViewMut {
        dtype: ScalarType::CHAR,
        shape: Shape::contiguous(sizes).unwrap(),
        data,
    }
}

fn code(r: Result<()>) -> ErrorCode {
    r.unwrap_err().code
}

const IOTA: [u8; 24] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
];

#[test]
fn select_and_narrow_follow_strides() {
    // A [2, 3] tensor stored transposed (dim order [1, 0]): logical
    // element (i, j) is byte j·2 + i.
    let x = view(&[2, 3], &[1, 0], &IOTA[..6]);
    let mut o = [0u8; 3];
    select(&x, 0, 1, &mut out(&[3], &mut o)).unwrap();
    assert_eq!(o, [1, 3, 5]);
    let mut o = [0u8; 4];
    narrow(&x, 1, 1, 2, &mut out(&[2, 2], &mut o)).unwrap();
    assert_eq!(o, [2, 4, 3, 5]);
}

#[test]
fn repeat_tiles_with_leading_dims() {
    let x = view(&[2], &[0], &IOTA[..2]);
    let mut o = [0u8; 12];
    repeat(&x, &[2, 3], &mut out(&[2, 6], &mut o)).unwrap();
    assert_eq!(o, [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
}

#[test]
fn pixel_shuffle_round_trips() {
    // [1, 4, 1, 2] → [1, 1, 2, 4]: out[0, 0, i, w·2 + j] = x[0, i·2 + j, 0, w].
    let x = view(&[1, 4, 1, 2], &[0, 1, 2, 3], &IOTA[..8]);
    let mut o = [0u8; 8];
    pixel_shuffle(&x, 2, false, &mut out(&[1, 1, 2, 4], &mut o)).unwrap();
    assert_eq!(o, [0, 2, 1, 3, 4, 6, 5, 7]);
    let y = view(&[1, 1, 2, 4], &[0, 1, 2, 3], &o);
    let mut back = [0u8; 8];
    pixel_shuffle(&y, 2, true, &mut out(&[1, 4, 1, 2], &mut back)).unwrap();
    assert_eq!(back, IOTA[..8]);
}

#[test]
fn roll_and_flip() {
    let x = view(&[2, 3], &[0, 1], &IOTA[..6]);
    let mut o = [0u8; 6];
    roll(&x, &[1, -4], &[1, 0], &mut out(&[2, 3], &mut o)).unwrap();
    // dim 1 by 1, dim 0 by −4 ≡ 0.
    assert_eq!(o, [2, 0, 1, 5, 3, 4]);
    roll(&x, &[1, 1], &[1, 1], &mut out(&[2, 3], &mut o)).unwrap();
    assert_eq!(o, [1, 2, 0, 4, 5, 3]);
    flip(&x, &[-1, 0], &mut out(&[2, 3], &mut o)).unwrap();
    assert_eq!(o, [5, 4, 3, 2, 1, 0]);
}

#[test]
fn bad_arguments_are_invalid_argument() {
    use ErrorCode::InvalidArgument as IA;
    let x = view(&[2, 3], &[0, 1], &IOTA[..6]);
    let mut o = [0u8; 6];
    // select index beyond the dimension; narrow past the end.
    assert_eq!(code(select(&x, 1, 3, &mut out(&[2], &mut o[..2]))), IA);
    assert_eq!(
        code(narrow(&x, 1, 2, 2, &mut out(&[2, 2], &mut o[..4]))),
        IA
    );
    assert_eq!(norm_index(-4, 3).unwrap_err().code, IA);
    assert_eq!(norm_index(-3, 3).unwrap(), 0);
    // repeat: fewer repeats than dims, negative repeat, wrong out shape.
    assert_eq!(code(repeat(&x, &[2], &mut out(&[4, 3], &mut [0; 12]))), IA);
    assert_eq!(code(repeat(&x, &[1, -1], &mut out(&[2, 3], &mut o))), IA);
    assert_eq!(code(repeat(&x, &[1, 1], &mut out(&[3, 2], &mut o))), IA);
    // flip: repeated dim, dim out of range, channels-last (upstream's walk is wrong there).
    assert_eq!(code(flip(&x, &[1, -1], &mut out(&[2, 3], &mut o))), IA);
    assert_eq!(code(flip(&x, &[2], &mut out(&[2, 3], &mut o))), IA);
    let cl = view(&[1, 2, 3, 1], &[0, 2, 3, 1], &IOTA[..6]);
    assert_eq!(code(flip(&cl, &[1], &mut out(&[1, 2, 3, 1], &mut o))), IA);
    // roll: no shifts, mismatched lists.
    assert_eq!(code(roll(&x, &[], &[], &mut out(&[2, 3], &mut o))), IA);
    assert_eq!(code(roll(&x, &[1], &[0, 1], &mut out(&[2, 3], &mut o))), IA);
    // pixel shuffle: channels not divisible by r², factor 0.
    let p = view(&[1, 3, 1, 2], &[0, 1, 2, 3], &IOTA[..6]);
    assert_eq!(
        code(pixel_shuffle(&p, 2, false, &mut out(&[1, 1, 2, 3], &mut o))),
        IA
    );
    assert_eq!(
        code(pixel_shuffle(&p, 0, false, &mut out(&[1, 3, 1, 2], &mut o))),
        IA
    );
    // stack: dim beyond rank + 1, output count wrong.
    assert_eq!(
        code(stack_one(&x, 0, 2, 3, &mut out(&[2, 2, 3], &mut [0; 12]))),
        IA
    );
    assert_eq!(
        code(stack_one(&x, 0, 2, 0, &mut out(&[3, 2, 3], &mut [0; 18]))),
        IA
    );
    // transpose into a wrong shape; dtype mismatch.
    assert_eq!(code(transpose(&x, 0, 1, &mut out(&[2, 3], &mut o))), IA);
    let mut wrong = out(&[2, 3], &mut o);
    wrong.dtype = ScalarType::BYTE;
    assert_eq!(code(transpose(&x, 0, 0, &mut wrong)), IA);
}

#[test]
fn stack_interleaves() {
    let (a, b) = (
        view(&[2], &[0], &IOTA[..2]),
        view(&[2], &[0], &IOTA[10..12]),
    );
    let mut o = [0u8; 4];
    stack_one(&a, 0, 2, -1, &mut out(&[2, 2], &mut o)).unwrap();
    stack_one(&b, 1, 2, -1, &mut out(&[2, 2], &mut o)).unwrap();
    assert_eq!(o, [0, 10, 1, 11]);
}
