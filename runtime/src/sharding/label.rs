//! Label mode: sharding on API servers without the `ShardedListAndWatch` gate, and for
//! owned objects on any server.
//!
//! Each object carries its slot in a label of the group, `shard.kube-codegen.io/<group>`,
//! whose value is the slot number (decimal) its shard key hashes into: the slot of
//! [`slot_of`]`(`[`hash_field`]`(uid), slots)`, exactly the slot the gate works it in, so the
//! slot table, the assignment and the fencing are the same in both modes. A replica then
//! lists and watches each of its slots with `labelSelector: <key>=<slot>` instead of a
//! `shardSelector`: every API server filters by labels.
//!
//! Who writes the label:
//! - **primary objects** (label mode only): nobody can at creation. A mutating webhook does
//!   not see the uid (the API server assigns it after mutating admission), so the slot
//!   cannot be computed there. Instead every replica watches, metadata only, the primary
//!   objects *without* the label (`!<key>`, a transient set: an object leaves it once
//!   labelled) and labels those of the slots it caches ([`run_labeler`]). The price: every
//!   replica sees every new object once (its metadata), and an object is reconciled only
//!   after the round trip of its label (a merge patch);
//! - **owned objects** (both modes): the controller that creates them, with the owner's
//!   slot ([`crate::sharding::ShardGate::owner_label`]). The API server hashes only an
//!   object's own uid or namespace, which puts a Deployment in another slot than its Foo;
//!   the label puts it in its owner's.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fmt::Debug;
use std::num::NonZeroUsize;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use kube::core::PartialObjectMeta;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;

use super::{ShardGate, hash_field, slot_of};
use crate::store::{ObjectKey, key_of};
use crate::task::AbortOnDrop;

/// The prefix of the slot label's key; the group's name follows.
pub const SLOT_LABEL_PREFIX: &str = "shard.kube-codegen.io/";

/// How a shard group's replicas get only their slots' objects from the API server. Chosen
/// once per process, when the member joins (see [`ShardMode::decide`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShardMode {
    /// Kubernetes' sharded list and watch: each slot's list and watch carries a
    /// `shardSelector` on the uid hash; the server's gate `ShardedListAndWatch` is on.
    Selector,
    /// The fallback: objects carry their slot in the group's label and each slot is listed
    /// and watched by label selector.
    Label,
}

impl ShardMode {
    /// `selector` or `label`, as metrics and logs name it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ShardMode::Selector => "selector",
            ShardMode::Label => "label",
        }
    }
}

impl fmt::Display for ShardMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The slot label of one shard group: key `shard.kube-codegen.io/<group>`, value the slot.
///
/// A label key's prefix is a DNS subdomain (at most 253 characters) and its name at most 63;
/// a group's name is a DNS label of at most 40 ([`crate::sharding::GroupConfig::validate`]),
/// so every group's key is valid. One key per group, so objects of a kind sharded by two
/// groups (two controllers owning Deployments) carry one label for each.
///
/// ```
/// use std::num::NonZeroUsize;
/// use kube_codegen_runtime::sharding::SlotLabel;
///
/// let label = SlotLabel::for_group("foos");
/// assert_eq!(label.key(), "shard.kube-codegen.io/foos");
/// assert_eq!(label.selector(7), "shard.kube-codegen.io/foos=7");
/// assert_eq!(label.unlabelled(), "!shard.kube-codegen.io/foos");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SlotLabel {
    key: String,
}

impl SlotLabel {
    /// The label of `group` (a valid group name, as [`crate::sharding::GroupConfig`] checks).
    #[must_use]
    pub fn for_group(group: &str) -> Self {
        SlotLabel {
            key: format!("{SLOT_LABEL_PREFIX}{group}"),
        }
    }

    /// The label's key.
    #[must_use]
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The label's value for `slot`: the slot number in decimal.
    #[must_use]
    pub fn value(slot: usize) -> String {
        slot.to_string()
    }

    /// The label selector of one slot, `<key>=<slot>`.
    #[must_use]
    pub fn selector(&self, slot: usize) -> String {
        format!("{}={}", self.key, slot)
    }

    /// The label selector of the objects without the label, `!<key>`.
    #[must_use]
    pub fn unlabelled(&self) -> String {
        format!("!{}", self.key)
    }

