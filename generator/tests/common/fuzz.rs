//! The driver of the fuzz targets (`fuzz.rs`, `fuzz_import.rs`): proptest strategies run
//! for a number of cases, or for `KUBE_CODEGEN_FUZZ_SECONDS` seconds (CI: 60; RELIABILITY.md
//! records the hour-long runs), each case on a thread of its own with a deadline, so that
//! a hang fails the case instead of the whole run. Failures are shrunk and kept in
//! `tests/fuzz/<target>.txt`, which every later run replays first.

#![allow(dead_code)]

use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, FileFailurePersistence, TestRunner};

/// Runs `test` on values of `strategy`: for `KUBE_CODEGEN_FUZZ_SECONDS` seconds when it is
/// set, else `default_cases` cases; the failures of earlier runs first.
pub fn fuzz<S>(
    target: &'static str,
    default_cases: u32,
    strategy: S,
    test: fn(S::Value) -> Result<(), TestCaseError>,
) where
    S: Strategy,
    S::Value: Clone + Send + 'static,
{
    let seconds: Option<u64> = std::env::var("KUBE_CODEGEN_FUZZ_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok());
    let persistence = Box::leak(format!("tests/fuzz/{target}.txt").into_boxed_str());
    let config = |cases| RunnerConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(persistence))),
        ..RunnerConfig::default()
    };
    let check = |value: S::Value| {
        let shown = format!("{value:?}");
        within(Duration::from_secs(30), move || test(value)).inspect_err(|e| {
            if e.to_string().contains("still running") {
                eprintln!("{target}: hung on {shown}");
            }
        })
    };
    let (mut runs, mut cases) = (0u32, 0u64);
    let start = Instant::now();
    loop {
        let batch = if seconds.is_some() { 50 } else { default_cases };
        let mut runner = TestRunner::new(config(batch));
        if let Err(e) = runner.run(&strategy, check) {
            panic!("{target}: {e}");
        }
        runs += 1;
        cases += u64::from(batch);
        match seconds {
            Some(s) if start.elapsed() < Duration::from_secs(s) => continue,
            _ => break,
        }
    }
    eprintln!(
        "{target}: {cases} cases in {runs} runs, {:.1} s",
        start.elapsed().as_secs_f64()
    );
}

/// `f()` on a thread of its own, failing the case when it is not done by `deadline` (a
/// hang; the thread is left behind).
pub fn within(
    deadline: Duration,
    f: impl FnOnce() -> Result<(), TestCaseError> + Send + 'static,
) -> Result<(), TestCaseError> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
            let _ = tx.send(r);
        })
        .expect("a thread");
    match rx.recv_timeout(deadline) {
        Ok(Ok(r)) => r,
        Ok(Err(panic)) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            Err(TestCaseError::fail(format!("panicked: {msg}")))
        }
        Err(_) => Err(TestCaseError::fail(format!(
            "still running after {deadline:?}"
        ))),
    }
}
