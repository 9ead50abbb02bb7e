//! A shard group on real Leases: each replica holds a *member Lease*, the members agree on
//! who owns which slot of the hash space, and reconciles pass through a [`ShardGate`] that
//! opens a slot only once the hand-over is fenced.
//!
//! # Objects
//! - **Member Lease** `<group>-member-<fnv64(identity)>`, labelled
//!   `sharding.kube-codegen.io/group=<group>`, `holderIdentity` the replica's identity. It
//!   is held and renewed by the runtime's [`LeaderElector`] (the same acquire, renew,
//!   lose and release code as leader election; nobody else competes for it). On shutdown
//!   (SIGTERM) the replica releases it: `holderIdentity` emptied.
//! - **Table Lease** `<group>`, labelled `sharding.kube-codegen.io/table=<group>`: its
//!   annotation `sharding.kube-codegen.io/slots` holds the [`SlotTable`] (who holds each
//!   slot), changed only by compare-and-swap (an update carrying the `resourceVersion` read).
//!
//! # Protocol (the rules of [`SlotTable`], on these objects)
//! Every `retry_period` a member lists the group's member Leases and reads the table.
//! - *Live members*: the holders of member Leases whose `resourceVersion` changed within the
//!   last `lease_duration` by this member's clock (client-go's observed time: clocks need
//!   not agree), plus itself. A released Lease (empty holder) is not live at once.
//! - *Plan*: the [`Assignment`] of the live members (balanced rendezvous hashing) says which
//!   slots are this member's; [`SlotTable::plan`] gives up held slots that are no longer
//!   its and takes the slots that are its and that no live member holds.
//! - *Stop, then write*: slots given up are closed in the gate and every reconcile in them
//!   is dropped or finished *before* the write that frees them is sent. Slots taken open
//!   only after the write succeeded. A member that (re)joined opens nothing until one
//!   write of its own succeeded (with no change it writes the table anyway).
//! - *Self-fencing*: a member works only while its last successful Lease renewal was sent
//!   at most `renew_deadline` ago and the table read it works from was sent at most
//!   `renew_deadline` ago (and the Lease was fresh then). Past that the gate closes every
//!   slot, on a timer, whether or not the API server answers.
//!
//! # Why no key is reconciled twice at once
//! A slot moves from A to B only through the table. Either A wrote it free, and A had
//! stopped working on it before sending that write; or B took it because A was not live,
//! i.e. B saw A's Lease unchanged for `lease_duration`. A sent its last successful renewal
//! before the server stored it, and B observed that version no earlier, so by the time B
//! takes the slot, A's renewal is more than `lease_duration` old and A closed its gate
//! when it passed `renew_deadline < lease_duration`: `lease_duration - renew_deadline`
//! (5s by default) of margin for clock rate differences and a reconcile's cancellation.
//! Two members that both think a slot is free write against the same table version: one
//! write fails. A member that lost its Lease and comes back writes once before it works,
//! so a decision taken by another on an older table (that it was gone) cannot be undone
//! by a stale view of its own: the compare-and-swap covers the Leases' news too. The test
//! `no_slot_is_worked_on_twice_and_none_is_dropped` in `fence.rs` checks these rules
//! under random kills, partitions and late writes.
//!
//! # Why none is dropped
//! When membership stops changing, every live member plans from the same member list, so
//! each slot is eventually freed by a holder the assignment no longer names (or by expiry)
//! and taken by the one it names; on taking a slot the controller enqueues every cached
//! object of it, and the informer's first list of the slot enqueues the rest.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::future::Future;
use std::num::NonZeroUsize;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Client;
use kube::api::{Api, ListParams, PostParams};
use parking_lot::Mutex;
use tokio::sync::{Notify, watch};
use tokio::time::{Instant, sleep, sleep_until, timeout};

use super::{
    Assignment, Changes, DEFAULT_SLOTS, ShardKey, ShardMode, SlotLabel, SlotTable, hash_field,
    slot_of,
};
use crate::error::Error;
use crate::leader::{
    Ended, InvalidConfig, LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaderHandle,
    LeadershipToken,
};

/// The label naming the group on its member Leases.
pub const GROUP_LABEL: &str = "sharding.kube-codegen.io/group";
/// The label naming the group on its table Lease.
pub const TABLE_LABEL: &str = "sharding.kube-codegen.io/table";
/// The table Lease's annotation holding the slot table (JSON).
pub const TABLE_ANNOTATION: &str = "sharding.kube-codegen.io/slots";

