//! The book's examples of the generated code (docs/src/guide/generated-code.md includes the
//! code between each pair of anchors), compiled here so none exists only as text. They need
//! an API server to run; `tests/tests/clientset.rs`, `informers.rs` and the sample
//! controller run the same calls against a real one.
#![allow(dead_code)]

mod clientset {
    // ANCHOR: clientset
    use kube::api::{ListParams, PostParams};
    use sample_api::Clientset;
    use sample_api::apis::samplecontroller::v1alpha1::{Foo, FooSpec};

    async fn example(client: kube::Client) -> Result<(), kube_codegen_runtime::Error> {
        let cs = Clientset::new(client);
        let foos = cs.samplecontroller_v1alpha1().foos("default");
        let foo = Foo::new(
            "example",
            FooSpec {
                deployment_name: "example".into(),
                replicas: Some(1),
            },
        );
        match foos.create(&foo, &PostParams::default()).await {
            Err(e) if e.is_already_exists() => {}
            other => {
                other?;
            }
        }
        let mut current = foos.get("example").await?;
        current.spec.replicas = Some(2);
        if let Err(e) = foos.update(&current, &PostParams::default()).await {
            assert!(e.is_conflict() || e.is_invalid() || e.is_not_found(), "{e}");
        }
        let all = foos.list(&ListParams::default().labels("app=web")).await?;
        println!("{} foos", all.items.len());
        Ok(())
    }
    // ANCHOR_END: clientset
}

mod informers {
    // ANCHOR: informers
    use std::{sync::Arc, time::Duration};

    use k8s_openapi::api::apps::v1::Deployment;
    use kube_codegen_runtime::informer::HandlerFuncs;
    use kube_codegen_runtime::store::{ObjectKey, key_of};
    use kube_codegen_runtime::workqueue::WorkQueue;
    use sample_api::SharedInformerFactory;
    use sample_api::apis::samplecontroller::v1alpha1::Foo;

    async fn run(client: kube::Client) -> anyhow::Result<()> {
        let factory = SharedInformerFactory::new(client);
        let foos = factory.samplecontroller().v1alpha1().foos(); // typed informer + lister
        let deployments = factory.informer_for::<Deployment>(); // built-in kinds share the factory
        let queue: WorkQueue<ObjectKey> = WorkQueue::new("foos"); // client-go semantics and limiter
        let q = queue.clone();
        // The second argument says whether the add is part of the initial list (`AddKind`).
        foos.informer()
            .add_event_handler(HandlerFuncs::new().on_add(move |foo: Arc<Foo>, _| {
                q.add(key_of(foo.as_ref())) // typed "namespace/name"
            }));
        factory.start();
        factory.wait_for_cache_sync(Duration::from_secs(60)).await?;
        let lister = foos.lister();
        while let Some(key) = queue.get().await {
            if let Some(foo) = lister
                .foos(key.namespace().unwrap_or_default())
                .get(key.name())
            {
                // foo is an Arc<Foo> shared with the cache: deep_copy() before changing it.
                let _ = (foo, &deployments);
            }
            queue.forget(&key);
            queue.done(&key);
        }
        Ok(())
    }
    // ANCHOR_END: informers
}

mod builder {
    // ANCHOR: builder
    use std::{sync::Arc, time::Duration};

    use k8s_openapi::api::apps::v1::Deployment;
    use kube_codegen_runtime::controller::{Action, Builder, Predicate, Request};
    use sample_api::SharedInformerFactory;
    use sample_api::apis::samplecontroller::v1alpha1::Foo;

    async fn reconcile(req: Request<Foo>, ctx: Arc<kube::Client>) -> Result<Action, kube::Error> {
        let Some(foo) = req.object else {
            return Ok(Action::Done); // deleted: garbage collection does the rest
        };
        let _ = (foo, ctx); // make the world match foo
        Ok(Action::RequeueAfter(Duration::from_secs(300)))
    }

    async fn run(client: kube::Client) -> anyhow::Result<()> {
        let factory = SharedInformerFactory::new(client.clone());
        let foos = factory.samplecontroller().v1alpha1().foos();
        let controller = Builder::for_kind(foos.informer().clone())
            .owns(factory.informer_for::<Deployment>())
            .with_predicate(Predicate::GenerationChanged)
            .max_concurrent_reconciles(2)
            .build();
        factory.start();
        factory.wait_for_cache_sync(Duration::from_secs(60)).await?;
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        controller.run(Arc::new(client), reconcile, shutdown).await;
        Ok(())
    }
    // ANCHOR_END: builder

