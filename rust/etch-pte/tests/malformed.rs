//! Bad input made by code from every real fixture: truncations at every
//! length, byte corruptions across the whole flatbuffer part, and targeted
//! breakage (identifier, union tags, indices, vector lengths). Every case must
//! return an error or a valid program: never panic, hang or read out of bounds
//! (`etch-pte` has no `unsafe`, so out-of-bounds would be a panic here).

use etch_pte::schema::slot;
use etch_pte::{ErrorCode, InstructionArgs, PteFile, Value};

fn fixture_dir() -> std::path::PathBuf {
    match std::env::var_os("ETCH_FIXTURE_DIR") {
        Some(d) => d.into(),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures"),
    }
}

fn fixtures() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(fixture_dir()).expect("tests/fixtures exists") {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "pte") {
            out.push((
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            ));
        }
    }
    out.sort();
    assert!(
        out.len() >= 2,
        "expected the committed .pte fixtures, found {}",
        out.len()
    );
    out
}

/// Checked and unchecked-then-verified must agree, and neither may panic.
fn parse_both(bytes: &[u8]) -> Result<(), etch_pte::Error> {
    let checked = PteFile::new_checked(bytes).map(|_| ());
    let unchecked = PteFile::new_unchecked(bytes).and_then(|f| etch_pte::verify::verify(&f));
    assert_eq!(checked, unchecked);
    checked
}