    /// The slot an object's label names, if it has the label and names one of `count`
    /// slots.
    #[must_use]
    pub fn slot_in(&self, meta: &ObjectMeta, count: NonZeroUsize) -> Option<usize> {
        meta.labels
            .as_ref()?
            .get(&self.key)?
            .parse::<usize>()
            .ok()
            .filter(|&s| s < count.get())
    }
}

/// `extra` added to a label selector (`None`: just `extra`); terms of a label selector are
/// ANDed by commas.
#[must_use]
pub(crate) fn and_labels(existing: Option<&str>, extra: &str) -> String {
    match existing.filter(|s| !s.trim().is_empty()) {
        Some(s) => format!("{s},{extra}"),
        None => extra.to_owned(),
    }
}

impl ShardMode {
    /// The mode a filtering verdict on a *built-in* list (Leases) implies: the selector
    /// mode only when the server echoed the selector in `metadata.shardInfo`, which
    /// kube-apiserver 1.37 does for every built-in list it filters. Everything else (no
    /// echo, another selector echoed, no answer) falls back to labels, which every server
    /// applies: the fallback is always correct, the selector mode only saves the labels.
    #[must_use]
    pub fn decide(filtering: &super::ServerFiltering) -> ShardMode {
        match filtering {
            super::ServerFiltering::Applied => ShardMode::Selector,
            _ => ShardMode::Label,
        }
    }
}

/// The labeling decision for one object without a valid slot label: its slot, if it is one
/// of `mine` (the slots this replica caches), else `None` (another replica labels it).
#[must_use]
pub(crate) fn slot_to_label(
    label: &SlotLabel,
    key: super::ShardKey,
    count: NonZeroUsize,
    mine: &BTreeSet<usize>,
    meta: &ObjectMeta,
) -> Option<usize> {
    let slot = slot_of(hash_field(key.value_of(meta)), count);
    let labelled = label.slot_in(meta, count) == Some(slot);
    (!labelled && mine.contains(&slot)).then_some(slot)
}

/// The merge patch that labels an object with `slot`. It carries the object's uid: the API
/// server refuses to change a uid, so a patch meant for an object that was deleted and
/// created again under its name fails instead of labelling the new one with the old slot.
#[must_use]
pub(crate) fn label_patch(label: &SlotLabel, uid: &str, slot: usize) -> serde_json::Value {
    serde_json::json!({
        "metadata": {
            "uid": uid,
            "labels": { label.key(): SlotLabel::value(slot) }
        }
    })
}

/// How often the labeler retries objects still unlabelled (a failed patch, or one whose
/// leaving event has not arrived yet).
const RETRY: Duration = Duration::from_secs(10);

/// At most this many label patches in flight per replica.
const CONCURRENT_PATCHES: usize = 8;

