//! Streaming keyword recognition: turns the model's per-inference scores
//! into detection events, as a listening device needs them.
//!
//! A keyword spotter runs its classifier every few hundred milliseconds on
//! the last second of audio. One inference alone flickers; TensorFlow Lite
//! Micro's `micro_speech` (`RecognizeCommands`) smooths them, and so does
//! [`Recognizer`]:
//!
//! 1. **posterior averaging**: each label's score is averaged over the
//!    results of the last `window_ms` (at least `min_count` of them);
//! 2. **threshold**: the best-averaged label is a detection when it is a
//!    keyword (not one of the trailing "background" labels such as silence
//!    and unknown) and its average reaches `threshold`;
//! 3. **refractory period**: after a detection nothing is reported for
//!    `refractory_ms`, so one spoken word gives one event.
//!
//! Scores are probabilities on a 0..=255 scale: an int8 softmax output with
//! scale 1/256 and zero point -128 (the MLPerf Tiny DS-CNN's) maps to it by
//! adding 128 ([`scores_from_int8_softmax`]). Times are in milliseconds of
//! audio, so the same audio gives the same events on any device and on the
//! host. No heap: the history is a fixed-capacity ring (`HISTORY` results of
//! `LABELS` scores each) of plain integers, so that any bytes are a valid
//! recognizer (the C API keeps one in caller memory) and no index can leave
//! its array.
#![no_std]
#![forbid(unsafe_code)]

/// Why a call was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// A result older than the previous one (time must not go backwards).
    TimeWentBackwards,
    /// `scores` has another length than the recognizer's `LABELS`.
    WrongLabelCount,
    /// A configuration value out of range (`min_count` 0 or above `HISTORY`,
    /// `keywords` above `LABELS`, or `window_ms` 0).
    BadConfig,
}

/// Recognition settings (all times in ms of audio).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Results averaged: those no older than this.
    pub window_ms: u32,
    /// Fewest results in the window before anything is reported.
    pub min_count: usize,
    /// Average score (0..=255) a keyword needs.
    pub threshold: u8,
    /// Quiet time after a detection.
    pub refractory_ms: u32,
    /// Labels `0..keywords` are keywords; the rest (silence, unknown) never fire.
    pub keywords: usize,
}

impl Config {
    /// TensorFlow Lite Micro `micro_speech`'s defaults, for the 10 MLPerf
    /// Tiny keywords: 1 s window, 3 results, 200/255, 1.5 s quiet.
    pub const MICRO_SPEECH: Config = Config {
        window_ms: 1000,
        min_count: 3,
        threshold: 200,
        refractory_ms: 1500,
        keywords: 10,
    };
}

/// A keyword heard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Detection {
    /// Index of the keyword in the model's labels.
    pub label: usize,
    /// Its averaged score, 0..=255.
    pub score: u8,
    /// Time of the result that completed the detection.
    pub time_ms: u32,
}

/// The last `HISTORY` results, oldest first from `start`.
#[derive(Clone, Copy)]
struct Ring<const LABELS: usize, const HISTORY: usize> {
    times: [u32; HISTORY],
    scores: [[u8; LABELS]; HISTORY],
    start: usize,
    len: usize,
}

impl<const LABELS: usize, const HISTORY: usize> Ring<LABELS, HISTORY> {
    const NONZERO: () = assert!(HISTORY > 0, "HISTORY must be at least 1");

    fn len(&self) -> usize {
        self.len.min(HISTORY)
    }

    /// Slot of the `k`-th oldest result.
    fn slot(&self, k: usize) -> usize {
        #[allow(clippy::let_unit_value)]
        let () = Self::NONZERO;
        (self.start % HISTORY + k) % HISTORY
    }

    fn time(&self, k: usize) -> Option<u32> {
        (k < self.len()).then(|| self.times.get(self.slot(k)).copied())?
    }

    fn pop_oldest(&mut self) {
        if self.len() > 0 {
            self.start = self.slot(1);
            self.len = self.len() - 1;
        }
    }