#[test]
fn every_fixture_verifies() {
    for (name, bytes) in fixtures() {
        PteFile::new_checked(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn truncation_at_every_length_is_an_error() {
    for (name, bytes) in fixtures() {
        let has_header = PteFile::new_checked(&bytes)
            .unwrap()
            .extended_header()
            .is_some();
        for len in 0..bytes.len() {
            let r = parse_both(&bytes[..len]);
            if has_header || len < bytes.len() / 2 {
                let e = r.expect_err(&format!("{name} truncated to {len} parsed"));
                assert_eq!(e.code, ErrorCode::InvalidProgram, "{name} at {len}: {e}");
            }
        }
    }
}

#[test]
fn single_byte_corruptions_never_panic() {
    let mut rejected = 0usize;
    let mut total = 0usize;
    for (_name, bytes) in fixtures() {
        let program_size = PteFile::new_checked(&bytes).unwrap().program_size();
        let mut buf = bytes.clone();
        for pos in 0..program_size {
            for flip in [0xffu8, 0x80, 0x01, 0x7f] {
                let orig = buf[pos];
                buf[pos] = orig ^ flip;
                total += 1;
                if parse_both(&buf).is_err() {
                    rejected += 1;
                }
                buf[pos] = orig;
            }
        }
    }
    // Most single-byte changes to tables and offsets are detected; changed
    // scalar payloads (a size, an Int value) legitimately still parse.
    assert!(
        rejected * 4 > total,
        "only {rejected} of {total} corruptions rejected"
    );
}

fn write_u32(buf: &mut [u8], pos: usize, v: u32) {
    buf[pos..pos + 4].copy_from_slice(&v.to_le_bytes());
}

/// `e` is `InvalidProgram` described as `what`; the description is only
/// compared with the `messages` feature (without it `Error::what` is empty).
fn invalid(e: etch_pte::Error, what: &str, name: &str) {
    assert_eq!(e.code, ErrorCode::InvalidProgram, "{name}");
    if cfg!(feature = "messages") {
        assert_eq!(e.what(), what, "{name}");
    }
}

#[test]
fn wrong_identifier() {
    for (_, mut bytes) in fixtures() {
        bytes[4..8].copy_from_slice(b"ET11");
        let e = PteFile::new_checked(&bytes).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidProgram);
        if cfg!(feature = "at") {
            assert_eq!(e.at(), 4);
        }
    }
}

#[test]
fn targeted_breakage_gives_exact_errors() {
    for (name, bytes) in fixtures() {
        let file = PteFile::new_checked(&bytes).unwrap();
        let plan = file.program().execution_plan().unwrap().get(0).unwrap();
        let values = plan.values().unwrap();
        let n_values = values.len() as u32;

        // Bad union tag on the first EValue.
        let ev = values.get(0).unwrap();
        let tag_pos =
            ev.0.field(slot::evalue::VAL_TYPE, 1)
                .unwrap()
                .expect("tag present");
        for bad in [0u8, 12, 200] {
            let mut b = bytes.clone();
            b[tag_pos] = bad;
            let e = PteFile::new_checked(&b).unwrap_err();
            invalid(e, "EValue has an unknown type tag", &name);
        }

        // Values vector claiming a huge length.
        let vec_pos = values.position() - 4;
        let mut b = bytes.clone();
        write_u32(&mut b, vec_pos, 0x7fff_ffff);
        let e = PteFile::new_checked(&b).unwrap_err();
        invalid(e, "vector past end of buffer", &name);

        // Root offset pointing past the program.
        let mut b = bytes.clone();
        write_u32(&mut b, 0, file.program_size() as u32);
        assert_eq!(
            PteFile::new_checked(&b).unwrap_err().code,
            ErrorCode::InvalidProgram
        );

        // First kernel call: argument and op index out of range.
        let chains = plan.chains().unwrap();
        let Some(chain) = chains.iter().next() else {
            continue;
        };
        let Some(instr) = chain.unwrap().instructions().unwrap().iter().next() else {
            continue;
        };
        let instr = instr.unwrap();
        let tag = instr
            .0
            .field(slot::instruction::INSTR_ARGS_TYPE, 1)
            .unwrap()
            .unwrap();
        let mut b = bytes.clone();
        b[tag] = 9;
        invalid(
            PteFile::new_checked(&b).unwrap_err(),
            "Instruction has an unknown argument type",
            &name,
        );
        if let InstructionArgs::KernelCall { args, .. } = instr.args().unwrap() {
            let mut b = bytes.clone();
            write_u32(&mut b, args.position(), n_values);
            invalid(
                PteFile::new_checked(&b).unwrap_err(),
                "instruction argument out of range",
                &name,
            );
            let call = instr
                .0
                .table(slot::instruction::INSTR_ARGS)
                .unwrap()
                .unwrap();
            if let Some(p) = call.field(slot::kernel_call::OP_INDEX, 4).unwrap() {
                let mut b = bytes.clone();
                write_u32(&mut b, p, 1000);
                invalid(
                    PteFile::new_checked(&b).unwrap_err(),
                    "op_index out of range",
                    &name,
                );
            }
        }

        // A tensor's dim_order made a non-permutation.
        for v in values.iter() {
            if let Value::Tensor(t) = v.unwrap().value().unwrap() {
                let order = t.dim_order().unwrap();
                if order.len() >= 2 {
                    let mut b = bytes.clone();
                    let p = order.position();
                    b[p + 1] = b[p];
                    invalid(
                        PteFile::new_checked(&b).unwrap_err(),
                        "dim_order is not a permutation",
                        &name,
                    );
                    break;
                }
            }
        }
    }
}

/// Replays the committed fuzzing corpus (minimized from a 1.5 M-execution
/// `cargo fuzz run new_checked` campaign seeded with the fixtures).
#[test]
fn fuzz_corpus_replays_without_panics() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/new_checked");
    let mut n = 0;
    let mut accepted = 0;
    for e in std::fs::read_dir(&dir).expect("fuzz corpus committed") {
        let bytes = std::fs::read(e.unwrap().path()).unwrap();
        if parse_both(&bytes).is_ok() {
            accepted += 1;
        }
        n += 1;
    }
    assert!(n >= 100, "corpus has {n} files");
    // Both outcomes must occur, or the corpus no longer exercises the checks.
    assert!(accepted > 0 && accepted < n, "{accepted} of {n} accepted");
}
