// No module is marked with +groupName. //~ ERROR no group/version module found

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
pub struct Thing {
    pub replicas: i32,
}
