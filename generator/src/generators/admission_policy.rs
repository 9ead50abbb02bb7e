//! The `admission-policy` generator: for each kind marked `+kube-codegen:admissionpolicy`, a
//! ValidatingAdmissionPolicy and its binding that hold the kind version's validation as
//! CEL, one file per group and kind (`<group>_<plural>.yaml`). What qualifies, and the
//! check that refuses the marker where the policy would check less than the schema, are
//! resolve's (`resolve/admission_policy.rs`).

use super::{Context, Generator, GeneratorName, Output, RenderYaml};
use crate::markers::{Args, MarkerSpec, Name, PT};
use crate::resolve::Check;

pub(super) const GENERATOR: Generator = Generator {
    name: GeneratorName::AdmissionPolicy,
    id: "admission-policy",
    about: "A ValidatingAdmissionPolicy and binding per kind marked `+kube-codegen:admissionpolicy`: its validation as CEL, enforced by the API server with no webhook.",
    requires: &[GeneratorName::Crd],
    markers: &[MarkerSpec {
        name: Name::AdmissionPolicy,
        args: Args::Flag,
        levels: PT,
    }],
    checks: &[Check::AdmissionPolicies],
    output: Output::Yaml {
        dir: "policy",
        default_dir: "config/policy",
        prepare,
    },
};

fn prepare(cx: &Context) -> RenderYaml {
    let files = cx.api.admission_policies.clone();
    RenderYaml {
        names: files.iter().map(|f| f.file_name.clone()).collect(),
        render: Box::new(move |i| super::documents_text(&files[i].documents)),
    }
}
