//! The marker reference, made from the registry the parser reads (controller-gen prints its
//! marker help the same way, `controller-gen crd -www`): every marker's syntax, where it may
//! stand, which generator reads it and one line of help. `kube-codegen markers` prints it, and
//! the book's marker page is its Markdown, checked by a test, so the reference cannot drift
//! from what the parser accepts.

use std::fmt::Write as _;

use super::{GeneratorName, REGISTRY};
use crate::markers::{Args, CORE_MARKERS, Level, MarkerSpec};

/// One marker kube-codegen reads, as its reference describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkerDoc {
    /// The name after `+` (`kubebuilder:validation:Minimum`).
    pub name: &'static str,
    /// How it is written, arguments included (`+kubebuilder:validation:Minimum=<value>`;
    /// optional arguments in brackets).
    pub syntax: String,
    /// Where it may stand: `package`, `type`, `field`.
    pub levels: Vec<&'static str>,
    /// The generator that reads it; `None` for the model's own markers, which every run reads.
    pub generator: Option<GeneratorName>,
    /// Its `items:` form, for the validation markers that have one
    /// (`+kubebuilder:validation:items:Minimum=<value>` bounds an array's items).
    pub items_form: Option<String>,
    /// One line of help.
    pub help: &'static str,
}

/// The format of [`marker_reference`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReferenceFormat {
    /// Plain text for a terminal: one paragraph per marker.
    Text,
    /// A Markdown page: a table per generator (the book's marker reference).
    Markdown,
}

/// Every marker kube-codegen reads, the model's first, then each generator's in registry
/// order, each in its table's order.
///
/// ```
/// let docs = kube_codegen::marker_docs();
/// let minimum = docs
///     .iter()
///     .find(|d| d.name == "kubebuilder:validation:Minimum")
///     .unwrap();
/// assert_eq!(minimum.syntax, "+kubebuilder:validation:Minimum=<value>");
/// assert!(minimum.items_form.is_some());
/// ```
#[must_use]
pub fn marker_docs() -> Vec<MarkerDoc> {
    let core = CORE_MARKERS.iter().map(|spec| (None, spec));
    let generators = REGISTRY
        .iter()
        .flat_map(|g| g.markers.iter().map(move |spec| (Some(g.name), spec)));
    core.chain(generators)
        .map(|(generator, spec)| doc_of(generator, spec))
        .collect()
}

fn doc_of(generator: Option<GeneratorName>, spec: &MarkerSpec) -> MarkerDoc {
    let args = syntax_of_args(spec.args);
    MarkerDoc {
        name: spec.name.as_str(),
        syntax: format!("+{}{args}", spec.name),
        levels: spec.levels.iter().map(|l| level_name(*l)).collect(),
        generator,
        items_form: spec.name.items_form().map(|f| format!("+{f}{args}")),
        help: spec.name.help(),
    }
}

/// `=<value>`, `[=true|false]`, `:key=<value>[,key=<value>]`: required keys first, in the
/// table's order, then the optional ones in brackets.
fn syntax_of_args(args: Args) -> String {
    match args {
        Args::Flag => String::new(),
        Args::Value => "=<value>".to_owned(),
        Args::OptionalBool => "[=true|false]".to_owned(),
        Args::Named(keys) => {
            let required = keys.iter().filter_map(|k| k.strip_prefix('!'));
            let optional = keys.iter().filter(|k| !k.starts_with('!'));
            let mut out = String::from(":");
            let mut first = true;
            for key in required {
                if !first {
                    out.push(',');
                }
                first = false;
                let _ = write!(out, "{key}=<value>");
            }
            for key in optional {
                let _ = write!(out, "[{}{key}=<value>]", if first { "" } else { "," });
                first = false;
            }
            out
        }
    }
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Package => "package",
        Level::Type => "type",
        Level::Field => "field",
    }
}

