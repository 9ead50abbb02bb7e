//! Input files as text. Every input kube-codegen reads (Rust sources, CRD YAML and JSON,
//! Go sources) is UTF-8 by its own rules; a file that is not is an error at its first bad
//! byte, with the byte's offset, its line and column, and what to do about it.

use std::path::Path;

use crate::diagnostics::{Diagnostic, Location};

/// What an input file holds, for what its decoding error says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputLanguage {
    /// A Rust source file of `generate`'s input.
    Rust,
    /// A CRD (YAML or JSON) of `import crd`.
    Crd,
    /// A Go source file of `import go`.
    Go,
}

impl InputLanguage {
    fn hint(self) -> &'static str {
        match self {
            InputLanguage::Rust => {
                "Rust sources must be UTF-8; re-save the file with UTF-8 encoding"
            }
            InputLanguage::Crd => {
                "CRDs are read as UTF-8 (JSON must be, and the API server stores YAML as JSON); re-save the file with UTF-8 encoding"
            }
            InputLanguage::Go => {
                "Go source is UTF-8 (the Go spec; `go build` refuses this file too); re-save the file with UTF-8 encoding"
            }
        }
    }
}

/// `bytes`, read from `file`, as text; else an error at the first byte that is not UTF-8.
///
/// # Errors
///
/// A [`Diagnostic`] at the line and column of the first invalid byte (the column counts
/// characters, as every other location does: what comes before the byte is valid), whose
/// message has the byte and its offset in the file, and for a file that starts with a
/// UTF-16 byte-order mark says it is UTF-16.
pub fn input_text(
    file: &Path,
    bytes: Vec<u8>,
    language: InputLanguage,
) -> Result<String, Diagnostic> {
    let e = match String::from_utf8(bytes) {
        Ok(text) => return Ok(text),
        Err(e) => e,
    };
    let offset = e.utf8_error().valid_up_to();
    let bytes = e.as_bytes();
    let valid = std::str::from_utf8(&bytes[..offset]).unwrap_or_default();
    let line_start = valid.rfind('\n').map_or(0, |i| i + 1);
    let line = valid.matches('\n').count() + 1;
    let column = valid[line_start..].chars().count() + 1;
    let (message, from) = if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
        (
            "file is UTF-16 (it starts with a UTF-16 byte-order mark), not UTF-8".to_owned(),
            "UTF-16",
        )
    } else {
        (
            format!(
                "file is not valid UTF-8: byte 0x{:02x} at offset {offset}",
                bytes[offset]
            ),
            // The usual other encoding of a text that is mostly ASCII.
            "LATIN1",
        )
    };
    let hint = format!("{} (e.g. `iconv -f {from} -t UTF-8`)", language.hint());
    Err(Diagnostic::new(Location::new(file, line, column), message).with_hint(hint))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn located(bytes: &[u8]) -> (usize, usize, String) {
        let d = input_text(Path::new("f"), bytes.to_vec(), InputLanguage::Crd).unwrap_err();
        (d.loc.line, d.loc.column, d.message)
    }

    #[test]
    fn the_first_bad_byte_is_located_in_characters() {
        assert_eq!(
            input_text(Path::new("f"), b"ok\n".to_vec(), InputLanguage::Go).unwrap(),
            "ok\n"
        );
        let (line, col, msg) = located(b"a: 1\nb: \xc3\xa9\xe9\n");
        assert_eq!((line, col), (2, 5), "é is one column");
        assert_eq!(msg, "file is not valid UTF-8: byte 0xe9 at offset 10");
        // A sequence cut short at the end of the file.
        assert_eq!(located(b"x\xe2\x82").0, 1);
        assert_eq!(located(b"x\xe2\x82").1, 2);
        assert!(located(b"\xff\xfea\x00").2.contains("UTF-16"));
    }
}
