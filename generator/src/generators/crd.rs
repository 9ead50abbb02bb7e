//! The `crd` generator: writes the CRDs resolve built and checked ([`crate::model::Api::crds`]: one per
//! group and kind, merging the kind's versions) as YAML, as controller-gen writes them.
//! It owns the CRD markers ([`MARKERS`]): what they mean is the schema's
//! ([`crate::schema`]) and resolve's.

use crate::apiext::CustomResourceDefinition;

use super::{Context, Generator, GeneratorName, Output, RenderYaml};
use crate::markers::{Args, F, MarkerSpec, Name, T, TF};
use crate::resolve::Check;

mod yaml;

pub(super) const GENERATOR: Generator = Generator {
    name: GeneratorName::Crd,
    id: "crd",
    about: "CustomResourceDefinition YAML with structural schemas and controller-gen's markers (controller-gen's `crd`).",
    requires: &[],
    markers: MARKERS,
    checks: &[Check::Crds],
    output: Output::Yaml {
        dir: "crds",
        default_dir: "crds",
        prepare,
    },
};

/// Render each CRD resolve built, on demand.
fn prepare(cx: &Context) -> RenderYaml {
    let crds = cx.api.crds.clone();
    let header = cx.crd_header.unwrap_or_default().to_owned();
    RenderYaml {
        names: crds.iter().map(|c| c.file_name.clone()).collect(),
        render: Box::new(move |i| with_header(to_yaml(&crds[i].crd), &header)),
    }
}

/// A CRD file with controller-gen's `crd:headerFile` text (YAML comments, checked) after
/// the generated-file line, which stays first so a later run knows the file as its own.
/// Without a header the file is handed on as it is, not copied.
fn with_header(yaml: String, header: &str) -> String {
    match yaml.split_once('\n') {
        Some((first, rest)) if !header.is_empty() => format!("{first}\n{header}{rest}"),
        _ => yaml,
    }
}

/// YAML for a CRD, with the generated-file header. The header goes first into the buffer
/// the body is written to, rather than joined to the body in a second string: a copy of
/// every CRD file.
pub fn to_yaml(crd: &CustomResourceDefinition) -> String {
    let mut value = serde_json::to_value(crd).expect("CRDs always serialize");
    integral_floats_to_ints(&mut value);
    let mut out = String::with_capacity(16 * 1024);
    out.push_str(crate::YAML_HEADER);
    out.push('\n');
    let start = out.len();
    if yaml::write(&value, &mut out).is_some() {
        debug_assert_eq!(
            out[start..],
            serde_yaml_body(value),
            "the direct YAML writer"
        );
    } else {
        out.truncate(start);
        out.push_str(&serde_yaml_body(value));
    }
    out
}

/// The document through `serde_yaml`, with YAML 1.1's non-strings quoted.
fn serde_yaml_body(mut value: serde_json::Value) -> String {
    let mut quoted = Vec::new();
    hide_yaml11_scalars(&mut value, &mut quoted);
    let mut body = serde_yaml::to_string(&value).expect("JSON values always serialize");
    // Placeholders end in `Z`, so `…QUOTE1Z` never matches inside `…QUOTE12Z`.
    for (i, original) in quoted.iter().enumerate() {
        body = body.replace(
            &placeholder(i),
            &format!("'{}'", original.replace('\'', "''")),
        );
    }
    body
}

/// serde_yaml writes YAML 1.2, where `y`, `no`, `on` and `1_000` are plain strings; kubectl
/// and client-go read YAML through go-yaml v2, which follows YAML 1.1 and reads them as
/// booleans and numbers, so an enum value `y` would arrive as `true`. Such strings, keys
/// included, are swapped for placeholders that serialize plain, then quoted in the text.
fn hide_yaml11_scalars(v: &mut serde_json::Value, quoted: &mut Vec<String>) {
    let mut hide = |s: &mut String| {
        if yaml11_reads_as_non_string(s) {
            quoted.push(std::mem::replace(s, placeholder(quoted.len())));
        }
    };
    match v {
        serde_json::Value::String(s) => hide(s),
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| hide_yaml11_scalars(x, quoted)),
        // Keys are renamed by rebuilding the map, which costs a re-insertion per entry: only
        // where a key needs it (rare), so that the values of every other map are swept in place.
        serde_json::Value::Object(o) if o.keys().any(|k| yaml11_reads_as_non_string(k)) => {
            let entries = std::mem::take(o);
            for (mut k, mut x) in entries {
                if yaml11_reads_as_non_string(&k) {
                    quoted.push(std::mem::replace(&mut k, placeholder(quoted.len())));
                }
                hide_yaml11_scalars(&mut x, quoted);
                o.insert(k, x);
            }
        }
        serde_json::Value::Object(o) => o.values_mut().for_each(|x| hide_yaml11_scalars(x, quoted)),
        _ => {}
    }
}

