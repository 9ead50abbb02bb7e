//! A YAML stream's documents as JSON values, empty ones left out: how manifests (roles,
//! webhook configurations) are compared with controller-gen's.

pub fn documents(yaml: &str) -> Vec<serde_json::Value> {
    serde_yaml::Deserializer::from_str(yaml)
        .map(|d| serde::Deserialize::deserialize(d).expect("a YAML document"))
        .filter(|v: &serde_json::Value| !v.is_null())
        .collect()
}
