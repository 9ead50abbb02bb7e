//! A group/version module: `+groupName`, `+versionName` and the package-wide defaults in
//! its inner doc comment (Go's doc.go).

use crate::diagnostics::Diagnostics;
use crate::markers::{Marker, Name};
use crate::model::*;
use crate::read::Module;

/// Whether `s` is a DNS-1123 subdomain: dot-separated labels of `[a-z0-9]([-a-z0-9]*[a-z0-9])?`,
/// each at most 63 bytes, 253 in all. By hand rather than by regex: it runs for every kind's
/// names, and a regex without the regex crate's `perf` engines (the generator's build) costs
/// far more per call.
pub(crate) fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(|l| is_label(l, false))
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?` (`[a-z]` first when `letter_first`), at most 63 bytes.
fn is_label(l: &str, letter_first: bool) -> bool {
    let b = l.as_bytes();
    let inner = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-';
    match (b.first(), b.last()) {
        (Some(f), Some(e)) => {
            b.len() <= 63
                && (f.is_ascii_lowercase() || (!letter_first && f.is_ascii_digit()))
                && (e.is_ascii_lowercase() || e.is_ascii_digit())
                && b.iter().all(inner)
        }
        _ => false,
    }
}

/// Whether `v` is a version the API server takes: a DNS-1035 label (`v1`, `v2beta1`).
pub(crate) fn is_version(v: &str) -> bool {
    is_label(v, true)
}

pub(super) fn package_of(
    m: &Module,
    markers: &[Marker],
    diags: &mut Diagnostics,
) -> Option<Package> {
    let group = markers.iter().find(|mk| mk.name == Name::GroupName);
    let Some(group_marker) = group else {
        // Markers that make sense only for a group/version; rbac, webhook, object:generate
        // and the like may sit on any module.
        let group_bound = |mk: &&Marker| {
            matches!(
                mk.name,
                Name::VersionName
                    | Name::ValidationOptional
                    | Name::ValidationRequired
                    | Name::Validation
            )
        };
        if let Some(other) = markers.iter().find(group_bound) {
            diags.push(
                other
                    .error(format!("package marker `+{}` without `+groupName`", other.name))
                    .with_hint("a group/version module needs `//! +groupName=<group>` in its inner doc comment"),
            );
        }
        return None;
    };
    let group = diags.collect(group_marker.string_value())?;
    if !is_dns_subdomain(&group) || !group.contains('.') {
        diags.push(
            group_marker
                .error(format!("invalid groupName `{group}`"))
                .with_hint("a CRD group is a lowercase DNS subdomain with at least one dot, e.g. `samplecontroller.k8s.io`"),
        );
        return None;
    }
    let version = match markers.iter().find(|mk| mk.name == Name::VersionName) {
        Some(v) => diags.collect(v.string_value())?,
        None => match m.path.last() {
            Some(last) => last.clone(),
            None => {
                diags.push(
                    group_marker
                        .error("cannot infer the version of the crate root module")
                        .with_hint("add `//! +versionName=v1`"),
                );
                return None;
            }
        },
    };
    if !is_version(&version) {
        let at = markers
            .iter()
            .find(|mk| mk.name == Name::VersionName)
            .unwrap_or(group_marker);
        diags.push(
            at.error(format!("invalid version `{version}`"))
                .with_hint("a version is a DNS label such as v1, v1beta1 or v2alpha3; set it with `//! +versionName=`"),
        );
        return None;
    }
    let mut default_optional = None;
    for mk in markers {
        let value = match mk.name {
            Name::ValidationOptional => true,
            Name::ValidationRequired => false,
            _ => continue,
        };
        if let Some((prev, _)) = default_optional
            && prev != value
        {
            diags.push(
                mk.error("package has both `+kubebuilder:validation:Optional` and `Required`"),
            );
        }
        default_optional = Some((value, mk.loc.clone()));
    }
    let validation = markers
        .iter()
        .find(|mk| mk.name == Name::Validation)
        .map(|mk| ValidationScope::Package(mk.loc.clone()));
    Some(Package {
        group,
        version,
        loc: group_marker.loc.clone(),
        default_optional,
        validation,
        kinds: vec![],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The hand-written checks agree with the patterns they replace.
        #[test]
        fn names_as_their_patterns(s in "[-a-z0-9.A_]{0,70}") {
            let label = regex::Regex::new(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$").unwrap();
            let version = regex::Regex::new(r"^[a-z]([-a-z0-9]*[a-z0-9])?$").unwrap();
            let subdomain = !s.is_empty()
                && s.len() <= 253
                && s.split('.').all(|l| l.len() <= 63 && label.is_match(l));
            proptest::prop_assert_eq!(is_dns_subdomain(&s), subdomain);
            proptest::prop_assert_eq!(is_version(&s), version.is_match(&s) && s.len() <= 63);
        }
    }

    #[test]
    fn names() {
        assert!(
            is_dns_subdomain("example.com") && is_dns_subdomain("a") && is_dns_subdomain("0-a.b1")
        );
        assert!(!is_dns_subdomain("") && !is_dns_subdomain("a..b") && !is_dns_subdomain("-a"));
        assert!(
            !is_dns_subdomain("a-") && !is_dns_subdomain("A") && !is_dns_subdomain(&"a".repeat(64))
        );
        assert!(
            is_version("v1") && is_version("v2beta1") && !is_version("1v") && !is_version("v1.")
        );
    }
}