/// A shard group and this replica's place in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupConfig {
    /// The group's name: the table Lease's name and the member Leases' label value (a DNS
    /// label of at most 40 characters, so the member Leases' names fit).
    pub group: String,
    /// The namespace of the Leases.
    pub namespace: String,
    /// This replica's identity, unique in the group (e.g. the pod name).
    pub identity: String,
    /// The field objects are sharded on.
    pub key: ShardKey,
    /// The number of slots the hash space is cut into: part of the group's protocol, every
    /// member must use the same. Default [`DEFAULT_SLOTS`] (64).
    pub slots: NonZeroUsize,
    /// How long a member Lease unchanged means its member is gone. Default 15s.
    pub lease_duration: Duration,
    /// How long a member works without a successful renewal or table read. Default 10s.
    pub renew_deadline: Duration,
    /// How often a member renews its Lease and reads the group. Default 2s.
    pub retry_period: Duration,
}

impl GroupConfig {
    /// Join `group` (Leases in `namespace`) as `identity`, sharding on uids into 64 slots,
    /// with leader election's default timings (15s / 10s / 2s).
    #[must_use]
    pub fn new(
        group: impl Into<String>,
        namespace: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        GroupConfig {
            group: group.into(),
            namespace: namespace.into(),
            identity: identity.into(),
            key: ShardKey::Uid,
            slots: DEFAULT_SLOTS,
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }

    /// The member Lease's election config.
    fn member_lease(&self) -> LeaderElectionConfig {
        let mut c = LeaderElectionConfig::new(
            member_lease_name(&self.group, &self.identity),
            &self.namespace,
            &self.identity,
        );
        c.lease_duration = self.lease_duration;
        c.renew_deadline = self.renew_deadline;
        c.retry_period = self.retry_period;
        c.release_on_cancel = true;
        c.labels = [(GROUP_LABEL.to_owned(), self.group.clone())].into();
        c
    }

    /// The checks of [`LeaderElectionConfig::validate`], and a group name that can name
    /// the Leases.
    ///
    /// # Errors
    /// [`InvalidConfig`] saying what is wrong.
    pub fn validate(&self) -> Result<(), InvalidConfig> {
        let g = &self.group;
        let ok = !g.is_empty()
            && g.len() <= 40
            && g.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !g.starts_with('-')
            && !g.ends_with('-');
        if !ok {
            return Err(InvalidConfig(format!(
                "shard group {g:?}: expected a DNS label of at most 40 characters (lower-case letters, digits, '-')"
            )));
        }
        self.member_lease().validate()
    }
}

/// `<group>-member-<fnv64 of identity>`: identities need not be valid object names.
fn member_lease_name(group: &str, identity: &str) -> String {
    format!("{group}-member-{:016x}", hash_field(identity))
}

/// Which slots an informer caches, for [`crate::informer::Informer::set_dynamic_shards`]:
/// a changing set, on one key and slot count.
#[derive(Clone, Debug)]
pub struct DynamicShards {
    pub(crate) key: ShardKey,
    pub(crate) count: NonZeroUsize,
    pub(crate) slots: watch::Receiver<Arc<BTreeSet<usize>>>,
    pub(crate) label: SlotLabel,
    pub(crate) by: SlotSource,
    pub(crate) mode: watch::Receiver<Option<ShardMode>>,
}

/// Where an object's slot comes from, for an informer of a shard group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SlotSource {
    /// The hash of its own shard key: the primary objects. Listed by `shardSelector` or by
    /// label, as the group's [`ShardMode`] says.
    OwnKey,
    /// The group's slot label, written by the controller with its owner's slot: owned
    /// objects, listed by label whatever the mode (the server would hash their own uid).
    OwnerLabel,
}

/// How one slot of a sharded informer is listed and watched, and which objects it keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SlotQuery {
    /// `shardSelector` of the slot's hash range.
    Selector(super::ShardSelector),
    /// `labelSelector: <key>=<slot>`.
    Label(String),
}

impl DynamicShards {
    /// How `slot` is listed, in `mode` (`None` until the member decided it: primary
    /// objects wait, owned objects are listed by label anyway).
    pub(crate) fn query(&self, slot: usize, mode: Option<ShardMode>) -> Option<SlotQuery> {
        match (self.by, mode) {
            (SlotSource::OwnerLabel, _) | (SlotSource::OwnKey, Some(ShardMode::Label)) => {
                Some(SlotQuery::Label(self.label.selector(slot)))
            }
            (SlotSource::OwnKey, Some(ShardMode::Selector)) => Some(SlotQuery::Selector(
                super::ShardSelector::new(self.key, [super::slot_range(slot, self.count)])
                    .expect("one range"),
            )),
            (SlotSource::OwnKey, None) => None,
        }
    }