fn placeholder(i: usize) -> String {
    format!("KUBECODEGENYAMLQUOTE{i}Z")
}

/// Plain scalars that go-yaml v2 (YAML 1.1) resolves to something other than a string and
/// serde_yaml (YAML 1.2) leaves unquoted: the 1.1 booleans, numbers with `_` separators and
/// base-60 numbers.
fn yaml11_reads_as_non_string(s: &str) -> bool {
    // Byte-class tests first: they only skip strings neither pattern can match (NUMBER's
    // characters; TIMESTAMP's leading `dddd-`), and most strings with a `-` or `:` are
    // neither, so the regexes run on few.
    let number_chars = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_hexdigit() || b"xob_.:+-eE".contains(&b))
    };
    let date_start = |s: &str| {
        let b = s.as_bytes();
        b.len() >= 10 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-'
    };
    YAML11_BOOLS.contains(&s)
        || (s.contains(['_', ':']) && number_chars(s) && yaml11_number().is_match(s))
        || (s.contains('-') && date_start(s) && yaml11_timestamp().is_match(s))
}

const YAML11_BOOLS: &[&str] = &[
    "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off",
    "OFF",
];

/// YAML 1.1's integers and floats with `_` separators or base 60.
fn yaml11_number() -> &'static regex::Regex {
    static NUMBER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^[-+]?(0b[01_]+|0o?[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)?|\.[0-9_]+([eE][-+]?[0-9]+)?|[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?)$",
        )
        .expect("static regex")
    });
    &NUMBER
}

/// YAML 1.1's timestamp (yaml.org/type/timestamp.html): a date, or a date and time, which
/// PyYAML and other 1.1 readers turn into a datetime (Gateway API's
/// `lastTransitionTime: 1970-01-01T00:00:00Z` default).
fn yaml11_timestamp() -> &'static regex::Regex {
    static TIMESTAMP: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^([0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(\.[0-9]*)?([ \t]*(Z|[-+][0-9]{1,2}(:[0-9]{2})?))?)$",
        )
        .expect("static regex")
    });
    &TIMESTAMP
}

