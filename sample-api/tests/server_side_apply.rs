//! The book's "Server-side apply" example, compiled and run (against the fake clientset;
//! `tests/tests/apply_configurations.rs` runs the same calls on the real API server). The
//! book (docs/src/guide/server-side-apply.md) includes the code between the anchors.

// ANCHOR: example
use kube_codegen_runtime::apply::ApplyError;
use kube_codegen_runtime::client::ApplyOptions;
use sample_api::Clientset;
use sample_api::apis::samplecontroller::v1alpha1::Foo;
use sample_api::generated::applyconfigurations::samplecontroller_v1alpha1::{
    FooApplyConfiguration, FooSpecApplyConfiguration, FooStatusApplyConfiguration, extract_foo,
};

/// Every write of this controller uses one field manager.
const MANAGER: &str = "foo-controller";

/// Declare the fields this controller owns: exactly these, nothing else. Fields it set
/// before and leaves out now are released (and removed, if nobody else owns them).
async fn apply_foo(cs: &Clientset, namespace: &str) -> Result<Foo, ApplyError> {
    let foos = cs.samplecontroller_v1alpha1().foos(namespace);
    let desired = FooApplyConfiguration::new("example", namespace)
        .with_labels([("app", "example")])
        .with_spec(
            FooSpecApplyConfiguration::default()
                .with_deployment_name("example")
                .with_replicas(2),
        );
    match foos.apply(&desired, &ApplyOptions::new(MANAGER)).await {
        // Another manager owns a field we set: the error names it and the fields.
        Err(ApplyError::Conflict(c)) => {
            eprintln!("{:?} own {:?}; taking them over", c.managers(), c.fields());
            foos.apply(&desired, &ApplyOptions::new(MANAGER).force())
                .await
        }
        other => other,
    }
}

/// Change one field without restating the others: extract what we own, change, apply.
async fn scale(
    cs: &Clientset,
    foo: &Foo,
    replicas: i32,
) -> Result<Foo, Box<dyn std::error::Error>> {
    let mut mine = extract_foo(foo, MANAGER)?; // only what MANAGER applied, name and namespace set
    mine.spec.get_or_insert_with(Default::default).replicas = Some(replicas);
    let namespace = foo.metadata.namespace.as_deref().unwrap_or_default();
    let foos = cs.samplecontroller_v1alpha1().foos(namespace);
    Ok(foos.apply(&mine, &ApplyOptions::new(MANAGER)).await?)
}

/// Status goes through the status subresource, under the same manager.
async fn report(cs: &Clientset, namespace: &str, available: i32) -> Result<Foo, ApplyError> {
    let status = FooApplyConfiguration::new("example", namespace)
        .with_status(FooStatusApplyConfiguration::default().with_available_replicas(available));
    let foos = cs.samplecontroller_v1alpha1().foos(namespace);
    foos.apply_status(&status, &ApplyOptions::new(MANAGER))
        .await
}
// ANCHOR_END: example

#[tokio::test]
async fn the_readme_example_runs() {
    let (cs, _server) = sample_api::generated::fake::new_clientset();
    let foo = apply_foo(&cs, "ns").await.unwrap();
    assert_eq!(foo.spec.replicas, Some(2));
    let scaled = scale(&cs, &foo, 5).await.unwrap();
    assert_eq!(scaled.spec.replicas, Some(5));
    assert_eq!(scaled.spec.deployment_name, "example");
    let reported = report(&cs, "ns", 5).await.unwrap();
    assert_eq!(reported.status.unwrap().available_replicas, 5);
}
