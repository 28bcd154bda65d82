//! The ETDump writer, read back with a minimal flatbuffer reader: exact
//! fields, shared names and vtables, and `MemoryAllocationFailed` (never a
//! panic) for every buffer too small.

use etch_etdump::{DebugTensor, EtDumpWriter, ProfileEvent};
use etch_runtime::{ErrorCode, ScalarType};

/// Minimal flatbuffer reading over the finished bytes.
struct Fb<'a>(&'a [u8]);
impl Fb<'_> {
    fn u16(&self, p: usize) -> usize {
        u16::from_le_bytes(self.0[p..p + 2].try_into().unwrap()) as usize
    }
    fn u32(&self, p: usize) -> usize {
        u32::from_le_bytes(self.0[p..p + 4].try_into().unwrap()) as usize
    }
    fn i32(&self, p: usize) -> i32 {
        i32::from_le_bytes(self.0[p..p + 4].try_into().unwrap())
    }
    fn u64(&self, p: usize) -> u64 {
        u64::from_le_bytes(self.0[p..p + 8].try_into().unwrap())
    }
    fn i64(&self, p: usize) -> i64 {
        self.u64(p) as i64
    }
    /// Position of field `slot` of the table at `t`.
    fn field(&self, t: usize, slot: usize) -> Option<usize> {
        let vt = (t as i64 - self.i32(t) as i64) as usize;
        let at = 4 + 2 * slot;
        if at >= self.u16(vt) {
            return None;
        }
        let off = self.u16(vt + at);
        (off != 0).then_some(t + off)
    }
    fn deref(&self, p: usize) -> usize {
        p + self.u32(p)
    }
    fn table(&self, t: usize, slot: usize) -> Option<usize> {
        self.field(t, slot).map(|p| self.deref(p))
    }
    fn vec(&self, t: usize, slot: usize) -> Vec<usize> {
        let Some(v) = self.table(t, slot) else {
            return vec![];
        };
        (0..self.u32(v)).map(|i| v + 4 + 4 * i).collect()
    }
    fn str(&self, t: usize, slot: usize) -> Option<&str> {
        let s = self.table(t, slot)?;
        let n = self.u32(s);
        assert_eq!(self.0[s + 4 + n], 0, "NUL-terminated");
        Some(std::str::from_utf8(&self.0[s + 4..s + 4 + n]).unwrap())
    }
}

fn build(buf: &mut [u8]) -> etch_runtime::Result<&[u8]> {
    let mut w = EtDumpWriter::new(buf);
    let execute = w.name(&["Exe", "cute"])?;
    let conv = w.name(&["native_call_", "quantized_conv2d", ".", "out"])?;
    for run in 0..2u64 {
        w.begin_run(execute)?;
        for i in 0..3 {
            w.profile_event(&ProfileEvent {
                name: conv,
                chain_index: 0,
                instruction_id: i,
                start_time: 1000 * run + 10 * i as u64,
                end_time: 1000 * run + 10 * i as u64 + 7,
            })?;
        }
        w.debug_tensor(
            0,
            2,
            &DebugTensor {
                dtype: ScalarType::CHAR,
                sizes: etch_runtime::Sizes::new(&[1, 64, 25, 5]),
                offset: 32 * run,
            },
            run == 1,
        )?;
    }
    w.finish()
}

