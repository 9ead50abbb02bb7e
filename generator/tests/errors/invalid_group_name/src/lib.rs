// A group must be a DNS subdomain with a dot.

//! +groupName=Errors_Example
//~^ ERROR invalid groupName `Errors_Example`