/// The whole marker reference in `format`, from [`marker_docs`].
///
/// ```
/// use kube_codegen::{ReferenceFormat, marker_reference};
/// let page = marker_reference(ReferenceFormat::Markdown);
/// assert!(page.contains("| `+kubebuilder:validation:Minimum=<value>` |"));
/// let text = marker_reference(ReferenceFormat::Text);
/// assert!(text.contains("+genclient\n"));
/// ```
#[must_use]
pub fn marker_reference(format: ReferenceFormat) -> String {
    let docs = marker_docs();
    match format {
        ReferenceFormat::Text => text(&docs),
        ReferenceFormat::Markdown => markdown(&docs),
    }
}

/// The heading of a group of markers: the generator that reads them.
fn section(generator: Option<GeneratorName>) -> String {
    match generator {
        None => "every run (the model)".to_owned(),
        Some(g) => format!("generator `{}`: {}", g.as_str(), g.about()),
    }
}

fn text(docs: &[MarkerDoc]) -> String {
    let mut out = String::new();
    let mut current = None;
    for (i, d) in docs.iter().enumerate() {
        if i == 0 || current != Some(d.generator) {
            current = Some(d.generator);
            if i > 0 {
                out.push('\n');
            }
            let _ = writeln!(out, "== read by {} ==\n", section(d.generator));
        }
        let _ = writeln!(out, "{}", d.syntax);
        let _ = writeln!(out, "    {}.", d.help);
        let _ = writeln!(out, "    on: {}", d.levels.join(", "));
        if let Some(items) = &d.items_form {
            let _ = writeln!(out, "    on array items: {items}");
        }
    }
    out
}

fn markdown(docs: &[MarkerDoc]) -> String {
    let mut out = String::from(
        "# Marker reference\n\n\
         <!-- Generated by `kube-codegen markers --format markdown`; a test fails when it \
         differs. Do not edit by hand. -->\n\n\
         Every marker kube-codegen reads, from the registry its parser uses. Arguments in \
         brackets are optional. Values follow controller-gen: quote with `\"...\"` or \
         backticks, lists with `;` or `{a,b}`. A line that starts with `+` in a namespace \
         kube-codegen reads but names no marker here is an error with a \"did you mean\" hint.\n",
    );
    let mut current = None;
    for (i, d) in docs.iter().enumerate() {
        if i == 0 || current != Some(d.generator) {
            current = Some(d.generator);
            let _ = writeln!(out, "\n## Read by {}\n", section(d.generator));
            out.push_str("| marker | on | meaning |\n|---|---|---|\n");
        }
        let mut meaning = escape_cell(d.help);
        if let Some(items) = &d.items_form {
            let _ = write!(meaning, "; on array items: `{}`", escape_cell(items));
        }
        let _ = writeln!(
            out,
            "| `{}` | {} | {meaning} |",
            escape_cell(&d.syntax),
            d.levels.join(", ")
        );
    }
    out
}

/// A `|` would end a Markdown table cell, even inside backticks.
fn escape_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markers::Name;

    #[test]
    fn every_marker_of_the_parser_is_in_the_reference_once() {
        let docs = marker_docs();
        let table = super::super::marker_table();
        assert_eq!(docs.len(), table.len());
        for spec in table.iter() {
            let n = docs.iter().filter(|d| d.name == spec.name.as_str()).count();
            assert_eq!(n, 1, "{} is in the reference {n} times", spec.name);
        }
        // And every name the parser knows has a spec, so it is documented.
        for name in Name::ALL {
            assert!(
                docs.iter().any(|d| d.name == name.as_str()),
                "{name} has no spec"
            );
        }
    }

    #[test]
    fn named_arguments_show_required_keys_first_and_optional_ones_in_brackets() {
        assert_eq!(
            syntax_of_args(Args::Named(&["a", "!b", "c"])),
            ":b=<value>[,a=<value>][,c=<value>]"
        );
        assert_eq!(
            syntax_of_args(Args::Named(&["a", "c"])),
            ":[a=<value>][,c=<value>]"
        );
    }
}
