//! Embeds one keyword clip (16000 samples) and the host's int8 features of it
//! (computed by the host build of etch-frontend), and puts memory.x on the
//! linker path.
use etch_frontend::{wav::Wav, Frontend, Quant, CLIP_SAMPLES, FEATURES};
use std::{env, fs, path::PathBuf};

// MLPerf Tiny's reference model input quantization (kws_ref_model.tflite).
const SCALE: f32 = 0.584_702_9;
const ZP: i32 = 83;

fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let clip = env::var("ETCH_FRONTEND_CLIP")
        .unwrap_or_else(|_| "../../tools/frontend/vectors/kw_yes.wav".into());
    let bytes = fs::read(&clip).unwrap_or_else(|e| panic!("{clip}: {e}"));
    let wav = Wav::parse(&bytes).unwrap();
    assert!(wav.is_kws_format(), "{clip}: not 16 kHz mono 16-bit");
    let mut pcm = [0i16; CLIP_SAMPLES];
    wav.read_i16(&mut pcm);
    let mut feats = [0i8; FEATURES];
    Frontend::new()
        .mfcc_int8(&pcm, Quant::new(SCALE, ZP).unwrap(), &mut feats)
        .unwrap();
    fs::write(
        out.join("pcm.bin"),
        pcm.iter()
            .flat_map(|s| s.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    fs::write(out.join("expected.bin"), feats.map(|x| x as u8)).unwrap();
    fs::write(
        out.join("qparams.rs"),
        format!("const SCALE: f32 = {SCALE:?};\nconst ZP: i32 = {ZP};\n"),
    )
    .unwrap();
    fs::copy("memory.x", out.join("memory.x")).unwrap();
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-env-changed=ETCH_FRONTEND_CLIP");
    println!("cargo:rerun-if-changed={clip}");
    println!("cargo:rerun-if-changed=memory.x");
}
