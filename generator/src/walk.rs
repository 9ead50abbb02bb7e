//! Directory walks: every file below a directory, each directory read once. A symlink to a
//! directory is followed (an API directory may be one), but a directory reached again, by
//! its canonical path, is not read again: `ln -s . src/a; ln -s . src/b` once made a walk
//! read an exponential number of paths until it was killed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What a walk found.
#[derive(Debug, Default)]
pub struct Walk {
    /// The files kept, sorted.
    pub files: Vec<PathBuf>,
    /// Directories reached again through a symlink, not read again: (where, what it is).
    pub revisits: Vec<(PathBuf, PathBuf)>,
}

/// The files below `dir` that `keep` keeps (`dir` itself when it is a file), each
/// directory read once. Iterative: a deep tree is a long loop, not a deep recursion.
///
/// # Errors
/// When a directory cannot be read.
pub fn files_below(dir: &Path, keep: impl Fn(&Path) -> bool) -> std::io::Result<Walk> {
    let mut walk = Walk::default();
    if dir.is_file() {
        walk.files.push(dir.to_owned());
        return Ok(walk);
    }
    let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let canonical = std::fs::canonicalize(&d)?;
        if !seen.insert(canonical.clone()) {
            walk.revisits.push((d, canonical));
            continue;
        }
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if keep(&path) {
                walk.files.push(path);
            }
        }
    }
    walk.files.sort();
    walk.revisits.sort();
    Ok(walk)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ln -s . a; ln -s . b` and a symlink to a sibling: every file once, every directory
    /// once, and the revisits named.
    #[test]
    #[cfg(unix)]
    fn a_symlink_loop_is_read_once() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::write(root.join("x.rs"), "").unwrap();
        std::fs::write(root.join("d/y.rs"), "").unwrap();
        std::fs::write(root.join("d/z.txt"), "").unwrap();
        std::os::unix::fs::symlink(".", root.join("a")).unwrap();
        std::os::unix::fs::symlink(".", root.join("b")).unwrap();
        std::os::unix::fs::symlink("d", root.join("e")).unwrap();
        std::os::unix::fs::symlink("..", root.join("d/up")).unwrap();
        let walk = files_below(root, |p| p.extension().is_some_and(|e| e == "rs")).unwrap();
        let files: Vec<_> = walk
            .files
            .iter()
            .map(|f| f.strip_prefix(root).unwrap().to_owned())
            .collect();
        // `d` is read through `d` or `e`, whichever comes first: one of them.
        assert_eq!(files.len(), 2, "{files:?}");
        assert_eq!(files[0].file_name().unwrap(), "y.rs");
        assert_eq!(files[1], Path::new("x.rs"));
        assert_eq!(walk.revisits.len(), 4, "{:?}", walk.revisits);
    }
}
