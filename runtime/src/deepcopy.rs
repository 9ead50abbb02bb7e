//! Deep copy, as Go's generated `DeepCopy()` / `DeepCopyInto(out)`.
//!
//! Rust's `Clone` already copies deeply; what `deep_copy_into` adds is *reuse*: it copies
//! field by field with `clone_from`, so the strings, vectors and maps `out` already owns
//! keep their allocations. Controllers that copy cached objects in a hot loop (copy,
//! mutate, compare) allocate less. kube-codegen generates an impl for every API type.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

/// A type that can be deep-copied into an existing value, reusing its allocations
/// (Go's generated `DeepCopyInto`); kube-codegen implements it for every API type.
///
/// ```
/// use kube_codegen_runtime::DeepCopy;
///
/// // What kube-codegen generates for a struct: field by field, with `clone_from`.
/// #[derive(Clone, Debug, PartialEq)]
/// struct Spec {
///     names: Vec<String>,
/// }
///
/// impl DeepCopy for Spec {
///     fn deep_copy_into(&self, out: &mut Self) {
///         out.names.clone_from(&self.names);
///     }
/// }
///
/// let cached = Spec { names: vec!["a".into(), "b".into()] };
/// let mut scratch = Spec { names: Vec::with_capacity(8) };
/// cached.deep_copy_into(&mut scratch);
/// assert_eq!(scratch, cached);
/// assert!(scratch.names.capacity() >= 8); // the allocation was reused
/// ```
pub trait DeepCopy: Clone {
    /// A new deep copy.
    #[must_use]
    fn deep_copy(&self) -> Self {
        self.clone()
    }

    /// Make `out` a deep copy of `self`, reusing `out`'s allocations where it can.
    fn deep_copy_into(&self, out: &mut Self);
}

impl<T: DeepCopy> DeepCopy for Option<T> {
    fn deep_copy_into(&self, out: &mut Self) {
        match (self, out) {
            (Some(src), Some(dst)) => src.deep_copy_into(dst),
            (src, dst) => *dst = src.clone(),
        }
    }
}

impl<T: DeepCopy> DeepCopy for Box<T> {
    fn deep_copy_into(&self, out: &mut Self) {
        (**self).deep_copy_into(&mut **out)
    }
}

impl<T: DeepCopy> DeepCopy for Vec<T> {
    fn deep_copy_into(&self, out: &mut Self) {
        out.truncate(self.len());
        let reused = out.len();
        for (src, dst) in self.iter().zip(out.iter_mut()) {
            src.deep_copy_into(dst);
        }
        out.extend(self[reused..].iter().cloned());
    }
}

impl<K: Ord + Clone, V: DeepCopy> DeepCopy for BTreeMap<K, V> {
    fn deep_copy_into(&self, out: &mut Self) {
        out.retain(|k, _| self.contains_key(k));
        for (k, v) in self {
            match out.get_mut(k) {
                Some(dst) => v.deep_copy_into(dst),
                None => {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
    }
}

impl<K: Eq + Hash + Clone, V: DeepCopy> DeepCopy for HashMap<K, V> {
    fn deep_copy_into(&self, out: &mut Self) {
        out.retain(|k, _| self.contains_key(k));
        for (k, v) in self {
            match out.get_mut(k) {
                Some(dst) => v.deep_copy_into(dst),
                None => {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    struct Leaf(String);
    impl DeepCopy for Leaf {
        fn deep_copy_into(&self, out: &mut Self) {
            out.0.clone_from(&self.0);
        }
    }

    #[test]
    fn containers_copy_exactly_and_reuse_buffers() {
        let src = vec![Leaf("a".into()), Leaf("bb".into())];
        let mut dst = vec![
            Leaf(String::with_capacity(64)),
            Leaf("x".into()),
            Leaf("y".into()),
        ];
        let cap = dst[0].0.capacity();
        src.deep_copy_into(&mut dst);
        assert_eq!(src, dst);
        assert_eq!(dst[0].0.capacity(), cap, "existing string buffer reused");

        let mut m: BTreeMap<String, Leaf> = [("gone".to_string(), Leaf("z".into()))].into();
        let s: BTreeMap<String, Leaf> = [("k".to_string(), Leaf("v".into()))].into();
        s.deep_copy_into(&mut m);
        assert_eq!(s, m);

        let mut o = None;
        Some(Leaf("q".into())).deep_copy_into(&mut o);
        assert_eq!(o, Some(Leaf("q".into())));
        None::<Leaf>.deep_copy_into(&mut o);
        assert_eq!(o, None);
    }
}