/// Labels, in label mode, the primary objects of the slots this replica caches that lack
/// the slot label: a metadata-only watch of `!<key>` (and the informer's own label selector,
/// `labels`) through `api`, patches through `client`. Returns at once in selector mode; runs
/// until dropped otherwise.
///
/// Only the slots this replica caches (worked or about to be taken), so the work is split
/// like the reconciles. Two replicas labelling one object during a hand-over write the same
/// value (a function of the uid), so no fencing is needed here; labelling the slots about
/// to be taken lets their lists fill before the slots open.
pub(crate) async fn run_labeler<K>(
    api: Api<K>,
    client: Client,
    labels: Option<String>,
    gate: ShardGate,
) where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let mut mode = gate.watch_mode();
    let Ok(mode) = mode.wait_for(Option::is_some).await.map(|m| *m) else {
        return;
    };
    if mode != Some(ShardMode::Label) {
        return;
    }
    let label = gate.label().clone();
    let (key, count) = (gate.key(), gate.slot_count());
    let config =
        watcher::Config::default().labels(&and_labels(labels.as_deref(), &label.unlabelled()));
    // kube 5 deprecates it for `Api<PartialObjectMeta<K>>`, which cannot be had from the
    // informer's `Api<K>` (namespaced or not) without knowing K's scope.
    #[allow(deprecated)]
    let mut stream = watcher::metadata_watcher(api, config)
        .default_backoff()
        .boxed();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<(String, String, String, usize)>();
    // The patcher reports each patch it finished (whatever its outcome), so a retry re-sends
    // only objects whose patch is done and that are still unlabelled, never one still queued:
    // re-sending the whole backlog every RETRY made the queue grow faster than the client's
    // QPS drained it (label mode converged 4.8x slower than selector mode on one replica).
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<ObjectKey>();
    let patcher = {
        let label = label.clone();
        tokio::spawn(async move {
            tokio_stream_of(rx)
                .for_each_concurrent(CONCURRENT_PATCHES, |(ns, name, uid, slot)| {
                    let (client, label, done) = (client.clone(), label.clone(), done_tx.clone());
                    async move {
                        patch_label::<K>(&client, &label, &ns, &name, &uid, slot).await;
                        let _ = done.send(ObjectKey::namespaced(ns, name));
                    }
                })
                .await;
        })
    };
    let _abort = AbortOnDrop(patcher);
    // The unlabelled objects seen; those sent to the patcher since the last retry; and those
    // of them whose patch has not finished yet.
    let mut pending: BTreeMap<ObjectKey, PartialObjectMeta<K>> = BTreeMap::new();
    let mut sent: BTreeSet<ObjectKey> = BTreeSet::new();
    let mut in_flight: BTreeSet<ObjectKey> = BTreeSet::new();
    let mut cached = gate.watch_cached();
    let mut retry = tokio::time::interval(RETRY);
    retry.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let send = |o: &PartialObjectMeta<K>,
                mine: &BTreeSet<usize>,
                sent: &mut BTreeSet<ObjectKey>,
                in_flight: &mut BTreeSet<ObjectKey>| {
        let k = key_of(o);
        if sent.contains(&k) {
            return;
        }
        if let Some(slot) = slot_to_label(&label, key, count, mine, &o.metadata) {
            sent.insert(k.clone());
            in_flight.insert(k);
            let _ = tx.send((
                o.namespace().unwrap_or_default(),
                o.name_any(),
                o.metadata.uid.clone().unwrap_or_default(),
                slot,
            ));
        }
    };
    tracing::debug!(label = %label.key(), "shard labeler: labelling the objects of this replica's slots");
    loop {
        tokio::select! {
            ev = stream.next() => match ev {
                None => return,
                Some(Ok(Event::Init)) => {
                    pending.clear();
                    sent.retain(|k| in_flight.contains(k));
                }
                Some(Ok(Event::InitApply(o) | Event::Apply(o))) => {
                    send(&o, &gate.cached(), &mut sent, &mut in_flight);
                    pending.insert(key_of(&o), o);
                }
                Some(Ok(Event::Delete(o))) => {
                    let k = key_of(&o);
                    pending.remove(&k);
                    sent.remove(&k);
                }
                Some(Ok(Event::InitDone)) => {}
                Some(Err(e)) => tracing::warn!(error = %e, "shard labeler: watch failed; kube-runtime retries with backoff"),
            },
            r = cached.changed() => {
                if r.is_err() {
                    return;
                }
                let mine = cached.borrow_and_update().clone();
                for o in pending.values() {
                    send(o, &mine, &mut sent, &mut in_flight);
                }
            }
            Some(k) = done_rx.recv() => {
                in_flight.remove(&k);
            }
            _ = retry.tick() => {
                sent.retain(|k| in_flight.contains(k));
                let mine = gate.cached();
                for o in pending.values() {
                    send(o, &mine, &mut sent, &mut in_flight);
                }
            }
        }
    }
}