    /// The slot of an object, as this informer places it: by its key's hash, or by its
    /// label (`None` if unlabelled).
    pub(crate) fn slot_of(&self, meta: &ObjectMeta) -> Option<usize> {
        match self.by {
            SlotSource::OwnKey => Some(slot_of(hash_field(self.key.value_of(meta)), self.count)),
            SlotSource::OwnerLabel => self.label.slot_in(meta, self.count),
        }
    }

    /// The field hashed.
    #[must_use]
    pub fn key(&self) -> ShardKey {
        self.key
    }

    /// The number of slots of the hash space.
    #[must_use]
    pub fn slot_count(&self) -> NonZeroUsize {
        self.count
    }
}

struct GateState {
    work: BTreeSet<usize>,
    inflight: Vec<usize>,
}

struct GateInner {
    key: ShardKey,
    count: NonZeroUsize,
    label: SlotLabel,
    mode_tx: watch::Sender<Option<ShardMode>>,
    state: Mutex<GateState>,
    work_tx: watch::Sender<Arc<BTreeSet<usize>>>,
    cache_tx: watch::Sender<Arc<BTreeSet<usize>>>,
    drained: Notify,
}

/// Which slots this replica may work on now (fenced: their hand-over is complete), and
/// which it caches. A controller [enters](Self::enter) the gate for the slot of each key
/// before reconciling it, and drops its reconcile when the slot is
/// [revoked](WorkGuard::revoked). Cheap to clone.
#[derive(Clone)]
pub struct ShardGate {
    inner: Arc<GateInner>,
}

impl fmt::Debug for ShardGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShardGate")
            .field("key", &self.inner.key)
            .field("working", &self.working())
            .finish()
    }
}

impl ShardGate {
    /// A closed gate (no slot open) on `key`, `count` slots, labelling with `label` (the
    /// group's [`SlotLabel`]). Its mode is unknown until [`set_mode`](Self::set_mode) (a
    /// [`ShardMember`] sets it when it joins); primary informers list nothing until then.
    #[must_use]
    pub fn new(key: ShardKey, count: NonZeroUsize, label: SlotLabel) -> Self {
        ShardGate {
            inner: Arc::new(GateInner {
                key,
                count,
                label,
                mode_tx: watch::Sender::new(None),
                state: Mutex::new(GateState {
                    work: BTreeSet::new(),
                    inflight: vec![0; count.get()],
                }),
                work_tx: watch::Sender::new(Arc::default()),
                cache_tx: watch::Sender::new(Arc::default()),
                drained: Notify::new(),
            }),
        }
    }

    /// The field hashed.
    #[must_use]
    pub fn key(&self) -> ShardKey {
        self.inner.key
    }

    /// The number of slots.
    #[must_use]
    pub fn slot_count(&self) -> NonZeroUsize {
        self.inner.count
    }

    /// The slot of the object with this metadata.
    #[must_use]
    pub fn slot_of(&self, meta: &ObjectMeta) -> usize {
        slot_of(hash_field(self.inner.key.value_of(meta)), self.inner.count)
    }

    /// The group's slot label.
    #[must_use]
    pub fn label(&self) -> &SlotLabel {
        &self.inner.label
    }

    /// The label an object owned by the object of `owner` metadata carries: the group's
    /// key, the owner's slot. Put it on every object the controller creates and owns
    /// (`Builder::owns` informers of a sharded controller list by it), so owned objects
    /// are cached by their owner's replica.
    ///
    /// ```
    /// use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    /// use kube_codegen_runtime::sharding::{DEFAULT_SLOTS, ShardGate, ShardKey, SlotLabel};
    ///
    /// let gate = ShardGate::new(ShardKey::Uid, DEFAULT_SLOTS, SlotLabel::for_group("foos"));
    /// let foo = ObjectMeta { uid: Some("5d0c7bb4-0d54-4b8c-a2f3-52b2b1b0c3a9".into()), ..Default::default() };
    /// let (key, value) = gate.owner_label(&foo);
    /// assert_eq!(key, "shard.kube-codegen.io/foos");
    /// assert_eq!(value, gate.slot_of(&foo).to_string());
    /// ```
    #[must_use]
    pub fn owner_label(&self, owner: &ObjectMeta) -> (String, String) {
        (
            self.inner.label.key().to_owned(),
            SlotLabel::value(self.slot_of(owner)),
        )
    }

