//! `etch kws [CLIP.wav ...] [--model FILE.pte] [--features-out DIR]
//! [--stream [--every-ms N]]`: keyword spotting on the host,
//! the same way a microcontroller does it: etch-frontend's MFCCs (quantized
//! with the program's own `input0_scale`/`input0_zp`), the DS-CNN run by
//! etch-runtime, the output dequantized with `output0_scale`/`output0_zp`
//! (softmax applied if the program outputs logits). `--features-out` writes
//! each clip's model input as `DIR/<clip>.input0.npy`. `--stream` feeds each
//! file in 20 ms hops through the streaming front-end and labels the last
//! second every N ms (default 500), as a device listening to a microphone.

use std::path::{Path, PathBuf};
use std::time::Instant;

use etch_frontend::{Frontend, Quant, Stream, CLIP_SAMPLES, FEATURES, FRAME_STEP, HOPS};
use etch_pte::ScalarType;
use etch_runtime::{Method, Output, Program, TensorInfo};

use crate::host::{self, Aligned, MethodMemory};

/// MLPerf Tiny's KWS classes, in the model's output order.
pub const LABELS: [&str; 12] = [
    "down", "go", "left", "no", "off", "on", "right", "stop", "up", "yes", "silence", "unknown",
];
pub(crate) const MODEL: &str = "models/kws/dscnn_kws_int8io.pte";
const FALLBACK_MODEL: &str = "tests/fixtures/dscnn_cm_m33_int8io.pte";
const CLIPS: &str = "tools/clips/wav";
/// Timing runs per stage and clip (the best is printed).
const RUNS: usize = 3;

/// The repository root: the current directory if it holds the clips, else
/// the one this binary was built from.
pub(crate) fn repo_root() -> PathBuf {
    if Path::new(CLIPS).is_dir() {
        PathBuf::new()
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }
}

/// The label a clip's file name gives: `<label>_<k>.wav`.
pub fn label_of(path: &Path) -> Option<&'static str> {
    let stem = path.file_stem()?.to_str()?;
    let (label, k) = stem.rsplit_once('_')?;
    if k.is_empty() || !k.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    LABELS.iter().copied().find(|l| *l == label)
}

/// Reads a 16 kHz mono 16-bit PCM WAV file (with `hound`; the devices'
/// `no_std` parser is etch-frontend's `wav`).
pub(crate) fn read_clip(path: &Path) -> Result<Vec<i16>, String> {
    let name = path.display();
    let mut wav = open_clip(path)?;
    let pcm: Vec<i16> = wav
        .samples::<i16>()
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{name}: {e}"))?;
    if pcm.is_empty() {
        return Err(format!("{name}: no samples"));
    }
    Ok(pcm)
}

/// Opens a 16 kHz mono 16-bit PCM WAV file for streaming: the header is
/// read and checked, the samples are left in the file (`etch listen` reads
/// them hop by hop, in memory independent of the recording's length).
pub(crate) fn open_clip(
    path: &Path,
) -> Result<hound::WavReader<std::io::BufReader<std::fs::File>>, String> {
    let name = path.display();
    let wav =
        hound::WavReader::open(path).map_err(|e| format!("{name}: not a PCM WAV file ({e})"))?;
    let spec = wav.spec();
    if spec.sample_rate != 16000
        || spec.channels != 1
        || spec.bits_per_sample != 16
        || spec.sample_format != hound::SampleFormat::Int
    {
        return Err(format!(
            "{name}: {} Hz, {} channel(s), {}-bit{}; the keyword spotter needs 16000 Hz mono 16-bit PCM",
            spec.sample_rate,
            spec.channels,
            spec.bits_per_sample,
            if spec.sample_format == hound::SampleFormat::Float { " float" } else { "" }
        ));
    }
    if wav.duration() == 0 {
        return Err(format!("{name}: no samples"));
    }
    Ok(wav)
}

