//! Shard selectors: Kubernetes' sharded list and watch (KEP-5866, alpha in 1.36, feature
//! gate `ShardedListAndWatch` on kube-apiserver).
//!
//! A [`ShardSelector`] names hash ranges of one key of every object, its
//! `metadata.uid` or its `metadata.namespace` ([`ShardKey`]). The API server hashes the
//! key with FNV-1a 64 and returns only the objects whose hash falls in one of the ranges,
//! each `[start, end)` in `[0, 2^64)`. On the wire (the list and watch parameter
//! `shardSelector`) a selector reads
//!
//! ```text
//! shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(...)
//! ```
//!
//! Everything here is the API server's own definition, from `k8s.io/apimachinery`
//! v0.37.2 `pkg/sharding` (hash, range test, rendering) and `k8s.io/apiserver` v0.37.2
//! `pkg/sharding` (parsing); `runtime/tests/sharding.rs` checks it against vectors those Go
//! packages computed.
//!
//! ```
//! use std::num::NonZeroUsize;
//! use kube_codegen_runtime::sharding::{ShardKey, ShardRange, ShardSelector};
//!
//! let halves = ShardRange::split_even(NonZeroUsize::new(2).unwrap());
//! let first = ShardSelector::new(ShardKey::Uid, [halves[0]])?;
//! assert_eq!(
//!     first.to_string(),
//!     "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
//! );
//! assert_eq!(first, first.to_string().parse()?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod assign;
mod fence;
mod label;
mod member;
mod parse;
mod request;

use std::fmt;
use std::num::NonZeroUsize;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

pub use assign::{Assignment, DEFAULT_SLOTS, slot_of, slot_range};
pub use fence::{Changes, SlotTable};
pub use label::{SLOT_LABEL_PREFIX, ShardMode, SlotLabel};
pub(crate) use label::{and_labels, run_labeler};
pub(crate) use member::SlotQuery;
pub use member::{
    DynamicShards, GROUP_LABEL, GroupConfig, ShardGate, ShardMember, TABLE_ANNOTATION, TABLE_LABEL,
    WorkGuard,
};
pub use parse::ShardSelectorError;
pub use request::ServerFiltering;
pub(crate) use request::{Observed, sharded_client};

/// The end of the hash space, `2^64`: the only bound written with 17 hex digits,
/// `0x10000000000000000`.
pub const HASH_SPACE_END: u128 = 1 << 64;

/// The FNV-1a 64 hash of `value`'s bytes: what the API server hashes a shard key with
/// (`sharding.HashField`, Go's `hash/fnv` `New64a`).
#[must_use]
pub fn hash_field(value: &str) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    value
        .bytes()
        .fold(OFFSET_BASIS, |h, b| (h ^ u64::from(b)).wrapping_mul(PRIME))
}

/// The field of an object a selector hashes. The API server supports these two only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ShardKey {
    /// `object.metadata.uid`: spreads objects evenly (uids are random), but an object and
    /// the objects it owns land in different ranges.
    Uid,
    /// `object.metadata.namespace`: keeps a namespace together; a cluster-scoped object's
    /// namespace is empty, which hashes like any other value.
    Namespace,
}

impl ShardKey {
    /// The key's field path as the selector writes it (`object.metadata.uid`).
    #[must_use]
    pub fn field_path(self) -> &'static str {
        match self {
            ShardKey::Uid => "object.metadata.uid",
            ShardKey::Namespace => "object.metadata.namespace",
        }
    }

    /// The key named by a field path, if the API server supports it.
    #[must_use]
    pub fn from_field_path(path: &str) -> Option<Self> {
        match path {
            "object.metadata.uid" => Some(ShardKey::Uid),
            "object.metadata.namespace" => Some(ShardKey::Namespace),
            _ => None,
        }
    }

    /// The value this key hashes in `meta` (empty when the field is unset, as Go's
    /// accessors return it).
    #[must_use]
    pub fn value_of(self, meta: &ObjectMeta) -> &str {
        match self {
            ShardKey::Uid => meta.uid.as_deref(),
            ShardKey::Namespace => meta.namespace.as_deref(),
        }
        .unwrap_or("")
    }
}

impl fmt::Display for ShardKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.field_path())
    }
}

/// One hash range `[start, end)`, `0 <= start < end <= 2^64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShardRange {
    start: u128,
    end: u128,
}

/// A range whose bounds are out of order or past the hash space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid shard range [{start:#x}, {end:#x}): bounds must satisfy start < end <= 2^64")]
pub struct InvalidRange {
    /// The start given.
    pub start: u128,
    /// The end given.
    pub end: u128,
}

impl ShardRange {
    /// The whole hash space, `[0, 2^64)`.
    pub const FULL: ShardRange = ShardRange {
        start: 0,
        end: HASH_SPACE_END,
    };

    /// The range `[start, end)`.
    ///
    /// # Errors
    /// [`InvalidRange`] unless `start < end <= 2^64`.
    pub fn new(start: u128, end: u128) -> Result<Self, InvalidRange> {
        if start < end && end <= HASH_SPACE_END {
            Ok(ShardRange { start, end })
        } else {
            Err(InvalidRange { start, end })
        }
    }

    /// The inclusive lower bound.
    #[must_use]
    pub fn start(&self) -> u128 {
        self.start
    }

    /// The exclusive upper bound (at most `2^64`).
    #[must_use]
    pub fn end(&self) -> u128 {
        self.end
    }