    /// How this group's replicas list their slots, once decided.
    #[must_use]
    pub fn mode(&self) -> Option<ShardMode> {
        *self.inner.mode_tx.borrow()
    }

    /// The mode, as it is decided.
    #[must_use]
    pub fn watch_mode(&self) -> watch::Receiver<Option<ShardMode>> {
        self.inner.mode_tx.subscribe()
    }

    /// Sets the mode (once: later calls change nothing, the informers already listed). A
    /// [`ShardMember`] sets it when it joins, from a probe of the API server, unless it is
    /// set already: set it before [`ShardMember::run`] to force a mode (label mode on a
    /// server with the gate on, say). Every member of a group should use the same mode, but
    /// mixing is safe: the label is written only by label-mode members and the slot table
    /// is the same; a selector-mode member just leaves new objects of its slots unlabelled
    /// until a label-mode member takes the slot.
    pub fn set_mode(&self, mode: ShardMode) {
        self.inner.mode_tx.send_if_modified(|m| {
            if m.is_some() {
                return false;
            }
            *m = Some(mode);
            true
        });
    }

    /// Start work in `slot`, if it is open; the slot is not given up while the guard lives.
    #[must_use]
    pub fn enter(&self, slot: usize) -> Option<WorkGuard> {
        let mut state = self.inner.state.lock();
        if !state.work.contains(&slot) {
            return None;
        }
        state.inflight[slot] += 1;
        Some(WorkGuard {
            gate: self.clone(),
            slot,
        })
    }

    /// The open slots.
    #[must_use]
    pub fn working(&self) -> Arc<BTreeSet<usize>> {
        self.inner.work_tx.borrow().clone()
    }

    /// The open slots, as they change.
    #[must_use]
    pub fn watch_working(&self) -> watch::Receiver<Arc<BTreeSet<usize>>> {
        self.inner.work_tx.subscribe()
    }

    /// The slots to cache: the open ones and the ones this replica is about to take (so
    /// their lists run while the previous holder finishes).
    #[must_use]
    pub fn cached(&self) -> Arc<BTreeSet<usize>> {
        self.inner.cache_tx.borrow().clone()
    }

    /// The cached slots, as they change.
    #[must_use]
    pub fn watch_cached(&self) -> watch::Receiver<Arc<BTreeSet<usize>>> {
        self.inner.cache_tx.subscribe()
    }

    /// The cached slots, for the informer of the primary objects: each object's slot is
    /// its key's hash, listed by `shardSelector` or by label as the mode says.
    #[must_use]
    pub fn cache_shards(&self) -> DynamicShards {
        self.shards(SlotSource::OwnKey)
    }

    /// The cached slots, for an informer of owned objects: each object's slot is its
    /// [`owner_label`](Self::owner_label), listed by label selector in either mode.
    /// Objects without the label are not cached.
    #[must_use]
    pub fn owned_shards(&self) -> DynamicShards {
        self.shards(SlotSource::OwnerLabel)
    }

    fn shards(&self, by: SlotSource) -> DynamicShards {
        DynamicShards {
            key: self.inner.key,
            count: self.inner.count,
            slots: self.inner.cache_tx.subscribe(),
            label: self.inner.label.clone(),
            by,
            mode: self.inner.mode_tx.subscribe(),
        }
    }

    /// Opens `slots` (with those already open).
    pub fn open(&self, slots: &BTreeSet<usize>) {
        let mut state = self.inner.state.lock();
        if slots.is_subset(&state.work) {
            return;
        }
        state.work.extend(
            slots
                .iter()
                .copied()
                .filter(|&s| s < self.inner.count.get()),
        );
        self.inner
            .work_tx
            .send_replace(Arc::new(state.work.clone()));
    }

    /// Sets the slots to cache.
    pub fn set_cached(&self, slots: BTreeSet<usize>) {
        if **self.inner.cache_tx.borrow() != slots {
            self.inner.cache_tx.send_replace(Arc::new(slots));
        }
    }

    /// Closes `slots` and waits until no work in them is left (guards holders see
    /// [`WorkGuard::revoked`] resolve, and drop their work).
    pub async fn close(&self, slots: &BTreeSet<usize>) {
        {
            let mut state = self.inner.state.lock();
            let before = state.work.len();
            state.work.retain(|s| !slots.contains(s));
            if state.work.len() != before {
                self.inner
                    .work_tx
                    .send_replace(Arc::new(state.work.clone()));
            }
        }
        loop {
            let drained = self.inner.drained.notified();
            let mut drained = pin!(drained);
            drained.as_mut().enable();
            if slots.iter().all(|&s| {
                self.inner
                    .state
                    .lock()
                    .inflight
                    .get(s)
                    .is_none_or(|&n| n == 0)
            }) {
                return;
            }
            drained.await;
        }
    }