    fn push(&mut self, time: u32, scores: [u8; LABELS]) {
        if self.len() == HISTORY {
            self.pop_oldest();
        }
        let slot = self.slot(self.len());
        if let (Some(t), Some(s)) = (self.times.get_mut(slot), self.scores.get_mut(slot)) {
            *t = time;
            *s = scores;
        }
        self.len = self.len() + 1;
    }

    /// Sum of label `label`'s scores over the ring.
    fn sum(&self, label: usize) -> u32 {
        (0..self.len())
            .filter_map(|k| self.scores.get(self.slot(k))?.get(label))
            .map(|&s| s as u32)
            .sum()
    }
}

/// The smoothing state: the last results and the last detection.
pub struct Recognizer<const LABELS: usize, const HISTORY: usize> {
    config: Config,
    history: Ring<LABELS, HISTORY>,
    /// Time of the last detection, when `detected` is non-zero (plain
    /// integers rather than an `Option`: any bytes stay a valid value).
    last_detection: u32,
    detected: u8,
}

impl<const LABELS: usize, const HISTORY: usize> Recognizer<LABELS, HISTORY> {
    /// A recognizer with `config`, checked against the capacities.
    pub fn new(config: Config) -> Result<Self, Error> {
        if config.min_count == 0
            || config.min_count > HISTORY
            || config.keywords > LABELS
            || config.window_ms == 0
        {
            return Err(Error::BadConfig);
        }
        Ok(Recognizer {
            config,
            history: Ring {
                times: [0; HISTORY],
                scores: [[0; LABELS]; HISTORY],
                start: 0,
                len: 0,
            },
            last_detection: 0,
            detected: 0,
        })
    }

    pub fn config(&self) -> Config {
        self.config
    }

    /// Forgets every result and the last detection.
    pub fn reset(&mut self) {
        self.history.len = 0;
        self.detected = 0;
    }

    /// Adds one inference's scores (0..=255 per label) at `time_ms` and
    /// returns the detection it completes, if any.
    pub fn push(&mut self, time_ms: u32, scores: &[u8]) -> Result<Option<Detection>, Error> {
        let scores: [u8; LABELS] = scores.try_into().map_err(|_| Error::WrongLabelCount)?;
        let newest = self.history.len().checked_sub(1);
        if newest
            .and_then(|k| self.history.time(k))
            .is_some_and(|t| t > time_ms)
        {
            return Err(Error::TimeWentBackwards);
        }
        // Drop what left the window (the ring drops its oldest when full).
        while self
            .history
            .time(0)
            .is_some_and(|t| time_ms.saturating_sub(t) >= self.config.window_ms)
        {
            self.history.pop_oldest();
        }
        self.history.push(time_ms, scores);

        let count = self.history.len();
        if count < self.config.min_count {
            return Ok(None);
        }
        let mut best = (0usize, 0u32);
        for label in 0..LABELS {
            let sum = self.history.sum(label);
            if sum > best.1 {
                best = (label, sum);
            }
        }
        // No panic path: `count` is at least `min_count`, which is at least 1.
        let average = best.1.checked_div(count as u32).unwrap_or(0).min(255) as u8;
        let quiet = self.detected != 0
            && time_ms.saturating_sub(self.last_detection) < self.config.refractory_ms;
        if best.0 >= self.config.keywords || average < self.config.threshold || quiet {
            return Ok(None);
        }
        self.last_detection = time_ms;
        self.detected = 1;
        Ok(Some(Detection {
            label: best.0,
            score: average,
            time_ms,
        }))
    }
}