fn tokio_stream_of<T: Send + 'static>(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<T>,
) -> impl futures::Stream<Item = T> + Send {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

/// One idempotent merge patch of the slot label. A gone object (404) or one of another uid
/// (the API server refuses the uid change) needs nothing; other failures are retried.
async fn patch_label<K>(
    client: &Client,
    label: &SlotLabel,
    namespace: &str,
    name: &str,
    uid: &str,
    slot: usize,
) where
    K: Resource<DynamicType = ()>,
{
    let ns = (!namespace.is_empty()).then_some(namespace);
    let request = kube::core::Request::new(K::url_path(&(), ns));
    let patch = Patch::Merge(label_patch(label, uid, slot));
    let req = match request.patch_metadata(name, &PatchParams::default(), &patch) {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(%name, error = %e, "shard labeler: cannot build the label patch");
            return;
        }
    };
    match client.request::<PartialObjectMeta<K>>(req).await {
        Ok(_) => tracing::trace!(%namespace, %name, slot, "shard labeler: labelled"),
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 || s.code == 422 => {
            tracing::debug!(%namespace, %name, code = s.code, "shard labeler: object gone or replaced; not labelled")
        }
        Err(e) => {
            tracing::warn!(%namespace, %name, error = %e, "shard labeler: label patch failed; retried")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharding::{DEFAULT_SLOTS, ServerFiltering, ShardKey};

    fn meta(uid: &str, label: Option<(&str, &str)>) -> ObjectMeta {
        ObjectMeta {
            name: Some("a".into()),
            namespace: Some("ns".into()),
            uid: Some(uid.into()),
            labels: label.map(|(k, v)| [(k.to_owned(), v.to_owned())].into()),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn label_keys_are_valid_for_every_group_name() {
        // The longest group name (40) gives a 40-character name part (at most 63).
        let longest = "g".repeat(40);
        let key = SlotLabel::for_group(&longest).key().to_owned();
        let (prefix, name) = key.split_once('/').unwrap();
        assert_eq!(prefix, "shard.kube-codegen.io");
        assert!(name.len() <= 63 && prefix.len() <= 253, "{key}");
    }

    #[test]
    fn selectors_name_one_slot_or_the_unlabelled() {
        let l = SlotLabel::for_group("foos");
        assert_eq!(l.selector(0), "shard.kube-codegen.io/foos=0");
        assert_eq!(l.selector(63), "shard.kube-codegen.io/foos=63");
        assert_eq!(l.unlabelled(), "!shard.kube-codegen.io/foos");
        assert_eq!(and_labels(None, "a=1"), "a=1");
        assert_eq!(and_labels(Some(""), "a=1"), "a=1");
        assert_eq!(and_labels(Some("app=x"), "a=1"), "app=x,a=1");
    }

    #[test]
    fn the_label_names_a_slot_only_if_it_is_one() {
        let l = SlotLabel::for_group("foos");
        let n = NonZeroUsize::new(4).unwrap();
        assert_eq!(l.slot_in(&meta("u", Some((l.key(), "3"))), n), Some(3));
        assert_eq!(l.slot_in(&meta("u", Some((l.key(), "4"))), n), None);
        assert_eq!(l.slot_in(&meta("u", Some((l.key(), "x"))), n), None);
        assert_eq!(l.slot_in(&meta("u", Some(("other", "1"))), n), None);
        assert_eq!(l.slot_in(&meta("u", None), n), None);
    }

    #[test]
    fn a_replica_labels_only_unlabelled_objects_of_its_slots() {
        let l = SlotLabel::for_group("foos");
        let slots = DEFAULT_SLOTS;
        let uid = "0b7bd2a2-6e3b-4c84-9a46-2b8f3f7a3c11";
        let slot = slot_of(hash_field(uid), slots);
        let mine: BTreeSet<usize> = [slot].into();
        let others: BTreeSet<usize> = (0..slots.get()).filter(|&s| s != slot).collect();
        let decide = |mine: &BTreeSet<usize>, label: Option<&str>| {
            let m = meta(uid, label.map(|v| (l.key(), v)));
            slot_to_label(&l, ShardKey::Uid, slots, mine, &m)
        };
        // Unlabelled, in my slots: label it with the slot the gate works it in.
        assert_eq!(decide(&mine, None), Some(slot));
        // Another replica's slot: not mine to label.
        assert_eq!(decide(&others, None), None);
        // Already labelled right: nothing to do.
        assert_eq!(decide(&mine, Some(&slot.to_string())), None);
        // Labelled wrong (by hand): its slot again (the unlabelled watch sees it once the
        // wrong label is removed).
        let wrong = ((slot + 1) % slots.get()).to_string();
        assert_eq!(decide(&mine, Some(&wrong)), Some(slot));
    }

    #[test]
    fn the_patch_sets_the_label_and_pins_the_uid() {
        let l = SlotLabel::for_group("foos");
        assert_eq!(
            label_patch(&l, "u-1", 12),
            serde_json::json!({"metadata": {"uid": "u-1", "labels": {"shard.kube-codegen.io/foos": "12"}}})
        );
    }

    #[test]
    fn only_an_echoed_selector_chooses_the_selector_mode() {
        assert_eq!(
            ShardMode::decide(&ServerFiltering::Applied),
            ShardMode::Selector
        );
        for other in [
            ServerFiltering::Unknown,
            ServerFiltering::Ignored,
            ServerFiltering::Unconfirmed,
            ServerFiltering::Different("x".into()),
        ] {
            assert_eq!(ShardMode::decide(&other), ShardMode::Label, "{other:?}");
        }
        assert_eq!(ShardMode::Label.to_string(), "label");
        assert_eq!(ShardMode::Selector.to_string(), "selector");
    }
}
