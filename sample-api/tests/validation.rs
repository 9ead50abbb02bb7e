//! The generated `Validate` impls: the API server's verdicts on the sample kinds, without a
//! server (the differential test in tests/tests/validation_differential.rs checks them
//! against a real one).

use kube_codegen_runtime::validation::{ErrorType, Validate};
use sample_api::apis::insujang::v1beta1::{TestResource, TestResourceSpec};
use sample_api::apis::samplecontroller::v1alpha1::{Foo, FooSpec};

fn foo(replicas: Option<i32>) -> Foo {
    Foo::new(
        "a",
        FooSpec {
            deployment_name: "a-deploy".into(),
            replicas,
        },
    )
}

#[test]
fn foo_replicas_bounds() {
    assert_eq!(foo(Some(1)).validate(), Ok(()));
    assert_eq!(foo(None).validate(), Ok(()));
    let errs = foo(Some(11)).validate().unwrap_err();
    assert_eq!(errs.0.len(), 1);
    assert_eq!(errs.0[0].field, "spec.replicas");
    assert_eq!(errs.0[0].error_type, ErrorType::Invalid);
    assert_eq!(
        errs.to_string(),
        "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"
    );
    assert!(foo(Some(0)).validate().is_err());
}

#[test]
fn test_resource_pattern() {
    let tr = |command: &str| {
        TestResource::new(
            "t",
            TestResourceSpec {
                command: command.into(),
                custom_property: "x".into(),
            },
        )
    };
    assert_eq!(tr("echo hi").validate(), Ok(()));
    let errs = tr("ls").validate().unwrap_err();
    assert_eq!(
        errs.to_string(),
        "spec.command: Invalid value: \"ls\": spec.command in body should match '^(echo).*'"
    );
}

#[test]
fn set_defaults_keeps_a_valid_object_as_it_is() {
    let mut f = foo(Some(3));
    let before = f.clone();
    f.set_defaults();
    assert_eq!(f, before);
    assert_eq!(f.validate_update(&before), Ok(()));
}

#[tokio::test]
async fn the_fake_clientset_defaults_and_validates_with_the_generated_code() {
    use kube::api::PostParams;

    // Admission is on from the start: `new_clientset()` registers the generated validation.
    let (cs, server) = sample_api::generated::fake::new_clientset();
    let foos = cs.samplecontroller_v1alpha1().foos("default");
    foos.create(&foo(Some(3)), &PostParams::default())
        .await
        .expect("a valid Foo is stored");
    let mut bad = foo(Some(11));
    bad.metadata.name = Some("b".into());
    let err = foos
        .create(&bad, &PostParams::default())
        .await
        .expect_err("the fake refuses what the API server refuses");
    let msg = err.to_string();
    assert!(
        msg.contains("spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"),
        "{msg}"
    );
    // The switch: the fake stores what it is given.
    server.set_admission(false);
    foos.create(&bad, &PostParams::default())
        .await
        .expect("admission off");
}

/// The book's "Defaulting and validation" example (docs/src/guide/validation.md includes
/// the lines between the anchors).
#[test]
fn the_book_example() {
    // ANCHOR: example
    use kube_codegen_runtime::validation::{ErrorType, Validate};

    // FooSpec.replicas: +kubebuilder:validation:Minimum=1, Maximum=10; Foo: +kube-codegen:validation
    let mut foo = Foo::new(
        "a",
        FooSpec {
            deployment_name: "a-deploy".into(),
            replicas: Some(11),
        },
    );
    // What the API server would answer a create of it:
    let errs = foo.validate().unwrap_err();
    assert_eq!(errs.0[0].field, "spec.replicas");
    assert_eq!(errs.0[0].error_type, ErrorType::Invalid);
    assert_eq!(
        errs.to_string(),
        "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"
    );
    let old = foo.clone();
    foo.spec.replicas = Some(3);
    foo.set_defaults(); // every default, as the server applies them
    // An update: transition rules (oldSelf) run, unchanged values are ratcheted.
    assert_eq!(foo.validate_update(&old), Ok(()));
    // ANCHOR_END: example
}

#[tokio::test]
async fn the_fake_validates_server_side_apply_too() {
    use kube::api::{Patch, PatchParams};

    // Admission is on from the start: `new_clientset()` registers the generated validation.
    let (cs, _server) = sample_api::generated::fake::new_clientset();
    let api: kube::Api<Foo> = kube::Api::namespaced(cs.client().clone(), "default");
    let bad = foo(Some(0));
    let err = api
        .patch("a", &PatchParams::apply("test"), &Patch::Apply(&bad))
        .await
        .expect_err("an apply-create is validated");
    assert!(err.to_string().contains("spec.replicas"), "{err}");
    api.patch(
        "a",
        &PatchParams::apply("test"),
        &Patch::Apply(&foo(Some(2))),
    )
    .await
    .expect("a valid apply");
}
