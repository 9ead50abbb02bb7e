//! The book's envtest examples (docs/src/guide/envtest.md includes the code between each
//! pair of anchors), run here against real control planes, so they are compiled and
//! known to work. The CRDs are sample-api's (`../sample-api/crds`); TestResource, as Foo
//! has a conversion webhook, which an example without a webhook server cannot serve.

// ANCHOR: environment
use kube::api::PostParams;
use kube_codegen_envtest::Environment;
use sample_api::Clientset;
use sample_api::apis::insujang::v1beta1::{TestResource, TestResourceSpec};

#[tokio::test]
async fn reconciles_a_test_resource() {
    let env = Environment::builder()
        .crd_file("../sample-api/crds/insujang.github.io_testresources.yaml") // or .crd_dir(..), .crd_yaml(..), .crd(a_crd)
        .controller_manager(true) // garbage collection, namespace deletion; off by default (+6 s)
        .start()
        .await
        .expect("control plane"); // about 3.5 s on 2 busy cores
    let cs = Clientset::new(env.client());
    let spec = TestResourceSpec {
        command: "echo hello".into(),
        custom_property: "example".into(),
    };
    let resources = cs.insujang_v1beta1().testresources("default");
    let created = resources
        .create(&TestResource::new("example", spec), &PostParams::default())
        .await
        .unwrap();
    // Run the reconciler on env.client(), or the controller binary with
    // --kubeconfig env.kubeconfig_path(), then assert on what it did.
    assert_eq!(created.spec.command, "echo hello");
}
// ANCHOR_END: environment

mod shared {
    // ANCHOR: shared
    use kube_codegen_envtest::{Environment, SharedEnvironment};

    static ENV: SharedEnvironment =
        SharedEnvironment::new(|| Environment::builder().controller_manager(true));

    #[tokio::test]
    async fn uses_the_shared_control_plane() {
        let env = ENV.get().expect("control plane"); // started once per test binary
        let client = env.new_client().unwrap(); // a client on this test's runtime
        let out = env.kubectl().unwrap().args(["get", "ns"]).output().unwrap(); // the pinned kubectl
        assert!(String::from_utf8_lossy(&out.stdout).contains("default"));
        let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client);
        assert!(namespaces.get("kube-system").await.is_ok());
        // ... env.kubeconfig_path() for a controller subprocess, env.etcd_url() for etcd ...
    }
    // ANCHOR_END: shared
}