/// 0..=255 scores from an int8 softmax output quantized with scale 1/256 and
/// zero point -128 (probability p ↦ q = round(256·p) − 128).
pub fn scores_from_int8_softmax<const N: usize>(q: &[i8; N]) -> [u8; N] {
    let mut out = [0u8; N];
    for (o, &v) in out.iter_mut().zip(q) {
        *o = (v as i16 + 128) as u8;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CFG: Config = Config {
        window_ms: 1000,
        min_count: 2,
        threshold: 200,
        refractory_ms: 1500,
        keywords: 2,
    };

    /// Scores for 3 labels: keyword 0, keyword 1, background 2.
    fn s(a: u8, b: u8, c: u8) -> [u8; 3] {
        [a, b, c]
    }

    #[test]
    fn averages_over_the_window_then_fires_once() {
        let mut r = Recognizer::<3, 8>::new(CFG).unwrap();
        assert_eq!(r.push(0, &s(250, 0, 5)), Ok(None)); // one result: too few
        let d = r.push(500, &s(230, 10, 15)).unwrap().unwrap();
        assert_eq!(
            d,
            Detection {
                label: 0,
                score: 240,
                time_ms: 500
            }
        );
        // Still loud, but inside the refractory period.
        assert_eq!(r.push(1000, &s(250, 0, 5)), Ok(None));
        assert_eq!(r.push(1500, &s(250, 0, 5)), Ok(None));
        // 1500 ms after the detection it may fire again.
        assert_eq!(r.push(2000, &s(250, 0, 5)).unwrap().unwrap().time_ms, 2000);
    }

    #[test]
    fn below_threshold_and_background_never_fire() {
        let mut r = Recognizer::<3, 8>::new(CFG).unwrap();
        for t in 0..10 {
            // Average 199: one short of the threshold.
            assert_eq!(r.push(t * 250, &s(199, 0, 56)), Ok(None));
        }
        let mut r = Recognizer::<3, 8>::new(CFG).unwrap();
        for t in 0..10 {
            assert_eq!(r.push(t * 250, &s(0, 0, 255)), Ok(None));
        }
    }

    #[test]
    fn old_results_leave_the_window() {
        let mut r = Recognizer::<3, 8>::new(CFG).unwrap();
        assert_eq!(r.push(0, &s(0, 0, 255)), Ok(None));
        // 1000 ms later the first result is out: only one left, too few.
        assert_eq!(r.push(1000, &s(255, 0, 0)), Ok(None));
        assert_eq!(r.push(1200, &s(255, 0, 0)).unwrap().unwrap().score, 255);
    }

    #[test]
    fn ring_capacity_keeps_the_newest() {
        let mut r = Recognizer::<3, 2>::new(CFG).unwrap();
        assert_eq!(r.push(0, &s(0, 0, 255)), Ok(None));
        assert_eq!(r.push(10, &s(0, 0, 255)), Ok(None));
        assert_eq!(r.push(20, &s(0, 255, 0)), Ok(None)); // (0,0,255),(0,255,0): 127 each
        let d = r.push(30, &s(0, 255, 0)).unwrap().unwrap();
        assert_eq!((d.label, d.score), (1, 255));
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(
            Recognizer::<3, 2>::new(Config {
                min_count: 3,
                ..CFG
            }),
            Err(Error::BadConfig)
        ));
        assert!(matches!(
            Recognizer::<3, 2>::new(Config { keywords: 4, ..CFG }),
            Err(Error::BadConfig)
        ));
        let mut r = Recognizer::<3, 4>::new(CFG).unwrap();
        assert_eq!(r.push(0, &[1, 2]), Err(Error::WrongLabelCount));
        assert_eq!(r.push(100, &s(1, 2, 3)), Ok(None));
        assert_eq!(r.push(99, &s(1, 2, 3)), Err(Error::TimeWentBackwards));
    }

    #[test]
    fn any_ring_state_is_safe() {
        let mut r = Recognizer::<3, 4>::new(CFG).unwrap();
        r.history.start = usize::MAX;
        r.history.len = usize::MAX;
        r.detected = 0xff;
        r.last_detection = u32::MAX;
        for t in 0..20 {
            let _ = r.push(t * 100, &s(255, 0, 0));
        }
        assert!(r.history.len() <= 4);
    }

    #[test]
    fn int8_softmax_scale() {
        assert_eq!(scores_from_int8_softmax(&[-128, 0, 127]), [0, 128, 255]);
    }
}