/// The value a 0-instruction config method (`input0_scale`, ...) returns.
pub(crate) fn config(program: &Program<'_>, name: &str) -> Result<Option<f64>, String> {
    let Ok(meta) = program.method_meta(name) else {
        return Ok(None);
    };
    let mut mem = MethodMemory::for_meta(&meta).map_err(|e| format!("{name}: {e}"))?;
    let mut planned: Vec<&mut [u8]> = mem.planned.iter_mut().map(|b| b.bytes_mut()).collect();
    let mut m = host::load_method(&meta, &mut mem.state, &mut planned)?;
    m.execute().map_err(|e| format!("{name}: {e}"))?;
    Ok(match m.output(0).map_err(|e| format!("{name}: {e}"))? {
        Output::Double(v) => Some(v),
        Output::Int(v) => Some(v as f64),
        _ => None,
    })
}

/// Keyword spotting: MFCC front end + DS-CNN on 16 kHz mono WAV clips
/// (default: the bundled clips and models/kws/dscnn_kws_int8io.pte).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The program (default: the trained MLPerf Tiny DS-CNN).
    #[arg(long, value_name = "FILE.pte")]
    model: Option<String>,
    /// Save each clip's model input (.npy) into DIR (created when missing).
    #[arg(long = "features-out", value_name = "DIR")]
    features_out: Option<PathBuf>,
    /// Label a long recording through the streaming front end (20 ms hops).
    #[arg(long = "stream")]
    stream_on: bool,
    /// Streaming: label the last second every N ms (a multiple of 20; default 500).
    #[arg(long = "every-ms", value_name = "N", value_parser = every_ms)]
    every_ms: Option<usize>,
    /// Print one JSON object (model, one entry per clip, totals) instead of the table.
    #[arg(long, conflicts_with_all = ["stream_on", "every_ms"])]
    json: bool,
    /// 16 kHz mono 16-bit WAV clips.
    clips: Vec<PathBuf>,
    /// `--stream [EVERY]`: label the last second every EVERY hops (20 ms).
    #[arg(skip)]
    stream: Option<usize>,
}

fn every_ms(v: &str) -> Result<usize, String> {
    v.parse()
        .ok()
        .filter(|&ms: &usize| ms >= 20 && ms.is_multiple_of(20))
        .ok_or_else(|| "needs a multiple of 20".to_string())
}

/// Runs the model on one feature vector (logical order, the input's dtype):
/// (best class, its probability, best-of-`runs` inference time in us).
fn classify(
    method: &mut Method<'_, '_>,
    input: &TensorInfo,
    out_q: Option<(f64, f64)>,
    features: &[u8],
    runs: usize,
) -> Result<(usize, f64, f64), String> {
    let elem = input.dtype.element_size().unwrap_or(1);
    let physical = host::to_physical(features, &input.shape, elem);
    let mut t_inf = f64::INFINITY;
    for _ in 0..runs.max(1) {
        method
            .set_input_bytes(0, &physical)
            .map_err(|e| e.to_string())?;
        let t1 = Instant::now();
        method.execute().map_err(|e| e.to_string())?;
        t_inf = t_inf.min(t1.elapsed().as_secs_f64() * 1e6);
    }
    let scores = match method.output(0).map_err(|e| e.to_string())? {
        Output::Tensor(t) => scores(t.dtype, t.data, out_q)
            .ok_or(format!("output 0 is {}, not int8/float", t.dtype.name()))?,
        _ => return Err("output 0 is not a tensor".into()),
    };
    if scores.len() != LABELS.len() {
        return Err(format!(
            "{} scores, expected {}",
            scores.len(),
            LABELS.len()
        ));
    }
    let (best, score) =
        probabilities(&scores)
            .into_iter()
            .enumerate()
            .fold(
                (0, f64::NEG_INFINITY),
                |b, (i, p)| if p > b.1 { (i, p) } else { b },
            );
    Ok((best, score, t_inf))
}