    /// How many hash values the range holds.
    #[must_use]
    pub fn width(&self) -> u128 {
        self.end - self.start
    }

    /// Whether `hash` is in `[start, end)`. The API server compares its bound strings,
    /// 16 hex digits or the 17-digit `2^64`, by length and then lexically
    /// (`sharding.HexLess`); on those strings that is numeric order, which this compares.
    #[must_use]
    pub fn contains(&self, hash: u64) -> bool {
        let h = u128::from(hash);
        self.start <= h && h < self.end
    }

    /// `count` ranges of (nearly) equal width, in order, covering the hash space:
    /// range `i` is `[⌊i·2^64/count⌋, ⌊(i+1)·2^64/count⌋)`.
    #[must_use]
    pub fn split_even(count: NonZeroUsize) -> Vec<ShardRange> {
        (0..count.get()).map(|i| slot_range(i, count)).collect()
    }
}

/// A bound as the API server writes it: `0x` and 16 lowercase hex digits, or the
/// 17-digit `0x10000000000000000` for `2^64`.
fn write_bound(f: &mut fmt::Formatter<'_>, bound: u128) -> fmt::Result {
    write!(f, "'0x{bound:016x}'")
}

/// Which objects a sharded list or watch returns: those whose [`ShardKey`] hashes into one
/// of its ranges. At least one range; all on one key (the API server's rule).
///
/// Its [`Display`](fmt::Display) form is the wire syntax, exactly as the API server renders
/// (and echoes in a list's `metadata.shardInfo.selector`) a selector; [`str::parse`] reads
/// it back, with the API server's rules.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ShardSelector {
    key: ShardKey,
    ranges: Vec<ShardRange>,
}

/// A selector built without ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a shard selector needs at least one range (omit the selector to list everything)")]
pub struct NoRanges;

impl ShardSelector {
    /// The selector of `ranges` on `key`, in the order given (it is the order of the wire
    /// form). Ranges may overlap or touch, as the API server allows.
    ///
    /// # Errors
    /// [`NoRanges`] if `ranges` is empty.
    pub fn new(
        key: ShardKey,
        ranges: impl IntoIterator<Item = ShardRange>,
    ) -> Result<Self, NoRanges> {
        let ranges: Vec<ShardRange> = ranges.into_iter().collect();
        if ranges.is_empty() {
            return Err(NoRanges);
        }
        Ok(ShardSelector { key, ranges })
    }

    /// The field hashed.
    #[must_use]
    pub fn key(&self) -> ShardKey {
        self.key
    }

    /// The ranges, in wire order.
    #[must_use]
    pub fn ranges(&self) -> &[ShardRange] {
        &self.ranges
    }

    /// Whether a hash is in one of the ranges.
    #[must_use]
    pub fn matches_hash(&self, hash: u64) -> bool {
        self.ranges.iter().any(|r| r.contains(hash))
    }

    /// Whether an object whose key field is `value` is selected.
    #[must_use]
    pub fn matches_value(&self, value: &str) -> bool {
        self.matches_hash(hash_field(value))
    }

    /// Whether the object with this metadata is selected (the API server's `Matches`).
    #[must_use]
    pub fn matches(&self, meta: &ObjectMeta) -> bool {
        self.matches_value(self.key.value_of(meta))
    }
}

impl fmt::Display for ShardSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.ranges.iter().enumerate() {
            if i > 0 {
                f.write_str(" || ")?;
            }
            write!(f, "shardRange({}, ", self.key)?;
            write_bound(f, r.start)?;
            f.write_str(", ")?;
            write_bound(f, r.end)?;
            f.write_str(")")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for ShardSelector {
    type Err = ShardSelectorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_of_nothing_is_the_offset_basis() {
        assert_eq!(hash_field(""), 0xcbf2_9ce4_8422_2325);
    }

    #[test]
    fn even_split_covers_the_space_without_gaps() {
        for n in 1..=17 {
            let ranges = ShardRange::split_even(NonZeroUsize::new(n).unwrap());
            assert_eq!(ranges.len(), n);
            assert_eq!(ranges[0].start(), 0);
            assert_eq!(ranges[n - 1].end(), HASH_SPACE_END);
            for w in ranges.windows(2) {
                assert_eq!(w[0].end(), w[1].start());
            }
            let (min, max) = ranges.iter().fold((u128::MAX, 0), |(lo, hi), r| {
                (lo.min(r.width()), hi.max(r.width()))
            });
            assert!(max - min <= 1, "{n} ranges: widths {min}..={max}");
        }
    }

    #[test]
    fn ranges_reject_bad_bounds() {
        assert!(ShardRange::new(5, 5).is_err());
        assert!(ShardRange::new(6, 5).is_err());
        assert!(ShardRange::new(0, HASH_SPACE_END + 1).is_err());
        assert_eq!(ShardRange::new(0, HASH_SPACE_END), Ok(ShardRange::FULL));
        assert!(ShardSelector::new(ShardKey::Uid, []).is_err());
    }

    #[test]
    fn the_top_bound_is_written_with_seventeen_digits() {
        let s = ShardSelector::new(ShardKey::Namespace, [ShardRange::FULL]).unwrap();
        assert_eq!(
            s.to_string(),
            "shardRange(object.metadata.namespace, '0x0000000000000000', '0x10000000000000000')"
        );
        assert!(s.matches_hash(u64::MAX) && s.matches_hash(0));
    }
}
