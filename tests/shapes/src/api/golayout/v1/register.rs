//! register.go's scheme registration is generated; what is left is the group's name.

/// The API group of this package, as register.go's `GroupName` constant.
pub const GROUP_NAME: &str = "golayout.kube-codegen.dev";
