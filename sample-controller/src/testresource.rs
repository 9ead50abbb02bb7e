//! The TestResource controller from the "Programming Kubernetes CRDs" tutorial: every new
//! TestResource gets status "HANDLED" (set on a copy, never on the cached object) and an
//! `ObjectHandled` event.

use std::sync::Arc;

use kube::api::PostParams;
use kube_codegen_runtime::DeepCopy;
use kube_codegen_runtime::events::{EventType, Recorder, object_ref};
use kube_codegen_runtime::informer::{HandlerFuncs, Informer};
use kube_codegen_runtime::store::{ObjectKey, key_of};
use kube_codegen_runtime::workqueue::WorkQueue;
use sample_api::Clientset;
use sample_api::apis::insujang::v1beta1::TestResource;
use sample_api::generated::listers::insujang_v1beta1::TestResourceLister;

use crate::FIELD_MANAGER;

pub const HANDLED: &str = "HANDLED";
pub const OBJECT_HANDLED: &str = "ObjectHandled";
pub const MESSAGE_HANDLED: &str = "Object is handled by custom controller.";

pub struct Controller {
    clientset: Clientset,
    lister: TestResourceLister,
    pub queue: WorkQueue<ObjectKey>,
    recorder: Recorder,
}

impl Controller {
    pub fn new(
        clientset: Clientset,
        lister: TestResourceLister,
        recorder: Recorder,
        queue: WorkQueue<ObjectKey>,
    ) -> Self {
        Controller {
            clientset,
            lister,
            queue,
            recorder,
        }
    }

    pub fn register_handlers(&self, informer: &Informer<TestResource>) {
        let q = self.queue.clone();
        informer.add_event_handler(
            HandlerFuncs::new().on_add(move |tr: Arc<TestResource>, _| q.add(key_of(tr.as_ref()))),
        );
    }

    pub async fn sync(&self, key: &ObjectKey) -> Result<(), kube_codegen_runtime::Error> {
        let (Some(ns), name) = (key.namespace(), key.name()) else {
            return Ok(());
        };
        let Some(tr) = self.lister.testresources(ns).get(name) else {
            return Ok(());
        };
        if tr.status.as_deref() == Some(HANDLED) {
            return Ok(());
        }
        let mut copy = tr.deep_copy();
        copy.status = Some(HANDLED.into());
        let params = PostParams {
            field_manager: Some(FIELD_MANAGER.into()),
            ..Default::default()
        };
        let updated = self
            .clientset
            .insujang_v1beta1()
            .testresources(ns)
            .update(&copy, &params)
            .await?;
        self.recorder.record(
            &object_ref(&updated),
            EventType::Normal,
            OBJECT_HANDLED,
            MESSAGE_HANDLED,
        );
        Ok(())
    }

    pub async fn run_worker(self: Arc<Self>) {
        while let Some(key) = self.queue.get().await {
            // Shutting down: start nothing new (see foo::Controller::process_next_work_item).
            if self.queue.is_shutting_down() {
                self.queue.done(&key);
                return;
            }
            match self.sync(&key).await {
                Ok(()) => self.queue.forget(&key),
                Err(e) => {
                    tracing::warn!(%key, error = %e, "error handling TestResource; requeuing");
                    self.queue.add_rate_limited(key.clone());
                }
            }
            self.queue.done(&key);
        }
    }
}
