//! `--audit-log`: one line per reconcile start and end, per key, with the replica and the
//! wall-clock time, so a test can prove that no key was reconciled by two replicas at
//! once and that none was left out (issue 34's faults).
//!
//! Lines are `<start|end> <unix nanoseconds> <replica> <key>`, each written by one
//! `write` to a file opened for appending: lines of several processes do not interleave
//! within a line, and a line written before a SIGKILL is in the file.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use kube_codegen_runtime::store::ObjectKey;

/// The audit log of one replica.
#[derive(Debug)]
pub struct Audit {
    file: Mutex<File>,
    replica: String,
}

impl Audit {
    /// Appends to `path` (created if missing) as `replica`.
    ///
    /// # Errors
    /// If the file cannot be opened.
    pub fn open(path: &Path, replica: &str) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Audit {
            file: Mutex::new(file),
            replica: replica.replace(char::is_whitespace, "_"),
        })
    }

    fn line(&self, what: &str, key: &ObjectKey) {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let line = format!("{what} {nanos} {} {key}\n", self.replica);
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = file.write_all(line.as_bytes()) {
            tracing::warn!(error = %e, "audit log: write failed");
        }
    }

    /// Writes the start line; the end line is written when the span drops (also when the
    /// reconcile is dropped mid-way because its slot moved).
    #[must_use]
    pub fn begin(self: &Arc<Self>, key: &ObjectKey) -> Span {
        self.line("start", key);
        Span {
            audit: self.clone(),
            key: key.clone(),
        }
    }
}

/// A reconcile in progress; see [`Audit::begin`].
#[derive(Debug)]
pub struct Span {
    audit: Arc<Audit>,
    key: ObjectKey,
}

impl Drop for Span {
    fn drop(&mut self) {
        self.audit.line("end", &self.key);
    }
}
