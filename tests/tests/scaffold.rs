//! A new user's first hour, as README tells it, end to end on a fresh directory:
//! `cargo install --path generator` from this checkout, `kube-codegen init`, two
//! `create api`s, a validated field added to the spec, `generate`, `cargo build` and the
//! crate's own envtest tests under `-D warnings`, then its controller binary against the
//! real control plane reconciles a namespaced and a cluster-scoped object, follows a spec
//! change, holds the new field's bound, and stops cleanly on SIGTERM. Then `import crd` of
//! a corpus CRD: the imported crate builds as written, and a program of its user's creates
//! an object through its generated client with `..Default::default()` for the rest.
//!
//! Nothing here is skipped: a missing control plane, toolchain or binary fails the test.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::Result;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube_codegen_tests::{
    TestNamespace, apply_crd, client, eventually, kubeconfig, parse_crd, repo_root,
};
use serde_json::json;

/// Where this test works: a fresh directory per run for what the user writes, and one
/// target directory kept between runs for what cargo builds.
fn root() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("scaffold-e2e")
}

/// README's install, from this checkout: `cargo install --path generator`, into a root of
/// the test's own. `--debug` (a dev build: minutes less on CI), `--offline` and `--root`
/// are the test's; the binary is what a user gets, and it knows where it came from.
fn kube_codegen() -> PathBuf {
    static INSTALLED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let install = root().join("install");
            let out = Command::new(env!("CARGO"))
                .args([
                    "install",
                    "--offline",
                    "--debug",
                    "--locked",
                    "--force",
                    "--path",
                ])
                .arg(repo_root().join("generator"))
                .arg("--root")
                .arg(&install)
                .env("CARGO_TARGET_DIR", root().join("target"))
                .env_remove("RUSTFLAGS")
                .output()
                .expect("cargo runs");
            assert!(
                out.status.success(),
                "cargo install --path generator failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let bin = install.join("bin/kube-codegen");
            assert!(
                bin.exists(),
                "{} missing after cargo install",
                bin.display()
            );
            bin
        })
        .clone()
}

fn run(args: &[&str]) -> (bool, String) {
    let out = Command::new(kube_codegen())
        .args(args)
        .output()
        .expect("kube-codegen runs");
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    (out.status.success(), text)
}

fn ok(args: &[&str]) -> String {
    let (success, text) = run(args);
    assert!(success, "kube-codegen {args:?} failed:\n{text}");
    text
}

/// The scaffolded controller, killed if the test fails before stopping it.
struct Controller(Option<Child>, PathBuf);

impl Controller {
    fn logs(&self) -> String {
        std::fs::read_to_string(&self.1).unwrap_or_default()
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("webapp.example.com", "v1", kind),
        plural,
    )
}

