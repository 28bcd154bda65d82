//! Tests of the method-state layout and its override slots.

use super::*;
use crate::overrides::{slot_of, slot_value};

/// Slots in any order, duplicates included, sort by value index and
/// are found by binary search; a value without a slot is not.
#[test]
fn sorted_slots_are_found_by_binary_search() {
    extern crate std;
    use std::{vec, vec::Vec};
    for order in [
        &[5u32, 1, 9, 1, 0, 7, 3][..],
        &[0, 1, 2, 3],
        &[3, 2, 1, 0],
        &[4],
        &[],
        &[2, 2, 2],
    ] {
        let mut buf = vec![0u8; order.len() * OVERRIDE_BYTES];
        for (k, &v) in order.iter().enumerate() {
            OverridesMut(&mut buf).write(k * OVERRIDE_BYTES, v, v as u8, 100 + v as u64);
        }
        sort_slots(&mut buf);
        let keys: Vec<u32> = (0..order.len()).map(|k| slot_value(&buf, k)).collect();
        let mut want = order.to_vec();
        want.sort();
        assert_eq!(keys, want);
        for v in 0..12usize {
            let got = Overrides(&buf).get(v);
            let want = order.contains(&(v as u32)).then_some(100 + v as u64);
            assert_eq!(got, want, "{order:?} v{v}");
            // The kind byte travels with its slot through the sort.
            let kind = Overrides(&buf).slot(v).map(|(k, _)| k);
            assert_eq!(kind, want.map(|_| v as u8), "{order:?} v{v}");
        }
        assert_eq!(slot_of(&buf, u32::MAX as usize), None);
    }
}

/// `State::new` zeroes exactly the parts before the scratch, whatever
/// the buffer held: no kernel, no delegate handle, no input set (the
/// input flags' bits past the last input are set).
#[test]
fn new_zeroes_the_parts_before_the_scratch() {
    let layout = Layout {
        instructions: 5,
        delegates: 2,
        overrides: 3,
        #[cfg(feature = "dynamic")]
        dims: 13,
        inputs: 9,
        scratch: 16,
        #[cfg(feature = "decoded-calls")]
        calls: 0,
        missing: 0,
    };
    let head = 5 * KERNEL_BYTES + 2 * DELEGATE_BYTES + 3 * OVERRIDE_BYTES + layout.dims() + 2;
    let mut buf = [0xaau8; 128];
    let need = layout.bytes();
    {
        let state = State::new(&layout, &mut buf[..need]).unwrap();
        assert!((0..5).all(|i| state.kernel(i) == usize::MAX));
        assert!((0..2).all(|i| state.delegate(i) == (0, 0)));
        assert_eq!(state.first_unset_input(), Some(0));
        assert_eq!(state.scratch.len(), 2);
    }
    assert!(buf[..head - 1].iter().all(|&b| b == 0));
    assert_eq!(buf[head - 1], 0xfe);
    assert!(buf[head..].iter().all(|&b| b == 0xaa));
    // Too small: the shortfall, nothing written.
    let mut short = [0xaau8; 128];
    let e = State::new(&layout, &mut short[..need - 3]).err().unwrap();
    assert_eq!(e.code, ErrorCode::MemoryAllocationFailed);
    assert!(short.iter().all(|&b| b == 0xaa));
}

/// A delegate's handle and backend come back as set; an index past
/// the plan's delegates (any `i32` an instruction holds, as `usize`)
/// reads `(0, 0)`, which `execute` reports as `InvalidProgram`.
#[test]
fn delegate_handle_and_backend() {
    let layout = Layout {
        delegates: 2,
        ..Layout::default()
    };
    let mut buf = [0xaau8; 16];
    let mut state = State::new(&layout, &mut buf).unwrap();
    assert_eq!(state.delegate(1), (0, 0));
    state.set_delegate(1, 0xdead_beef, 3);
    state.set_delegate(0, 7, 0);
    assert_eq!(state.delegate(0), (7, 1));
    assert_eq!(state.delegate(1), (0xdead_beef, 4));
    for i in [2, 0x2000_0000, 0x2000_0001, usize::MAX, -1i32 as usize] {
        assert_eq!(state.delegate(i), (0, 0), "index {i:#x}");
        state.set_delegate(i, 1, 1);
    }
    assert_eq!(
        buf,
        [7, 0, 0, 0, 1, 0, 0, 0, 0xef, 0xbe, 0xad, 0xde, 4, 0, 0, 0]
    );
}

/// Inputs are reported unset in order until every one is set, for
/// counts on and off a byte boundary (none: nothing to set).
#[test]
fn first_unset_input() {
    for n in [0, 1, 7, 8, 9, 16, 17] {
        let layout = Layout {
            inputs: n,
            ..Layout::default()
        };
        let mut buf = [0xaau8; 3];
        let mut state = State::new(&layout, &mut buf).unwrap();
        for i in 0..n {
            assert_eq!(state.first_unset_input(), Some(i), "{n} inputs");
            state.set_input_set(i);
        }
        assert_eq!(state.first_unset_input(), None, "{n} inputs");
        // Setting one again, or one past the inputs, changes nothing.
        state.set_input_set(0);
        state.set_input_set(n);
        assert_eq!(state.first_unset_input(), None, "{n} inputs");
        let set = &buf[..n.div_ceil(8)];
        assert!(set.iter().all(|&b| b == 0xff), "{n} inputs");
    }
    // Out of order: the lowest unset one.
    let layout = Layout {
        inputs: 11,
        ..Layout::default()
    };
    let mut buf = [0u8; 2];
    let mut state = State::new(&layout, &mut buf).unwrap();
    for i in [10, 3, 0, 1, 2] {
        state.set_input_set(i);
    }
    assert_eq!(state.first_unset_input(), Some(4));
}
