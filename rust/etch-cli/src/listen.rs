//! `etch listen [FILE.wav] [--model FILE.pte] [--every-ms N] [--window-ms N]
//! [--min-count N] [--threshold N] [--refractory-ms N] [--expect FILE.tsv]`:
//! a keyword spotter listening to a recording as a board listens to its
//! microphone. 20 ms hops into etch-frontend's streaming front end, the model
//! on the last second every N ms (default 500), etch-kws's recognizer
//! (posterior averaging, threshold, refractory period) turning scores into
//! detections: the same code, integers and defaults as
//! `samples/keyword_spotting_live` on Zephyr, so the detection times printed
//! here are the ones the board logs.
//!
//! Without FILE the listening test's recording (`tools/clips/listen/`) is
//! played and checked against its `recording.tsv`: every keyword segment must
//! give one detection of its label no later than `LATENCY_MS` after the
//! segment ends, and nothing else may be detected. `--expect TSV` checks
//! another recording the same way.

use std::path::{Path, PathBuf};

use etch_frontend::{Frontend, Quant, Stream, FEATURES, FRAME_STEP, HOPS};
use etch_kws::{Config, Recognizer};
use etch_pte::ScalarType;
use etch_runtime::Output;

use crate::host::{self, Aligned, MethodMemory};
use crate::kws::{self, LABELS};

const RECORDING: &str = "tools/clips/listen/recording.wav";
/// How long after a keyword segment ends its detection may come: the
/// model sees the word whole only once the window has moved past it, and
/// averaging needs `min_count` results.
pub const LATENCY_MS: u32 = 1500;
const HOP_MS: u32 = 20;

/// A detection: label and time in ms of audio, averaged score.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heard {
    pub label: &'static str,
    pub time_ms: u32,
    pub score: u8,
}

/// One line of a recording's `.tsv`: `[start, end)` in ms, kind, label.
#[derive(Clone, Debug)]
struct Segment {
    start_ms: u32,
    end_ms: u32,
    kind: String,
    label: String,
}

/// A board listening: streaming front end, inference every N ms, posterior
/// averaging, threshold, refractory period -> detections (default: the
/// listening test's recording, checked against its .tsv).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// 16 kHz mono 16-bit WAV recording.
    wav: Option<PathBuf>,
    /// The program (default: the trained MLPerf Tiny DS-CNN).
    #[arg(long, value_name = "FILE.pte")]
    model: Option<String>,
    /// Check the detections against a recording's .tsv.
    #[arg(long, value_name = "FILE.tsv")]
    expect: Option<PathBuf>,
    /// Inference every N ms (a positive multiple of 20).
    #[arg(long = "every-ms", value_name = "N", default_value_t = 500, value_parser = every_ms)]
    every_ms: u32,
    /// Average the posteriors over the last N ms.
    #[arg(long = "window-ms", value_name = "N", default_value_t = 1000)]
    window_ms: u32,
    /// Results needed in the window before a detection.
    #[arg(long = "min-count", value_name = "N", default_value_t = 2)]
    min_count: usize,
    /// Averaged score (0..255) a detection needs.
    #[arg(long, value_name = "N", default_value_t = 200)]
    threshold: u8,
    /// No second detection of a keyword within N ms.
    #[arg(long = "refractory-ms", value_name = "N", default_value_t = 1500)]
    refractory_ms: u32,
}

fn every_ms(v: &str) -> Result<u32, String> {
    v.parse()
        .ok()
        .filter(|&ms: &u32| ms > 0 && ms.is_multiple_of(HOP_MS))
        .ok_or_else(|| "must be a positive multiple of 20".to_string())
}

/// The model's scores as 0..=255 probabilities: an int8 output minus its zero
/// point (exactly what `etch_kws_push_int8` does on the device), or a float
/// probability times 256.
fn probabilities_u8(dtype: ScalarType, data: &[u8], zero_point: i64) -> Option<Vec<u8>> {
    match dtype {
        ScalarType::CHAR => Some(
            data.iter()
                .map(|&b| (b as i8 as i64 - zero_point).clamp(0, 255) as u8)
                .collect(),
        ),
        ScalarType::FLOAT => Some(
            data.chunks_exact(4)
                .map(|c| {
                    let p = f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64;
                    (p * 256.0).round().clamp(0.0, 255.0) as u8
                })
                .collect(),
        ),
        _ => None,
    }
}

