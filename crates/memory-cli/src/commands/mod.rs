//! The commands of the `memory` program, a file each (the admin commands, `ls`, `cat`, `put`...,
//! are a group of their own in [`crate::admin`]).

pub(crate) mod dream;
pub(crate) mod exec;
pub(crate) mod keygen;
pub(crate) mod mcp;
pub(crate) mod run;
pub(crate) mod search;
pub(crate) mod serve;
pub(crate) mod store;
pub(crate) mod sync;