/// The `Ready` condition's (status, observedGeneration), if any.
fn ready(obj: &DynamicObject) -> Option<(String, i64)> {
    obj.data
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")
        .map(|c| {
            (
                c["status"].as_str().unwrap_or_default().to_owned(),
                c["observedGeneration"].as_i64().unwrap_or_default(),
            )
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_create_api_build_and_reconcile() -> Result<()> {
    let root = root();
    let krate = root.join("guestbook-operator");
    let _ = std::fs::remove_dir_all(&krate);
    std::fs::create_dir_all(&root)?;
    let krate_s = krate.to_str().unwrap();
    let runtime = repo_root().join("runtime");

    // README's command, no flag: a kube-codegen built from this checkout names its runtime.
    let out = ok(&["init", krate_s]);
    assert!(out.contains("created crate `guestbook-operator`"), "{out}");
    assert!(
        out.contains(&format!(
            "the crate takes kube-codegen-runtime from {}",
            runtime.canonicalize()?.display()
        )),
        "{out}"
    );
    // A second init into the now non-empty directory refuses and writes nothing.
    let (success, out) = run(&["init", krate_s]);
    assert!(!success && out.contains("is not empty"), "{out}");

    let api = |kind: &str, extra: &[&str]| {
        let mut args = vec![
            "create",
            "api",
            "--dir",
            krate_s,
            "--group",
            "webapp.example.com",
            "--version",
            "v1",
            "--kind",
            kind,
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    let (success, out) = api("Guestbook", &[]);
    assert!(success, "{out}");
    assert!(out.contains("generated"), "{out}");
    let (success, out) = api("GuestbookClass", &["--cluster-scoped"]);
    assert!(success, "{out}");
    // The same kind again is refused, and the crate is left as it was.
    let types = std::fs::read_to_string(krate.join("src/apis/webapp/v1.rs"))?;
    let (success, out) = api("Guestbook", &[]);
    assert!(
        !success && out.contains("already defines Guestbook"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(krate.join("src/apis/webapp/v1.rs"))?,
        types
    );

    // Add a validated field, as README's marker reference has it, and give the example in
    // the crate's test a value the marker accepts (README: the example names every field).
    let v1 = krate.join("src/apis/webapp/v1.rs");
    let types = std::fs::read_to_string(&v1)?;
    let example_field = "    pub foo: Option<String>,\n";
    assert!(types.contains(example_field), "{types}");
    std::fs::write(
        &v1,
        types.replacen(
            example_field,
            &format!(
                "{example_field}    /// How many guests the book holds at once.\n    ///\n    \
                 /// +kubebuilder:validation:Minimum=1\n    /// +optional\n    \
                 #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    \
                 pub capacity: Option<i32>,\n"
            ),
            1,
        ),
    )?;
    let test_file = krate.join("tests/guestbook.rs");
    let test_src = std::fs::read_to_string(&test_file)?;
    let example_value = "            foo: Some(\"example\".into()),\n";
    assert!(test_src.contains(example_value), "{test_src}");
    std::fs::write(
        &test_file,
        test_src.replacen(
            example_value,
            &format!("{example_value}            capacity: Some(10),\n"),
            1,
        ),
    )?;
    let out = ok(&["generate", krate_s]);
    assert!(out.contains("written"), "{out}");
    let crd = std::fs::read_to_string(krate.join("config/crd/webapp.example.com_guestbooks.yaml"))?;
    assert!(crd.contains("capacity:"), "{crd}");

    // Build it as its user's CI would: offline, with the versions this repository
    // resolves, every warning an error, in a target dir of its own that survives between
    // runs.
    std::fs::copy(repo_root().join("Cargo.lock"), krate.join("Cargo.lock"))?;
    let build = Command::new(env!("CARGO"))
        .args(["build", "--offline", "--quiet"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env("RUSTFLAGS", "-D warnings")
        .output()?;
    assert!(
        build.status.success(),
        "the scaffolded crate does not build:\n{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let binary = root.join("target/debug/guestbook-operator");

    // The crate's own tests (one per kind), each on a control plane of its own
    // (kube-codegen-envtest), pass as scaffolded.
    let test = Command::new(env!("CARGO"))
        .args(["test", "--offline", "--quiet"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env("RUSTFLAGS", "-D warnings")
        .output()?;
    assert!(
        test.status.success(),
        "the scaffolded crate's own tests fail:\n{}\n{}",
        String::from_utf8_lossy(&test.stdout),
        String::from_utf8_lossy(&test.stderr)
    );
    let report = String::from_utf8_lossy(&test.stdout);
    assert!(
        report.contains("2 passed") || report.matches("1 passed").count() == 2,
        "expected one passing test per kind:\n{report}"
    );

    let client = client().await;
    for entry in std::fs::read_dir(krate.join("config/crd"))? {
        apply_crd(
            &client,
            &parse_crd(&std::fs::read_to_string(entry?.path())?),
        )
        .await?;
    }
    let ns = TestNamespace::new(&client, "scaffold").await;

    let log = root.join("controller.log");
    let child = Command::new(&binary)
        .env("KUBECONFIG", kubeconfig())
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log)?)
        .spawn()?;
    let mut controller = Controller(Some(child), log);

    let guestbooks: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        &ns.name,
        &resource("Guestbook", "guestbooks"),
    );
    let mut book = DynamicObject::new("book", &resource("Guestbook", "guestbooks"));
    book.data = json!({ "spec": { "foo": "first" } });
    guestbooks.create(&PostParams::default(), &book).await?;
    let classes: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &resource("GuestbookClass", "guestbookclasses"),
    );
    let class_name = format!("{}-class", ns.name);
    let mut class =
        DynamicObject::new(&class_name, &resource("GuestbookClass", "guestbookclasses"));
    class.data = json!({ "spec": {} }); // the scaffolded spec is required
    classes.create(&PostParams::default(), &class).await?;

    let wait_ready = |api: Api<DynamicObject>, name: String, generation: i64| async move {
        eventually(
            &format!("{name} Ready at generation {generation}"),
            Duration::from_secs(60),
            || {
                let (api, name) = (api.clone(), name.clone());
                async move {
                    let obj = api.get(&name).await?;
                    Ok((ready(&obj) == Some(("True".into(), generation))).then_some(()))
                }
            },
        )
        .await
    };
    let logs = |c: &Controller| c.logs();
    if let Err(e) = wait_ready(guestbooks.clone(), "book".into(), 1).await {
        panic!("{e:#}\ncontroller log:\n{}", logs(&controller));
    }
    wait_ready(classes.clone(), class_name.clone(), 1).await?;

    // A spec change is a new generation; the controller follows it.
    guestbooks
        .patch(
            "book",
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "foo": "second" } })),
        )
        .await?;
    wait_ready(guestbooks.clone(), "book".into(), 2).await?;
    // The CRD's validation came from the scaffolded marker (MaxLength=63).
    let too_long = guestbooks
        .patch(
            "book",
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "foo": "x".repeat(64) } })),
        )
        .await;
    assert!(too_long.is_err(), "a 64-character foo was accepted");
    // And the bound of the field added above.
    let too_small = guestbooks
        .patch(
            "book",
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "capacity": 0 } })),
        )
        .await;
    let err = too_small.expect_err("capacity 0 was accepted").to_string();
    assert!(err.contains("spec.capacity"), "{err}");

    // SIGTERM: a clean exit, quickly.
    let child = controller.0.as_mut().expect("running");
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()?;
    let mut status = None;
    for _ in 0..300 {
        if let Some(s) = child.try_wait()? {
            status = Some(s);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Drop kills and reaps it if it did not exit.
    let Some(status) = status else {
        panic!("no exit 30 s after SIGTERM:\n{}", controller.logs());
    };
    assert!(status.success(), "exit {status:?}:\n{}", controller.logs());
    controller.0 = None;
    classes.delete(&class_name, &Default::default()).await?;
    Ok(())
}

/// `import crd` of a corpus CRD (Gateway API's GatewayClass), `generate`, and a program of
/// the imported crate's user: it builds as written (`-D warnings`, offline), and creates a
/// GatewayClass through the generated clientset with `..Default::default()` for everything
/// but its spec, so no `apiVersion` or `kind` is set by hand (the typed client fills them
/// in, as client-go's codec does).
#[tokio::test]
async fn import_crd_build_and_create_through_the_generated_client() -> Result<()> {
    let root = root();
    let krate = root.join("gateway-api");
    let _ = std::fs::remove_dir_all(&krate);
    std::fs::create_dir_all(&root)?;
    let crd_file = repo_root().join(
        "tests/fixtures/crd-corpus/gateway-api/gatewayclasses.gateway.networking.k8s.io.yaml",
    );
    let krate_s = krate.to_str().unwrap();
    let out = ok(&[
        "import",
        "crd",
        crd_file.to_str().unwrap(),
        "--out",
        krate_s,
    ]);
    assert!(
        out.contains(&format!(
            "the crate takes kube-codegen-runtime from {}",
            repo_root().join("runtime").canonicalize()?.display()
        )),
        "{out}"
    );
    ok(&["generate", krate_s]);

    // The user's program: a dev-dependency on tokio, as `cargo add --dev tokio` writes it.
    let mut manifest = std::fs::read_to_string(krate.join("Cargo.toml"))?;
    manifest.push_str(
        "\n[dev-dependencies]\ntokio = { version = \"1\", features = [\"macros\", \"rt-multi-thread\"] }\n",
    );
    std::fs::write(krate.join("Cargo.toml"), manifest)?;
    std::fs::create_dir_all(krate.join("examples"))?;
    std::fs::write(
        krate.join("examples/create.rs"),
        r#"use gateway_api::Clientset;
use gateway_api::apis::gateway::v1::{GatewayClass, GatewayClassSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::PostParams;

#[tokio::main]
async fn main() {
    let name = std::env::args().nth(1).expect("a name");
    let client = kube::Client::try_default().await.expect("a client from KUBECONFIG");
    let class = GatewayClass {
        metadata: ObjectMeta { name: Some(name), ..Default::default() },
        spec: GatewayClassSpec {
            controller_name: "example.com/gateway-controller".into(),
            ..Default::default()
        },
        ..Default::default()
    };
    let created = Clientset::new(client)
        .gateway_v1()
        .gatewayclasses()
        .create(&class, &PostParams::default())
        .await
        .expect("created");
    println!("{}", created.metadata.uid.expect("a uid"));
}
"#,
    )?;
    std::fs::copy(repo_root().join("Cargo.lock"), krate.join("Cargo.lock"))?;

    let client = client().await;
    apply_crd(&client, &parse_crd(&std::fs::read_to_string(&crd_file)?)).await?;
    let name = format!("first-hour-{}", std::process::id());
    let created = Command::new(env!("CARGO"))
        .args([
            "run",
            "--offline",
            "--quiet",
            "--example",
            "create",
            "--",
            &name,
        ])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env("RUSTFLAGS", "-D warnings")
        .env("KUBECONFIG", kubeconfig())
        .output()?;
    assert!(
        created.status.success(),
        "the imported crate's program fails:\n{}",
        String::from_utf8_lossy(&created.stderr)
    );
    let classes: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("gateway.networking.k8s.io", "v1", "GatewayClass"),
            "gatewayclasses",
        ),
    );
    let stored = classes.get(&name).await?;
    assert_eq!(
        stored.metadata.uid.as_deref(),
        Some(String::from_utf8_lossy(&created.stdout).trim())
    );
    assert_eq!(
        stored.data["spec"]["controllerName"],
        "example.com/gateway-controller"
    );
    classes.delete(&name, &Default::default()).await?;
    Ok(())
}