/// `--stream`: the clip as a microphone would deliver it, 20 ms hops into
/// etch-frontend's `Stream`; every `every` hops once a second has arrived,
/// the model labels the last second.
fn stream_clip(
    shown: &str,
    pcm: &[i16],
    every: usize,
    q: Option<Quant>,
    mut classify: impl FnMut(&[u8]) -> Result<(usize, f64, f64), String>,
) -> Result<(), String> {
    let mut fe = Frontend::new();
    let mut st = Stream::new();
    let (mut push_us, mut pushes) = (0.0f64, 0usize);
    outln!(
        "{shown}: {:.2} s, label of the last second every {} ms",
        pcm.len() as f64 / 16000.0,
        every * 20
    );
    for hop in pcm.chunks_exact(FRAME_STEP) {
        let hop: &[i16; FRAME_STEP] = hop.try_into().map_err(|_| "hop")?;
        let t0 = Instant::now();
        st.push(&mut fe, hop);
        push_us += t0.elapsed().as_secs_f64() * 1e6;
        pushes += 1;
        if !st.ready() || !(st.hops() - HOPS).is_multiple_of(every) {
            continue;
        }
        let t1 = Instant::now();
        let bytes: Vec<u8> = match q {
            Some(q) => {
                let mut out = [0i8; FEATURES];
                st.features_int8(q, &mut out)
                    .map_err(|e| format!("{e:?}"))?;
                out.iter().map(|&x| x as u8).collect()
            }
            None => {
                let mut out = [0f32; FEATURES];
                st.features(&mut out).map_err(|e| format!("{e:?}"))?;
                out.iter().flat_map(|x| x.to_le_bytes()).collect()
            }
        };
        let t_feat = t1.elapsed().as_secs_f64() * 1e6;
        let (best, score, t_inf) = classify(&bytes)?;
        let end = pushes as f64 * FRAME_STEP as f64 / 16000.0;
        outln!(
            "  {:>6.2}-{:<6.2} s  {:<8} {:>6.3}  features {:>5.0} us  inference {:>6.0} us",
            end - 1.0,
            end,
            LABELS[best],
            score,
            t_feat,
            t_inf
        );
    }
    if pushes > 0 {
        outln!(
            "  front-end per 20 ms hop: {:.1} us",
            push_us / pushes as f64
        );
    }
    Ok(())
}

