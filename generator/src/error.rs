//! [`Error`]: why a run produced no files.

use std::fmt;
use std::path::PathBuf;

use crate::diagnostics::Diagnostic;
use crate::output::OutputError;

/// Why a run produced no files.
///
/// `Debug` prints what `Display` prints, as anyhow's errors do: a build script's
/// `fn main() -> Result<(), Box<dyn Error>>` reports an `Err` with `Debug`, and its reader
/// needs the rendered diagnostics, not the structure that holds them.
#[derive(thiserror::Error)]
pub enum Error {
    /// The input has problems; the rendered text lists each with its location.
    #[error("{rendered}")]
    Input {
        /// Every error of the run (and its warnings), sorted by location.
        diagnostics: Vec<Diagnostic>,
        /// The diagnostics as the CLI prints them: `file:line:col`, the source line, a
        /// caret under the marker, the hint, and a closing count.
        rendered: String,
    },
    /// The configuration cannot be read (a missing Cargo.toml, an unknown metadata key).
    #[error("{path}: {message}")]
    Config {
        /// The file at fault.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// Writing or checking the output failed.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The system refused the thread a run works on (its stack: see
    /// `parallel::STACK_SIZE`).
    #[error("cannot start a thread with a {} MiB stack to work on: {source}", crate::parallel::STACK_SIZE >> 20)]
    Thread {
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The errors (and warnings) of an import, rendered as the CLI prints them.
    #[must_use]
    pub fn import_failed(diagnostics: Vec<Diagnostic>) -> Error {
        let d = crate::diagnostics::Diagnostics(diagnostics);
        let rendered = d
            .render()
            .replace("generation failed with", "import failed with");
        Error::Input {
            diagnostics: d.sorted(),
            rendered,
        }
    }

    /// `f()` on a thread with the stack a run needs ([`crate::parallel::with_stack`]).
    pub(crate) fn on_run_stack<R: Send>(
        f: impl FnOnce() -> Result<R, Error> + Send,
    ) -> Result<R, Error> {
        crate::parallel::with_stack(f).map_err(|source| Error::Thread { source })?
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The rendered diagnostics start on a line of their own, so after the `Error: ` a
        // returning `main` prints they read exactly as the CLI prints them.
        if matches!(self, Error::Input { .. }) {
            writeln!(f)?;
        }
        fmt::Display::fmt(self, f)
    }
}
