//! Handing slots over without overlap: the group's *slot table*, one object every member
//! changes by compare-and-swap (its `resourceVersion`), says who holds each slot. A member
//! works on a slot only while the table says it holds it; it gives up a slot (after it has
//! stopped working on it) and takes free ones in one write.
//!
//! The rules, which the simulation in the tests checks under kills, partitions and stale
//! reads (`RD` is the renew deadline, `LD` the lease duration, `RD < LD`, as in leader
//! election):
//! 1. a member works on the slots its last table read gives it, only while that read and
//!    its last renewal of its member Lease are both at most `RD` old, and only if its
//!    Lease was fresh (renewed at most `RD` before) when it read the table;
//! 2. a member that starts, or whose Lease lapsed (not renewed for `RD`), forgets what it
//!    held and works on nothing until one write of the table of its own succeeded (with no
//!    change to make it still writes: [`SlotTable::touch`]). Another member that decided,
//!    on an older read, that this one was gone and took its slots, writes against an older
//!    version and fails: the compare-and-swap covers the Leases' news too;
//! 3. another member counts as live while its Lease's `resourceVersion` changed within the
//!    last `LD`, as this member observed it (client-go's observed time, so clocks need not
//!    agree): a member that stopped renewing stopped working `LD − RD` before anyone takes
//!    its slots;
//! 4. [`SlotTable::plan`] takes only slots no live member holds, and gives up the slots the
//!    [`Assignment`] of the live members no longer gives this member.

use std::collections::BTreeSet;
use std::num::NonZeroUsize;

use super::Assignment;

/// Who holds each slot of a group (`None`: nobody). Stored as JSON
/// (`{"holders":[..],"serial":N}`) in an annotation of the group's table Lease.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SlotTable {
    holders: Vec<Option<String>>,
    /// Counts the writes, so every write changes the object (an API server skips an
    /// update that changes nothing, and its resourceVersion with it).
    serial: u64,
}

/// One member's change to the table: slots to give up (stop working on them first) and
/// slots to take (start working on them only once the write succeeded).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// Slots this member holds that the assignment gives to another.
    pub release: Vec<usize>,
    /// Slots the assignment gives this member that nobody live holds.
    pub acquire: Vec<usize>,
}

impl Changes {
    /// Whether there is nothing to write.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.release.is_empty() && self.acquire.is_empty()
    }
}

impl SlotTable {
    /// A table of `slots` free slots.
    #[must_use]
    pub fn new(slots: NonZeroUsize) -> Self {
        SlotTable {
            holders: vec![None; slots.get()],
            serial: 0,
        }
    }

    /// The number of slots.
    #[must_use]
    pub fn slot_count(&self) -> NonZeroUsize {
        NonZeroUsize::new(self.holders.len()).expect("at least one slot")
    }

    /// Who holds `slot`.
    #[must_use]
    pub fn holder(&self, slot: usize) -> Option<&str> {
        self.holders[slot].as_deref()
    }

    /// The slots `member` holds, ascending.
    #[must_use]
    pub fn held_by(&self, member: &str) -> Vec<usize> {
        (0..self.holders.len())
            .filter(|&s| self.holder(s) == Some(member))
            .collect()
    }

    /// What `me` should change, given the members it sees live (`me` counts as live).
    #[must_use]
    pub fn plan(&self, me: &str, live: &BTreeSet<String>) -> Changes {
        let members = live.iter().map(String::as_str).chain([me]);
        let assignment = Assignment::new(members, self.slot_count()).expect("me at least");
        let mut changes = Changes::default();
        for slot in 0..self.holders.len() {
            let mine = assignment.owner(slot) == me;
            match self.holder(slot) {
                Some(h) if h == me && !mine => changes.release.push(slot),
                Some(h) if h == me => {}
                // Held by a live member: it gives the slot up first.
                Some(h) if live.contains(h) => {}
                // Free, or its holder is gone (its Lease expired).
                _ if mine => changes.acquire.push(slot),
                _ => {}
            }
        }
        changes
    }

    /// A write that changes no holder (rule 2: a member confirms it is back).
    pub fn touch(&mut self) {
        self.serial += 1;
    }

