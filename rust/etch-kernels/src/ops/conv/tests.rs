//! Host tests of the convolution: geometry, layouts and element types
//! against plain loops.

#[cfg(feature = "dtype-f32")]
mod f32_tests {
    extern crate std;
    use super::super::*;
    use std::{vec, vec::Vec};

    fn view<'a>(sizes: &'a [u32], order: &'a [u8], data: &'a [f32]) -> TensorView<'a> {
        TensorView {
            dtype: ScalarType::FLOAT,
            shape: Shape::new(sizes, order).unwrap(),
            data: bytemuck::cast_slice(data),
        }
    }

    fn order(rank: usize) -> &'static [u8] {
        &[0, 1, 2, 3][..rank]
    }

    /// Runs a convolution of contiguous f32 tensors; the output or the code.
    #[allow(clippy::too_many_arguments)]
    fn conv(
        x: (&[u32], &[f32]),
        w: (&[u32], &[f32]),
        bias: Option<&[f32]>,
        out: &[u32],
        params: [&[i64]; 4],
        transposed: bool,
        groups: i64,
    ) -> core::result::Result<Vec<f32>, ErrorCode> {
        let xv = view(x.0, order(x.0.len()), x.1);
        let wv = view(w.0, order(w.0.len()), w.1);
        let bias_len = [bias.map_or(0, |b| b.len() as u32)];
        let bv = bias.map(|b| view(&bias_len, &[0], b));
        let n = out.iter().product::<u32>() as usize;
        let mut data = vec![f32::NAN; n];
        let mut ov = TensorViewMut {
            dtype: ScalarType::FLOAT,
            shape: Shape::new(out, order(out.len())).unwrap(),
            data: bytemuck::cast_slice_mut(&mut data),
        };
        convolution(&xv, &wv, bv.as_ref(), &mut ov, params, transposed, groups)
            .map_err(|e| e.code)?;
        Ok(data)
    }

    const X: [f32; 4] = [1.0, 2.0, 3.0, 4.0];
    const W: [f32; 3] = [1.0, 10.0, 100.0];

    #[test]
    fn conv1d_by_hand() {
        // [1, 1, 4] ⊛ [1, 1, 3], padding 1: taps outside the input skipped.
        let out = conv(
            (&[1, 1, 4], &X),
            (&[1, 1, 3], &W),
            Some(&[0.5]),
            &[1, 1, 4],
            [&[1][..], &[1][..], &[1][..], &[0][..]],
            false,
            1,
        );
        assert_eq!(out, Ok(vec![210.5, 321.5, 432.5, 43.5]));
        // Transposed, stride 2: out[2i + k − 1] += x[i]·w[k], bias first.
        let out = conv(
            (&[1, 1, 4], &X),
            (&[1, 1, 3], &W),
            Some(&[0.5]),
            &[1, 1, 7],
            [&[2][..], &[1][..], &[1][..], &[0][..]],
            true,
            1,
        );
        assert_eq!(out, Ok(vec![10.5, 102.5, 20.5, 203.5, 30.5, 304.5, 40.5]));
    }

    /// Padding and dilation of 2^40 that cancel: every output reads exactly
    /// one tap (the middle one), and the loops visit only that tap.
    #[test]
    fn huge_parameters_cost_only_in_bounds_taps() {
        let huge = 1i64 << 40;
        let out = conv(
            (&[1, 1, 4], &X),
            (&[1, 1, 3], &W),
            None,
            &[1, 1, 4],
            [&[1][..], &[huge][..], &[huge][..], &[0][..]],
            false,
            1,
        );
        assert_eq!(out, Ok(vec![10.0, 20.0, 30.0, 40.0]));
    }

    #[test]
    fn bad_geometry_is_invalid_argument() {
        let x = (&[1u32, 1, 4][..], &X[..]);
        let w = (&[1u32, 1, 3][..], &W[..]);
        let ok: [&[i64]; 4] = [&[1][..], &[1][..], &[1][..], &[0][..]];
        let bad = ErrorCode::InvalidArgument;
        let run = |out: &[u32], params: [&[i64]; 4], transposed: bool, groups: i64| {
            conv(x, w, None, out, params, transposed, groups)
        };
        // The output shape must be the computed one.
        assert_eq!(run(&[1, 1, 5], ok, false, 1), Err(bad));
        assert_eq!(run(&[1, 2, 4], ok, false, 1), Err(bad));
        // Stride 0, negative padding, dilation 0, too many or no entries.
        assert_eq!(
            run(
                &[1, 1, 4],
                [&[0][..], &[1][..], &[1][..], &[0][..]],
                false,
                1
            ),
            Err(bad)
        );
        assert_eq!(
            run(
                &[1, 1, 2],
                [&[1][..], &[-1][..], &[1][..], &[0][..]],
                false,
                1
            ),
            Err(bad)
        );
        assert_eq!(
            run(
                &[1, 1, 4],
                [&[1][..], &[1][..], &[0][..], &[0][..]],
                false,
                1
            ),
            Err(bad)
        );
        assert_eq!(
            run(
                &[1, 1, 4],
                [&[1, 1][..], &[1][..], &[1][..], &[0][..]],
                false,
                1
            ),
            Err(bad)
        );
        assert_eq!(
            run(
                &[1, 1, 4],
                [&[][..], &[1][..], &[1][..], &[0][..]],
                false,
                1
            ),
            Err(bad)
        );
        // Groups not dividing, zero or negative.
        assert_eq!(run(&[1, 1, 4], ok, false, 2), Err(bad));
        assert_eq!(run(&[1, 1, 4], ok, false, 0), Err(bad));
        assert_eq!(run(&[1, 1, 4], ok, false, -1), Err(bad));
        // A kernel wider than the padded input: no output.
        assert_eq!(
            run(
                &[1, 1, 1],
                [&[1][..], &[0][..], &[3][..], &[0][..]],
                false,
                1
            ),
            Err(bad)
        );
        // Arithmetic that overflows i64.
        let big = i64::MAX / 2;
        assert_eq!(
            run(
                &[1, 1, 4],
                [&[1][..], &[big][..], &[1][..], &[0][..]],
                false,
                1
            ),
            Err(bad)
        );
        assert_eq!(
            run(
                &[1, 1, 4],
                [&[big][..], &[1][..], &[1][..], &[0][..]],
                true,
                1
            ),
            Err(bad)
        );
        // output_padding must be below the stride or the dilation.
        assert_eq!(
            run(
                &[1, 1, 5],
                [&[1][..], &[1][..], &[1][..], &[1][..]],
                true,
                1
            ),
            Err(bad)
        );
        // Ranks: 2-D input, or a weight of another rank.
        assert_eq!(
            conv((&[4, 1], &X), (&[3, 1], &W), None, &[1, 1], ok, false, 1),
            Err(bad)
        );
        assert_eq!(
            conv(x, (&[1, 1, 3, 1], &W), None, &[1, 1, 4], ok, false, 1),
            Err(bad)
        );
        // A bias of the wrong length.
        assert_eq!(
            conv(x, w, Some(&[1.0, 2.0]), &[1, 1, 4], ok, false, 1),
            Err(bad)
        );
    }

    #[test]
    fn mismatched_dim_orders_are_invalid_argument() {
        let x = [0.0f32; 8];
        let w = [0.0f32; 4];
        let mut o = [0.0f32; 8];
        let xv = view(&[1, 2, 2, 2], &[0, 2, 3, 1], &x);
        let wv = view(&[2, 2, 1, 1], &[0, 1, 2, 3], &w);
        let mut ov = TensorViewMut {
            dtype: ScalarType::FLOAT,
            shape: Shape::new(&[1, 2, 2, 2], &[0, 1, 2, 3]).unwrap(),
            data: bytemuck::cast_slice_mut(&mut o),
        };
        let params: [&[i64]; 4] = [&[1][..], &[0][..], &[1][..], &[0][..]];
        let r = convolution(&xv, &wv, None, &mut ov, params, false, 1);
        assert_eq!(r.map_err(|e| e.code), Err(ErrorCode::InvalidArgument));
    }

    /// An input whose dim order differs from channels-last only in where its
    /// size-1 channel dimension sits ([0, 2, 1, 3], as the exporter writes a
    /// channels-last [1, 1, H, W] input) has the same memory as a
    /// channels-last one: with a channels-last output the convolution runs
    /// and gives exactly what the [0, 2, 3, 1] input gives.
    #[test]
    fn size_one_dims_do_not_make_dim_orders_differ() {
        let x = [1.0f32, -2.0, 3.5, 0.25];
        let w = [2.0f32, -1.0];
        let params: [&[i64]; 4] = [&[1][..], &[0][..], &[1][..], &[0][..]];
        let mut results = std::vec::Vec::new();
        for order in [[0u8, 2, 1, 3], [0, 2, 3, 1]] {
            let xv = view(&[1, 1, 2, 2], &order, &x);
            let wv = view(&[2, 1, 1, 1], &[0, 2, 1, 3], &w);
            let mut o = [0.0f32; 8];
            let mut ov = TensorViewMut {
                dtype: ScalarType::FLOAT,
                shape: Shape::new(&[1, 2, 2, 2], &[0, 2, 3, 1]).unwrap(),
                data: bytemuck::cast_slice_mut(&mut o),
            };
            convolution(&xv, &wv, None, &mut ov, params, false, 1).unwrap();
            results.push(o);
        }
        // NHWC: each pixel's two channels, x * 2 and x * -1.
        let expected = [2.0, -1.0, -4.0, 2.0, 7.0, -3.5, 0.5, -0.25];
        assert_eq!(results, [expected, expected]);
    }
}

