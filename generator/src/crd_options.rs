//! controller-gen's `crd:` options ([`CrdOptions`]) as a Go project's Makefile passes them
//! (`crd:maxDescLen=0,generateEmbeddedObjectMeta=true`): read in one place, for `import go`
//! (which takes them as the project wrote them and writes them into the new crate's
//! metadata) and for [`crate::Config::crd_options`].

use std::path::PathBuf;

/// controller-gen v0.23.0's `crd:` options, each with the kube-codegen setting it is.
///
/// ```
/// let o: kube_codegen::CrdOptions = "crd:maxDescLen=0,allowDangerousTypes=true".parse()?;
/// assert_eq!(o.max_desc_len, Some(0));
/// assert!(o.allow_dangerous_types);
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrdOptions {
    /// `maxDescLen=N`: `max-description-len` (`0` writes no description).
    pub max_desc_len: Option<usize>,
    /// `generateEmbeddedObjectMeta=true`: `generate-embedded-object-meta`.
    pub generate_embedded_object_meta: bool,
    /// `allowDangerousTypes=true`: `allow-dangerous-types` (floats in schemas). controller-gen
    /// refuses floats without it; so does `generate` with `allow-dangerous-types = false`.
    pub allow_dangerous_types: bool,
    /// `ignoreUnexportedFields=true`: `import go` leaves unexported Go fields out. Without
    /// it, as controller-gen, an unexported field with a JSON tag is in the schema.
    pub ignore_unexported_fields: bool,
    /// `headerFile=PATH`: `crd-header-file`, the text at the top of every CRD file.
    pub header_file: Option<PathBuf>,
    /// `year=YYYY`: what ` YEAR` in the header file becomes (controller-gen's `year`).
    pub year: Option<String>,
}

impl std::str::FromStr for CrdOptions {
    type Err = String;

    /// `crd`, `crd:a=b,c=d` or `a=b,c=d`; a flag alone (`allowDangerousTypes`) is `=true`,
    /// as controller-gen reads it. `crdVersions` may only be `v1`, the only CRD version the
    /// API server serves; `deprecatedV1beta1CompatibilityPreserveUnknownFields` has no
    /// meaning for `apiextensions.k8s.io/v1` and is refused, as is any other name.
    fn from_str(s: &str) -> Result<Self, String> {
        let body = s
            .strip_prefix("crd:")
            .unwrap_or(if s == "crd" { "" } else { s });
        let mut out = CrdOptions::default();
        for opt in body.split(',').filter(|o| !o.is_empty()) {
            let (k, v) = opt.split_once('=').unwrap_or((opt, "true"));
            let flag = |v: &str| {
                v.parse::<bool>()
                    .map_err(|_| format!("crd option `{k}={v}`: expected true or false"))
            };
            match k {
                "crdVersions" if v == "v1" || v == "{v1}" => {}
                "crdVersions" => {
                    return Err(format!(
                        "crd option `crdVersions={v}`: only v1 is written (the API server serves no other CRD version)"
                    ));
                }
                "maxDescLen" => {
                    out.max_desc_len = Some(v.parse().map_err(|_| {
                        format!("crd option `maxDescLen={v}`: expected a number of characters")
                    })?)
                }
                "generateEmbeddedObjectMeta" => out.generate_embedded_object_meta = flag(v)?,
                "allowDangerousTypes" => out.allow_dangerous_types = flag(v)?,
                "ignoreUnexportedFields" => out.ignore_unexported_fields = flag(v)?,
                "headerFile" => out.header_file = Some(PathBuf::from(v.trim_matches('"'))),
                "year" => out.year = Some(v.trim_matches('"').to_owned()),
                _ => {
                    return Err(format!(
                        "crd option `{k}`: not one of controller-gen's that kube-codegen takes (crdVersions, maxDescLen, generateEmbeddedObjectMeta, allowDangerousTypes, ignoreUnexportedFields, headerFile, year)"
                    ));
                }
            }
        }
        Ok(out)
    }
}

/// controller-gen's header text: the file as it is, ` YEAR` replaced by ` ` and the year
/// (by nothing without one, as controller-gen does).
pub(crate) fn header_text(text: &str, year: Option<&str>) -> String {
    let mut text = text.replace(" YEAR", &format!(" {}", year.unwrap_or_default()));
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// The first line of a CRD header that is not a YAML comment or blank (1-based), which
/// would become part of every CRD: controller-gen writes it anyway (a Go `/* */` licence
/// then breaks the YAML).
pub(crate) fn non_comment_line(text: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            !l.is_empty() && !l.starts_with('#')
        })
        .map(|i| i + 1)
}
