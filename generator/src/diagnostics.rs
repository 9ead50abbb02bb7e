//! Located errors, collected per run and rendered `path:line:col` with the source line,
//! in the style of rustc and cxx-build.

use std::fmt;
use std::path::{Path, PathBuf};

/// A position in an input file. Lines and columns are 1-based.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    /// The file, as the inputs were given (relative paths stay relative).
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

impl Location {
    /// A location from its parts.
    pub fn new(file: impl Into<PathBuf>, line: usize, column: usize) -> Self {
        Location {
            file: file.into(),
            line,
            column,
        }
    }

    /// The start of a syn span in `file`. proc-macro2 columns are 0-based chars.
    pub fn of_span(file: &Path, span: proc_macro2::Span) -> Self {
        let start = span.start();
        Location::new(file, start.line.max(1), start.column + 1)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

/// How bad a diagnostic is: an error stops generation (nothing is written); a warning is
/// reported and generation goes on, so input we understand only in part is never silent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Generation fails and nothing is written.
    Error,
    /// Reported; generation goes on.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// One problem in the input, with where it is, what is wrong and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// Where: the marker, item or field at fault.
    pub loc: Location,
    /// What is wrong.
    pub message: String,
    /// The marker text at fault (without `+`), if a marker is at fault.
    pub marker: Option<String>,
    /// How to fix it.
    pub hint: Option<String>,
}

impl Diagnostic {
    /// An error: generation fails and nothing is written.
    pub fn new(loc: Location, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            loc,
            message: message.into(),
            marker: None,
            hint: None,
        }
    }

    /// A warning: reported, generation goes on.
    pub fn warning(loc: Location, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::new(loc, message)
        }
    }

    /// Whether it stops generation.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Name the marker at fault (its text without `+`); the caret spans it.
    pub fn with_marker(mut self, marker: &str) -> Self {
        self.marker = Some(marker.to_owned());
        self
    }

    /// Say how to fix it.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Render like rustc: message, arrow with location, the source line and a caret.
    /// `source` is the file's text when it could be read.
    pub fn render(&self, source: Option<&str>) -> String {
        let mut out = format!("{}: {}\n  --> {}\n", self.severity, self.message, self.loc);
        if let Some(line) = source.and_then(|s| s.lines().nth(self.loc.line.saturating_sub(1))) {
            let number = self.loc.line.to_string();
            let pad = " ".repeat(number.len());
            let caret_pad: String = line
                .chars()
                .take(self.loc.column.saturating_sub(1))
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            // The marker when one is at fault, else the word at the location (the name of
            // the item, field or key it points at), else one character.
            let width = match &self.marker {
                Some(m) => m.chars().count() + 1,
                None => line
                    .chars()
                    .skip(self.loc.column.saturating_sub(1))
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .count()
                    .max(1),
            };
            out += &format!(
                "{pad} |\n{number} | {line}\n{pad} | {caret_pad}{}\n",
                "^".repeat(width)
            );
        }
        if let Some(marker) = &self.marker {
            out += &format!("   = marker: +{marker}\n");
        }
        if let Some(hint) = &self.hint {
            out += &format!("   = help: {hint}\n");
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.loc, self.severity, self.message)?;
        if let Some(h) = &self.hint {
            write!(f, " (help: {h})")?;
        }
        Ok(())
    }
}

/// All the problems of one run, errors and warnings, sorted by location so output is stable.
#[derive(Debug, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Add one.
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }

    /// Whether any diagnostic is an error (warnings do not stop generation).
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }

    /// The warnings, sorted by location, each once.
    pub fn warnings(&self) -> Vec<Diagnostic> {
        self.sorted()
            .into_iter()
            .filter(|d| !d.is_error())
            .collect()
    }

    /// Keep going after an error so one run reports everything it can.
    pub fn collect<T>(&mut self, r: Result<T, Diagnostic>) -> Option<T> {
        r.map_err(|d| self.push(d)).ok()
    }

    /// The diagnostics sorted by location, each once (a marker read twice errs twice).
    pub fn sorted(&self) -> Vec<Diagnostic> {
        let mut sorted = self.0.clone();
        sorted.sort_by(|a, b| a.loc.cmp(&b.loc).then_with(|| a.message.cmp(&b.message)));
        sorted.dedup();
        sorted
    }

    /// The errors sorted by location, each once.
    pub fn errors(&self) -> Vec<Diagnostic> {
        self.sorted()
            .into_iter()
            .filter(Diagnostic::is_error)
            .collect()
    }

    /// Render the errors and warnings, reading each file once for its source lines, and
    /// close with the count of errors.
    pub fn render(&self) -> String {
        let sorted = self.sorted();
        let errors = sorted.iter().filter(|d| d.is_error()).count();
        let mut out = render_all(&sorted);
        out += &format!(
            "error: generation failed with {} error{}; nothing was written\n",
            errors,
            if errors == 1 { "" } else { "s" }
        );
        out
    }
}

/// Render diagnostics with their source lines, reading each file once.
pub fn render_all(sorted: &[Diagnostic]) -> String {
    let mut out = String::new();
    let mut cache: Option<(PathBuf, Option<String>)> = None;
    for d in sorted {
        if cache.as_ref().is_none_or(|(p, _)| p != &d.loc.file) {
            let text = std::fs::read(&d.loc.file)
                .ok()
                .map(|b| String::from_utf8_lossy(&b).into_owned());
            cache = Some((d.loc.file.clone(), text));
        }
        out += &d.render(cache.as_ref().and_then(|(_, t)| t.as_deref()));
        out += "\n";
    }
    out
}