    /// Closes every slot and waits for the work in them.
    pub async fn close_all(&self) {
        let all: BTreeSet<usize> = (0..self.inner.count.get()).collect();
        self.close(&all).await;
    }
}

/// Work in progress in one open slot; see [`ShardGate::enter`].
#[must_use]
pub struct WorkGuard {
    gate: ShardGate,
    slot: usize,
}

impl fmt::Debug for WorkGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkGuard")
            .field("slot", &self.slot)
            .finish()
    }
}

impl WorkGuard {
    /// The slot.
    #[must_use]
    pub fn slot(&self) -> usize {
        self.slot
    }

    /// Resolves once the slot is closed: drop the work now (the slot is being handed over,
    /// or this replica's Lease is about to lapse).
    pub async fn revoked(&self) {
        let mut rx = self.gate.inner.work_tx.subscribe();
        let _ = rx.wait_for(|w| !w.contains(&self.slot)).await;
    }
}

impl Drop for WorkGuard {
    fn drop(&mut self) {
        self.gate.inner.state.lock().inflight[self.slot] -= 1;
        self.gate.inner.drained.notify_waiters();
    }
}

/// One replica's membership of a shard group (the protocol and why it is safe: the book's
/// "Sharded controllers" chapter, and the comments of `runtime/src/sharding/member.rs`).
pub struct ShardMember {
    client: Client,
    config: GroupConfig,
    gate: ShardGate,
}

impl fmt::Debug for ShardMember {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShardMember")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl ShardMember {
    /// A member of `config`'s group; nothing happens until [`run`](Self::run).
    ///
    /// # Errors
    /// [`InvalidConfig`] from [`GroupConfig::validate`].
    pub fn new(client: Client, config: GroupConfig) -> Result<Self, InvalidConfig> {
        config.validate()?;
        let gate = ShardGate::new(
            config.key,
            config.slots,
            SlotLabel::for_group(&config.group),
        );
        Ok(ShardMember {
            client,
            config,
            gate,
        })
    }

    /// The gate this member opens and closes.
    #[must_use]
    pub fn gate(&self) -> ShardGate {
        self.gate.clone()
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &GroupConfig {
        &self.config
    }

    /// Takes part in the group until `shutdown` resolves: holds the member Lease, moves
    /// slots, opens and closes the gate. On shutdown it closes the gate, frees its slots in
    /// the table and releases its Lease, so the others take its slots at once. A lost
    /// Lease closes the gate; the member then joins again with a new Lease term.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) {
        let (stop_tx, stop_rx) = watch::channel(false);
        let stopped = move || {
            let mut rx = stop_rx.clone();
            async move {
                let _ = rx.wait_for(|s| *s).await;
            }
        };
        let member = async {
            if self.gate.mode().is_none() {
                let Some(mode) = self.decide_mode(stopped()).await else {
                    return;
                };
                self.gate.set_mode(mode);
            }
            loop {
                let elector = LeaderElector::new(self.client.clone(), self.config.member_lease())
                    .expect("validated in new");
                let coordinator = Coordinator {
                    api: Api::namespaced(self.client.clone(), &self.config.namespace),
                    config: self.config.clone(),
                    gate: self.gate.clone(),
                    handle: elector.handle(),
                };
                tracing::info!(group = %self.config.group, identity = %self.config.identity, "shard group: joining");
                let ended = elector
                    .run(
                        LeaderCallbacks::new(move |token| coordinator.run(token)),
                        stopped(),
                    )
                    .await;
                // The coordinator closed the gate; again in case it was dropped mid-way.
                self.gate.close_all().await;
                self.gate.set_cached(BTreeSet::new());
                if ended == Ended::Shutdown {
                    tracing::info!(group = %self.config.group, "shard group: left");
                    return;
                }
                tracing::warn!(group = %self.config.group, "shard group: lost the member lease; joining again");
                tokio::select! {
                    () = stopped() => return,
                    () = sleep(self.config.retry_period) => {}
                }
            }
        };
        let mut member = pin!(member);
        let mut shutdown = pin!(shutdown);
        tokio::select! {
            () = &mut member => {}
            () = &mut shutdown => {
                let _ = stop_tx.send(true);
                member.await;
            }
        }
    }
}