    /// The builder's controller under a `Manager`, with leader election.
    async fn managed(client: kube::Client) -> anyhow::Result<()> {
        let factory = SharedInformerFactory::new(client.clone());
        let controller = Builder::for_kind(
            factory
                .samplecontroller()
                .v1alpha1()
                .foos()
                .informer()
                .clone(),
        )
        .build();
        // ANCHOR: manager
        use kube_codegen_runtime::controller::{Manager, Stopped};
        use kube_codegen_runtime::leader::{LeaderElectionConfig, LeaderElector};

        let identity = LeaderElectionConfig::default_identity();
        let config = LeaderElectionConfig::new("foo-controller", "kube-system", &identity);
        let stopped = Manager::new()
            .leader_election(LeaderElector::new(client.clone(), config)?)
            .shutdown_on_signals()
            .add(controller, Arc::new(client), reconcile)
            .run()
            .await;
        anyhow::ensure!(stopped != Stopped::LostLeadership, "lost leadership");
        // ANCHOR_END: manager
        Ok(())
    }
}

mod metadata_only {
    // ANCHOR: metadata_only
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::Secret;
    use kube::core::PartialObjectMeta;
    use kube_codegen_runtime::controller::{Builder, Controller};
    use kube_codegen_runtime::lister::Lister;
    use kube_codegen_runtime::store::ObjectKey;
    use sample_api::SharedInformerFactory;
    use sample_api::apis::samplecontroller::v1alpha1::Foo;

    fn controller(factory: &SharedInformerFactory) -> Controller<Foo> {
        let foos = factory.samplecontroller().v1alpha1().foos();
        Builder::for_kind(foos.informer().clone())
            // Each Deployment's events enqueue its controller owner; no spec is cached.
            .owns_metadata::<Deployment>(factory)
            // A Secret labelled foo=<name> reconciles that Foo; no Secret data is cached.
            .watches_metadata::<Secret>(factory, |s: &PartialObjectMeta<Secret>| {
                let foo = s.metadata.labels.as_ref().and_then(|l| l.get("foo"));
                match (&s.metadata.namespace, foo) {
                    (Some(ns), Some(foo)) => vec![ObjectKey::namespaced(ns, foo)],
                    _ => vec![],
                }
            })
            .build()
    }

    /// The reconcile reads the same cache: `get` returns `Arc<PartialObjectMeta<Deployment>>`.
    fn deployments(factory: &SharedInformerFactory) -> Lister<PartialObjectMeta<Deployment>> {
        factory.metadata_informer_for::<Deployment>().lister()
    }
    // ANCHOR_END: metadata_only
}

mod sharding {
    // ANCHOR: sharding
    use std::num::NonZeroUsize;

    use kube_codegen_runtime::informer::SharedInformerFactory as RuntimeFactory;
    use kube_codegen_runtime::sharding::{ShardKey, ShardRange, ShardSelector};
    use sample_api::SharedInformerFactory;

    fn factory(client: kube::Client, flag: Option<&str>) -> anyhow::Result<SharedInformerFactory> {
        let mine: ShardSelector = match flag {
            // From a flag: "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
            // a bad selector is an error at its column, with a hint.
            Some(text) => text.parse()?,
            // Replica 0 of 2: the first half of the hash space.
            None => {
                let halves = ShardRange::split_even(NonZeroUsize::new(2).unwrap());
                ShardSelector::new(ShardKey::Uid, [halves[0]])?
            }
        };
        Ok(SharedInformerFactory::from_runtime(
            RuntimeFactory::builder(client)
                .with_shard_selector(mine)
                .build(),
        ))
    }
    // ANCHOR_END: sharding
}

mod compact {
    // ANCHOR: compact
    use std::sync::Arc;

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube_codegen_runtime::informer::SharedInformerFactory as RuntimeFactory;
    use kube_codegen_runtime::informer::drop_managed_fields;
    use sample_api::SharedInformerFactory;

    /// Many ConfigMaps, read now and then: cache each as its JSON.
    fn settings(client: kube::Client) -> Option<Arc<ConfigMap>> {
        let factory = SharedInformerFactory::from_runtime(
            RuntimeFactory::builder(client)
                .with_transform(drop_managed_fields)
                .build(),
        );
        let config_maps = factory.compact().informer_for::<ConfigMap>();
        // Parses the cached JSON into a new `Arc<ConfigMap>`.
        config_maps.lister().namespaced("default").get("settings")
    }
    // ANCHOR_END: compact
}
