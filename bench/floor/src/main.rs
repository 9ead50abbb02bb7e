//! The floor of `kube-codegen generate -o -` for one input (issue 35), on one thread:
//!
//! - **parse**: `syn::parse_file` of every `.rs` file below the crate's `src/` (but
//!   `src/generated`) and nothing else (the files are read into memory first, untimed);
//! - **yaml**: the crd generator's own YAML writer serializing the same CRDs from values
//!   already built (the CRDs `-o -` printed, read back untimed into the apiextensions types
//!   the generator writes them from).
//!
//! The floor is their sum: what any generator that parses Rust with syn and writes YAML
//! this way pays at least. Each part is timed `RUNS` times in process, in this thread's CPU
//! time; the medians are printed.
//!
//! ```text
//! crd-floor CRATE_DIR CRDS.yaml [RUNS]
//! ```
//!
//! Output (one line, for bench/floor.sh): `files=N bytes=N crds=N yaml_bytes=N parse_ms=F yaml_ms=F floor_ms=F`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use kube_codegen::__private::{apiext::CustomResourceDefinition, crd_to_yaml, files_below};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(crds)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: crd-floor CRATE_DIR CRDS.yaml [RUNS]");
        return ExitCode::from(2);
    };
    let runs: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(7);
    match probe(Path::new(dir), Path::new(crds), runs) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("crd-floor: {e}");
            ExitCode::FAILURE
        }
    }
}

fn probe(dir: &Path, crds: &Path, runs: usize) -> Result<String, String> {
    let src = dir.join("src");
    // What the generator reads: `src/` without the Rust it writes (`src/generated`).
    let generated = src.join("generated");
    let files: Vec<PathBuf> = files_below(&src, |p| {
        p.extension().is_some_and(|e| e == "rs") && !p.starts_with(&generated)
    })
    .map_err(|e| format!("{}: {e}", src.display()))?
    .files;
    let texts = files
        .iter()
        .map(|p| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display())))
        .collect::<Result<Vec<_>, _>>()?;
    // Every file must parse: a floor measured on a failing parse would be too low.
    for (p, t) in files.iter().zip(&texts) {
        syn::parse_file(t).map_err(|e| format!("{}: {e}", p.display()))?;
    }

    let stream = std::fs::read_to_string(crds).map_err(|e| format!("{}: {e}", crds.display()))?;
    let docs: Vec<&str> = stream.split("\n---\n").collect();
    let values = docs
        .iter()
        .map(|d| serde_yaml::from_str::<CustomResourceDefinition>(d).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    // The writer must give back what the generator printed, or this is not the same work.
    for (d, v) in docs.iter().zip(&values) {
        let again = crd_to_yaml(v);
        if again.trim_end() != d.trim_end() {
            return Err(format!(
                "the YAML writer does not reproduce {} (a header file or another writer?)",
                crds.display()
            ));
        }
    }

    let parse = median(runs, || {
        for t in &texts {
            std::hint::black_box(syn::parse_file(t).expect("parsed above"));
        }
    });
    let yaml = median(runs, || {
        for v in &values {
            std::hint::black_box(crd_to_yaml(v));
        }
    });
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    Ok(format!(
        "files={} bytes={} crds={} yaml_bytes={} parse_ms={:.2} yaml_ms={:.2} floor_ms={:.2}",
        texts.len(),
        texts.iter().map(String::len).sum::<usize>(),
        values.len(),
        stream.len(),
        ms(parse),
        ms(yaml),
        ms(parse + yaml),
    ))
}

/// The median CPU time of `runs` calls of `f`, on this thread: CPU, not wall, so that other
/// work on the machine does not inflate the floor (the tools are compared in CPU too).
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs.max(1))
        .map(|_| {
            let t = thread_cpu();
            f();
            thread_cpu() - t
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// This thread's CPU time (user + system).
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}
