//! A middlegame/endgame score pair, tapered by game phase at the end of evaluation.

use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct S(pub i32, pub i32);

/// Phase of a full board: knights and bishops count 1, rooks 2, queens 4.
pub const MAX_PHASE: i32 = 24;

impl S {
    pub const ZERO: S = S(0, 0);

    /// Blends middlegame and endgame values; `phase` is `MAX_PHASE` with all pieces on.
    #[inline(always)]
    pub const fn taper(self, phase: i32) -> i32 {
        (self.0 * phase + self.1 * (MAX_PHASE - phase)) / MAX_PHASE
    }
}

impl Add for S {
    type Output = S;
    #[inline(always)]
    fn add(self, o: S) -> S {
        S(self.0 + o.0, self.1 + o.1)
    }
}
impl Sub for S {
    type Output = S;
    #[inline(always)]
    fn sub(self, o: S) -> S {
        S(self.0 - o.0, self.1 - o.1)
    }
}
impl AddAssign for S {
    #[inline(always)]
    fn add_assign(&mut self, o: S) {
        self.0 += o.0;
        self.1 += o.1;
    }
}
impl SubAssign for S {
    #[inline(always)]
    fn sub_assign(&mut self, o: S) {
        self.0 -= o.0;
        self.1 -= o.1;
    }
}
impl Mul<i32> for S {
    type Output = S;
    #[inline(always)]
    fn mul(self, k: i32) -> S {
        S(self.0 * k, self.1 * k)
    }
}
impl Neg for S {
    type Output = S;
    #[inline(always)]
    fn neg(self) -> S {
        S(-self.0, -self.1)
    }
}