impl ShardMember {
    /// Whether the API server filters by `shardSelector`: one list of the group's member
    /// Leases (`limit=1`) with a selector of the whole hash space. A built-in list from a
    /// server that applies the selector echoes it in `metadata.shardInfo`; custom resource
    /// lists do not (kube-apiserver 1.37), and an empty list of anything cannot show that
    /// the selector was ignored, so asking the primary kind's own first list would guess.
    /// Decided once per process and logged in one line; `None` if shut down first.
    async fn decide_mode(&self, shutdown: impl Future<Output = ()>) -> Option<ShardMode> {
        let c = &self.config;
        let observed: super::Observed = Arc::new(Mutex::new(super::ServerFiltering::Unknown));
        let everything =
            super::ShardSelector::new(c.key, [super::ShardRange::FULL]).expect("one range");
        let client = super::sharded_client(self.client.clone(), &everything, observed.clone());
        let api: Api<Lease> = Api::namespaced(client, &c.namespace);
        let params = ListParams::default()
            .labels(&format!("{GROUP_LABEL}={}", c.group))
            .limit(1);
        let mut shutdown = pin!(shutdown);
        loop {
            tokio::select! {
                () = &mut shutdown => return None,
                r = api.list(&params) => match r {
                    Ok(_) => break,
                    Err(e) => tracing::warn!(group = %c.group, error = %Error::from(e), "shard group: the probe list of member Leases failed; retrying"),
                },
            }
            tokio::select! {
                () = &mut shutdown => return None,
                () = sleep(c.retry_period) => {}
            }
        }
        let verdict = observed.lock().clone();
        let mode = ShardMode::decide(&verdict);
        let label = self.gate.label().key();
        match mode {
            ShardMode::Selector => tracing::info!(
                group = %c.group, mode = %mode,
                "sharding: selector mode: the API server applied a shardSelector to a probe list (feature gate ShardedListAndWatch on); each slot is listed and watched by shardSelector, owned objects by their label {label}"
            ),
            ShardMode::Label => tracing::warn!(
                group = %c.group, mode = %mode, filtering = ?verdict,
                "sharding: label mode: the API server ignored a shardSelector on a probe list (feature gate ShardedListAndWatch off); objects are labelled {label}=<slot> and each slot is listed and watched by label selector"
            ),
        }
        Some(mode)
    }
}

/// One term of a member Lease: reads the group and moves slots.
struct Coordinator {
    api: Api<Lease>,
    config: GroupConfig,
    gate: ShardGate,
    handle: LeaderHandle,
}

/// What one round left: until when the gate may stay open without another round.
type Valid = Option<Instant>;

impl Coordinator {
    async fn run(self, token: LeadershipToken) {
        let mut seen: BTreeMap<String, (String, Instant)> = BTreeMap::new();
        let mut confirmed = false;
        let mut valid: Valid = None;
        loop {
            let until = valid.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
            tokio::select! {
                biased;
                () = token.cancelled() => break,
                () = sleep_until(until), if valid.is_some() => {
                    tracing::warn!(group = %self.config.group, "shard group: no fresh lease renewal and table read within the renew deadline; stopping work on every slot");
                    self.gate.close_all().await;
                    valid = None;
                    continue;
                }
                () = sleep(self.config.retry_period) => {}
            }
            let round = tokio::select! {
                () = token.cancelled() => break,
                r = timeout(self.config.retry_period, self.round(&mut seen, &mut confirmed)) => r,
            };
            match round {
                Ok(Ok(v)) => {
                    if v.is_some() {
                        valid = v;
                    }
                }
                Ok(Err(e)) => {
                    tracing::warn!(group = %self.config.group, error = %e, "shard group: round failed")
                }
                Err(_) => {
                    tracing::warn!(group = %self.config.group, "shard group: round timed out")
                }
            }
        }
        self.leave().await;
    }

