//! Which replica owns which part of the hash space: a function of the live membership only,
//! so every member computes the same answer from the same list of members, with nothing
//! stored and nobody to elect.
//!
//! The hash space is cut into a fixed number of equal *slots* (64 by default); a slot is
//! the unit that moves between replicas. Slots are dealt by *balanced rendezvous hashing*:
//! every (member, slot) pair gets a pseudo-random score; pairs are taken from the highest
//! score down, and a slot goes to the pair's member unless the slot is taken or the member
//! already has its share (`⌊slots/n⌋`, one more for the first `slots mod n` members by
//! name). So:
//! - shares differ by at most one slot (with 64 slots and 3 members, 21 or 22 slots, a
//!   share within 1.6% of a third of the hash space), where plain rendezvous hashing leaves
//!   them to chance (binomial: ±10% and worse is common at this size);
//! - a change of membership moves few slots: a member keeps the slots it scores highest on
//!   unless a newcomer scores higher, so a join or a leave moves near the minimum, the
//!   newcomer's share (64 slots: 23 moved for 2→3 members where 21 must, 17 for 3→4 where
//!   16 must, at most twice the minimum up to 9 members, checked by the tests), where an even
//!   contiguous split (`1/n` of the space each, in name order) moves about half the space
//!   on every change;
//! - it costs a sort of `slots × members` scores, microseconds.
//!
//! The price of slots is a longer selector: a member's slots are rarely adjacent, so its
//! selector has about as many `shardRange` terms as slots (adjacent ones are merged), a few
//! kilobytes of query for 64 slots, which the API server parses once per list and watch.
//!
//! The scores are part of the protocol: every replica of a group must compute them alike,
//! across versions, so they are pinned here (FNV-1a 64 of the member name, mixed with the
//! slot number by SplitMix64's finalizer) and by the tests.

use std::num::NonZeroUsize;

use super::{HASH_SPACE_END, ShardKey, ShardRange, ShardSelector, hash_field};

/// The number of slots groups use unless told otherwise.
pub const DEFAULT_SLOTS: NonZeroUsize = NonZeroUsize::new(64).expect("non-zero");

/// The hash range of slot `slot` of `count`: `[⌊slot·2^64/count⌋, ⌊(slot+1)·2^64/count⌋)`,
/// as [`ShardRange::split_even`] cuts the space.
///
/// # Panics
/// If `slot >= count`.
#[must_use]
pub fn slot_range(slot: usize, count: NonZeroUsize) -> ShardRange {
    assert!(slot < count.get(), "slot {slot} of {count}");
    let n = count.get() as u128;
    let bound = |i: u128| i * HASH_SPACE_END / n;
    ShardRange::new(bound(slot as u128), bound(slot as u128 + 1)).expect("slot bounds are ordered")
}

/// The slot of `count` whose range holds `hash` (the inverse of [`slot_range`]).
#[must_use]
pub fn slot_of(hash: u64, count: NonZeroUsize) -> usize {
    // ⌊hash·n/2^64⌋ is the slot or one below it (the bounds are rounded down): step up
    // while the next slot starts at or before the hash.
    let n = count.get();
    let mut slot = ((u128::from(hash) * n as u128) >> 64) as usize;
    while slot + 1 < n && slot_range(slot + 1, count).start() <= u128::from(hash) {
        slot += 1;
    }
    slot
}

/// SplitMix64's output function: spreads FNV's weak low bits over the whole word.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The rendezvous score of `member` for `slot`.
fn score(member_hash: u64, slot: usize) -> u64 {
    mix(member_hash ^ mix(slot as u64))
}

/// Who owns each slot, for one membership.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The members, sorted, without duplicates.
    members: Vec<String>,
    /// `owners[slot]` indexes `members`.
    owners: Vec<usize>,
}

impl Assignment {
    /// The assignment of `slots` slots to `members` (their order and duplicates do not
    /// matter). `None` without members.
    #[must_use]
    pub fn new<S: AsRef<str>>(
        members: impl IntoIterator<Item = S>,
        slots: NonZeroUsize,
    ) -> Option<Assignment> {
        let mut members: Vec<String> = members.into_iter().map(|m| m.as_ref().to_owned()).collect();
        members.sort();
        members.dedup();
        if members.is_empty() {
            return None;
        }
        let (n, s) = (members.len(), slots.get());
        let mut room: Vec<usize> = (0..n).map(|i| s / n + usize::from(i < s % n)).collect();
        let hashes: Vec<u64> = members.iter().map(|m| hash_field(m)).collect();
        let mut pairs: Vec<(u64, usize, usize)> = (0..s)
            .flat_map(|slot| (0..n).map(move |m| (slot, m)))
            .map(|(slot, m)| (score(hashes[m], slot), m, slot))
            .collect();
        // Highest score first; ties (as good as never) by member, then slot.
        pairs.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut owners = vec![usize::MAX; s];
        let mut left = s;
        for (_, m, slot) in pairs {
            if owners[slot] == usize::MAX && room[m] > 0 {
                owners[slot] = m;
                room[m] -= 1;
                left -= 1;
                if left == 0 {
                    break;
                }
            }
        }
        Some(Assignment { members, owners })
    }

    /// The members, sorted.
    #[must_use]
    pub fn members(&self) -> &[String] {
        &self.members
    }

    /// The number of slots.
    #[must_use]
    pub fn slot_count(&self) -> NonZeroUsize {
        NonZeroUsize::new(self.owners.len()).expect("at least one slot")
    }

    /// The owner of `slot`.
    ///
    /// # Panics
    /// If `slot` is not below [`slot_count`](Self::slot_count).
    #[must_use]
    pub fn owner(&self, slot: usize) -> &str {
        &self.members[self.owners[slot]]
    }

