//! Shard selectors against the API server's own code: the vectors in
//! data/sharding-vectors.json were computed by k8s.io/apimachinery v0.37.2 `pkg/sharding`
//! (hash, range test, rendering) and k8s.io/apiserver v0.37.2 `pkg/sharding` (parser);
//! sharding-vectors/regen.sh regenerates them.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_codegen_runtime::sharding::{ShardKey, ShardSelector, hash_field};
use serde::Deserialize;

#[derive(Deserialize)]
struct Vectors {
    origin: String,
    hashes: Vec<HashVector>,
    matches: Vec<MatchVector>,
    parses: Vec<ParseVector>,
}

#[derive(Deserialize)]
struct HashVector {
    value: String,
    hash: String,
}

#[derive(Deserialize)]
struct MatchVector {
    selector: String,
    uid: String,
    namespace: String,
    matches: bool,
}

#[derive(Deserialize)]
struct ParseVector {
    input: String,
    canonical: Option<String>,
    error: Option<String>,
}

fn vectors() -> Vectors {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/sharding-vectors.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let v: Vectors = serde_json::from_str(&text).expect("vectors parse");
    assert!(v.origin.contains("apimachinery@v0.37.2"), "{}", v.origin);
    v
}

#[test]
fn hashes_are_the_api_servers() {
    let v = vectors();
    assert!(v.hashes.len() > 60);
    for h in &v.hashes {
        assert_eq!(
            format!("0x{:016x}", hash_field(&h.value)),
            h.hash,
            "FNV-1a 64 of {:?}",
            h.value
        );
    }
}

#[test]
fn range_tests_are_the_api_servers() {
    let v = vectors();
    let (mut yes, mut no) = (0, 0);
    for m in &v.matches {
        // Go's String() form: the canonical syntax, which must read back and render the same.
        let sel: ShardSelector = m
            .selector
            .parse()
            .unwrap_or_else(|e| panic!("{}: {e}", m.selector));
        assert_eq!(sel.to_string(), m.selector);
        let meta = ObjectMeta {
            uid: Some(m.uid.clone()),
            namespace: Some(m.namespace.clone()),
            ..ObjectMeta::default()
        };
        let value = match sel.key() {
            ShardKey::Uid => &m.uid,
            ShardKey::Namespace => &m.namespace,
        };
        assert_eq!(sel.matches(&meta), m.matches, "{} on {value:?}", m.selector);
        assert_eq!(sel.matches_value(value), m.matches);
        if m.matches { yes += 1 } else { no += 1 }
    }
    // The vectors hold both outcomes at every boundary, not one answer repeated.
    assert!(yes > 300 && no > 300, "{yes} matches, {no} misses");
}

#[test]
fn parsing_accepts_and_refuses_what_the_api_server_does() {
    let v = vectors();
    for p in &v.parses {
        let ours = p.input.parse::<ShardSelector>();
        match (&p.canonical, &p.error, ours) {
            (Some(canonical), None, Ok(sel)) => assert_eq!(&sel.to_string(), canonical),
            (None, Some(_), Err(e)) => {
                // Our own message, located in the input.
                assert!(e.column() >= 1 && e.column() <= p.input.chars().count() + 1);
            }
            (_, go_err, ours) => panic!(
                "{:?}: the API server says {}, we say {:?}",
                p.input,
                go_err.as_deref().unwrap_or("ok"),
                ours.map(|s| s.to_string()).map_err(|e| e.to_string())
            ),
        }
    }
}
