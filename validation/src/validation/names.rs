//! apimachinery's name validators (`k8s.io/apimachinery/pkg/util/validation`), with their
//! messages, for the CEL format library and the `k8s-short-name`/`k8s-long-name` formats.

use std::sync::OnceLock;

use regex::Regex;

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("name regexes compile"))
}

const DNS1123_LABEL: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";

fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let ex: Vec<String> = examples.iter().map(|e| format!("'{e}'")).collect();
    format!(
        "{msg} (e.g. {}, regex used for validation is '{fmt}')",
        ex.join(" or ")
    )
}

/// `IsDNS1123Label`.
pub fn dns1123_label(s: &str) -> Vec<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let mut errs = vec![];
    if s.len() > 63 {
        errs.push("must be no more than 63 characters".to_owned());
    }
    if !re(&RE, &format!("^{DNS1123_LABEL}$")).is_match(s) {
        errs.push(regex_error(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
            DNS1123_LABEL,
            &["my-name", "123-abc"],
        ));
    }
    errs
}

/// `IsDNS1123Subdomain`.
pub fn dns1123_subdomain(s: &str) -> Vec<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let fmt = format!("{DNS1123_LABEL}(\\.{DNS1123_LABEL})*");
    let mut errs = vec![];
    if s.len() > 253 {
        errs.push("must be no more than 253 characters".to_owned());
    }
    if !re(&RE, &format!("^{fmt}$")).is_match(s) {
        errs.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            &fmt,
            &["example.com"],
        ));
    }
    errs
}

/// `IsDNS1035Label`.
pub fn dns1035_label(s: &str) -> Vec<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let mut errs = vec![];
    if s.len() > 63 {
        errs.push("must be no more than 63 characters".to_owned());
    }
    if !re(&RE, &format!("^{DNS1035_LABEL}$")).is_match(s) {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            DNS1035_LABEL,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

const QUALIFIED_NAME: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";

/// `IsQualifiedName`.
pub fn qualified_name(s: &str) -> Vec<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let mut errs = vec![];
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_owned());
            } else {
                errs.extend(
                    dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|e| format!("prefix part {e}")),
                );
            }
            name
        }
        _ => {
            return vec![
                regex_error(
                    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
                    QUALIFIED_NAME,
                    &["MyName", "my.name", "123-abc"],
                ) + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
            ];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_owned());
    }
    if !re(&RE, &format!("^{QUALIFIED_NAME}$")).is_match(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
                QUALIFIED_NAME,
                &["MyName", "my.name", "123-abc"],
            )
        ));
    }
    errs
}

/// `IsValidLabelValue`.
pub fn label_value(s: &str) -> Vec<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let fmt = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
    let mut errs = vec![];
    if s.len() > 63 {
        errs.push("must be no more than 63 characters".to_owned());
    }
    if !re(&RE, &format!("^{fmt}$")).is_match(s) {
        errs.push(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            fmt,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}
