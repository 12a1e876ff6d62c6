use super::Bitboard;
use std::fmt;

/// A board square, 0 = a1 … 63 = h8.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Square(u8);

pub type File = u8;
pub type Rank = u8;

impl Square {
    #[inline(always)]
    pub const fn new(index: u8) -> Square {
        debug_assert!(index < 64);
        Square(index)
    }

    #[inline(always)]
    pub const fn from_file_rank(file: File, rank: Rank) -> Square {
        Square(rank * 8 + file)
    }

    #[inline(always)]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    #[inline(always)]
    pub const fn file(self) -> File {
        self.0 & 7
    }

    #[inline(always)]
    pub const fn rank(self) -> Rank {
        self.0 >> 3
    }

    /// The same square seen from the other side of the board (a1 <-> a8).
    #[inline(always)]
    pub const fn flip(self) -> Square {
        Square(self.0 ^ 56)
    }

    /// The rank counted from `white`'s side (rank 1 for white is rank 8 for black).
    #[inline(always)]
    pub const fn relative_rank(self, white: bool) -> Rank {
        if white {
            self.rank()
        } else {
            7 - self.rank()
        }
    }

    /// Chebyshev ring around the four centre squares: 0 on d4/e4/d5/e5, 3 on the edge.
    #[inline(always)]
    pub const fn center_ring(self) -> usize {
        let f = self.file() as i32;
        let r = self.rank() as i32;
        let df = if f < 4 { 3 - f } else { f - 4 };
        let dr = if r < 4 { 3 - r } else { r - 4 };
        (if df > dr { df } else { dr }) as usize
    }

    /// King-move (Chebyshev) distance.
    #[inline(always)]
    pub const fn distance(self, other: Square) -> i32 {
        let files = (self.file() as i32 - other.file() as i32).abs();
        let ranks = (self.rank() as i32 - other.rank() as i32).abs();
        if files > ranks {
            files
        } else {
            ranks
        }
    }

    #[inline(always)]
    pub const fn bb(self) -> Bitboard {
        Bitboard::from_square(self)
    }

    /// Offsets the square by `delta` indices; the caller guarantees the result is on the board.
    #[inline(always)]
    pub const fn offset(self, delta: i8) -> Square {
        Square((self.0 as i8 + delta) as u8)
    }

    pub fn parse(text: &str) -> Option<Square> {
        let bytes = text.as_bytes();
        if bytes.len() != 2 {
            return None;
        }
        let (file, rank) = (bytes[0].wrapping_sub(b'a'), bytes[1].wrapping_sub(b'1'));
        (file < 8 && rank < 8).then(|| Square::from_file_rank(file, rank))
    }

    pub fn all() -> impl Iterator<Item = Square> {
        (0..64).map(Square)
    }
}

/// Names every square as a constant (`Square::A7`), one rank per line from file a to h.
macro_rules! named_squares {
    ($($rank:literal: $a:ident $b:ident $c:ident $d:ident $e:ident $f:ident $g:ident $h:ident;)*) => {
        impl Square {
            $(
                pub const $a: Square = Square::from_file_rank(0, $rank);
                pub const $b: Square = Square::from_file_rank(1, $rank);
                pub const $c: Square = Square::from_file_rank(2, $rank);
                pub const $d: Square = Square::from_file_rank(3, $rank);
                pub const $e: Square = Square::from_file_rank(4, $rank);
                pub const $f: Square = Square::from_file_rank(5, $rank);
                pub const $g: Square = Square::from_file_rank(6, $rank);
                pub const $h: Square = Square::from_file_rank(7, $rank);
            )*
        }

        /// Every named square with its name, for the test that the names match the squares.
        #[cfg(test)]
        const NAMED_SQUARES: [(Square, &str); 64] = [
            $(
                (Square::$a, stringify!($a)),
                (Square::$b, stringify!($b)),
                (Square::$c, stringify!($c)),
                (Square::$d, stringify!($d)),
                (Square::$e, stringify!($e)),
                (Square::$f, stringify!($f)),
                (Square::$g, stringify!($g)),
                (Square::$h, stringify!($h)),
            )*
        ];
    };
}

named_squares! {
    0: A1 B1 C1 D1 E1 F1 G1 H1;
    1: A2 B2 C2 D2 E2 F2 G2 H2;
    2: A3 B3 C3 D3 E3 F3 G3 H3;
    3: A4 B4 C4 D4 E4 F4 G4 H4;
    4: A5 B5 C5 D5 E5 F5 G5 H5;
    5: A6 B6 C6 D6 E6 F6 G6 H6;
    6: A7 B7 C7 D7 E7 F7 G7 H7;
    7: A8 B8 C8 D8 E8 F8 G8 H8;
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            (b'a' + self.file()) as char,
            (b'1' + self.rank()) as char
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_square_is_the_square_it_names() {
        for (index, (square, name)) in NAMED_SQUARES.into_iter().enumerate() {
            assert_eq!(square.index(), index, "{name}");
            assert_eq!(square.to_string(), name.to_ascii_lowercase());
            assert_eq!(Square::parse(&name.to_ascii_lowercase()), Some(square));
        }
    }
}