    /// The slots `member` owns, ascending (none for a stranger).
    #[must_use]
    pub fn slots_of(&self, member: &str) -> Vec<usize> {
        match self.members.binary_search_by(|m| m.as_str().cmp(member)) {
            Ok(i) => (0..self.owners.len())
                .filter(|&s| self.owners[s] == i)
                .collect(),
            Err(_) => vec![],
        }
    }

    /// `member`'s hash ranges: its slots, adjacent ones merged.
    #[must_use]
    pub fn ranges_of(&self, member: &str) -> Vec<ShardRange> {
        merge(&self.slots_of(member), self.slot_count())
    }

    /// `member`'s selector on `key`; `None` if it owns nothing.
    #[must_use]
    pub fn selector_of(&self, member: &str, key: ShardKey) -> Option<ShardSelector> {
        ShardSelector::new(key, self.ranges_of(member)).ok()
    }

    /// The slots whose owner differs in `next` (of the same slot count).
    ///
    /// # Panics
    /// If the slot counts differ.
    #[must_use]
    pub fn moved(&self, next: &Assignment) -> Vec<usize> {
        assert_eq!(self.owners.len(), next.owners.len(), "slot counts differ");
        (0..self.owners.len())
            .filter(|&s| self.owner(s) != next.owner(s))
            .collect()
    }
}

/// Ascending slots as ranges, runs of adjacent slots merged.
fn merge(slots: &[usize], count: NonZeroUsize) -> Vec<ShardRange> {
    let mut out: Vec<ShardRange> = vec![];
    for &s in slots {
        let r = slot_range(s, count);
        match out.last_mut() {
            Some(last) if last.end() == r.start() => {
                *last = ShardRange::new(last.start(), r.end()).expect("ordered")
            }
            _ => out.push(r),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_of_inverts_slot_range() {
        for n in [1usize, 3, 7, 64, 100] {
            let count = NonZeroUsize::new(n).unwrap();
            for slot in 0..n {
                let r = slot_range(slot, count);
                let last = u64::try_from(r.end() - 1).unwrap();
                let first = u64::try_from(r.start()).unwrap();
                assert_eq!(slot_of(first, count), slot, "{n}: start of {slot}");
                assert_eq!(slot_of(last, count), slot, "{n}: end of {slot}");
            }
        }
    }

    fn names(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| format!("sample-controller-7d9f8-{i}"))
            .collect()
    }

    #[test]
    fn every_slot_has_one_owner_and_shares_differ_by_at_most_one() {
        for n in 1..=9 {
            for slots in [1, 7, 64, 256] {
                let slots = NonZeroUsize::new(slots).unwrap();
                let a = Assignment::new(names(n), slots).unwrap();
                let counts: Vec<usize> = a.members().iter().map(|m| a.slots_of(m).len()).collect();
                assert_eq!(counts.iter().sum::<usize>(), slots.get());
                let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
                assert!(hi - lo <= 1, "{n} members, {slots} slots: {counts:?}");
                // The ranges of all members tile the space exactly once.
                let mut all: Vec<ShardRange> =
                    a.members().iter().flat_map(|m| a.ranges_of(m)).collect();
                all.sort();
                assert_eq!(all[0].start(), 0);
                assert_eq!(all.last().unwrap().end(), HASH_SPACE_END);
                for w in all.windows(2) {
                    assert_eq!(w[0].end(), w[1].start());
                }
            }
        }
    }

    #[test]
    fn the_assignment_depends_on_the_membership_only() {
        let slots = DEFAULT_SLOTS;
        let a = Assignment::new(["b", "a", "c"], slots).unwrap();
        let b = Assignment::new(["c", "a", "b", "a"], slots).unwrap();
        assert_eq!(a, b);
        assert!(Assignment::new(Vec::<String>::new(), slots).is_none());
        assert!(a.slots_of("stranger").is_empty());
        assert!(a.selector_of("stranger", ShardKey::Uid).is_none());
    }

    /// Pinned: replicas of different versions must agree, so the scores may never change.
    #[test]
    fn the_scores_are_pinned() {
        let a = Assignment::new(
            ["replica-a", "replica-b", "replica-c"],
            NonZeroUsize::new(8).unwrap(),
        )
        .unwrap();
        let owners: Vec<&str> = (0..8).map(|s| a.owner(s)).collect();
        assert_eq!(owners, PINNED_OWNERS);
    }
    const PINNED_OWNERS: [&str; 8] = [
        "replica-b",
        "replica-c",
        "replica-c",
        "replica-a",
        "replica-b",
        "replica-a",
        "replica-a",
        "replica-b",
    ];

    /// A join or a leave moves close to the minimum, far less than an even contiguous split.
    #[test]
    fn membership_changes_move_few_slots() {
        let slots = DEFAULT_SLOTS;
        let s = slots.get();
        let contiguous_owner = |n: usize, slot: usize| slot * n / s;
        for n in 1..=8 {
            let before = Assignment::new(names(n), slots).unwrap();
            let after = Assignment::new(names(n + 1), slots).unwrap();
            let moved = before.moved(&after).len();
            // The newcomer must take its share; the least any scheme can move.
            let minimum = after.slots_of(&names(n + 1)[n]).len();
            let contiguous = (0..s)
                .filter(|&slot| contiguous_owner(n, slot) != contiguous_owner(n + 1, slot))
                .count();
            assert!(
                moved <= 2 * minimum,
                "{n}→{} members: {moved} slots moved, minimum {minimum}",
                n + 1
            );
            assert!(
                n == 1 || moved < contiguous,
                "{n}→{}: {moved} vs contiguous {contiguous}",
                n + 1
            );
            // A leave is the same change read backwards.
            assert_eq!(after.moved(&before).len(), moved);
        }
    }
}
