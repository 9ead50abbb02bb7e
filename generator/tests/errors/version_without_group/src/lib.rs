// versionName without groupName.

//! +versionName=v1
//~^ ERROR without `+groupName`

pub struct Nothing;