    /// One round: the live members, the table, the plan, the write, the gate.
    async fn round(
        &self,
        seen: &mut BTreeMap<String, (String, Instant)>,
        confirmed: &mut bool,
    ) -> Result<Valid, String> {
        let api_err = |e: kube::Error| Error::from(e).to_string();
        let c = &self.config;
        let me = c.identity.as_str();
        let fresh = |at: Instant| {
            self.handle
                .last_renewed()
                .filter(|&t| at.saturating_duration_since(t) <= c.renew_deadline)
        };
        let Some(renewed) = fresh(Instant::now()) else {
            self.gate.close_all().await;
            *confirmed = false;
            return Ok(None);
        };

        let members = self
            .api
            .list(&ListParams::default().labels(&format!("{GROUP_LABEL}={}", c.group)))
            .await
            .map_err(api_err)?;
        let now = Instant::now();
        let mut live = BTreeSet::new();
        let mut listed = BTreeSet::new();
        for lease in members {
            let name = lease.metadata.name.clone().unwrap_or_default();
            let rv = lease.metadata.resource_version.clone().unwrap_or_default();
            let holder = lease
                .spec
                .as_ref()
                .and_then(|s| s.holder_identity.clone())
                .unwrap_or_default();
            let first = match seen.get(&name) {
                Some((seen_rv, at)) if *seen_rv == rv => *at,
                _ => {
                    seen.insert(name.clone(), (rv, now));
                    now
                }
            };
            if !holder.is_empty() && holder != me && now - first <= c.lease_duration {
                live.insert(holder);
            }
            listed.insert(name);
        }
        seen.retain(|name, _| listed.contains(name));

        let read_at = Instant::now();
        let Some(lease) = self.api.get_opt(&c.group).await.map_err(api_err)? else {
            self.create_table().await.map_err(|e| e.to_string())?;
            return Ok(None);
        };
        let table = parse_table(&lease, c.slots)?;
        // Rule 1: the read counts only if the Lease was fresh when it was sent.
        if fresh(read_at).is_none() {
            return Ok(None);
        }
        let changes = table.plan(me, &live);
        if !changes.release.is_empty() {
            // Stop before freeing.
            self.gate
                .close(&changes.release.iter().copied().collect())
                .await;
        }
        let mut kept = table.clone();
        kept.apply(
            me,
            &Changes {
                release: changes.release.clone(),
                acquire: vec![],
            },
        );
        let held = if !changes.is_empty() || !*confirmed {
            let mut next = table.clone();
            if changes.is_empty() {
                next.touch();
            } else {
                next.apply(me, &changes);
            }
            match self.write_table(lease, &next).await {
                Ok(()) => {
                    if !changes.is_empty() {
                        tracing::info!(group = %c.group, released = ?changes.release, acquired = ?changes.acquire, live = live.len() + 1, "shard group: slots moved");
                    }
                    *confirmed = true;
                    next.held_by(me)
                }
                Err(e) if e.is_conflict() => kept.held_by(me),
                Err(e) => {
                    self.settle(&kept, *confirmed, &live).await;
                    return Err(e.to_string());
                }
            }
        } else {
            table.held_by(me)
        };
        let held: BTreeSet<usize> = if *confirmed {
            held.into_iter().collect()
        } else {
            BTreeSet::new()
        };
        let working = self.gate.working();
        let lost: BTreeSet<usize> = working.difference(&held).copied().collect();
        if !lost.is_empty() {
            self.gate.close(&lost).await;
        }
        self.gate.open(&held);
        self.set_cached(&held, &live);
        Ok(Some(read_at.min(renewed) + c.renew_deadline))
    }

    /// After a failed write: work on what the read table still gives this member.
    async fn settle(&self, kept: &SlotTable, confirmed: bool, live: &BTreeSet<String>) {
        let held: BTreeSet<usize> = if confirmed {
            kept.held_by(&self.config.identity).into_iter().collect()
        } else {
            BTreeSet::new()
        };
        let lost: BTreeSet<usize> = self.gate.working().difference(&held).copied().collect();
        self.gate.close(&lost).await;
        self.set_cached(&held, live);
    }

    /// Cache what is held and what the assignment is about to give.
    fn set_cached(&self, held: &BTreeSet<usize>, live: &BTreeSet<String>) {
        let me = self.config.identity.as_str();
        let assignment = Assignment::new(
            live.iter().map(String::as_str).chain([me]),
            self.config.slots,
        )
        .expect("me at least");
        let mut cache = held.clone();
        cache.extend(assignment.slots_of(me));
        self.gate.set_cached(cache);
    }

