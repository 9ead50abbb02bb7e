//! E2E: sharded informers on the real kube-apiserver v1.37.2, with its feature gate
//! `ShardedListAndWatch` on (the server filters, and echoes the selector in the list's
//! `metadata.shardInfo`) and off (it ignores the selector; the informers filter with the
//! same hash and say so). Either way two informers with complementary ranges see every
//! object exactly once, also objects created and deleted while they watch.
//!
//! Each test starts a control plane of its own (the gate is a flag of the API server); a
//! missing binary fails them.

use std::collections::BTreeSet;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::Client;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube_codegen_envtest::Environment;
use kube_codegen_runtime::informer::{Informer, SharedInformerFactory};
use kube_codegen_runtime::sharding::{
    ServerFiltering, ShardKey, ShardRange, ShardSelector, hash_field,
};
use kube_codegen_tests::eventually;

const NS: &str = "sharding";
const OBJECTS: usize = 200;

/// What tracing prints, to count the informers' log lines.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn lines_with(&self, needle: &str) -> usize {
        String::from_utf8_lossy(&self.0.lock().unwrap())
            .lines()
            .filter(|l| l.contains(needle))
            .count()
    }
}

fn config_map(name: &str) -> ConfigMap {
    let mut c = ConfigMap::default();
    c.metadata.name = Some(name.into());
    c.data = Some([("k".to_string(), name.to_string())].into());
    c
}

async fn create_all(api: &Api<ConfigMap>, names: impl Iterator<Item = String>) {
    stream::iter(names)
        .for_each_concurrent(16, |name| async move {
            api.create(&PostParams::default(), &config_map(&name))
                .await
                .unwrap_or_else(|e| panic!("create {name}: {e}"));
        })
        .await;
}

fn names(informer: &Informer<ConfigMap>) -> BTreeSet<String> {
    informer
        .lister()
        .list_all()
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect()
}

/// Starts a control plane with the gate as given, splits 200 ConfigMaps (and 20 created
/// and 20 deleted while watching) between two informers with the two halves of the hash
/// space, and checks the partition.
struct Outcome {
    /// What each informer read from its list responses.
    verdicts: Vec<ServerFiltering>,
    /// What the informers logged.
    logs: Captured,
    /// How many objects a plain list with the first half's selector returned (all of them
    /// from a server that ignores the selector), and how many are in that half.
    raw_list: usize,
    first_half: usize,
}