/// Plays `pcm` through the streaming front end, the model and the
/// recognizer, one hop at a time as a board does: the samples are pulled
/// from the iterator (a WAV file being read), never held, so memory does
/// not depend on the recording's length.
pub fn listen(
    model: &str,
    pcm: impl Iterator<Item = Result<i16, String>>,
    every_ms: u32,
    config: Config,
) -> Result<Vec<Heard>, String> {
    let bytes = Aligned::from_bytes(&crate::read_file(model)?);
    let program = host::load_program(model, &bytes)?;
    let err = |e| crate::describe(model, e);
    let meta = program.method_meta("forward").map_err(err)?;
    let mut mem = MethodMemory::for_meta(&meta).map_err(err)?;
    let mut planned: Vec<&mut [u8]> = mem.planned.iter_mut().map(|b| b.bytes_mut()).collect();
    let mut method = host::load_method(&meta, &mut mem.state, &mut planned)?;
    let input = method.input_meta(0).map_err(err)?;
    if input.dtype != ScalarType::CHAR || input.shape.numel() != FEATURES {
        return Err(format!(
            "{model}: input 0 is not the front end's {FEATURES} int8 features"
        ));
    }
    let scale = kws::config(&program, "input0_scale")?;
    let zp = kws::config(&program, "input0_zp")?;
    let (Some(scale), Some(zp)) = (scale, zp) else {
        return Err(format!("{model}: no input0_scale/input0_zp methods"));
    };
    let q = Quant::new(scale as f32, zp as i32)
        .map_err(|_| format!("{model}: bad input qparams ({scale}, {zp})"))?;
    let out_zp = kws::config(&program, "output0_zp")?.unwrap_or(0.0) as i64;

    let mut recognizer = Recognizer::<{ LABELS.len() }, 16>::new(config)
        .map_err(|e| format!("recognizer settings: {e:?}"))?;
    let mut fe = Frontend::new();
    let mut stream = Stream::new();
    let every = (every_ms / HOP_MS) as usize;
    let mut heard = Vec::new();
    let mut pcm = pcm;
    let mut hop = [0i16; FRAME_STEP];
    for k in 0.. {
        // A whole hop, or the end (a last partial hop is dropped, as
        // `chunks_exact` did over the whole recording).
        let mut got = 0;
        for (slot, sample) in hop.iter_mut().zip(pcm.by_ref()) {
            *slot = sample?;
            got += 1;
        }
        if got < FRAME_STEP {
            break;
        }
        stream.push(&mut fe, &hop);
        let hops = k + 1;
        if hops < HOPS || !(hops - HOPS).is_multiple_of(every) {
            continue;
        }
        let mut features = [0i8; FEATURES];
        stream
            .features_int8(q, &mut features)
            .map_err(|e| format!("features: {e:?}"))?;
        let logical: Vec<u8> = features.iter().map(|&x| x as u8).collect();
        let physical = host::to_physical(&logical, &input.shape, 1);
        method.set_input_bytes(0, &physical).map_err(err)?;
        method.execute().map_err(err)?;
        let probs = match method.output(0).map_err(err)? {
            Output::Tensor(t) => probabilities_u8(t.dtype, t.data, out_zp)
                .ok_or(format!("{model}: output 0 is not int8 or float"))?,
            _ => return Err(format!("{model}: output 0 is not a tensor")),
        };
        let time_ms = hops as u32 * HOP_MS;
        if let Some(d) = recognizer
            .push(time_ms, &probs)
            .map_err(|e| format!("recognizer: {e:?}"))?
        {
            heard.push(Heard {
                label: LABELS.get(d.label).copied().unwrap_or("?"),
                time_ms: d.time_ms,
                score: d.score,
            });
        }
    }
    Ok(heard)
}

fn read_segments(path: &Path) -> Result<Vec<Segment>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let ms = |s: &str| -> Result<u32, String> {
        let v: f64 = s
            .parse()
            .map_err(|_| format!("{}: bad time '{s}'", path.display()))?;
        Ok((v * 1000.0).round() as u32)
    };
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            if f.len() < 4 {
                return Err(format!("{}: bad line '{l}'", path.display()));
            }
            Ok(Segment {
                start_ms: ms(f[0])?,
                end_ms: ms(f[1])?,
                kind: f[2].to_string(),
                label: f[3].to_string(),
            })
        })
        .collect()
}