#[test]
fn reads_back_exactly() {
    let mut buf = vec![0u8; 4096];
    let bytes = build(&mut buf).unwrap().to_vec();
    let fb = Fb(&bytes);
    // Size prefix, root offset, file identifier; 8-byte aligned length.
    assert_eq!(fb.u32(0), bytes.len() - 4);
    assert_eq!(&bytes[8..12], b"ED00");
    assert_eq!(bytes.len() % 8, 0);
    let root = 4 + fb.u32(4);
    assert!(fb.field(root, 0).is_none(), "version 0 is the default");
    let runs = fb.vec(root, 1);
    assert_eq!(runs.len(), 2);
    let mut names = std::collections::BTreeSet::new();
    for (r, &run) in runs.iter().enumerate() {
        let run = fb.deref(run);
        assert_eq!(fb.str(run, 0), Some("Execute"));
        names.insert(fb.table(run, 0).unwrap());
        let events = fb.vec(run, 3);
        assert_eq!(events.len(), 4);
        for (i, &e) in events[..3].iter().enumerate() {
            let pe = fb.table(fb.deref(e), 0).unwrap();
            assert!(fb.field(fb.deref(e), 2).is_none());
            assert_eq!(fb.str(pe, 0), Some("native_call_quantized_conv2d.out"));
            names.insert(fb.table(pe, 0).unwrap());
            assert_eq!(fb.i32(fb.field(pe, 1).unwrap()), 0);
            assert_eq!(fb.i32(fb.field(pe, 2).unwrap()), i as i32);
            let start = fb.field(pe, 6).unwrap();
            assert_eq!(start % 8, 0, "u64 fields 8-byte aligned");
            assert_eq!(fb.u64(start), 1000 * r as u64 + 10 * i as u64);
            assert_eq!(
                fb.u64(fb.field(pe, 7).unwrap()),
                1000 * r as u64 + 10 * i as u64 + 7
            );
        }
        let de = fb.table(fb.deref(events[3]), 2).unwrap();
        assert_eq!(fb.i32(fb.field(de, 1).unwrap()), 2);
        let value = fb.table(de, 2).unwrap();
        assert_eq!(bytes[fb.field(value, 0).unwrap()], 5, "ValueType::Tensor");
        assert_eq!(fb.table(value, 7).is_some(), r == 1, "output flag");
        let t = fb.table(value, 1).unwrap();
        assert_eq!(bytes[fb.field(t, 0).unwrap()], 1, "CHAR");
        // Vectors of longs: 8 bytes per item after the length.
        let sizes = fb.table(t, 1).unwrap();
        assert_eq!((sizes + 4) % 8, 0);
        assert_eq!(
            (0..4)
                .map(|i| fb.i64(sizes + 4 + 8 * i))
                .collect::<Vec<_>>(),
            [1, 64, 25, 5]
        );
        let strides = fb.table(t, 2).unwrap();
        assert_eq!(
            (0..4)
                .map(|i| fb.i64(strides + 4 + 8 * i))
                .collect::<Vec<_>>(),
            [8000, 125, 5, 1]
        );
        assert_eq!(fb.i64(fb.field(t, 3).unwrap()), 32 * r as i64);
    }
    // Each name is written once and shared.
    assert_eq!(names.len(), 2);
}

#[test]
fn every_short_buffer_fails_with_memory_allocation_failed() {
    let mut big = vec![0u8; 4096];
    let want = build(&mut big).unwrap().to_vec();
    // The working space (front stack + data) is larger than the result.
    let mut needed = None;
    for size in 0..4096 {
        let mut buf = vec![0u8; size];
        match build(&mut buf) {
            Ok(bytes) => {
                assert_eq!(bytes, &want[..]);
                needed = Some(size);
                break;
            }
            Err(e) => assert_eq!(e.code, ErrorCode::MemoryAllocationFailed, "size {size}"),
        }
    }
    let needed = needed.unwrap();
    assert!(
        needed >= want.len() && needed < want.len() + 64,
        "{needed} vs {}",
        want.len()
    );
}

#[test]
fn events_need_a_run() {
    let mut buf = [0u8; 256];
    let mut w = EtDumpWriter::new(&mut buf);
    let n = w.name(&["x"]).unwrap();
    let e = w
        .profile_event(&ProfileEvent {
            name: n,
            chain_index: 0,
            instruction_id: 0,
            start_time: 0,
            end_time: 1,
        })
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidState);
}
