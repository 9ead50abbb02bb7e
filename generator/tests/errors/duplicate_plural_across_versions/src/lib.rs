// Two different kinds of one group, in different versions, with the same plural:
// both would be the CRD `things.errors.example.com`.
pub mod v1;
pub mod v2;
