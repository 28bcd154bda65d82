//! Embeds one keyword clip (16000 samples), the KWS program, and the host's
//! results for them: int8 features (host build of etch-frontend, with the
//! program's own input qparams) and the program's output on those features
//! (host build of etch-runtime + etch-kernels). Puts memory.x on the linker
//! path.
use etch_frontend::{wav::Wav, Frontend, Quant, CLIP_SAMPLES, FEATURES};
use etch_runtime::{Method, Output, Program, Verification};
use std::{env, fs, path::PathBuf};

/// A 16-byte aligned copy (programs are read in place).
fn aligned(bytes: &[u8]) -> Vec<u128> {
    let mut v = vec![0u128; bytes.len().div_ceil(16)];
    for (d, s) in v.iter_mut().zip(bytes.chunks(16)) {
        let mut b = [0u8; 16];
        b[..s.len()].copy_from_slice(s);
        *d = u128::from_le_bytes(b);
    }
    v
}

fn as_bytes(v: &[u128], len: usize) -> &[u8] {
    // SAFETY: u128 has no padding; the slice covers `len <= 16 * v.len()` bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, len) }
}

/// Runs `name` with fresh memory; returns output 0 as bytes, or its value.
fn run(program: &Program<'_>, name: &str, input: Option<&[u8]>) -> (Vec<u8>, f64) {
    let meta = program.method_meta(name).unwrap();
    let mut state = vec![0u8; meta.method_state_bytes(etch_kernels::KERNELS).unwrap()];
    let mut bufs: Vec<Vec<u8>> = (0..meta.num_memory_planned_buffers().unwrap())
        .map(|i| vec![0u8; meta.memory_planned_buffer_size(i).unwrap()])
        .collect();
    let mut planned: Vec<&mut [u8]> = bufs.iter_mut().map(|b| b.as_mut_slice()).collect();
    let mut m = Method::load(&meta, &mut state, &mut planned, etch_kernels::KERNELS, &[]).unwrap();
    if let Some(x) = input {
        m.set_input_bytes(0, x).unwrap();
    }
    m.execute().unwrap();
    match m.output(0).unwrap() {
        Output::Tensor(t) => (t.data.to_vec(), 0.0),
        Output::Double(v) => (vec![], v),
        Output::Int(v) => (vec![], v as f64),
        _ => panic!("{name}: unexpected output"),
    }
}

fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let clip = env::var("ETCH_FRONTEND_CLIP")
        .unwrap_or_else(|_| "../../tools/frontend/vectors/kw_yes.wav".into());
    let model = env::var("ETCH_FRONTEND_MODEL").unwrap_or_else(|_| {
        let trained = "../../models/kws/dscnn_kws_int8io.pte";
        if fs::metadata(trained).is_ok() {
            trained.into()
        } else {
            "../../tests/fixtures/dscnn_cm_m33_int8io.pte".into()
        }
    });
    let bytes = fs::read(&clip).unwrap_or_else(|e| panic!("{clip}: {e}"));
    let wav = Wav::parse(&bytes).unwrap();
    assert!(wav.is_kws_format(), "{clip}: not 16 kHz mono 16-bit");
    let mut pcm = [0i16; CLIP_SAMPLES];
    wav.read_i16(&mut pcm);

    let pte = fs::read(&model).unwrap_or_else(|e| panic!("{model}: {e}"));
    let buf = aligned(&pte);
    let program =
        Program::from_bytes(as_bytes(&buf, pte.len()), Verification::InternalConsistency).unwrap();
    let scale = run(&program, "input0_scale", None).1 as f32;
    let zp = run(&program, "input0_zp", None).1 as i32;
    let mut feats = [0i8; FEATURES];
    Frontend::new()
        .mfcc_int8(&pcm, Quant::new(scale, zp).unwrap(), &mut feats)
        .unwrap();
    let feat_bytes = feats.map(|x| x as u8);
    let (scores, _) = run(&program, "forward", Some(&feat_bytes));

    fs::write(
        out.join("pcm.bin"),
        pcm.iter()
            .flat_map(|s| s.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    fs::write(out.join("expected.bin"), feat_bytes).unwrap();
    fs::write(out.join("expected_scores.bin"), &scores).unwrap();
    fs::write(out.join("model.pte"), &pte).unwrap();
    fs::write(out.join("model_name.txt"), &model).unwrap();
    fs::copy("memory.x", out.join("memory.x")).unwrap();
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-env-changed=ETCH_FRONTEND_CLIP");
    println!("cargo:rerun-if-env-changed=ETCH_FRONTEND_MODEL");
    println!("cargo:rerun-if-changed={clip}");
    println!("cargo:rerun-if-changed={model}");
    println!("cargo:rerun-if-changed=../../models/kws/dscnn_kws_int8io.pte");
    println!("cargo:rerun-if-changed=memory.x");
}