    async fn create_table(&self) -> Result<(), Error> {
        let c = &self.config;
        let table = SlotTable::new(c.slots);
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(c.group.clone()),
                namespace: Some(c.namespace.clone()),
                labels: Some([(TABLE_LABEL.to_owned(), c.group.clone())].into()),
                annotations: Some([(TABLE_ANNOTATION.to_owned(), table_json(&table))].into()),
                ..ObjectMeta::default()
            },
            spec: None,
        };
        match self
            .api
            .create(&PostParams::default(), &lease)
            .await
            .map_err(Error::from)
        {
            Ok(_) => Ok(()),
            Err(e) if e.is_already_exists() => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// A compare-and-swap of the table: the update carries the resourceVersion read.
    async fn write_table(&self, mut lease: Lease, table: &SlotTable) -> Result<(), Error> {
        lease
            .metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(TABLE_ANNOTATION.to_owned(), table_json(table));
        self.api
            .replace(&self.config.group, &PostParams::default(), &lease)
            .await?;
        Ok(())
    }

    /// Stop working, then free this member's slots in the table (a few tries: a conflict
    /// means another member wrote meanwhile). What is not freed moves when the released
    /// Lease is seen.
    async fn leave(&self) {
        self.gate.close_all().await;
        let me = self.config.identity.as_str();
        for _ in 0..3 {
            let attempt = async {
                let Some(lease) = self
                    .api
                    .get_opt(&self.config.group)
                    .await
                    .map_err(|e| Error::from(e).to_string())?
                else {
                    return Ok(true);
                };
                let mut table = parse_table(&lease, self.config.slots)?;
                let release = table.held_by(me);
                if release.is_empty() {
                    return Ok(true);
                }
                table.apply(
                    me,
                    &Changes {
                        release,
                        acquire: vec![],
                    },
                );
                match self.write_table(lease, &table).await {
                    Ok(()) => Ok(true),
                    Err(e) if e.is_conflict() => Ok(false),
                    Err(e) => Err(e.to_string()),
                }
            };
            match timeout(self.config.retry_period, attempt).await {
                Ok(Ok(true)) => {
                    tracing::info!(group = %self.config.group, "shard group: freed this member's slots");
                    return;
                }
                Ok(Ok(false)) => {}
                Ok(Err(e)) => {
                    tracing::warn!(group = %self.config.group, error = %e, "shard group: could not free this member's slots");
                    return;
                }
                Err(_) => return,
            }
        }
    }
}

fn table_json(table: &SlotTable) -> String {
    serde_json::to_string(table).expect("a slot table serializes")
}

/// The table in a table Lease; an error if it is missing, unreadable or cut into another
/// number of slots than this member's (replicas of one group disagree).
fn parse_table(lease: &Lease, slots: NonZeroUsize) -> Result<SlotTable, String> {
    let text = lease
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(TABLE_ANNOTATION))
        .ok_or_else(|| format!("the table lease has no annotation {TABLE_ANNOTATION}"))?;
    let table: SlotTable =
        serde_json::from_str(text).map_err(|e| format!("annotation {TABLE_ANNOTATION}: {e}"))?;
    if table.slot_count() != slots {
        return Err(format!(
            "the group's table has {} slots, this member is configured with {slots}: every member of a group must use the same slot count",
            table.slot_count()
        ));
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_names_must_name_leases() {
        for bad in ["", "Foo", "-a", "a-", "a_b", &"x".repeat(41)] {
            assert!(
                GroupConfig::new(bad, "ns", "me").validate().is_err(),
                "{bad:?}"
            );
        }
        assert!(GroupConfig::new("foos", "ns", "me_1").validate().is_ok());
        assert_eq!(
            member_lease_name("foos", "me_1"),
            format!("foos-member-{:016x}", hash_field("me_1"))
        );
    }

    #[tokio::test]
    async fn closing_a_slot_waits_for_its_work_and_revokes_it() {
        let gate = ShardGate::new(
            ShardKey::Uid,
            NonZeroUsize::new(4).unwrap(),
            SlotLabel::for_group("g"),
        );
        assert!(gate.enter(1).is_none());
        gate.open(&[1, 2].into());
        let guard = gate.enter(1).expect("open");
        let other = gate.enter(2).expect("open");
        let closing = {
            let gate = gate.clone();
            tokio::spawn(async move { gate.close(&[1].into()).await })
        };
        // The guard sees the revocation; closing waits until it is dropped.
        guard.revoked().await;
        assert!(gate.enter(1).is_none());
        tokio::task::yield_now().await;
        assert!(!closing.is_finished());
        drop(guard);
        closing.await.unwrap();
        // Slot 2 is untouched.
        assert_eq!(*gate.working(), BTreeSet::from([2]));
        drop(other);
    }

    #[test]
    fn a_table_of_another_slot_count_is_refused() {
        let table = SlotTable::new(NonZeroUsize::new(8).unwrap());
        let mut lease = Lease::default();
        lease.metadata.annotations = Some(
            [(
                TABLE_ANNOTATION.to_owned(),
                serde_json::to_string(&table).unwrap(),
            )]
            .into(),
        );
        assert!(parse_table(&lease, NonZeroUsize::new(8).unwrap()).is_ok());
        let e = parse_table(&lease, DEFAULT_SLOTS).unwrap_err();
        assert!(e.contains("same slot count"), "{e}");
    }
}