async fn two_halves(gate: bool) -> Outcome {
    let env = Environment::builder()
        .feature_gate("ShardedListAndWatch", gate)
        .timeout(Duration::from_secs(90))
        .start()
        .await
        .expect("control plane (kube-codegen-envtest; hack/testenv.sh build makes the binaries)");
    let client = env.client();
    let captured = Captured::default();
    let writer = captured.clone();
    // Current-thread test runtime: the informers' tasks log on this thread.
    let _guard = tracing::subscriber::set_default(
        tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish(),
    );
    let ns: Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": NS}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), NS);
    create_all(&api, (0..OBJECTS).map(|i| format!("cm-{i:03}"))).await;

    let halves = ShardRange::split_even(NonZeroUsize::new(2).unwrap());
    let shards: Vec<(SharedInformerFactory, Informer<ConfigMap>)> = halves
        .iter()
        .map(|r| {
            let factory = SharedInformerFactory::builder(client.clone())
                .with_namespace(NS)
                .with_shard_selector(ShardSelector::new(ShardKey::Uid, [*r]).unwrap())
                .build();
            let informer = factory.informer_for::<ConfigMap>();
            // A metadata-only informer of the same shard lists PartialObjectMetadataList.
            let _ = factory.metadata_informer_for::<ConfigMap>();
            factory.start();
            (factory, informer)
        })
        .collect();
    for (factory, _) in &shards {
        factory
            .wait_for_cache_sync(Duration::from_secs(60))
            .await
            .unwrap();
    }

    // While they watch: 20 more, 20 fewer.
    create_all(&api, (OBJECTS..OBJECTS + 20).map(|i| format!("cm-{i:03}"))).await;
    for i in 0..20 {
        api.delete(&format!("cm-{i:03}"), &DeleteParams::default())
            .await
            .unwrap();
    }

    let all = api.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(all.len(), OBJECTS);
    let owner = |c: &ConfigMap| {
        let h = hash_field(c.metadata.uid.as_deref().unwrap());
        halves.iter().position(|r| r.contains(h)).unwrap()
    };
    let want: Vec<BTreeSet<String>> = (0..2)
        .map(|i| {
            all.iter()
                .filter(|c| owner(c) == i)
                .map(|c| c.metadata.name.clone().unwrap())
                .collect()
        })
        .collect();
    for (i, (_, informer)) in shards.iter().enumerate() {
        eventually(
            &format!("shard {i} caches exactly its half"),
            Duration::from_secs(30),
            || {
                let (have, want) = (names(informer), want[i].clone());
                async move {
                    if have == want {
                        Ok(Some(()))
                    } else {
                        let (extra, missing) = (
                            have.difference(&want).count(),
                            want.difference(&have).count(),
                        );
                        Err(anyhow::anyhow!(
                            "{extra} cached too many, {missing} missing"
                        ))
                    }
                }
            },
        )
        .await
        .unwrap();
    }
    // Exactly once: the halves are disjoint and cover every object; neither is trivial.
    let (a, b) = (names(&shards[0].1), names(&shards[1].1));
    assert!(a.is_disjoint(&b));
    assert_eq!(a.len() + b.len(), OBJECTS);
    assert!(
        a.len() > OBJECTS / 4 && b.len() > OBJECTS / 4,
        "{} / {}",
        a.len(),
        b.len()
    );

    // The metadata-only informers hold the same halves, and heard the same from the server.
    for (i, (factory, informer)) in shards.iter().enumerate() {
        let meta = factory.metadata_informer_for::<ConfigMap>();
        let have: BTreeSet<String> = meta
            .lister()
            .list_all()
            .iter()
            .map(|c| c.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(have, want[i], "metadata-only shard {i}");
        // kube-apiserver 1.37.2 filters metadata-only lists but drops shardInfo when it
        // converts them (PartialObjectMetadataList copies resourceVersion, continue and
        // remainingItemCount only): with the gate the informer sees only its half and no echo.
        let expected = match informer.server_filtering() {
            Some(ServerFiltering::Applied) => ServerFiltering::Unconfirmed,
            other => other.unwrap(),
        };
        assert_eq!(
            meta.server_filtering(),
            Some(expected),
            "metadata-only shard {i}"
        );
    }
    let verdicts = shards
        .iter()
        .map(|(_, i)| i.server_filtering().unwrap())
        .collect();
    for (factory, _) in shards {
        factory.shutdown();
    }
    drop(_guard);
    let raw_list = raw_sharded_list(&client, &shards_first(&halves)).await;
    env.stop().await.unwrap();
    Outcome {
        verdicts,
        logs: captured,
        raw_list,
        first_half: want[0].len(),
    }
}

fn shards_first(halves: &[ShardRange]) -> ShardSelector {
    ShardSelector::new(ShardKey::Uid, [halves[0]]).unwrap()
}

/// The number of items of a list request with `shardSelector`, sent by hand: what the
/// server itself returns, without the informer's own filtering.
async fn raw_sharded_list(client: &Client, selector: &ShardSelector) -> usize {
    let query: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("shardSelector", &selector.to_string())
        .finish();
    let req = http::Request::get(format!("/api/v1/namespaces/{NS}/configmaps?{query}"))
        .body(Vec::new())
        .unwrap();
    let list: serde_json::Value = client.request(req).await.unwrap();
    list["items"].as_array().unwrap().len()
}

#[tokio::test]
async fn with_the_gate_the_server_filters_and_two_halves_see_each_object_once() {
    let out = two_halves(true).await;
    assert_eq!(
        out.verdicts,
        [ServerFiltering::Applied, ServerFiltering::Applied]
    );
    assert_eq!(
        out.raw_list, out.first_half,
        "the server sent one half only"
    );
    assert_eq!(
        out.logs
            .lines_with("the API server filters by the shard selector"),
        2
    );
    assert_eq!(
        out.logs
            .lines_with("drops it from custom resource and metadata-only lists"),
        2
    );
    assert_eq!(out.logs.lines_with("ignored the shard selector"), 0);
}

#[tokio::test]
async fn without_the_gate_the_informers_filter_and_say_so_once() {
    let out = two_halves(false).await;
    assert_eq!(
        out.verdicts,
        [ServerFiltering::Ignored, ServerFiltering::Ignored]
    );
    assert_eq!(out.raw_list, OBJECTS, "the server ignored the selector");
    assert_eq!(out.logs.lines_with("ignored the shard selector"), 4);
    assert_eq!(
        out.logs
            .lines_with("the API server filters by the shard selector"),
        0
    );
}
