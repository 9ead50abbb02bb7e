//! kubebuilder's habit, end to end: `kube-codegen init`, two `create api`s, `cargo build`
//! of the new crate as its user would, then its controller binary against the real control
//! plane reconciles a namespaced and a cluster-scoped object, follows a spec change, and
//! stops cleanly on SIGTERM.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::Result;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube_codegen_tests::{
    TestNamespace, apply_crd, client, eventually, kubeconfig, parse_crd, repo_root,
    workspace_binary,
};
use serde_json::json;

/// The kube-codegen binary cargo built beside this test (`cargo test --workspace` builds
/// every binary that has integration tests; hack/test.sh runs that).
fn kube_codegen() -> PathBuf {
    workspace_binary("kube-codegen", "kube-codegen")
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
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("scaffold-e2e");
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