#[cfg(all(feature = "dtype-i8", feature = "dtype-i32", feature = "dtype-bool"))]
mod bias_dtype_tests {
    extern crate std;
    use super::super::*;
    use std::vec::Vec;

    /// An i8 convolution (what the cortex_m flow leaves as a portable
    /// fall-back) with a bias of `bias_dtype`: bias element bytes `bias`.
    fn conv_i8(bias_dtype: ScalarType, bias: &[u8], transposed: bool) -> Result<Vec<i8>> {
        let (x, w) = ([100i8, -3, 7], [2i8]);
        fn shape(s: &[u32]) -> Shape<'_> {
            Shape::new(s, &[0, 1, 2][..s.len()]).unwrap()
        }
        let xv = TensorView {
            dtype: ScalarType::CHAR,
            shape: shape(&[1, 1, 3]),
            data: bytemuck::cast_slice(&x),
        };
        let wv = TensorView {
            dtype: ScalarType::CHAR,
            shape: shape(&[1, 1, 1]),
            data: bytemuck::cast_slice(&w),
        };
        let bv = TensorView {
            dtype: bias_dtype,
            shape: shape(&[1]),
            data: bias,
        };
        let mut data = [0i8; 3];
        let mut ov = TensorViewMut {
            dtype: ScalarType::CHAR,
            shape: shape(&[1, 1, 3]),
            data: bytemuck::cast_slice_mut(&mut data),
        };
        let params: [&[i64]; 4] = [&[1], &[0], &[1], &[0]];
        convolution(&xv, &wv, Some(&bv), &mut ov, params, transposed, 1)?;
        Ok(data.to_vec())
    }

    #[test]
    fn an_int32_bias_is_cast_to_the_int8_compute_type() {
        // Portable loads the bias with `get_load_to_common_fn` (REALHBF16):
        // static_cast<int8_t>(300) = 44; accumulation wraps in int8:
        // 100·2 = 200 → -56, + 44 = -12; -3·2 + 44 = 38; 7·2 + 44 = 58.
        let bias = 300i32.to_le_bytes();
        assert_eq!(
            conv_i8(ScalarType::INT, &bias, false).unwrap(),
            [-12, 38, 58]
        );
        // Transposed: the output starts as the cast bias, then accumulates.
        assert_eq!(
            conv_i8(ScalarType::INT, &bias, true).unwrap(),
            [-12, 38, 58]
        );
    }

    #[test]
    fn a_bool_bias_is_refused() {
        assert_eq!(
            conv_i8(ScalarType::BOOL, &[1], false).map_err(|e| e.code),
            Err(ErrorCode::InvalidType)
        );
    }
}
