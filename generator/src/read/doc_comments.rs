//! `///` comments lexed without their text. proc-macro2 turns each `/// text` into
//! `#[doc = " text"]`, escaping the text into a string literal char by char, and syn then
//! decodes that literal again char by char: a fifth of a CRD run's instructions went to
//! the round trip of doc comment text. The reader lexes a copy of the file in which each
//! `///` line comment that starts a line has lost its text (`///` + the newline, so every
//! line keeps its number and every token before a newline its column), and takes each
//! comment's text from the original file by its line.
//!
//! Which lines are doc comments is guessed by their look (spaces, then `///`), so the
//! guess is checked: every shortened line must start a doc comment token in the copy
//! ([`Shortened::seen`], fed every `#` the nesting pre-check walks over). When it does,
//! the copy lexes to the original's tokens except the literals' text and where spans end:
//! up to a shortened line both texts are the same, so the lexer meets the line in the same
//! state; a token that starts there on `///` (not `////`) is a doc comment in both, which
//! ends at the newline in both, and the next line starts in the same state again. A line
//! that was not a comment's start (inside a string or a block comment that began before
//! it) cannot start a token in the copy either, since the lexer reaches it in the same
//! state as in the original: the check fails and the file is read from its original text.
//! Lines with a carriage return keep their text: proc-macro2 rejects a bare one in a doc
//! comment and drops the one before a newline.

/// The text of a file's `///` comments, removed from the copy that is lexed.
pub(super) struct Shortened<'a> {
    /// (1-based line, the comment's text after `///`), by line.
    lines: Vec<(usize, &'a str)>,
    /// How many of `lines` the walk of the copy's tokens has seen start a token.
    seen: usize,
}

impl<'a> Shortened<'a> {
    /// `body` with the text of each `///` comment that starts a line (after spaces or
    /// tabs) removed, and that text; `None` when there is none to remove.
    pub fn new(body: &'a str) -> Option<(String, Self)> {
        // Found by searching for `///` rather than line by line: `str::lines` and its
        // newline search cost twice the search (memchr's) over a CRD run's input.
        let bytes = body.as_bytes();
        let mut text = String::new();
        let mut lines = Vec::new();
        // Up to where `body` has been copied into `text`; the end of the last line looked at.
        let (mut copied, mut line_end) = (0, 0);
        // Newlines counted up to `counted`: the line there is `line`.
        let (mut counted, mut line) = (0, 1);
        for at in memchr::memmem::find_iter(bytes, b"///") {
            if at < line_end {
                continue;
            }
            let line_start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
            line_end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
            let rest = &body[at + 3..line_end];
            if rest.is_empty()
                || rest.starts_with('/')
                || rest.contains('\r')
                || !bytes[line_start..at]
                    .iter()
                    .all(|&b| b == b' ' || b == b'\t')
            {
                continue;
            }
            if text.capacity() == 0 {
                text.reserve(body.len());
            }
            line += memchr::memchr_iter(b'\n', &bytes[counted..at]).count();
            counted = at;
            text.push_str(&body[copied..at + 3]);
            copied = line_end;
            lines.push((line, rest));
        }
        if lines.is_empty() {
            return None;
        }
        text.push_str(&body[copied..]);
        Some((text, Shortened { lines, seen: 0 }))
    }

    /// A `#` token of the copy, in source order: it counts when it starts the next
    /// shortened line. On such a line no other token can start (spaces before, the
    /// comment after), so its line identifies it.
    pub fn seen(&mut self, pound: proc_macro2::Span) {
        if let Some(&(line, _)) = self.lines.get(self.seen)
            && pound.start().line == line
        {
            self.seen += 1;
        }
    }

    /// Whether every shortened line started a doc comment in the copy.
    pub fn all_seen(&self) -> bool {
        self.seen == self.lines.len()
    }

    /// The text of the `///` comment whose `#` starts on `line`, if that line was
    /// shortened (once [`all_seen`](Self::all_seen) holds, only that comment starts there).
    pub fn text(&self, line: usize) -> Option<&'a str> {
        self.lines
            .binary_search_by_key(&line, |&(l, _)| l)
            .ok()
            .map(|i| self.lines[i].1)
    }
}

#[cfg(test)]
mod tests {
    use super::Shortened;

    #[test]
    fn only_line_starting_doc_comments_lose_their_text() {
        let (text, s) =
            Shortened::new("/// a\n  /// b \"x\"\n//// c\n/// \r\n///\nfn f() {} /// d\n\t///e")
                .unwrap();
        assert_eq!(
            text,
            "///\n  ///\n//// c\n/// \r\n///\nfn f() {} /// d\n\t///"
        );
        assert_eq!(s.lines, [(1, " a"), (2, " b \"x\""), (7, "e")]);
        assert_eq!(s.text(2), Some(" b \"x\""));
        assert_eq!(s.text(3), None);
        assert!(Shortened::new("//! a\n/** b */\nfn f() {}\n").is_none());
    }
}
