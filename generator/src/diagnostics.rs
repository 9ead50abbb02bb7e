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
        let line = source.and_then(|s| s.lines().nth(self.loc.line.saturating_sub(1)));
        self.render_line(line.map(|l| {
            let at = l
                .char_indices()
                .nth(self.loc.column.saturating_sub(1))
                .map_or(l.len(), |(i, _)| i);
            (l, at)
        }))
    }

    /// [`Diagnostic::render`] given the source line and the byte offset of the column in it.
    fn render_line(&self, line: Option<(&str, usize)>) -> String {
        let mut out = format!("{}: {}\n  --> {}\n", self.severity, self.message, self.loc);
        if let Some((line, at)) = line {
            let number = self.loc.line.to_string();
            let pad = " ".repeat(number.len());
            let shown = excerpt(line, at, self.marker.as_deref());
            out += &format!(
                "{pad} |\n{number} | {}\n{pad} | {}{}\n",
                shown.text,
                shown.caret_pad,
                "^".repeat(shown.width)
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

/// At most this many characters of a source line are quoted before a diagnostic's column,
/// and [`EXCERPT_AFTER`] from it: a minified JSON CRD is one line of megabytes, and each of
/// its warnings quoted it whole (801 warnings on a 3 MB line made 2.4 GB of output).
const EXCERPT_BEFORE: usize = 100;
/// See [`EXCERPT_BEFORE`].
const EXCERPT_AFTER: usize = 400;

/// What a diagnostic quotes of its line.
struct Excerpt {
    /// The line, or the part of it around the column with `…` where it is cut.
    text: String,
    /// What goes under `text` before the caret (tabs kept, so the caret lines up).
    caret_pad: String,
    /// How many carets.
    width: usize,
}

/// The part of `line` around byte offset `at` (a character boundary), costing the
/// excerpt's length, not the line's.
fn excerpt(line: &str, at: usize, marker: Option<&str>) -> Excerpt {
    let at = at.min(line.len());
    let start = line[..at]
        .char_indices()
        .rev()
        .take(EXCERPT_BEFORE)
        .last()
        .map_or(at, |(i, _)| i);
    let end = line[at..]
        .char_indices()
        .nth(EXCERPT_AFTER)
        .map_or(line.len(), |(i, _)| at + i);
    let (head, tail) = (
        if start > 0 { "…" } else { "" },
        if end < line.len() { "…" } else { "" },
    );
    let caret_pad: String = head
        .chars()
        .map(|_| ' ')
        .chain(
            line[start..at]
                .chars()
                .map(|c| if c == '\t' { '\t' } else { ' ' }),
        )
        .collect();
    let shown = &line[at..end];
    // The marker when one is at fault, else the word at the location (the name of the
    // item, field or key it points at), else one character; within what is shown.
    let mut width = match marker {
        Some(m) => m.chars().count() + 1,
        None => shown
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .count(),
    };
    if !tail.is_empty() {
        width = width.min(shown.chars().count());
    }
    let width = width.max(1);
    Excerpt {
        text: format!("{head}{}{tail}", &line[start..end]),
        caret_pad,
        width,
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
    let mut cache: Option<(PathBuf, Option<SourceFile>)> = None;
    for d in sorted {
        if cache.as_ref().is_none_or(|(p, _)| p != &d.loc.file) {
            let text = std::fs::read(&d.loc.file)
                .ok()
                .map(|b| SourceFile::new(String::from_utf8_lossy(&b).into_owned()));
            cache = Some((d.loc.file.clone(), text));
        }
        let line = cache
            .as_mut()
            .and_then(|(_, f)| f.as_mut())
            .and_then(|f| f.at(d.loc.line, d.loc.column));
        out += &d.render_line(line);
        out += "\n";
    }
    out
}

/// A file's text with where its lines start, and for long lines where every
/// [`SourceFile::STRIDE`]th character is, so that finding a line and a column costs
/// neither a pass over the file nor one over the line: a minified CRD of tens of
/// megabytes on one line has tens of thousands of warnings.
struct SourceFile {
    text: String,
    /// The byte offset each line starts at.
    line_starts: Vec<usize>,
    /// For lines longer than `STRIDE` bytes, by 0-based line number: the byte offset of
    /// character `k * STRIDE` of the line, for each `k`.
    strides: std::collections::HashMap<usize, Vec<usize>>,
}

impl SourceFile {
    const STRIDE: usize = 1024;

    fn new(text: String) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile {
            text,
            line_starts,
            strides: std::collections::HashMap::new(),
        }
    }

    /// Line `line` (1-based, without its line end) and the byte offset in it of `column`
    /// (1-based characters; the line's end when past it).
    fn at(&mut self, line: usize, column: usize) -> Option<(&str, usize)> {
        let n = line.checked_sub(1)?;
        let start = *self.line_starts.get(n)?;
        let end = self
            .line_starts
            .get(n + 1)
            .map_or(self.text.len(), |next| next - 1);
        let text = self.text[start..end].trim_end_matches('\r');
        let char_index = column.saturating_sub(1);
        let (from, skip) = if text.len() > Self::STRIDE {
            let strides = self.strides.entry(n).or_insert_with(|| {
                text.char_indices()
                    .step_by(Self::STRIDE)
                    .map(|(i, _)| i)
                    .collect()
            });
            let k = (char_index / Self::STRIDE).min(strides.len() - 1);
            (strides[k], char_index - k * Self::STRIDE)
        } else {
            (0, char_index)
        };
        let at = text[from..]
            .char_indices()
            .nth(skip)
            .map_or(text.len(), |(i, _)| from + i);
        Some((text, at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A warning on a line of megabytes quotes 500 characters of it at most, and finds the
    /// line and column through the index, whatever the order it is asked in.
    #[test]
    fn long_lines_are_quoted_in_part_around_the_column() {
        let line = format!(
            "{}é{}key:{}",
            "a".repeat(5000),
            "b".repeat(2000),
            "c".repeat(5000)
        );
        let mut file = SourceFile::new(format!("first\n{line}\nlast"));
        let column = 5000 + 1 + 2000 + 1;
        let d = Diagnostic::warning(Location::new("f.json", 2, column), "here");
        let (text, at) = file.at(2, column).unwrap();
        assert_eq!(&text[at..at + 3], "key");
        let rendered = d.render_line(Some((text, at)));
        let quoted = rendered.lines().nth(3).unwrap();
        assert!(
            quoted.starts_with("2 | …b") && quoted.ends_with("c…"),
            "{quoted}"
        );
        assert_eq!(quoted.chars().count(), "2 | ".len() + 1 + 100 + 400 + 1);
        let carets = rendered.lines().nth(4).unwrap();
        assert_eq!(carets, format!("  | {}^^^", " ".repeat(101)));
        // The same line and column through `render`, and earlier columns after later ones.
        assert_eq!(d.render(Some(&file.text)), rendered);
        assert_eq!(file.at(2, 5001).map(|(t, at)| &t[at..at + 2]), Some("é"));
        assert_eq!(file.at(3, 1).map(|(t, at)| &t[at..]), Some("last"));
        assert_eq!(file.at(4, 1), None);
        // A short line is quoted whole, as before.
        let short = Diagnostic::new(Location::new("f.rs", 1, 3), "x").render(Some("a bcd e"));
        assert!(short.contains("1 | a bcd e\n  |   ^^^\n"), "{short}");
    }
}
