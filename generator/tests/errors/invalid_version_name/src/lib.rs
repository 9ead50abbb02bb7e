// A version must be a DNS label.

//! +groupName=errors.example.com
//! +versionName=V1.0
//~^ ERROR invalid version `V1.0`