/// `minimum: 1` rather than `minimum: 1.0`: JSONSchemaProps keeps bounds as f64, but
/// people (and controller-gen) write whole numbers as integers.
fn integral_floats_to_ints(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Number(n) => {
            if let Some(f) = n
                .as_f64()
                .filter(|f| n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15)
            {
                *n = serde_json::Number::from(f as i64);
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(integral_floats_to_ints),
        serde_json::Value::Object(o) => o.values_mut().for_each(integral_floats_to_ints),
        _ => {}
    }
}

/// controller-gen's CRD markers: validation, schema shape, defaults, subresources, printer
/// columns, versions.
pub(super) const MARKERS: &[MarkerSpec] = &[
    MarkerSpec {
        name: Name::SubresourceStatus,
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: Name::SubresourceScale,
        args: Args::Named(&["!specpath", "!statuspath", "selectorpath"]),
        levels: T,
    },
    MarkerSpec {
        name: Name::PrintColumn,
        args: Args::Named(&[
            "!name",
            "!type",
            "!JSONPath",
            "description",
            "format",
            "priority",
        ]),
        levels: T,
    },
    MarkerSpec {
        name: Name::StorageVersion,
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: Name::DeprecatedVersion,
        args: Args::Named(&["warning"]),
        levels: T,
    },
    MarkerSpec {
        name: Name::SkipVersion,
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: Name::UnservedVersion,
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: Name::SelectableField,
        args: Args::Named(&["!JSONPath"]),
        levels: T,
    },
    MarkerSpec {
        name: Name::Metadata,
        args: Args::Named(&["annotations", "labels"]),
        levels: T,
    },
    MarkerSpec {
        name: Name::Minimum,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::Maximum,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::ExclusiveMinimum,
        args: Args::OptionalBool,
        levels: TF,
    },
    MarkerSpec {
        name: Name::ExclusiveMaximum,
        args: Args::OptionalBool,
        levels: TF,
    },
    MarkerSpec {
        name: Name::MultipleOf,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::MinLength,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::MaxLength,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::Pattern,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::MinItems,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::MaxItems,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::UniqueItems,
        args: Args::OptionalBool,
        levels: TF,
    },
    MarkerSpec {
        name: Name::MinProperties,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::MaxProperties,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::Enum,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::Format,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::Type,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::XValidation,
        args: Args::Named(&[
            "!rule",
            "message",
            "messageExpression",
            "reason",
            "fieldPath",
            "optionalOldSelf",
        ]),
        levels: TF,
    },
    MarkerSpec {
        name: Name::XPreserveUnknownFields,
        args: Args::Flag,
        levels: TF,
    },
    MarkerSpec {
        name: Name::XEmbeddedResource,
        args: Args::Flag,
        levels: TF,
    },
    MarkerSpec {
        name: Name::XIntOrString,
        args: Args::Flag,
        levels: TF,
    },
    MarkerSpec {
        name: Name::Schemaless,
        args: Args::Flag,
        levels: F,
    },
    MarkerSpec {
        name: Name::PreserveUnknownFields,
        args: Args::Flag,
        levels: TF,
    },
    MarkerSpec {
        name: Name::KubebuilderDefault,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::Example,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::Title,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::Default,
        args: Args::Value,
        levels: F,
    },
    MarkerSpec {
        name: Name::Nullable,
        args: Args::Flag,
        levels: F,
    },
    // The raw-schema escape hatch: a JSON merge patch (RFC 7386) applied last to the
    // node's schema, for what no other marker can say (written by `import crd`).
    MarkerSpec {
        name: Name::Schema,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::ListType,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::ListMapKey,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::MapType,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::StructType,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::EmbeddedResource,
        args: Args::Flag,
        levels: F,
    },
    MarkerSpec {
        name: Name::AtMostOneOf,
        args: Args::Value,
        levels: T,
    },
    MarkerSpec {
        name: Name::ExactlyOneOf,
        args: Args::Value,
        levels: T,
    },
    MarkerSpec {
        name: Name::AtLeastOneOf,
        args: Args::Value,
        levels: T,
    },
    MarkerSpec {
        name: Name::ExternalDocs,
        args: Args::Named(&["!url", "description"]),
        levels: TF,
    },
    MarkerSpec {
        name: Name::K8sListType,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::K8sListMapKey,
        args: Args::Value,
        levels: TF,
    },
    MarkerSpec {
        name: Name::K8sEnum,
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: Name::K8sImmutable,
        args: Args::Flag,
        levels: F,
    },
    MarkerSpec {
        name: Name::K8sMaxItems,
        args: Args::Value,
        levels: F,
    },
    MarkerSpec {
        name: Name::K8sMinimum,
        args: Args::Value,
        levels: F,
    },
    MarkerSpec {
        name: Name::K8sMaximum,
        args: Args::Value,
        levels: F,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The byte-class tests in front of the regexes skip only what they cannot match.
        #[test]
        fn yaml11_prefilters_change_no_answer(s in "[-+0-9a-fA-FxoTtZ_.: ]{0,24}") {
            let unfiltered = YAML11_BOOLS.contains(&s.as_str())
                || (s.contains(['_', ':']) && yaml11_number().is_match(&s))
                || (s.contains('-') && yaml11_timestamp().is_match(&s));
            proptest::prop_assert_eq!(yaml11_reads_as_non_string(&s), unfiltered);
        }
    }

    #[test]
    fn yaml11_prefilters_keep_every_match() {
        for s in [
            "1_000",
            "12:30",
            "-1:20:30.5",
            "0x_1F",
            "0b1_0",
            "+.5_0",
            "2001-12-14",
            "2001-12-14t21:59:43.10-05:00",
            "2001-12-14 21:59:43.10 -5",
            "2002-12-14T21:59:43Z",
        ] {
            assert!(yaml11_reads_as_non_string(s), "{s}");
        }
        for s in ["12-30", "a:b", "1_000x", "2001-12-1", "v1-2"] {
            assert!(!yaml11_reads_as_non_string(s), "{s}");
        }
    }

    #[test]
    fn yaml_1_1_booleans_and_numbers_are_quoted() {
        let mut crd = CustomResourceDefinition::default();
        crd.metadata.name = Some("y".into());
        crd.metadata.labels = Some(
            [
                ("on", "no"),
                ("plain", "1_000"),
                ("time", "12:30"),
                ("ok", "yes please"),
                ("ts", "1970-01-01T00:00:00Z"),
                ("date", "2001-12-14"),
                ("spaced", "2001-12-14 21:59:43.10 -5"),
                ("version", "1.2-3"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
        );
        let yaml = to_yaml(&crd);
        assert!(yaml.contains("name: 'y'\n"), "{yaml}");
        assert!(yaml.contains("'on': 'no'\n"), "{yaml}");
        assert!(yaml.contains("plain: '1_000'\n"), "{yaml}");
        assert!(yaml.contains("time: '12:30'\n"), "{yaml}");
        assert!(yaml.contains("ts: '1970-01-01T00:00:00Z'\n"), "{yaml}");
        assert!(yaml.contains("date: '2001-12-14'\n"), "{yaml}");
        assert!(
            yaml.contains("spaced: '2001-12-14 21:59:43.10 -5'\n"),
            "{yaml}"
        );
        assert!(yaml.contains("version: 1.2-3\n"), "{yaml}");
        assert!(yaml.contains("ok: yes please\n"), "{yaml}");
        // The strings survive a round trip through a YAML reader.
        let back: CustomResourceDefinition =
            serde_yaml::from_str(yaml.trim_start_matches(crate::YAML_HEADER)).unwrap();
        assert_eq!(back.metadata, crd.metadata);
    }
}
