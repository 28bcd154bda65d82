//! `etch run --etdump OUT.etdp [--etdump-debug OUT.bin]`: the runs recorded
//! by etch-etdump's observer (times in ns from the host clock), and etch's
//! own per-instruction profile from the same clock readings.

use std::cell::RefCell;
use std::time::Instant;

use etch_etdump::EtDumpObserver;
use etch_runtime::{ErrorCode, ExecutionObserver, InstructionValues, Method, MethodMeta};

/// Two observers in one: `b` is called outside `a`'s timed span.
struct Tee<'x, A, B>(&'x mut A, &'x mut B);

impl<A: ExecutionObserver, B: ExecutionObserver> ExecutionObserver for Tee<'_, A, B> {
    fn before(&mut self, index: u32, op: Option<u32>) {
        self.1.before(index, op);
        self.0.before(index, op);
    }
    fn after(&mut self, index: u32) {
        self.0.after(index);
        self.1.after(index);
    }
    fn after_values(&mut self, index: u32, values: &InstructionValues<'_, '_, '_>) {
        self.0.after_values(index, values);
        self.1.after_values(index, values);
    }
}

/// The instructions in the order they ran.
#[derive(Default)]
struct Order(Vec<(u32, Option<u32>)>);
impl ExecutionObserver for Order {
    fn before(&mut self, index: u32, op: Option<u32>) {
        self.0.push((index, op));
    }
}

/// One instruction of etch's own profile.
pub struct ProfileRow {
    pub index: u32,
    pub op: String,
    /// Nanoseconds of each run.
    pub ns: Vec<u64>,
}

pub struct Recording {
    pub etdump: Vec<u8>,
    pub debug: Vec<u8>,
    pub profile: Vec<ProfileRow>,
    /// Method::execute of each run, ns.
    pub total_ns: Vec<u64>,
}

/// Runs `runs` times (inputs set before each) under the ETDump observer.
/// Buffers start small and double until the recording fits.
pub fn record(
    method: &mut Method<'_, '_>,
    meta: &MethodMeta<'_>,
    set_inputs: &mut dyn FnMut(&mut Method<'_, '_>) -> Result<(), String>,
    runs: usize,
    debug: bool,
    err: &dyn Fn(etch_runtime::Error) -> String,
) -> Result<Recording, String> {
    let mut size = 16 * 1024;
    loop {
        let mut etdump = vec![0u8; size];
        let mut debug_buf = vec![0u8; if debug { size } else { 0 }];
        let origin = Instant::now();
        let ticks = RefCell::new(Vec::new());
        let clock = || {
            let t = origin.elapsed().as_nanos() as u64;
            ticks.borrow_mut().push(t);
            t
        };
        let mut obs: EtDumpObserver<'_, '_, '_, _> = EtDumpObserver::new(&mut etdump, meta, clock);
        if debug {
            obs = obs.with_intermediate_outputs(&mut debug_buf);
        }
        let mut order = Order::default();
        let mut result = Ok(());
        for _ in 0..runs {
            set_inputs(method)?;
            result = obs.begin_run().and_then(|_| {
                method.execute_observed(&mut Tee(&mut obs, &mut order))?;
                obs.end_run(method)
            });
            if result.is_err() {
                break;
            }
        }
        let finished = result.and_then(|_| obs.finish());
        match finished {
            Ok((etdp, dbg)) => {
                let (etdp, dbg) = (etdp.to_vec(), dbg.to_vec());
                let ticks = ticks.into_inner();
                return Ok(Recording {
                    etdump: etdp,
                    debug: dbg,
                    profile: profile(meta, &order.0, &ticks, runs),
                    total_ns: totals(&ticks, order.0.len() / runs.max(1), runs),
                });
            }
            Err(e) if e.code == ErrorCode::MemoryAllocationFailed && size < 1 << 30 => size *= 2,
            Err(e) => return Err(err(e)),
        }
    }
}

/// Clock readings per run: start, (before, after) per instruction, end.
fn profile(
    meta: &MethodMeta<'_>,
    order: &[(u32, Option<u32>)],
    ticks: &[u64],
    runs: usize,
) -> Vec<ProfileRow> {
    let per_run = order.len() / runs.max(1);
    let mut rows: Vec<ProfileRow> = order[..per_run]
        .iter()
        .map(|&(index, op)| ProfileRow {
            index,
            op: match op.and_then(|o| meta.plan().operators().ok()?.get(o as usize).ok()) {
                Some(o) => format!("{}.{}", o.name().unwrap_or("?"), o.overload().unwrap_or("")),
                None => "DELEGATE_CALL".into(),
            },
            ns: Vec::new(),
        })
        .collect();
    let stride = 2 + 2 * per_run;
    for r in 0..runs {
        let base = r * stride + 1;
        for (i, row) in rows.iter_mut().enumerate() {
            if let (Some(a), Some(b)) = (ticks.get(base + 2 * i), ticks.get(base + 2 * i + 1)) {
                row.ns.push(b - a);
            }
        }
    }
    rows
}

fn totals(ticks: &[u64], per_run: usize, runs: usize) -> Vec<u64> {
    let stride = 2 + 2 * per_run;
    (0..runs)
        .filter_map(|r| Some(ticks.get(r * stride + stride - 1)? - ticks.get(r * stride)?))
        .collect()
}