pub fn main(mut a: Args) -> Result<(), String> {
    if a.stream_on || a.every_ms.is_some() {
        a.stream = Some(a.every_ms.unwrap_or(500) / 20);
    }
    if let Some(dir) = &a.features_out {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let root = repo_root();
    let model = match a.model {
        Some(m) => m,
        None if root.join(MODEL).is_file() => root.join(MODEL).display().to_string(),
        None => {
            let note = format!(
                "note: {MODEL} not found; using the fixture {FALLBACK_MODEL} (untrained weights: labels are meaningless)"
            );
            if a.json {
                eprintln!("{note}");
            } else {
                outln!("{note}");
            }
            root.join(FALLBACK_MODEL).display().to_string()
        }
    };
    let default_clips = a.clips.is_empty();
    let clips = if default_clips {
        let dir = root.join(CLIPS);
        let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .filter_map(|e| Some(e.ok()?.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "wav"))
            .collect();
        v.sort();
        if v.is_empty() {
            return Err(format!("no .wav clips in {}", dir.display()));
        }
        v
    } else {
        a.clips
    };

    let bytes = Aligned::from_bytes(&crate::read_file(&model)?);
    let program = host::load_program(&model, &bytes)?;
    let err = |e| crate::describe(&model, e);
    let meta = program.method_meta("forward").map_err(err)?;
    let mut mem = MethodMemory::for_meta(&meta).map_err(err)?;
    let mut planned: Vec<&mut [u8]> = mem.planned.iter_mut().map(|b| b.bytes_mut()).collect();
    let mut method = host::load_method(&meta, &mut mem.state, &mut planned)?;
    let input = method.input_meta(0).map_err(err)?;
    if input.shape.numel() != FEATURES {
        return Err(format!(
            "{model}: input 0 has {} elements; the front-end makes 49x10 = {FEATURES}",
            input.shape.numel()
        ));
    }
    let quant = match input.dtype {
        ScalarType::CHAR => {
            let scale = config(&program, "input0_scale")?;
            let zp = config(&program, "input0_zp")?;
            let (Some(scale), Some(zp)) = (scale, zp) else {
                return Err(format!(
                    "{model}: int8 input but no input0_scale/input0_zp methods"
                ));
            };
            Some((scale, zp as i32))
        }
        ScalarType::FLOAT => None,
        other => {
            return Err(format!(
                "{model}: input dtype {} (need int8 or float)",
                other.name()
            ))
        }
    };
    let q = quant
        .map(|(s, z)| {
            Quant::new(s as f32, z).map_err(|_| format!("{model}: bad input qparams ({s}, {z})"))
        })
        .transpose()?;
    let out_q = match (
        config(&program, "output0_scale")?,
        config(&program, "output0_zp")?,
    ) {
        (Some(s), Some(z)) => Some((s, z)),
        _ => None,
    };
    let json = a.json;
    let say = |line: String| {
        if !json {
            outln!("{line}");
        }
    };
    match quant {
        Some((s, z)) => say(format!(
            "model {model}: int8 input (scale {s}, zero point {z})"
        )),
        None => say(format!("model {model}: float input")),
    }

    // Bundled clips print as repo-relative paths wherever the binary runs.
    let shown = |c: &Path| -> String {
        match c.file_name() {
            Some(f) if default_clips => format!("{CLIPS}/{}", f.to_string_lossy()),
            _ => c.display().to_string(),
        }
    };
    let width = clips
        .iter()
        .map(|c| shown(c).len())
        .max()
        .unwrap_or(4)
        .max(4);
    if a.stream.is_none() {
        say(format!(
            "{:<width$}  {:<8} {:>6}  {:>10}  {:>10}",
            "clip", "label", "score", "front-end", "inference"
        ));
    }
    let mut fe = Frontend::new();
    let (mut named, mut correct, mut failed) = (0usize, 0usize, 0usize);
    let (mut fe_total, mut inf_total, mut ran) = (0.0f64, 0.0f64, 0usize);
    let mut records = Vec::new();
    let mut errors = Vec::new();
    // Streaming prints as it goes: no bar there.
    let bar = match a.stream {
        None => crate::progress(clips.len() as u64, "clips"),
        Some(_) => indicatif::ProgressBar::hidden(),
    };
    for clip in &clips {
        bar.inc(1);
        let pcm = match read_clip(clip) {
            Ok(p) => p,
            Err(e) => {
                bar.suspend(|| eprintln!("error: {e}"));
                errors.push(serde_json::json!({"clip": shown(clip), "error": e}));
                failed += 1;
                continue;
            }
        };
        if let Some(every) = a.stream {
            stream_clip(&shown(clip), &pcm, every, q, |f| {
                classify(&mut method, &input, out_q, f, 1).map_err(|e| format!("{model}: {e}"))
            })?;
            continue;
        }
        // Front-end: 490 features, int8 or float as the program takes them.
        // Each stage is timed as the best of RUNS (the host is shared).
        let mut t_fe = f64::INFINITY;
        let mut features = (Vec::new(), 0i16);
        for _ in 0..RUNS {
            let t0 = Instant::now();
            features = match q {
                Some(q) => {
                    let mut out = [0i8; FEATURES];
                    let peak = fe
                        .mfcc_int8(&pcm, q, &mut out)
                        .map_err(|e| format!("{}: {e:?}", clip.display()))?;
                    (out.iter().map(|&x| x as u8).collect(), peak)
                }
                None => {
                    let mut out = [0f32; FEATURES];
                    let peak = fe
                        .mfcc(&pcm, &mut out)
                        .map_err(|e| format!("{}: {e:?}", clip.display()))?;
                    (out.iter().flat_map(|x| x.to_le_bytes()).collect(), peak)
                }
            };
            t_fe = t_fe.min(t0.elapsed().as_secs_f64() * 1e6);
        }
        let (bytes, peak) = features;
        if let Some(dir) = &a.features_out {
            let stem = clip
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let path = dir.join(format!("{stem}.input0.npy"));
            let npy = crate::npy::Npy {
                dtype: input.dtype,
                shape: input.shape.sizes().iter().map(|s| s as usize).collect(),
                data: bytes.clone(),
            };
            crate::npy::write(&path.display().to_string(), &npy)?;
        }
        let (best, score, t_inf) = classify(&mut method, &input, out_q, &bytes, RUNS)
            .map_err(|e| format!("{model}: {e}"))?;
        let label = LABELS[best];
        let mut note = String::new();
        let expected = label_of(clip);
        if let Some(want) = expected {
            named += 1;
            if want == label {
                correct += 1;
            } else {
                note = format!("  (file says {want})");
            }
        }
        if peak == 0 {
            note.push_str("  (all samples 0: features undefined, see etch-frontend)");
        }
        if pcm.len() > CLIP_SAMPLES {
            let secs = pcm.len() as f64 / 16000.0;
            note.push_str(&format!(
                "  ({secs:.2} s: first second only, --stream for all)"
            ));
        } else if pcm.len() < CLIP_SAMPLES {
            let secs = pcm.len() as f64 / 16000.0;
            note.push_str(&format!("  ({secs:.2} s, zero-padded to 1 s)"));
        }
        let row = format!(
            "{:<width$}  {:<8} {:>6.3}  {:>7.0} us  {:>7.0} us{note}",
            shown(clip),
            label,
            score,
            t_fe,
            t_inf
        );
        bar.suspend(|| say(row));
        records.push(serde_json::json!({
            "clip": shown(clip),
            "label": label,
            "score": score,
            "expected": expected,
            "samples": pcm.len(),
            "peak": peak,
            "frontend_us": t_fe,
            "inference_us": t_inf,
        }));
        fe_total += t_fe;
        inf_total += t_inf;
        ran += 1;
    }
    bar.finish_and_clear();
    if ran > 0 {
        say(format!(
            "mean per clip (best of {RUNS} runs each): front-end {:.0} us, inference {:.0} us",
            fe_total / ran as f64,
            inf_total / ran as f64
        ));
    }
    if named > 0 {
        say(format!(
            "{correct}/{named} clips labelled as their file names say"
        ));
    }
    if json {
        let mean = |t: f64| if ran > 0 { Some(t / ran as f64) } else { None };
        let report = serde_json::json!({
            "model": model,
            "input": match quant {
                Some((s, z)) => serde_json::json!({"dtype": "int8", "scale": s, "zero_point": z}),
                None => serde_json::json!({"dtype": "float"}),
            },
            "clips": records,
            "errors": errors,
            "named": named,
            "correct": correct,
            "mean_frontend_us": mean(fe_total),
            "mean_inference_us": mean(inf_total),
            "timing_runs": RUNS,
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    }
    if failed > 0 {
        return Err(format!(
            "{failed} of {} clips could not be read",
            clips.len()
        ));
    }
    Ok(())
}

/// The output as floats: int8 dequantized with (scale, zero point).
fn scores(dtype: ScalarType, data: &[u8], q: Option<(f64, f64)>) -> Option<Vec<f64>> {
    match dtype {
        ScalarType::CHAR => {
            let (s, z) = q.unwrap_or((1.0, 0.0));
            Some(data.iter().map(|&b| (b as i8 as f64 - z) * s).collect())
        }
        ScalarType::FLOAT => Some(
            data.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)
                .collect(),
        ),
        _ => None,
    }
}

/// Probabilities: the scores themselves if they already are (the trained
/// model ends in softmax), else their softmax (logits).
pub fn probabilities(scores: &[f64]) -> Vec<f64> {
    let sum: f64 = scores.iter().sum();
    let already =
        scores.iter().all(|&p| (-1e-6..=1.0 + 1e-6).contains(&p)) && (sum - 1.0).abs() < 0.05;
    if already {
        return scores.to_vec();
    }
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = scores.iter().map(|&x| (x - max).exp()).collect();
    let total: f64 = e.iter().sum();
    e.iter().map(|x| x / total).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_from_file_names() {
        assert_eq!(label_of(Path::new("a/yes_0.wav")), Some("yes"));
        assert_eq!(label_of(Path::new("silence_12.wav")), Some("silence"));
        assert_eq!(label_of(Path::new("yes.wav")), None);
        assert_eq!(label_of(Path::new("maybe_1.wav")), None);
        assert_eq!(label_of(Path::new("yes_x.wav")), None);
    }

    #[test]
    fn softmax_only_for_logits() {
        let p = [0.5, 0.25, 0.25];
        assert_eq!(probabilities(&p), p.to_vec());
        let l = probabilities(&[0.0, 2.0f64.ln()]);
        assert!((l[0] - 1.0 / 3.0).abs() < 1e-12 && (l[1] - 2.0 / 3.0).abs() < 1e-12);
    }
}