    /// Applies `me`'s changes (the write of a compare-and-swap).
    pub fn apply(&mut self, me: &str, changes: &Changes) {
        self.serial += 1;
        for &s in &changes.release {
            if self.holder(s) == Some(me) {
                self.holders[s] = None;
            }
        }
        for &s in &changes.acquire {
            self.holders[s] = Some(me.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    const RD: i64 = 10;
    const LD: i64 = 15;
    const SLOTS: usize = 16;

    /// A deterministic generator, so a failure reproduces from its seed.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn chance(&mut self, percent: u64) -> bool {
            self.next() % 100 < percent
        }
    }

    #[derive(Default)]
    struct Member {
        alive: bool,
        partitioned: bool,
        last_renew: Option<i64>,
        /// The table as last read or written, and when.
        view: Option<(u64, SlotTable, i64)>,
        /// A planned write: the table version it was planned on, and the table to write.
        pending: Option<(u64, SlotTable)>,
        /// Whether a write of this member's succeeded since it started or last lapsed.
        confirmed: bool,
        /// Others' Lease resourceVersions and when this member first saw each.
        seen: BTreeMap<String, (u64, i64)>,
    }

    struct World {
        now: i64,
        version: u64,
        table: SlotTable,
        leases: BTreeMap<String, u64>,
        lease_rv: u64,
        members: BTreeMap<String, Member>,
    }

    impl World {
        fn fresh(m: &Member, now: i64) -> bool {
            m.last_renew.is_some_and(|t| now - t <= RD)
        }

        /// What each member works on now (rule 1).
        fn working(&self) -> Vec<(String, Vec<usize>)> {
            self.members
                .iter()
                .filter(|(_, m)| m.alive && m.confirmed && Self::fresh(m, self.now))
                .filter_map(|(name, m)| {
                    let (_, table, read_at) = m.view.as_ref()?;
                    (self.now - read_at <= RD).then(|| (name.clone(), table.held_by(name)))
                })
                .collect()
        }

        fn renew(&mut self, name: &str) {
            self.lease_rv += 1;
            self.leases.insert(name.to_owned(), self.lease_rv);
            let m = self.members.get_mut(name).unwrap();
            // Renewed after a lapse: what it held may be another's now (rule 2).
            if m.last_renew.is_none_or(|t| self.now - t > RD) {
                m.view = None;
                m.pending = None;
                m.confirmed = false;
            }
            m.last_renew = Some(self.now);
        }

        /// Read the Leases and the table and plan a write (sent later, by `write`).
        fn sync(&mut self, name: &str) {
            let now = self.now;
            let leases = self.leases.clone();
            let (version, table) = (self.version, self.table.clone());
            let m = self.members.get_mut(name).unwrap();
            for (other, rv) in &leases {
                match m.seen.get(other) {
                    Some((seen_rv, _)) if seen_rv == rv => {}
                    _ => {
                        m.seen.insert(other.clone(), (*rv, now));
                    }
                }
            }
            if !Self::fresh(m, now) {
                // Lapsed: forget the table until renewed and confirmed (rules 1, 2).
                m.view = None;
                m.pending = None;
                m.confirmed = false;
                return;
            }
            let live: BTreeSet<String> = m
                .seen
                .iter()
                .filter(|(other, (_, first))| *other != name && now - first <= LD)
                .map(|(other, _)| other.clone())
                .collect();
            let changes = table.plan(name, &live);
            let mut next = table.clone();
            next.apply(name, &changes);
            if changes.is_empty() && !m.confirmed {
                next = table.clone();
                next.touch();
            }
            // Work stops on released slots now, before the write: the view drops them.
            let mut view = table.clone();
            view.apply(
                name,
                &Changes {
                    release: changes.release.clone(),
                    acquire: vec![],
                },
            );
            m.view = Some((version, view, now));
            m.pending = (!changes.is_empty() || !m.confirmed).then_some((version, next));
        }

        /// Send the planned write: a compare-and-swap on the version it was planned on.
        fn write(&mut self, name: &str) {
            let now = self.now;
            let m = self.members.get_mut(name).unwrap();
            let Some((version, next)) = m.pending.take() else {
                return;
            };
            if self.version == version {
                self.version += 1;
                self.table = next.clone();
                m.view = Some((self.version, next, now));
                m.confirmed = true;
            }
        }

        fn assert_no_overlap(&self, seed: u64) {
            let mut owner: BTreeMap<usize, &str> = BTreeMap::new();
            let working = self.working();
            for (name, slots) in &working {
                for s in slots {
                    if let Some(other) = owner.insert(*s, name) {
                        panic!(
                            "seed {seed}, t={}: slot {s} worked on by {other} and {name}",
                            self.now
                        );
                    }
                }
            }
        }
    }

    /// Joins, SIGKILLs, partitions and slow members at random; at no tick do two members
    /// work on one slot, and once the churn stops every slot is worked on by the member the
    /// assignment of the live members names.
    #[test]
    fn no_slot_is_worked_on_twice_and_none_is_dropped() {
        for seed in 1..=300u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
            let mut w = World {
                now: 0,
                version: 0,
                table: SlotTable::new(NonZeroUsize::new(SLOTS).unwrap()),
                leases: BTreeMap::new(),
                lease_rv: 0,
                members: BTreeMap::new(),
            };
            let mut joined = 0;
            for tick in 0..500 {
                w.now = tick;
                let churn = tick < 300;
                if churn && (joined < 2 || rng.chance(3)) && joined < 8 {
                    let name = format!("replica-{joined}");
                    joined += 1;
                    w.members.insert(
                        name,
                        Member {
                            alive: true,
                            ..Member::default()
                        },
                    );
                }
                let names: Vec<String> = w.members.keys().cloned().collect();
                for name in &names {
                    let m = w.members.get_mut(name).unwrap();
                    if churn && m.alive && rng.chance(1) {
                        m.alive = false; // SIGKILL
                    }
                    if churn && rng.chance(2) {
                        m.partitioned = !m.partitioned;
                    }
                    if !churn {
                        m.partitioned = false;
                    }
                    if !m.alive || m.partitioned {
                        continue;
                    }
                    // Slow members skip beats during the churn.
                    if !churn || rng.chance(70) {
                        w.renew(name);
                    }
                    // Writes land late (a slow request, a GC pause): planned on
                    // a read some ticks old.
                    if !churn || rng.chance(50) {
                        w.write(name);
                    }
                    w.assert_no_overlap(seed);
                    if !churn || rng.chance(70) {
                        w.sync(name);
                    }
                    w.assert_no_overlap(seed);
                }
                w.assert_no_overlap(seed);
            }
            let live: Vec<String> = w
                .members
                .iter()
                .filter(|(_, m)| m.alive)
                .map(|(n, _)| n.clone())
                .collect();
            let Some(assignment) = Assignment::new(&live, NonZeroUsize::new(SLOTS).unwrap()) else {
                continue; // everyone was killed
            };
            let working: BTreeMap<usize, String> = w
                .working()
                .into_iter()
                .flat_map(|(n, slots)| slots.into_iter().map(move |s| (s, n.clone())))
                .collect();
            for s in 0..SLOTS {
                assert_eq!(
                    working.get(&s).map(String::as_str),
                    Some(assignment.owner(s)),
                    "seed {seed}: slot {s} after the churn"
                );
            }
        }
    }

    #[test]
    fn a_plan_takes_free_and_orphaned_slots_and_gives_up_the_rest() {
        let slots = NonZeroUsize::new(4).unwrap();
        let mut t = SlotTable::new(slots);
        let solo: BTreeSet<String> = BTreeSet::new();
        let c = t.plan("a", &solo);
        assert_eq!(c.acquire, [0, 1, 2, 3]);
        t.apply("a", &c);
        // b joins: a gives up b's slots first; b takes nothing a still holds.
        let both: BTreeSet<String> = ["a".to_string(), "b".to_string()].into();
        let b_first = t.plan("b", &both);
        assert!(b_first.is_empty(), "{b_first:?}");
        let a_gives = t.plan("a", &both);
        assert_eq!(a_gives.release.len(), 2);
        t.apply("a", &a_gives);
        let b_takes = t.plan("b", &both);
        assert_eq!(b_takes.acquire, a_gives.release);
        // a's Lease expires: b takes a's slots too.
        t.apply("b", &b_takes);
        let c = t.plan("b", &BTreeSet::new());
        assert_eq!(c.acquire.len(), 2);
    }
}
