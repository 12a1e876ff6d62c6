//! The two sides the lab sets against each other: A, the base, and B, the revision under test,
//! in a measurement's ABBA pairs and in a match alike.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Side {
    A,
    B,
}

impl Side {
    /// The side's place in a pair of per-side values.
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    pub(crate) fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }

    /// How progress lines, errors and scratch files name the side.
    pub(crate) fn letter(self) -> &'static str {
        match self {
            Side::A => "A",
            Side::B => "B",
        }
    }
}
