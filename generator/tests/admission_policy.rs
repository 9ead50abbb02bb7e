//! The `admission-policy` generator's output for sample-api's Foo v1beta1 (marked
//! `+kube-codegen:admissionpolicy`), reviewed as a snapshot; the real API server enforces
//! the same file in tests/tests/admission_policy.rs, and what does not qualify is refused
//! in the error corpus (`admission_policy_not_cel`).

use kube_codegen::{Config, GeneratorName};

#[test]
fn foos_policy_and_binding() {
    let generated = Config::from_crate("../sample-api")
        .unwrap()
        .generators([GeneratorName::AdmissionPolicy])
        .generate()
        .unwrap();
    let policies: Vec<_> = generated
        .files
        .iter()
        .filter(|f| f.contents.contains("kind: ValidatingAdmissionPolicy"))
        .collect();
    assert_eq!(policies.len(), 1, "one file for Foo");
    assert!(
        policies[0]
            .path
            .ends_with("config/policy/samplecontroller.k8s.io_foos.yaml")
    );
    insta::assert_snapshot!("samplecontroller.k8s.io_foos.yaml", policies[0].contents);
    assert!(
        generated.summary().contains("admission-policy 1"),
        "{}",
        generated.summary()
    );
}
