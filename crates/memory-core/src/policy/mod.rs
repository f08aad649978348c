//! Policies as wrappers: [`ReadOnly`] refuses every change, [`Prefixed`] shows a sub-tree of
//! its inner store as a whole store.
//!
//! Both are generic over `S: Storage`, forward every method explicitly (the
//! `clippy::missing_trait_methods` lint keeps them honest) and show the stack in `Display`,
//! e.g. `ReadOnly(Prefixed(/memories/team, InMemory))`.

mod prefixed;
mod read_only;

pub use prefixed::Prefixed;
pub use read_only::{ReadOnly, read_only_refusal};