/// Matches detections to the keyword segments: (lines of the report, misses
/// + false alarms).
fn check(segments: &[Segment], heard: &[Heard]) -> (Vec<String>, usize) {
    let mut used = vec![false; heard.len()];
    let mut lines = Vec::new();
    let mut errors = 0;
    for s in segments.iter().filter(|s| s.kind == "keyword") {
        let found = heard.iter().enumerate().position(|(i, h)| {
            !used[i] && h.time_ms > s.start_ms && h.time_ms <= s.end_ms + LATENCY_MS
        });
        match found {
            Some(i) if heard[i].label == s.label => {
                used[i] = true;
                lines.push(format!(
                    "  {:>6.2}-{:<6.2} s  \"{}\"  detected at {:.2} s (score {}/255)",
                    s.start_ms as f64 / 1e3,
                    s.end_ms as f64 / 1e3,
                    s.label,
                    heard[i].time_ms as f64 / 1e3,
                    heard[i].score
                ));
            }
            Some(i) => {
                used[i] = true;
                errors += 1;
                lines.push(format!(
                    "  {:>6.2}-{:<6.2} s  \"{}\"  WRONG: heard \"{}\" at {:.2} s",
                    s.start_ms as f64 / 1e3,
                    s.end_ms as f64 / 1e3,
                    s.label,
                    heard[i].label,
                    heard[i].time_ms as f64 / 1e3
                ));
            }
            None => {
                errors += 1;
                lines.push(format!(
                    "  {:>6.2}-{:<6.2} s  \"{}\"  MISSED",
                    s.start_ms as f64 / 1e3,
                    s.end_ms as f64 / 1e3,
                    s.label
                ));
            }
        }
    }
    for (h, _) in heard.iter().zip(&used).filter(|(_, &u)| !u) {
        errors += 1;
        lines.push(format!(
            "  FALSE ALARM: \"{}\" at {:.2} s (score {}/255)",
            h.label,
            h.time_ms as f64 / 1e3,
            h.score
        ));
    }
    (lines, errors)
}

pub fn main(a: Args) -> Result<(), String> {
    let config = Config {
        window_ms: a.window_ms,
        min_count: a.min_count,
        threshold: a.threshold,
        refractory_ms: a.refractory_ms,
        keywords: 10,
    };
    let root = kws::repo_root();
    let model = a
        .model
        .unwrap_or_else(|| root.join(kws::MODEL).display().to_string());
    let (wav, expect) = match a.wav {
        Some(w) => (w, a.expect),
        None => {
            let w = root.join(RECORDING);
            let tsv = a.expect.unwrap_or_else(|| w.with_extension("tsv"));
            (w, Some(tsv))
        }
    };
    let mut clip = kws::open_clip(&wav)?;
    let samples = clip.duration();
    outln!(
        "listening to {} ({:.1} s) with {model}: inference every {} ms, average over {} ms (at least {}), threshold {}/255, refractory {} ms",
        wav.display(),
        samples as f64 / 16000.0,
        a.every_ms,
        config.window_ms,
        config.min_count,
        config.threshold,
        config.refractory_ms
    );
    let name = wav.display().to_string();
    let pcm = clip
        .samples::<i16>()
        .map(|s| s.map_err(|e| format!("{name}: {e}")));
    let heard = listen(&model, pcm, a.every_ms, config)?;
    for h in &heard {
        outln!(
            "detected \"{}\" at {} ms (score {}/255)",
            h.label,
            h.time_ms,
            h.score
        );
    }
    let Some(tsv) = expect else {
        outln!("{} detection(s)", heard.len());
        return Ok(());
    };
    let segments = read_segments(&tsv)?;
    let (lines, errors) = check(&segments, &heard);
    let keywords = segments.iter().filter(|s| s.kind == "keyword").count();
    outln!("expected (from {}):", tsv.display());
    for l in lines {
        outln!("{l}");
    }
    if errors > 0 {
        return Err(format!(
            "{errors} miss(es) or false alarm(s) over {keywords} keyword(s)"
        ));
    }
    outln!("{keywords}/{keywords} keywords detected, no false alarm");
    Ok(())
}
